/*
 * The C ABI the JS layer calls: one symbol per operation, the same name in
 * every build. Each WebAssembly module links exactly one kernel per
 * operation: the SIMD128 build (-msimd128) the wasmsimd kernel, the
 * baseline build the scalar one. Arguments are checked in JS
 * (src/api/validate.js) before any call reaches this file.
 */
#include <emscripten/emscripten.h>
#include <stdint.h>

#include "../kernels/layernorm_f32.h"
#include "../kernels/norm_backward_f32.h"
#include "../kernels/rmsnorm_f32.h"

EMSCRIPTEN_KEEPALIVE
void rmsnorm_f32(const float* x, const float* w, float* y, uint32_t rows, uint32_t dim,
                 float eps) {
#if defined(__wasm_simd128__)
  rmsnorm_f32__wasmsimd_u16_acc4(x, w, y, rows, dim, eps);
#else
  rmsnorm_f32__scalar(x, w, y, rows, dim, eps);
#endif
}

/* Picks the kernel of this module's instruction set. */
#if defined(__wasm_simd128__)
#define KERNEL(name) name##__wasmsimd_u16_acc4
#else
#define KERNEL(name) name##__scalar
#endif

EMSCRIPTEN_KEEPALIVE
void rmsnorm_rstd_f32(const float* x, float* rstd, uint32_t rows, uint32_t dim, float eps) {
  KERNEL(rmsnorm_rstd_f32)(x, rstd, rows, dim, eps);
}

EMSCRIPTEN_KEEPALIVE
void layernorm_f32(const float* x, const float* w, const float* b, float* y, float* mean,
                   float* rstd, uint32_t rows, uint32_t dim, float eps) {
  KERNEL(layernorm_f32)(x, w, b, y, mean, rstd, rows, dim, eps);
}

EMSCRIPTEN_KEEPALIVE
void rmsnorm_backward_f32(const float* dy, const float* x, const float* w, const float* rstd,
                          float* dx, float* dw, uint32_t rows, uint32_t dim) {
  KERNEL(rmsnorm_backward_f32)(dy, x, w, rstd, dx, dw, rows, dim);
}

EMSCRIPTEN_KEEPALIVE
void layernorm_backward_f32(const float* dy, const float* x, const float* w, const float* mean,
                            const float* rstd, float* dx, float* dw, float* db, uint32_t rows,
                            uint32_t dim) {
  KERNEL(layernorm_backward_f32)(dy, x, w, mean, rstd, dx, dw, db, rows, dim);
}
