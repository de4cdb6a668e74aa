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

static inline float block_sumsq(const float* x, size_t n, float scale, bool scaled) {
  const v128_t vscale = wasm_f32x4_splat(scale);
  v128_t vacc0 = wasm_f32x4_splat(0.0f);
  v128_t vacc1 = vacc0;
  v128_t vacc2 = vacc0;
  v128_t vacc3 = vacc0;
  size_t i = 0;
  for (; i + RMSNORM_LANES <= n; i += RMSNORM_LANES) {
    vacc0 = wasm_f32x4_add(vacc0, square(wasm_v128_load(x + i), vscale, scaled));
    vacc1 = wasm_f32x4_add(vacc1, square(wasm_v128_load(x + i + 4), vscale, scaled));
    vacc2 = wasm_f32x4_add(vacc2, square(wasm_v128_load(x + i + 8), vscale, scaled));
    vacc3 = wasm_f32x4_add(vacc3, square(wasm_v128_load(x + i + 12), vscale, scaled));
  }
  if (i < n) {
    /* The last 1..15 values, zero-padded to a full step: the padding adds +0
     * to its lanes, which changes nothing, and nothing past x[n) is read. */
    float vtail[RMSNORM_LANES] = {0.0f};
    memcpy(vtail, x + i, (n - i) * sizeof(float));
    vacc0 = wasm_f32x4_add(vacc0, square(wasm_v128_load(vtail), vscale, scaled));
    vacc1 = wasm_f32x4_add(vacc1, square(wasm_v128_load(vtail + 4), vscale, scaled));
    vacc2 = wasm_f32x4_add(vacc2, square(wasm_v128_load(vtail + 8), vscale, scaled));
    vacc3 = wasm_f32x4_add(vacc3, square(wasm_v128_load(vtail + 12), vscale, scaled));
  }
  /* v_j = (L_j + L_j+4) + (L_j+8 + L_j+12), then (v0 + v2) + (v1 + v3). */
  const v128_t vsum = wasm_f32x4_add(wasm_f32x4_add(vacc0, vacc1), wasm_f32x4_add(vacc2, vacc3));
  const v128_t vpair = wasm_f32x4_add(vsum, wasm_i32x4_shuffle(vsum, vsum, 2, 3, 0, 1));
  const v128_t vtotal = wasm_f32x4_add(vpair, wasm_i32x4_shuffle(vpair, vpair, 1, 0, 3, 2));
  return wasm_f32x4_extract_lane(vtotal, 0);
}

/* Outputs i..i+3: ((x [* scale]) * inv) [* w]. w is only read when weighted. */
static inline v128_t normalize4(const float* x, const float* w, size_t i, v128_t vscale,
                                bool scaled, v128_t vinv, bool weighted) {
  v128_t vy = wasm_v128_load(x + i);
  if (scaled) {
    vy = wasm_f32x4_mul(vy, vscale);
  }
  vy = wasm_f32x4_mul(vy, vinv);
  return weighted ? wasm_f32x4_mul(vy, wasm_v128_load(w + i)) : vy;
}

static inline void scale_row_impl(const float* x, const float* w, float* y, size_t dim,
                                  float scale, bool scaled, float inv, bool weighted) {
  const v128_t vscale = wasm_f32x4_splat(scale);
  const v128_t vinv = wasm_f32x4_splat(inv);
  size_t i = 0;
  /* All loads of a step come before its stores, so y == x is safe. */
  for (; i + 16 <= dim; i += 16) {
    const v128_t vy0 = normalize4(x, w, i, vscale, scaled, vinv, weighted);
    const v128_t vy1 = normalize4(x, w, i + 4, vscale, scaled, vinv, weighted);
    const v128_t vy2 = normalize4(x, w, i + 8, vscale, scaled, vinv, weighted);
    const v128_t vy3 = normalize4(x, w, i + 12, vscale, scaled, vinv, weighted);
    wasm_v128_store(y + i, vy0);
    wasm_v128_store(y + i + 4, vy1);
    wasm_v128_store(y + i + 8, vy2);
    wasm_v128_store(y + i + 12, vy3);
  }
  for (; i + 4 <= dim; i += 4) {
    wasm_v128_store(y + i, normalize4(x, w, i, vscale, scaled, vinv, weighted));
  }
  for (; i < dim; i++) {
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

#define RMSNORM_F32_KERNEL rmsnorm_f32__wasmsimd_u16_acc4
#define RMSNORM_F32_RSTD_KERNEL rmsnorm_rstd_f32__wasmsimd_u16_acc4
#include "../rmsnorm_f32_rows.h"
