/*
 * The quantizer: float32 values to ggml's 8-bit blocks (q8_0, q8_1, q8_K),
 * by the rule of ../q8_blocks.h, byte for byte. One per-block body per
 * instruction set: ../q8_blocks.h's scalar quantizers, and the SIMD128 one
 * of blocks_wasmsimd.h, which the fused RMSNorm (../f32-rmsnorm) calls on
 * values still in registers and this kernel on values loaded from memory.
 */
#ifndef QUANTIZE_F32_H
#define QUANTIZE_F32_H

#include <stddef.h>

/*
 * `blocks` blocks of `format` (enum rmsnorm_q8_format) from
 * blocks * (32, or 256 for q8_K) float32 values at x, to y (packed). y
 * shares no byte with x. No alignment beyond the element's is needed.
 */
void rmsnorm_wasm_f32_quantize_q8_ukernel__scalar(const float* x, void* y, size_t blocks,
                                                  int format);
void rmsnorm_wasm_f32_quantize_q8_ukernel__wasmsimd(const float* x, void* y, size_t blocks,
                                                    int format);

#endif
