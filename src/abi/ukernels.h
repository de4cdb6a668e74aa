/*
 * The kernels of the instruction set a file is compiled for: SIMD128 under
 * -msimd128, or on the host with RMSNORM_WASM_SIMDE defined (the same SIMD
 * source through SIMDe, as the fuzzer builds it); the scalar baseline
 * otherwise. Both C APIs (exports.c for the JS layer, rmsnorm_wasm.c for C
 * engines) call the kernels through this one choice.
 */
#ifndef RMSNORM_WASM_UKERNELS_H
#define RMSNORM_WASM_UKERNELS_H

#include "../kernels/f32-convert/convert_f32.h"
#include "../kernels/f32-layernorm/layernorm_f32.h"
#include "../kernels/f32-norm-backward/norm_backward_f32.h"
#include "../kernels/f32-quantize/quantize_f32.h"
#include "../kernels/f32-rmsnorm/rmsnorm_f32.h"

#if defined(__wasm_simd128__) || defined(RMSNORM_WASM_SIMDE)
#define UKERNEL(op) rmsnorm_wasm_f32_##op##_ukernel__wasmsimd
#else
#define UKERNEL(op) rmsnorm_wasm_f32_##op##_ukernel__scalar
#endif

#endif
