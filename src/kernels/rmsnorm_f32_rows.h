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
 *   static float block_sumsq_scaling(const float* xn, size_t n, const float* x,
 *                                    const float* w, float* y, float inv);
 *       block_sumsq(xn, n, 1.0f, false), and meanwhile the plain scale_row
 *       of x[0..n) into y[0..n). The driver scales one row while it sums
 *       the squares of the next, so that the loads of the next row overlap
 *       the stores of this one and the sum's add chains overlap the
 *       multiplies: each row still gets exactly the same operations.
 *
 * and names the kernel it defines with RMSNORM_F32_KERNEL. `scaled` is
 * always a literal, so the compiler emits the plain loops without the extra
 * multiply on the hot path.
 */
#include <assert.h>
#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "rmsnorm_f32.h"

/* Pairwise sum of the row's block sums, with a binary-counter stack: after
 * block k, merge while k+1 is even, then fold what is left from the top. This
 * gives exactly the tree the contract describes (split at the largest power
 * of two below n). 64 levels cover any size_t. */
struct block_sum_stack {
  float sums[64];
  size_t depth;
  size_t blocks;
};

/* Pushes the sum of the next block, merging the pairs it completes. */
static inline void push_block_sum(struct block_sum_stack* stack, float s) {
  for (size_t c = ++stack->blocks; (c & 1) == 0; c >>= 1) {
    s = stack->sums[--stack->depth] + s;
  }
  stack->sums[stack->depth++] = s;
}

/* The row being scaled while the blocks of the next one are summed. */
struct row_to_scale {
  const float* x;
  const float* w;
  float* y;
  float inv;
};

/* Always inlined: `scaled` and whether `pending` is NULL must stay literals
 * in the block loops (a call would pass them as run-time flags, and the
 * plain path would pay for the others' work). */
__attribute__((always_inline))
static inline float row_sumsq_impl(const float* x, size_t dim, float scale, bool scaled,
                                   const struct row_to_scale* pending) {
  struct block_sum_stack stack;
  stack.depth = 0;
  stack.blocks = 0;
  for (size_t start = 0; start < dim; start += RMSNORM_BLOCK) {
    const size_t n = dim - start < RMSNORM_BLOCK ? dim - start : RMSNORM_BLOCK;
    push_block_sum(&stack, pending == NULL
        ? block_sumsq(x + start, n, scale, scaled)
        : block_sumsq_scaling(x + start, n, pending->x + start,
                              pending->w == NULL ? NULL : pending->w + start,
                              pending->y + start, pending->inv));
  }
  float total = stack.sums[--stack.depth];
  while (stack.depth > 0) {
    total = stack.sums[--stack.depth] + total;
  }
  return total;
}

__attribute__((always_inline))
static inline float row_sumsq(const float* x, size_t dim, float scale, bool scaled) {
  return row_sumsq_impl(x, dim, scale, scaled, NULL);
}

static inline float inv_rms(float sumsq, size_t dim, float eps) {
  const float ms = sumsq / (float) dim;
  return 1.0f / sqrtf(ms + eps);
}

static inline uint32_t abs_bits(float v) {
  uint32_t u;
  memcpy(&u, &v, sizeof u);
  return u & UINT32_C(0x7FFFFFFF);
}

/* max |x_i| as bits: ordered like the magnitudes, with any NaN above +Inf. */
static uint32_t max_abs_bits(const float* x, size_t dim) {
  uint32_t m = 0;
  for (size_t i = 0; i < dim; i++) {
    const uint32_t a = abs_bits(x[i]);
    m = a > m ? a : m;
  }
  return m;
}

/* The rescue path: only rows whose plain sum of squares overflowed, came out
 * tiny, or is NaN get here, so it favours clarity over speed. */
static void normalize_row_rescue(const float* x, const float* w, float* y, size_t dim,
                                 float eps, float plain_sumsq) {
  const uint32_t m = max_abs_bits(x, dim);
  if (m != 0 && m < UINT32_C(0x7F800000)) {
    /* 2^k with max|x| * 2^k in [1, 2): k = 127 - biased exponent, clamped so
     * that 2^k is a normal float32. */
    int k = 127 - (int) (m >> 23);
    k = k > 126 ? 126 : (k < -126 ? -126 : k);
    const uint32_t scale_bits = (uint32_t) (k + 127) << 23;
    float scale;
    memcpy(&scale, &scale_bits, sizeof scale);
    const float eps_scaled = (eps * scale) * scale;
    if (eps_scaled <= FLT_MAX) {
      const float sumsq = row_sumsq(x, dim, scale, true);
      scale_row(x, w, y, dim, scale, true, inv_rms(sumsq, dim, eps_scaled));
      return;
    }
  }
  scale_row(x, w, y, dim, 1.0f, false, inv_rms(plain_sumsq, dim, eps));
}

static inline bool plain_sumsq_ok(float sumsq) {
  return sumsq >= RMSNORM_TINY_SUM && sumsq <= FLT_MAX;
}

void RMSNORM_F32_KERNEL(const float* x, const float* w, float* y,
                        size_t rows, size_t dim, float eps) {
  assert(dim >= 1);
  assert(eps >= 0.0f && eps <= FLT_MAX);
  assert(y == x || y + rows * dim <= x || x + rows * dim <= y);
  if (rows == 0) {
    return;
  }
  /* Row r's sum of squares is taken while row r-1 is scaled (y == x is
   * safe: row r-1's stores never touch row r). */
  float sumsq = row_sumsq(x, dim, 1.0f, false);
  for (size_t r = 0; r < rows; r++, x += dim, y += dim) {
    const bool last = r + 1 == rows;
    if (plain_sumsq_ok(sumsq) && !last) {
      const struct row_to_scale row = {x, w, y, inv_rms(sumsq, dim, eps)};
      sumsq = row_sumsq_impl(x + dim, dim, 1.0f, false, &row);
      continue;
    }
    if (plain_sumsq_ok(sumsq)) {
      scale_row(x, w, y, dim, 1.0f, false, inv_rms(sumsq, dim, eps));
    } else {
      normalize_row_rescue(x, w, y, dim, eps, sumsq);
    }
    if (!last) {
      sumsq = row_sumsq(x + dim, dim, 1.0f, false);
    }
  }
}
