/*
 * The row driver shared by the float32 LayerNorm kernels: the blocked sums,
 * the per-row finish, the statistics and the rescue path of the contract in
 * layernorm_f32.h. Included once by each instruction-set file, which first
 * defines the lane-level primitives (1 <= n <= RMSNORM_BLOCK; z_i is x_i, or
 * x_i * scale when `scaled`, which is always a literal):
 *
 *   static float block_sum(const float* x, size_t n, float scale, bool scaled);
 *       The folded 16-lane sum of z_i over x[0..n).
 *   static void block_deviation_sums(const float* x, size_t n, float scale, bool scaled,
 *                                    float mean_hi, float* sum, float* sumsq);
 *       With e_i = z_i - mean_hi: the folded sums of e_i and of e_i * e_i.
 *   static void normalize_row(const float* x, const float* w, const float* b, float* y,
 *                             size_t dim, float scale, bool scaled, float mean_hi,
 *                             float mean_lo, float rstd);
 *       Step 6, without the multiply when w is NULL, the add when b is NULL.
 *
 * and names the kernel with LAYERNORM_F32_KERNEL.
 */
#include <assert.h>
#include <float.h>
#include <math.h>
#include <stdbool.h>

#include "../common.h"
#include "layernorm_f32.h"

typedef struct {
  float mean_hi;
  float mean_lo;
  float rstd;
  bool plain_ok; /* false: the row needs the rescue path */
} layernorm_stats;

/* Steps 1-5 on z_i. */
static inline layernorm_stats row_stats(const float* x, size_t dim, float eps, float scale,
                                        bool scaled) {
  f32_pairwise s1;
  f32_pairwise_init(&s1);
  for (size_t start = 0; start < dim; start += RMSNORM_BLOCK) {
    const size_t n = block_len(dim, start);
    f32_pairwise_push(&s1, block_sum(x + start, n, scale, scaled));
  }
  const float sum = f32_pairwise_total(&s1);
  const float fdim = (float) dim;
  const float mean_hi = sum / fdim;

  f32_pairwise e1;
  f32_pairwise e2;
  f32_pairwise_init(&e1);
  f32_pairwise_init(&e2);
  for (size_t start = 0; start < dim; start += RMSNORM_BLOCK) {
    const size_t n = block_len(dim, start);
    float block_e1;
    float block_e2;
    block_deviation_sums(x + start, n, scale, scaled, mean_hi, &block_e1, &block_e2);
    f32_pairwise_push(&e1, block_e1);
    f32_pairwise_push(&e2, block_e2);
  }
  const float sum_e = f32_pairwise_total(&e1);
  const float sum_e2 = f32_pairwise_total(&e2);

  const float mean_lo = sum_e / fdim;
  float var = sum_e2 / fdim - mean_lo * mean_lo;
  var = var < 0.0f ? 0.0f : var;
  layernorm_stats st;
  st.mean_hi = mean_hi;
  st.mean_lo = mean_lo;
  st.rstd = 1.0f / sqrtf(var + eps);
  /* rstd is 0 exactly when var + eps overflowed. */
  st.plain_ok =
      fabsf(sum) <= FLT_MAX && sum_e2 >= RMSNORM_TINY_SUM && sum_e2 <= FLT_MAX && st.rstd != 0.0f;
  return st;
}

void LAYERNORM_F32_KERNEL(const float* x, const float* w, const float* b, float* y, float* mean,
                          float* rstd, size_t rows, size_t dim, float eps) {
  assert(dim >= 1);
  assert(eps >= 0.0f && eps <= FLT_MAX);
  assert(y == NULL || y == x || y + rows * dim <= x || x + rows * dim <= y);
  for (size_t r = 0; r < rows; r++, x += dim) {
    layernorm_stats st = row_stats(x, dim, eps, 1.0f, false);
    float scale = 0.0f;
    if (!st.plain_ok) {
      /* Rare rows (overflow, tiny or constant), so clarity over speed. */
      scale = rescue_scale(max_abs_bits(x, dim, RMSNORM_F32));
      const float eps_scaled = (eps * scale) * scale;
      if (scale != 0.0f && eps_scaled <= FLT_MAX) {
        st = row_stats(x, dim, eps_scaled, scale, true);
      } else {
        scale = 0.0f;
      }
    }
    if (y != NULL) {
      if (scale != 0.0f) {
        normalize_row(x, w, b, y, dim, scale, true, st.mean_hi, st.mean_lo, st.rstd);
      } else {
        normalize_row(x, w, b, y, dim, 1.0f, false, st.mean_hi, st.mean_lo, st.rstd);
      }
      y += dim;
    }
    if (mean != NULL) {
      const float m = st.mean_hi + st.mean_lo;
      mean[r] = scale != 0.0f ? m / scale : m;
    }
    if (rstd != NULL) {
      rstd[r] = scale != 0.0f ? st.rstd * scale : st.rstd;
    }
  }
}
