/*
 * Scalar float32 LayerNorm: the baseline for engines without SIMD128. The
 * same 16 lanes as the SIMD kernel, one value at a time (layernorm_f32.h).
 */
#include <stdbool.h>
#include <stddef.h>

#include "../common.h"
#include "layernorm_f32.h"

static inline float block_sum(const float* x, size_t n, float scale, bool scaled) {
  float acc[RMSNORM_LANES] = {0.0f};
  for (size_t i = 0; i < n; i++) {
    acc[i % RMSNORM_LANES] += scaled ? x[i] * scale : x[i];
  }
  return fold_lanes(acc);
}

static inline void block_deviation_sums(const float* x, size_t n, float scale, bool scaled,
                                        float mean_hi, float* sum, float* sumsq) {
  float acc[RMSNORM_LANES] = {0.0f};
  float acc2[RMSNORM_LANES] = {0.0f};
  for (size_t i = 0; i < n; i++) {
    const float e = (scaled ? x[i] * scale : x[i]) - mean_hi;
    acc[i % RMSNORM_LANES] += e;
    acc2[i % RMSNORM_LANES] += e * e;
  }
  *sum = fold_lanes(acc);
  *sumsq = fold_lanes(acc2);
}

static inline void normalize_row(const float* x, const float* w, const float* b, float* y,
                                 size_t dim, float scale, bool scaled, float mean_hi, float mean_lo,
                                 float rstd) {
  for (size_t i = 0; i < dim; i++) {
    float v = (((scaled ? x[i] * scale : x[i]) - mean_hi) - mean_lo) * rstd;
    v = w != NULL ? v * w[i] : v;
    y[i] = b != NULL ? v + b[i] : v;
  }
}

#define LAYERNORM_F32_KERNEL rmsnorm_wasm_f32_layernorm_ukernel__scalar
#include "rows.inc"
