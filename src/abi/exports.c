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

#if defined(__wasm_simd128__)
#define RMSNORM_KERNEL rmsnorm_f32__wasmsimd_u16_acc4
#else
#define RMSNORM_KERNEL rmsnorm_f32__scalar
#endif

/* RMSNorm, or with `residual` (non-NULL) the fused residual add + RMSNorm.
 * dtype / weight_dtype: 0 float32, 1 bfloat16, 2 float16; cast_mode: 0
 * gemma, 1 llama (rmsnorm_f32.h). Pointers are byte addresses in this
 * module's memory. */
EMSCRIPTEN_KEEPALIVE
void rmsnorm(const void* x, void* residual, const void* w, void* y, uint32_t rows,
             uint32_t dim, float eps, int32_t dtype, int32_t weight_dtype, int32_t cast_mode,
             float weight_offset) {
  RMSNORM_KERNEL(x, residual, w, y, rows, dim, eps, dtype, weight_dtype, cast_mode,
                 weight_offset);
}
