/*
 * The C ABI the JS layer calls: one symbol per operation, the same name in
 * every build. Each WebAssembly module links exactly one kernel per
 * operation (ukernels.h): the SIMD128 build the wasmsimd kernel, the
 * baseline build the scalar one. Arguments are checked in JS
 * (src/api/args.js) before any call reaches this file; C engines call
 * the checked entry points of rmsnorm_wasm.h instead.
 */
#include <emscripten/emscripten.h>
#include <stdint.h>

#include "ukernels.h"

/* Every kernel takes `stride` after `dim`: the per-row arrays (x,
 * residual, y; dy, x, dx) have their rows `stride` elements apart (>= dim),
 * and only each row's dim values are touched; the statistics and the
 * once-arrays (weight, bias, dweight, dbias) are packed. */

/* RMSNorm, or with `residual` (non-NULL) the fused residual add + RMSNorm.
 * dtype / weight_dtype: 0 float32, 1 bfloat16, 2 float16, in any
 * combination; cast_mode: 0 llama, 1 gemma (rmsnorm_f32.h). rstd (NULL or
 * rows floats) receives step 5 of each row normalized; y may be NULL for
 * rstd alone. Pointers are byte addresses in this module's memory. */
EMSCRIPTEN_KEEPALIVE
void rmsnorm(const void* x, void* residual, const void* w, void* y, float* rstd, uint32_t rows,
             uint32_t dim, uint32_t stride, float eps, int32_t dtype, int32_t weight_dtype,
             int32_t cast_mode, float weight_offset) {
  UKERNEL(rmsnorm)
  (x, residual, w, y, rstd, rows, dim, stride, eps, dtype, weight_dtype, cast_mode, weight_offset);
}

EMSCRIPTEN_KEEPALIVE
void layernorm_f32(const float* x, const float* w, const float* b, float* y, float* mean,
                   float* rstd, uint32_t rows, uint32_t dim, uint32_t stride, float eps) {
  UKERNEL(layernorm)(x, w, b, y, mean, rstd, rows, dim, stride, eps);
}

EMSCRIPTEN_KEEPALIVE
void rmsnorm_backward_f32(const float* dy, const float* x, const float* w, const float* rstd,
                          float* dx, float* dw, uint32_t rows, uint32_t dim, uint32_t stride) {
  UKERNEL(rmsnorm_backward)(dy, x, w, rstd, dx, dw, rows, dim, stride);
}

EMSCRIPTEN_KEEPALIVE
void layernorm_backward_f32(const float* dy, const float* x, const float* w, const float* mean,
                            const float* rstd, float* dx, float* dw, float* db, uint32_t rows,
                            uint32_t dim, uint32_t stride) {
  UKERNEL(layernorm_backward)(dy, x, w, mean, rstd, dx, dw, db, rows, dim, stride);
}

/* The contract's 16-bit conversions over arrays (convert_f32.h): n values of
 * dtype 1 (bfloat16) or 2 (float16) widened to float32, or n float32 values
 * narrowed to them. src and dst do not overlap. */
EMSCRIPTEN_KEEPALIVE
void convert_to_f32(const uint16_t* src, float* dst, uint32_t n, int32_t dtype) {
  UKERNEL(widen)(src, dst, n, dtype);
}

EMSCRIPTEN_KEEPALIVE
void convert_from_f32(const float* src, uint16_t* dst, uint32_t n, int32_t dtype) {
  UKERNEL(narrow)(src, dst, n, dtype);
}
