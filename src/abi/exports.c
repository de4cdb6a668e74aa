/*
 * The C ABI the JS layer calls: one symbol per operation, the same name in
 * every build. Each WebAssembly module links exactly one kernel per
 * operation: the SIMD128 build (-msimd128) the wasmsimd kernel, the
 * baseline build the scalar one. Arguments are checked in JS
 * (src/api/validate.js) before any call reaches this file.
 */
#include <emscripten/emscripten.h>
#include <stdint.h>

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
