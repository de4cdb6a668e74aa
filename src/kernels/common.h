/*
 * What every operation shares (RMSNorm, LayerNorm and their backward passes),
 * so that each rule of the numerics contract in f32-rmsnorm/rmsnorm_f32.h is
 * implemented once:
 *
 *   block_len, fold_lanes   the blocks of a row and the fold of their 16 lanes
 *   f32_pairwise_*          the pairwise sum of a row's block sums (step 1)
 *   max_abs_bits            max |x_i| of a row, as bits
 *   rescue_of               the overflow rescue: the 2^k and eps_z a row is
 *                           redone with, or 1 when it keeps the plain result
 *
 * Every blocked sum in this package is step 1 applied to some per-value term
 * t_i: blocks of RMSNORM_BLOCK values, value i of a block to lane (i mod 16),
 * acc = acc + t_i from +0 in index order, the fold, the block sums added
 * pairwise.
 */
#ifndef RMSNORM_COMMON_H
#define RMSNORM_COMMON_H

#include <float.h>
#include <stddef.h>
#include <stdint.h>

#include "float16.h"

#define RMSNORM_INLINE static inline __attribute__((always_inline))

#define RMSNORM_LANES 16
#define RMSNORM_BLOCK 256
/* Below this sum of squares, float32 squares may have underflowed enough to
 * matter; 2^-64 leaves dim * 2^-150 of underflow error far below an ulp. */
#define RMSNORM_TINY_SUM 0x1p-64f

/* The length of the block of a row of `dim` values that starts at `start`. */
static inline size_t block_len(size_t dim, size_t start) {
  return dim - start < RMSNORM_BLOCK ? dim - start : RMSNORM_BLOCK;
}

/* The fold of step 1, from 16 lane sums. */
RMSNORM_INLINE float fold_lanes(const float acc[RMSNORM_LANES]) {
  float v[4];
  for (size_t j = 0; j < 4; j++) {
    v[j] = (acc[j] + acc[j + 4]) + (acc[j + 8] + acc[j + 12]);
  }
  return (v[0] + v[2]) + (v[1] + v[3]);
}

/* The pairwise sum of block sums B_0..B_{n-1}, fed one block at a time with
 * a binary-counter stack: after block k, merge while k+1 is even, then fold
 * what is left from the top. This is exactly the contract's tree (split at
 * the largest power of two below n). 64 levels cover any size_t. */
typedef struct {
  float stack[64];
  size_t depth;
  size_t count;
} f32_pairwise;

static inline void f32_pairwise_init(f32_pairwise* p) {
  p->depth = 0;
  p->count = 0;
}

static inline void f32_pairwise_push(f32_pairwise* p, float block_sum) {
  p->count++;
  for (size_t c = p->count; (c & 1) == 0; c >>= 1) {
    block_sum = p->stack[--p->depth] + block_sum;
  }
  p->stack[p->depth++] = block_sum;
}

/* The row's sum; at least one block must have been pushed. */
static inline float f32_pairwise_total(const f32_pairwise* p) {
  size_t depth = p->depth;
  float total = p->stack[--depth];
  while (depth > 0) {
    total = p->stack[--depth] + total;
  }
  return total;
}

/* max |x_i| as float32 bits: ordered like the magnitudes, with any NaN above
 * +Inf. Plain integer loops over the stored bits, which the compiler
 * vectorizes: the magnitude bits of each format are ordered like the
 * magnitudes, and widening is monotonic, so the widest 16-bit value widened
 * is the widest value. (All-zero rows come here on every call.) */
static inline uint32_t max_abs_bits(const void* x, size_t dim, int dtype) {
  if (dtype == RMSNORM_F32) {
    const uint32_t* bits = (const uint32_t*) x;
    uint32_t m = 0;
    for (size_t i = 0; i < dim; i++) {
      const uint32_t a = bits[i] & UINT32_C(0x7FFFFFFF);
      m = a > m ? a : m;
    }
    return m;
  }
  const uint16_t* bits = (const uint16_t*) x;
  uint16_t m = 0;
  for (size_t i = 0; i < dim; i++) {
    const uint16_t a = bits[i] & 0x7FFF;
    m = a > m ? a : m;
  }
  return f32_bits(load_f32(&m, 0, dtype)) & UINT32_C(0x7FFFFFFF);
}

/* The rescue scale of a row with max|x_i| = max_bits: 2^k with max|x| * 2^k
 * in [1, 2), k = 127 - biased exponent clamped to [-126, 126] so that 2^k is
 * a normal float32. 0 when the row holds a NaN or an infinity, or is all
 * zeros. */
static inline float rescue_scale(uint32_t max_bits) {
  if (max_bits == 0 || max_bits >= UINT32_C(0x7F800000)) {
    return 0.0f;
  }
  int k = 127 - (int) (max_bits >> 23);
  k = k > 126 ? 126 : (k < -126 ? -126 : k);
  return f32_from_bits((uint32_t) (k + 127) << 23);
}

/* The rescue path of every normalization, for a row whose plain statistics
 * over- or underflowed: redo the row on z_i = x_i * scale with eps_z = eps,
 * then undo the scale in the statistics (rstd * scale, mean / scale).
 * scale == 1 means the row keeps its plain result: it holds a NaN or an
 * infinity, or is all zeros, or eps * 2^k * 2^k overflows (eps then
 * dominates the row so completely that the plain result is right). Scaling
 * by 1 is exact, so 1 is also what "redo on z" would give. */
typedef struct {
  float scale;
  float eps;
} rmsnorm_rescue;

static inline rmsnorm_rescue rescue_of(const void* x, size_t dim, int dtype, float eps) {
  const float s = rescue_scale(max_abs_bits(x, dim, dtype));
  const float eps_scaled = (eps * s) * s;
  if (s == 0.0f || !(eps_scaled <= FLT_MAX)) {
    return (rmsnorm_rescue){1.0f, eps};
  }
  return (rmsnorm_rescue){s, eps_scaled};
}

#endif
