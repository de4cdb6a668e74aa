/*
 * The row drivers of the float32 backward kernels (norm_backward_f32.h),
 * shared by both instruction sets. RMSNorm's backward is LayerNorm's with
 * mean 0 and without the G sum, so one driver serves both, told apart by a
 * literal `centred` flag. Each instruction-set file first defines
 * (1 <= n <= RMSNORM_BLOCK; xhat_i = (x_i - mean) * rstd when centred,
 * x_i * rstd otherwise; g_i = dy_i * w_i, or dy_i when w is NULL):
 *
 *   static void block_grad_sums(const float* dy, const float* x, const float* w, size_t n,
 *                               float mean, float rstd, bool centred,
 *                               float* sum_g, float* sum_gxhat);
 *       The folded 16-lane sums of g_i (only when centred) and of g_i * xhat_i.
 *   static void grad_row(const float* dy, const float* x, const float* w, float* dx,
 *                        float* dw, float* db, size_t dim, float mean, float rstd,
 *                        bool centred, float a, float c);
 *       Step 3 (a is unused unless centred) and the dw/db running sums.
 *
 * and names the kernels with RMSNORM_BACKWARD_F32_KERNEL and
 * LAYERNORM_BACKWARD_F32_KERNEL.
 */
#include <assert.h>
#include <stdbool.h>

#include "../common.h"
#include "norm_backward_f32.h"

static inline void backward_rows(const float* dy, const float* x, const float* w, const float* mean,
                                 const float* rstd, float* dx, float* dw, float* db, size_t rows,
                                 size_t dim, bool centred) {
  assert(dim >= 1);
  assert((w == NULL) == (dw == NULL));
  const float fdim = (float) dim;
  for (size_t r = 0; r < rows; r++, dy += dim, x += dim, dx += dim) {
    const float row_mean = centred ? mean[r] : 0.0f;
    f32_pairwise g_sums;
    f32_pairwise gxhat_sums;
    f32_pairwise_init(&g_sums);
    f32_pairwise_init(&gxhat_sums);
    for (size_t start = 0; start < dim; start += RMSNORM_BLOCK) {
      const size_t n = block_len(dim, start);
      float block_g;
      float block_gxhat;
      block_grad_sums(dy + start, x + start, w != NULL ? w + start : NULL, n, row_mean, rstd[r],
                      centred, &block_g, &block_gxhat);
      if (centred) {
        f32_pairwise_push(&g_sums, block_g);
      }
      f32_pairwise_push(&gxhat_sums, block_gxhat);
    }
    const float a = centred ? f32_pairwise_total(&g_sums) / fdim : 0.0f;
    const float c = f32_pairwise_total(&gxhat_sums) / fdim;
    grad_row(dy, x, w, dx, dw, db, dim, row_mean, rstd[r], centred, a, c);
  }
}

void RMSNORM_BACKWARD_F32_KERNEL(const float* dy, const float* x, const float* w, const float* rstd,
                                 float* dx, float* dw, size_t rows, size_t dim) {
  backward_rows(dy, x, w, NULL, rstd, dx, dw, NULL, rows, dim, false);
}

void LAYERNORM_BACKWARD_F32_KERNEL(const float* dy, const float* x, const float* w,
                                   const float* mean, const float* rstd, float* dx, float* dw,
                                   float* db, size_t rows, size_t dim) {
  backward_rows(dy, x, w, mean, rstd, dx, dw, db, rows, dim, true);
}
