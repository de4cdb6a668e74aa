/*
 * bfloat16 / float16 arrays <-> float32 arrays: the contract's conversions
 * (../float16.h) over whole arrays, for callers who hold 16-bit weights or
 * activations and want float32 ones, or the reverse.
 *
 *   widen   n 16-bit patterns of `dtype` -> n float32 values, exactly (NaN
 *           payloads kept: the float32 NaN has the half's sign and payload)
 *   narrow  n float32 values -> n 16-bit patterns of `dtype`, rounded to
 *           nearest even; overflow to +-Inf; every NaN becomes the format's
 *           one pattern (bfloat16 0x7FC0, float16 0x7E00); float16 keeps
 *           subnormals
 *
 * dtype is RMSNORM_BF16 or RMSNORM_F16. The SIMD128 kernel and the scalar one
 * give the same bits, NaNs included: both build every result from integer
 * operations and selects on the bits (tests/fuzz/conversions_exhaustive.c
 * checks the SIMD one on every input). src and dst do not overlap. n may be
 * 0; no alignment beyond the element's is needed.
 */
#ifndef CONVERT_F32_H
#define CONVERT_F32_H

#include <stddef.h>
#include <stdint.h>

void rmsnorm_wasm_f32_widen_ukernel__scalar(const uint16_t* src, float* dst, size_t n, int dtype);
void rmsnorm_wasm_f32_widen_ukernel__wasmsimd(const uint16_t* src, float* dst, size_t n, int dtype);
void rmsnorm_wasm_f32_narrow_ukernel__scalar(const float* src, uint16_t* dst, size_t n, int dtype);
void rmsnorm_wasm_f32_narrow_ukernel__wasmsimd(const float* src, uint16_t* dst, size_t n,
                                               int dtype);

#endif
