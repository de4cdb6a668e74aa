/*
 * The row driver shared by every float32 RMSNorm kernel: the block cascade,
 * the per-row finish and the rescue path of the numerics contract in
 * rmsnorm_f32.h. It is included once by each instruction-set file, which
 * first defines the two lane-level primitives:
 *
 *   static float block_sumsq(const float* x, size_t n, float scale, bool scaled);
 *       The folded 16-lane sum of squares of x[0..n), 1 <= n <= RMSNORM_BLOCK;
 *       when `scaled`, of (x_i * scale) instead of x_i.
 *   static void scale_row(const float* x, const float* w, float* y, size_t dim,
 *                         float scale, bool scaled, float inv);
 *       y_i = (x_i * inv) * w_i, or ((x_i * scale) * inv) * w_i when `scaled`;
 *       without the weight multiply when w is NULL.
 *
 * and names the kernels it defines with RMSNORM_F32_KERNEL (the forward pass)
 * and RMSNORM_F32_RSTD_KERNEL (the per-row rstd alone). `scaled` is
 * always a literal, so the compiler emits the plain loops without the extra
 * multiply on the hot path.
 */
#include <assert.h>
#include <float.h>
#include <math.h>
#include <stdbool.h>

#include "f32_rowsum.h"
#include "rmsnorm_f32.h"

/* Step 1: the pairwise sum of the row's block sums (f32_rowsum.h). */
static inline float row_sumsq(const float* x, size_t dim, float scale, bool scaled) {
  f32_pairwise sums;
  f32_pairwise_init(&sums);
  for (size_t start = 0; start < dim; start += RMSNORM_BLOCK) {
    const size_t n = dim - start < RMSNORM_BLOCK ? dim - start : RMSNORM_BLOCK;
    f32_pairwise_push(&sums, block_sumsq(x + start, n, scale, scaled));
  }
  return f32_pairwise_total(&sums);
}

static inline float inv_rms(float sumsq, size_t dim, float eps) {
  const float ms = sumsq / (float) dim;
  return 1.0f / sqrtf(ms + eps);
}

/* The rescue path: only rows whose plain sum of squares overflowed, came out
 * tiny, or is NaN get here, so it favours clarity over speed. Gives the scale
 * 2^k and the inv of the scaled row, or false when the row keeps the plain
 * result. */
static bool rescue_inv(const float* x, size_t dim, float eps, float* scale, float* inv) {
  const float s = f32_rescue_scale(x, dim);
  if (s == 0.0f) {
    return false;
  }
  const float eps_scaled = (eps * s) * s;
  if (!(eps_scaled <= FLT_MAX)) {
    return false;
  }
  *scale = s;
  *inv = inv_rms(row_sumsq(x, dim, s, true), dim, eps_scaled);
  return true;
}

static inline bool plain_sum_ok(float sumsq) {
  return sumsq >= RMSNORM_TINY_SUM && sumsq <= FLT_MAX;
}

void RMSNORM_F32_KERNEL(const float* x, const float* w, float* y,
                        size_t rows, size_t dim, float eps) {
  assert(dim >= 1);
  assert(eps >= 0.0f && eps <= FLT_MAX);
  assert(y == x || y + rows * dim <= x || x + rows * dim <= y);
  for (size_t r = 0; r < rows; r++, x += dim, y += dim) {
    const float sumsq = row_sumsq(x, dim, 1.0f, false);
    float scale;
    float inv;
    if (plain_sum_ok(sumsq)) {
      scale_row(x, w, y, dim, 1.0f, false, inv_rms(sumsq, dim, eps));
    } else if (rescue_inv(x, dim, eps, &scale, &inv)) {
      scale_row(x, w, y, dim, scale, true, inv);
    } else {
      scale_row(x, w, y, dim, 1.0f, false, inv_rms(sumsq, dim, eps));
    }
  }
}

/* The per-row rstd of the contract ("rstd" below step 4): inv, or inv_z * 2^k
 * on the rescue path. rmsNorm(..., { rstd }) and the backward pass get it
 * here, so a recomputed rstd is the forward's to the bit. */
void RMSNORM_F32_RSTD_KERNEL(const float* x, float* rstd, size_t rows, size_t dim, float eps) {
  assert(dim >= 1);
  assert(eps >= 0.0f && eps <= FLT_MAX);
  for (size_t r = 0; r < rows; r++, x += dim) {
    const float sumsq = row_sumsq(x, dim, 1.0f, false);
    float scale;
    float inv;
    if (plain_sum_ok(sumsq)) {
      rstd[r] = inv_rms(sumsq, dim, eps);
    } else if (rescue_inv(x, dim, eps, &scale, &inv)) {
      rstd[r] = inv * scale;
    } else {
      rstd[r] = inv_rms(sumsq, dim, eps);
    }
  }
}
