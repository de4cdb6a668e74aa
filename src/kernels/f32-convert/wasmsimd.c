/*
 * SIMD128 16-bit <-> float32 conversions (convert_f32.h): 16 values a step
 * with the vector conversions of ../float16_wasmsimd.h, each dtype its own
 * loop; the last 0..15 values one at a time with ../float16.h's, which the
 * vector ones match on every input.
 */
#include <assert.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../common.h"
#include "../float16.h"
#include "../float16_wasmsimd.h"
#include "../simd128.h"
#include "convert_f32.h"

/* Eight patterns (one load) become two vectors of float32: interleaving
 * with zeros puts each half in the high half of its lane, where a bfloat16
 * is its float32 and float16 takes one conversion. */
RMSNORM_INLINE void widen8(const uint16_t* src, float* dst, bool f16) {
  const v128_t vh = wasm_v128_load(src);
  v128_t vlow = bf16x8_low_to_f32x4(vh);
  v128_t vhigh = bf16x8_high_to_f32x4(vh);
  if (f16) {
    vlow = f16hi_to_f32x4(vlow);
    vhigh = f16hi_to_f32x4(vhigh);
  }
  wasm_v128_store(dst, vlow);
  wasm_v128_store(dst + 4, vhigh);
}

RMSNORM_INLINE void widen_loop(const uint16_t* src, float* dst, size_t n, int dtype) {
  const bool f16 = dtype == RMSNORM_F16;
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    widen8(src + i, dst + i, f16);
    widen8(src + i + 8, dst + i + 8, f16);
  }
  for (; i < n; i++) {
    dst[i] = load_f32(src, i, dtype);
  }
}

void rmsnorm_wasm_f32_widen_ukernel__wasmsimd(const uint16_t* src, float* dst, size_t n,
                                              int dtype) {
  assert(dtype == RMSNORM_BF16 || dtype == RMSNORM_F16);
  if (dtype == RMSNORM_BF16) {
    widen_loop(src, dst, n, RMSNORM_BF16);
  } else {
    widen_loop(src, dst, n, RMSNORM_F16);
  }
}

/* Eight float32 values (two loads) become eight patterns (one store): each
 * vector's patterns in the low halves of its lanes, then packed. The
 * saturating narrow keeps them, as every pattern is below 2^16. Any input
 * may be NaN here, so the conversions handle it (finite = false). */
RMSNORM_INLINE void narrow8(const float* src, uint16_t* dst, bool f16) {
  const v128_t vlow = wasm_v128_load(src);
  const v128_t vhigh = wasm_v128_load(src + 4);
  const v128_t vh =
      f16 ? wasm_u16x8_narrow_i32x4(f32x4_to_f16x4(vlow, false), f32x4_to_f16x4(vhigh, false))
          : wasm_u16x8_narrow_i32x4(f32x4_to_bf16x4(vlow, false), f32x4_to_bf16x4(vhigh, false));
  wasm_v128_store(dst, vh);
}

RMSNORM_INLINE void narrow_loop(const float* src, uint16_t* dst, size_t n, int dtype) {
  const bool f16 = dtype == RMSNORM_F16;
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    narrow8(src + i, dst + i, f16);
    narrow8(src + i + 8, dst + i + 8, f16);
  }
  for (; i < n; i++) {
    store_f32(dst, i, src[i], dtype);
  }
}

void rmsnorm_wasm_f32_narrow_ukernel__wasmsimd(const float* src, uint16_t* dst, size_t n,
                                               int dtype) {
  assert(dtype == RMSNORM_BF16 || dtype == RMSNORM_F16);
  if (dtype == RMSNORM_BF16) {
    narrow_loop(src, dst, n, RMSNORM_BF16);
  } else {
    narrow_loop(src, dst, n, RMSNORM_F16);
  }
}
