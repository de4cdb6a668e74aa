/*
 * SIMD128 float32 backward passes of RMSNorm and LayerNorm: 16 values a step
 * in four f32x4 accumulators per sum; vacc[j] holds lanes
 * 4j..4j+3 of the contract's 16 lanes (norm_backward_f32.h). The last
 * 1..15 values of a block go through the same lanes one at a time.
 */
#include <stdbool.h>
#include <stddef.h>

#include "../common.h"
#include "../simd128.h"
#include "norm_backward_f32.h"

static inline float xhat_of(float x, float mean, float rstd, bool centred) {
  return (centred ? x - mean : x) * rstd;
}

static inline v128_t vxhat_of(const float* x, v128_t vmean, v128_t vrstd, bool centred) {
  const v128_t vx = wasm_v128_load(x);
  return wasm_f32x4_mul(centred ? wasm_f32x4_sub(vx, vmean) : vx, vrstd);
}

/* g_i..g_i+3; w is only touched when weighted (it may be NULL otherwise). */
static inline v128_t vg_of(const float* dy, const float* w, size_t i, bool weighted) {
  const v128_t vdy = wasm_v128_load(dy + i);
  return weighted ? wasm_f32x4_mul(vdy, wasm_v128_load(w + i)) : vdy;
}

static inline void block_grad_sums_impl(const float* dy, const float* x, const float* w, size_t n,
                                        float mean, float rstd, bool centred, bool weighted,
                                        float* sum_g, float* sum_gxhat) {
  const v128_t vmean = wasm_f32x4_splat(mean);
  const v128_t vrstd = wasm_f32x4_splat(rstd);
  const v128_t vzero = wasm_f32x4_splat(0.0f);
  v128_t vacc_g[4] = {vzero, vzero, vzero, vzero};
  v128_t vacc_gxhat[4] = {vzero, vzero, vzero, vzero};
  size_t i = 0;
  for (; i + RMSNORM_LANES <= n; i += RMSNORM_LANES) {
    for (size_t j = 0; j < 4; j++) {
      const size_t k = i + 4 * j;
      const v128_t vg = vg_of(dy, w, k, weighted);
      if (centred) {
        vacc_g[j] = wasm_f32x4_add(vacc_g[j], vg);
      }
      vacc_gxhat[j] =
          wasm_f32x4_add(vacc_gxhat[j], wasm_f32x4_mul(vg, vxhat_of(x + k, vmean, vrstd, centred)));
    }
  }
  float lanes_g[RMSNORM_LANES];
  float lanes_gxhat[RMSNORM_LANES];
  f32x4x4_store(lanes_g, vacc_g);
  f32x4x4_store(lanes_gxhat, vacc_gxhat);
  for (size_t l = 0; i < n; i++, l++) {
    const float g = weighted ? dy[i] * w[i] : dy[i];
    lanes_g[l] += g;
    lanes_gxhat[l] += g * xhat_of(x[i], mean, rstd, centred);
  }
  *sum_g = fold_lanes(lanes_g);
  *sum_gxhat = fold_lanes(lanes_gxhat);
}

static inline void block_grad_sums(const float* dy, const float* x, const float* w, size_t n,
                                   float mean, float rstd, bool centred, float* sum_g,
                                   float* sum_gxhat) {
  if (w != NULL) {
    block_grad_sums_impl(dy, x, w, n, mean, rstd, centred, true, sum_g, sum_gxhat);
  } else {
    block_grad_sums_impl(dy, x, w, n, mean, rstd, centred, false, sum_g, sum_gxhat);
  }
}

static inline void grad_row_impl(const float* dy, const float* x, const float* w, float* dx,
                                 float* dw, float* db, size_t dim, float mean, float rstd,
                                 bool centred, float a, float c, bool weighted, bool biased) {
  const v128_t vmean = wasm_f32x4_splat(mean);
  const v128_t vrstd = wasm_f32x4_splat(rstd);
  const v128_t va = wasm_f32x4_splat(a);
  const v128_t vc = wasm_f32x4_splat(c);
  size_t i = 0;
  /* Each step loads dy before it stores dx, so dx == dy is safe. */
  for (; i + 4 <= dim; i += 4) {
    const v128_t vdy = wasm_v128_load(dy + i);
    const v128_t vxhat = vxhat_of(x + i, vmean, vrstd, centred);
    v128_t vg = weighted ? wasm_f32x4_mul(vdy, wasm_v128_load(w + i)) : vdy;
    vg = centred ? wasm_f32x4_sub(vg, va) : vg;
    wasm_v128_store(dx + i, wasm_f32x4_mul(wasm_f32x4_sub(vg, wasm_f32x4_mul(vxhat, vc)), vrstd));
    if (weighted) {
      wasm_v128_store(dw + i, wasm_f32x4_add(wasm_v128_load(dw + i), wasm_f32x4_mul(vdy, vxhat)));
    }
    if (biased) {
      wasm_v128_store(db + i, wasm_f32x4_add(wasm_v128_load(db + i), vdy));
    }
  }
  for (; i < dim; i++) {
    const float dyi = dy[i];
    const float xhat = xhat_of(x[i], mean, rstd, centred);
    const float g = weighted ? dyi * w[i] : dyi;
    dx[i] = ((centred ? g - a : g) - xhat * c) * rstd;
    if (weighted) {
      dw[i] += dyi * xhat;
    }
    if (biased) {
      db[i] += dyi;
    }
  }
}

/* One specialised loop per (weight, bias) combination. */
static inline void grad_row(const float* dy, const float* x, const float* w, float* dx, float* dw,
                            float* db, size_t dim, float mean, float rstd, bool centred, float a,
                            float c) {
  if (w != NULL && db != NULL) {
    grad_row_impl(dy, x, w, dx, dw, db, dim, mean, rstd, centred, a, c, true, true);
  } else if (w != NULL) {
    grad_row_impl(dy, x, w, dx, dw, db, dim, mean, rstd, centred, a, c, true, false);
  } else if (db != NULL) {
    grad_row_impl(dy, x, w, dx, dw, db, dim, mean, rstd, centred, a, c, false, true);
  } else {
    grad_row_impl(dy, x, w, dx, dw, db, dim, mean, rstd, centred, a, c, false, false);
  }
}

#define RMSNORM_BACKWARD_F32_KERNEL rmsnorm_wasm_f32_rmsnorm_backward_ukernel__wasmsimd
#define LAYERNORM_BACKWARD_F32_KERNEL rmsnorm_wasm_f32_layernorm_backward_ukernel__wasmsimd
#include "rows.inc"
