/*
 * Scalar float32 backward passes of RMSNorm and LayerNorm: the same 16 lanes
 * as the SIMD kernels, one value at a time (norm_backward_f32.h).
 */
#include <stdbool.h>
#include <stddef.h>

#include "../common.h"
#include "norm_backward_f32.h"

static inline float xhat_of(float x, float mean, float rstd, bool centred) {
  return (centred ? x - mean : x) * rstd;
}

static inline void block_grad_sums(const float* dy, const float* x, const float* w, size_t n,
                                   float mean, float rstd, bool centred, float* sum_g,
                                   float* sum_gxhat) {
  float acc_g[RMSNORM_LANES] = {0.0f};
  float acc_gxhat[RMSNORM_LANES] = {0.0f};
  for (size_t i = 0; i < n; i++) {
    const float g = w != NULL ? dy[i] * w[i] : dy[i];
    acc_g[i % RMSNORM_LANES] += g;
    acc_gxhat[i % RMSNORM_LANES] += g * xhat_of(x[i], mean, rstd, centred);
  }
  *sum_g = fold_lanes(acc_g);
  *sum_gxhat = fold_lanes(acc_gxhat);
}

static inline void grad_row(const float* dy, const float* x, const float* w, float* dx, float* dw,
                            float* db, size_t dim, float mean, float rstd, bool centred, float a,
                            float c) {
  for (size_t i = 0; i < dim; i++) {
    const float dyi = dy[i];
    const float xhat = xhat_of(x[i], mean, rstd, centred);
    const float g = w != NULL ? dyi * w[i] : dyi;
    dx[i] = ((centred ? g - a : g) - xhat * c) * rstd;
    if (dw != NULL) {
      dw[i] += dyi * xhat;
    }
    if (db != NULL) {
      db[i] += dyi;
    }
  }
}

#define RMSNORM_BACKWARD_F32_KERNEL rmsnorm_wasm_f32_rmsnorm_backward_ukernel__scalar
#define LAYERNORM_BACKWARD_F32_KERNEL rmsnorm_wasm_f32_layernorm_backward_ukernel__scalar
#include "rows.inc"
