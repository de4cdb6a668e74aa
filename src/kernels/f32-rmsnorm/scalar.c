/*
 * Scalar float32 RMSNorm: the baseline for engines without SIMD128. It walks
 * the same 16 lanes as the SIMD kernel, one value at a time, so both return
 * the same bits (lane layout and fold: ../rmsnorm_f32.h).
 */
#include <stdbool.h>
#include <stddef.h>

#include "../rmsnorm_f32.h"

static inline float block_sumsq(const float* x, size_t n, float scale, bool scaled) {
  float acc[RMSNORM_LANES] = {0.0f};
  for (size_t i = 0; i < n; i++) {
    const float v = scaled ? x[i] * scale : x[i];
    acc[i % RMSNORM_LANES] += v * v;
  }
  float v[4];
  for (size_t j = 0; j < 4; j++) {
    v[j] = (acc[j] + acc[j + 4]) + (acc[j + 8] + acc[j + 12]);
  }
  return (v[0] + v[2]) + (v[1] + v[3]);
}

static inline void scale_row(const float* x, const float* w, float* y, size_t dim,
                             float scale, bool scaled, float inv) {
  for (size_t i = 0; i < dim; i++) {
    const float v = (scaled ? x[i] * scale : x[i]) * inv;
    y[i] = w != NULL ? v * w[i] : v;
  }
}

/* One after the other: the scalar loops gain nothing from interleaving. */
static inline float block_sumsq_scaling(const float* xn, size_t n, const float* x,
                                        const float* w, float* y, float inv) {
  scale_row(x, w, y, n, 1.0f, false, inv);
  return block_sumsq(xn, n, 1.0f, false);
}

#define RMSNORM_F32_KERNEL rmsnorm_f32__scalar
#include "../rmsnorm_f32_rows.h"
