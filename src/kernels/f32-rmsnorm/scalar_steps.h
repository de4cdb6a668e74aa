/*
 * The numerics contract of rmsnorm_f32.h one value at a time: the scalar
 * kernel is built from these helpers, the SIMD kernel uses them for its
 * tails, and the row driver for the rare rescue rows.
 */
#ifndef RMSNORM_SCALAR_STEPS_H
#define RMSNORM_SCALAR_STEPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../common.h"
#include "../float16.h"
#include "rmsnorm_f32.h"

/* Block sum of squares of x_i, or of x_i * scale when `scaled`. */
RMSNORM_INLINE float scalar_block_sumsq(const void* x, size_t n, int dtype, float scale,
                                        bool scaled) {
  float acc[RMSNORM_LANES] = {0.0f};
  for (size_t i = 0; i < n; i++) {
    const float v = scaled ? load_f32(x, i, dtype) * scale : load_f32(x, i, dtype);
    acc[i % RMSNORM_LANES] += v * v;
  }
  return fold_lanes(acc);
}

/* r_i = round(x_i + r_i), stored; block sum of their squares. */
RMSNORM_INLINE float scalar_block_add_sumsq(const void* x, void* r, size_t n, int dtype) {
  float acc[RMSNORM_LANES] = {0.0f};
  for (size_t i = 0; i < n; i++) {
    const float v = round_to(load_f32(x, i, dtype) + load_f32(r, i, dtype), dtype);
    store_f32(r, i, v, dtype);
    acc[i % RMSNORM_LANES] += v * v;
  }
  return fold_lanes(acc);
}

/* Step 4 for one value v = x_i * inv: weight, cast mode, output rounding. */
RMSNORM_INLINE void scalar_finish(float v, const void* w, void* y, size_t i, float weight_offset,
                                  int dtype, int weight_dtype, bool offset, int cast_mode) {
  if (weight_dtype != RMSNORM_NO_WEIGHT) {
    const float wi = load_f32(w, i, weight_dtype);
    if (cast_mode == RMSNORM_CAST_LLAMA) {
      v = round_to(v, dtype);
    }
    v = v * (offset ? weight_offset + wi : wi);
  }
  store_f32(y, i, v, dtype);
}

/* Step 4 for y[start..end), with the rescue path's optional exact pre-scale. */
RMSNORM_INLINE void scalar_write_row(const void* src, const void* w, void* y, size_t start,
                                     size_t end, float inv, float scale, bool scaled,
                                     float weight_offset, int dtype, int weight_dtype, bool offset,
                                     int cast_mode) {
  for (size_t i = start; i < end; i++) {
    const float x = scaled ? load_f32(src, i, dtype) * scale : load_f32(src, i, dtype);
    scalar_finish(x * inv, w, y, i, weight_offset, dtype, weight_dtype, offset, cast_mode);
  }
}

/* The largest magnitude's bits among x[0..n), 16-bit values as their
 * patterns. */
RMSNORM_INLINE uint32_t scalar_largest_magnitude_bits(const void* x, size_t n, int dtype) {
  uint32_t largest = 0;
  for (size_t i = 0; i < n; i++) {
    const uint32_t magnitude = dtype == RMSNORM_F32
                                   ? ((const uint32_t*) x)[i] & UINT32_C(0x7FFFFFFF)
                                   : ((const uint16_t*) x)[i] & UINT32_C(0x7FFF);
    largest = magnitude > largest ? magnitude : largest;
  }
  return largest;
}

#endif
