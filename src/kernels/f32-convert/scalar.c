/*
 * Scalar 16-bit <-> float32 conversions (convert_f32.h): the contract's
 * one-value conversions of ../float16.h in a loop.
 */
#include <assert.h>
#include <stddef.h>
#include <stdint.h>

#include "../float16.h"
#include "convert_f32.h"

void rmsnorm_wasm_f32_widen_ukernel__scalar(const uint16_t* src, float* dst, size_t n, int dtype) {
  assert(dtype == RMSNORM_BF16 || dtype == RMSNORM_F16);
  for (size_t i = 0; i < n; i++) {
    dst[i] = load_f32(src, i, dtype);
  }
}

void rmsnorm_wasm_f32_narrow_ukernel__scalar(const float* src, uint16_t* dst, size_t n, int dtype) {
  assert(dtype == RMSNORM_BF16 || dtype == RMSNORM_F16);
  for (size_t i = 0; i < n; i++) {
    store_f32(dst, i, src[i], dtype);
  }
}
