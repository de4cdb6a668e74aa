/*
 * Pieces every float32 row driver shares (RMSNorm, LayerNorm and their
 * backward passes), so that each numerics rule of the contract in
 * rmsnorm_f32.h is implemented once:
 *
 *   f32_fold16            the fixed fold of the 16 lanes of one block
 *   f32_pairwise_*        the pairwise sum of a row's block sums
 *   f32_rescue_scale      the power of two 2^k of the rescue paths
 *
 * Every blocked sum in this package is "step 1" of rmsnorm_f32.h applied to
 * some per-value term t_i: blocks of RMSNORM_BLOCK values, value i of a block
 * to lane (i mod 16), acc = acc + t_i from +0 in index order, the fold below,
 * the block sums added pairwise.
 */
#ifndef RMSNORM_F32_ROWSUM_H
#define RMSNORM_F32_ROWSUM_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "rmsnorm_f32.h"

/* v_j = (L_j + L_{j+4}) + (L_{j+8} + L_{j+12}), block = (v_0 + v_2) + (v_1 + v_3). */
static inline float f32_fold16(const float lanes[RMSNORM_LANES]) {
  float v[4];
  for (size_t j = 0; j < 4; j++) {
    v[j] = (lanes[j] + lanes[j + 4]) + (lanes[j + 8] + lanes[j + 12]);
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

/* The rescue scale of a row: 2^k with max|x_i| * 2^k in [1, 2), k clamped to
 * [-126, 126] so that 2^k is a normal float32. 0 when the row holds a NaN or
 * an infinity, or is all zeros (such rows keep the plain result). */
static inline float f32_rescue_scale(const float* x, size_t dim) {
  uint32_t m = 0; /* max |x_i| as bits: ordered like magnitudes, NaN above +Inf */
  for (size_t i = 0; i < dim; i++) {
    uint32_t u;
    memcpy(&u, &x[i], sizeof u);
    u &= UINT32_C(0x7FFFFFFF);
    m = u > m ? u : m;
  }
  if (m == 0 || m >= UINT32_C(0x7F800000)) {
    return 0.0f;
  }
  int k = 127 - (int) (m >> 23);
  k = k > 126 ? 126 : (k < -126 ? -126 : k);
  const uint32_t scale_bits = (uint32_t) (k + 127) << 23;
  float scale;
  memcpy(&scale, &scale_bits, sizeof scale);
  return scale;
}

#endif
