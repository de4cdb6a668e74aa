/*
 * SIMD128 float32 RMSNorm: 16 values a step in four f32x4 accumulators
 * (u16_acc4). vacc0 holds lanes 0-3, vacc1 lanes 4-7, vacc2 lanes 8-11 and
 * vacc3 lanes 12-15 of the contract's 16 lanes (../rmsnorm_f32.h), so the
 * vector adds are the lane adds, and the fold below is the contract's fold.
 */
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "../rmsnorm_f32.h"
#include "../simd128.h"

static inline v128_t square(v128_t vx, v128_t vscale, bool scaled) {
  if (scaled) {
    vx = wasm_f32x4_mul(vx, vscale);
  }
  return wasm_f32x4_mul(vx, vx);
}

/* The contract's 16 lanes of one block, four to a vector. */
struct lanes16 {
  v128_t vacc0, vacc1, vacc2, vacc3;
};

static inline struct lanes16 lanes16_zero(void) {
  const v128_t vzero = wasm_f32x4_splat(0.0f);
  return (struct lanes16){vzero, vzero, vzero, vzero};
}

/* Lane j += square(x[j]) for the 16 values at x. */
static inline struct lanes16 lanes16_step(struct lanes16 acc, const float* x, v128_t vscale,
                                          bool scaled) {
  acc.vacc0 = wasm_f32x4_add(acc.vacc0, square(wasm_v128_load(x), vscale, scaled));
  acc.vacc1 = wasm_f32x4_add(acc.vacc1, square(wasm_v128_load(x + 4), vscale, scaled));
  acc.vacc2 = wasm_f32x4_add(acc.vacc2, square(wasm_v128_load(x + 8), vscale, scaled));
  acc.vacc3 = wasm_f32x4_add(acc.vacc3, square(wasm_v128_load(x + 12), vscale, scaled));
  return acc;
}

/* The last 1..15 values, zero-padded to a full step: the padding adds +0 to
 * its lanes, which changes nothing, and nothing past x[n) is read. */
static inline struct lanes16 lanes16_tail(struct lanes16 acc, const float* x, size_t n,
                                          v128_t vscale, bool scaled) {
  float vtail[RMSNORM_LANES] = {0.0f};
  memcpy(vtail, x, n * sizeof(float));
  return lanes16_step(acc, vtail, vscale, scaled);
}

/* v_j = (L_j + L_j+4) + (L_j+8 + L_j+12), then (v0 + v2) + (v1 + v3). */
static inline float lanes16_fold(struct lanes16 acc) {
  const v128_t vsum = wasm_f32x4_add(wasm_f32x4_add(acc.vacc0, acc.vacc1),
                                     wasm_f32x4_add(acc.vacc2, acc.vacc3));
  const v128_t vpair = wasm_f32x4_add(vsum, wasm_i32x4_shuffle(vsum, vsum, 2, 3, 0, 1));
  const v128_t vtotal = wasm_f32x4_add(vpair, wasm_i32x4_shuffle(vpair, vpair, 1, 0, 3, 2));
  return wasm_f32x4_extract_lane(vtotal, 0);
}

static inline float block_sumsq(const float* x, size_t n, float scale, bool scaled) {
  const v128_t vscale = wasm_f32x4_splat(scale);
  struct lanes16 acc = lanes16_zero();
  size_t i = 0;
  for (; i + RMSNORM_LANES <= n; i += RMSNORM_LANES) {
    acc = lanes16_step(acc, x + i, vscale, scaled);
  }
  if (i < n) {
    acc = lanes16_tail(acc, x + i, n - i, vscale, scaled);
  }
  return lanes16_fold(acc);
}

/* Outputs x[0..4): ((x [* scale]) * inv) [* w]. w is only read when weighted. */
static inline v128_t normalize4(const float* x, const float* w, v128_t vscale, bool scaled,
                                v128_t vinv, bool weighted) {
  v128_t vy = wasm_v128_load(x);
  if (scaled) {
    vy = wasm_f32x4_mul(vy, vscale);
  }
  vy = wasm_f32x4_mul(vy, vinv);
  return weighted ? wasm_f32x4_mul(vy, wasm_v128_load(w)) : vy;
}

/* Outputs y[0..16). All loads come before the stores, so y == x is safe. */
static inline void normalize16(const float* x, const float* w, float* y, v128_t vscale,
                               bool scaled, v128_t vinv, bool weighted) {
  const v128_t vy0 = normalize4(x, w, vscale, scaled, vinv, weighted);
  const v128_t vy1 = normalize4(x + 4, w + 4, vscale, scaled, vinv, weighted);
  const v128_t vy2 = normalize4(x + 8, w + 8, vscale, scaled, vinv, weighted);
  const v128_t vy3 = normalize4(x + 12, w + 12, vscale, scaled, vinv, weighted);
  wasm_v128_store(y, vy0);
  wasm_v128_store(y + 4, vy1);
  wasm_v128_store(y + 8, vy2);
  wasm_v128_store(y + 12, vy3);
}

/* The loops advance the pointers rather than index them: clang then gives
 * each access of a step a constant offset from one address (x + 4 is
 * `v128.load offset=16`), where an index it knows to be a multiple of 16
 * becomes `(i << 2) | 16` plus a base, one more add per access for V8. */
static inline void scale_row_impl(const float* x, const float* w, float* y, size_t dim,
                                  float scale, bool scaled, float inv, bool weighted) {
  const v128_t vscale = wasm_f32x4_splat(scale);
  const v128_t vinv = wasm_f32x4_splat(inv);
  const float* const xend = x + dim;
  for (; xend - x >= 16; x += 16, y += 16) {
    normalize16(x, w, y, vscale, scaled, vinv, weighted);
    if (weighted) {
      w += 16;
    }
  }
  for (; xend - x >= 4; x += 4, y += 4) {
    wasm_v128_store(y, normalize4(x, w, vscale, scaled, vinv, weighted));
    if (weighted) {
      w += 4;
    }
  }
  for (size_t i = 0; x + i < xend; i++) {
    const float v = (scaled ? x[i] * scale : x[i]) * inv;
    y[i] = weighted ? v * w[i] : v;
  }
}

static inline void scale_row(const float* x, const float* w, float* y, size_t dim,
                             float scale, bool scaled, float inv) {
  if (w != NULL) {
    scale_row_impl(x, w, y, dim, scale, scaled, inv, true);
  } else {
    scale_row_impl(x, w, y, dim, scale, scaled, inv, false);
  }
}

static inline float block_sumsq_scaling_impl(const float* xn, size_t n, const float* x,
                                             const float* w, float* y, float inv,
                                             bool weighted) {
  const v128_t vone = wasm_f32x4_splat(1.0f);
  const v128_t vinv = wasm_f32x4_splat(inv);
  struct lanes16 acc = lanes16_zero();
  size_t i = 0;
  for (; i + RMSNORM_LANES <= n; i += RMSNORM_LANES) {
    acc = lanes16_step(acc, xn + i, vone, false);
    normalize16(x + i, weighted ? w + i : w, y + i, vone, false, vinv, weighted);
  }
  if (i < n) {
    acc = lanes16_tail(acc, xn + i, n - i, vone, false);
    scale_row(x + i, weighted ? w + i : w, y + i, n - i, 1.0f, false, inv);
  }
  return lanes16_fold(acc);
}

static inline float block_sumsq_scaling(const float* xn, size_t n, const float* x,
                                        const float* w, float* y, float inv) {
  return w != NULL ? block_sumsq_scaling_impl(xn, n, x, w, y, inv, true)
                   : block_sumsq_scaling_impl(xn, n, x, w, y, inv, false);
}

#define RMSNORM_F32_KERNEL rmsnorm_f32__wasmsimd_u16_acc4
#include "../rmsnorm_f32_rows.h"
