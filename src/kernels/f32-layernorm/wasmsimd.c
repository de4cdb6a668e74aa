/*
 * SIMD128 float32 LayerNorm: 16 values a step in four f32x4 accumulators per
 * sum; vacc0 holds lanes 0-3 of the contract's 16 lanes
 * (layernorm_f32.h), vacc1 lanes 4-7, and so on. The last 1..15 values of
 * a block go through the same lanes one at a time: zero padding would not
 * do here, since a padded 0 has the deviation -mean_hi.
 */
#include <stdbool.h>
#include <stddef.h>

#include "../common.h"
#include "../simd128.h"
#include "layernorm_f32.h"

static inline v128_t load_z(const float* x, v128_t vscale, bool scaled) {
  const v128_t vx = wasm_v128_load(x);
  return scaled ? wasm_f32x4_mul(vx, vscale) : vx;
}

static inline float block_sum(const float* x, size_t n, float scale, bool scaled) {
  const v128_t vscale = wasm_f32x4_splat(scale);
  v128_t vacc[4] = {wasm_f32x4_splat(0.0f), wasm_f32x4_splat(0.0f), wasm_f32x4_splat(0.0f),
                    wasm_f32x4_splat(0.0f)};
  size_t i = 0;
  for (; i + RMSNORM_LANES <= n; i += RMSNORM_LANES) {
    for (size_t j = 0; j < 4; j++) {
      vacc[j] = wasm_f32x4_add(vacc[j], load_z(x + i + 4 * j, vscale, scaled));
    }
  }
  float lanes[RMSNORM_LANES];
  f32x4x4_store(lanes, vacc);
  for (size_t l = 0; i < n; i++, l++) {
    lanes[l] += scaled ? x[i] * scale : x[i];
  }
  return fold_lanes(lanes);
}

static inline void block_deviation_sums(const float* x, size_t n, float scale, bool scaled,
                                        float mean_hi, float* sum, float* sumsq) {
  const v128_t vscale = wasm_f32x4_splat(scale);
  const v128_t vmean = wasm_f32x4_splat(mean_hi);
  v128_t vacc[4] = {wasm_f32x4_splat(0.0f), wasm_f32x4_splat(0.0f), wasm_f32x4_splat(0.0f),
                    wasm_f32x4_splat(0.0f)};
  v128_t vacc2[4] = {vacc[0], vacc[0], vacc[0], vacc[0]};
  size_t i = 0;
  for (; i + RMSNORM_LANES <= n; i += RMSNORM_LANES) {
    for (size_t j = 0; j < 4; j++) {
      const v128_t ve = wasm_f32x4_sub(load_z(x + i + 4 * j, vscale, scaled), vmean);
      vacc[j] = wasm_f32x4_add(vacc[j], ve);
      vacc2[j] = wasm_f32x4_add(vacc2[j], wasm_f32x4_mul(ve, ve));
    }
  }
  float lanes[RMSNORM_LANES];
  float lanes2[RMSNORM_LANES];
  f32x4x4_store(lanes, vacc);
  f32x4x4_store(lanes2, vacc2);
  for (size_t l = 0; i < n; i++, l++) {
    const float e = (scaled ? x[i] * scale : x[i]) - mean_hi;
    lanes[l] += e;
    lanes2[l] += e * e;
  }
  *sum = fold_lanes(lanes);
  *sumsq = fold_lanes(lanes2);
}

/* Outputs i..i+3 of step 6. w and b are only read when weighted / biased. */
static inline v128_t normalize4(const float* x, const float* w, const float* b, size_t i,
                                v128_t vscale, bool scaled, v128_t vmean_hi, v128_t vmean_lo,
                                v128_t vrstd, bool weighted, bool biased) {
  v128_t vy = wasm_f32x4_sub(wasm_f32x4_sub(load_z(x + i, vscale, scaled), vmean_hi), vmean_lo);
  vy = wasm_f32x4_mul(vy, vrstd);
  if (weighted) {
    vy = wasm_f32x4_mul(vy, wasm_v128_load(w + i));
  }
  return biased ? wasm_f32x4_add(vy, wasm_v128_load(b + i)) : vy;
}

static inline void normalize_row_impl(const float* x, const float* w, const float* b, float* y,
                                      size_t dim, float scale, bool scaled, float mean_hi,
                                      float mean_lo, float rstd, bool weighted, bool biased) {
  const v128_t vscale = wasm_f32x4_splat(scale);
  const v128_t vmean_hi = wasm_f32x4_splat(mean_hi);
  const v128_t vmean_lo = wasm_f32x4_splat(mean_lo);
  const v128_t vrstd = wasm_f32x4_splat(rstd);
  size_t i = 0;
  /* All loads of a step come before its stores, so y == x is safe. */
  for (; i + 16 <= dim; i += 16) {
    v128_t vy[4];
    for (size_t j = 0; j < 4; j++) {
      vy[j] = normalize4(x, w, b, i + 4 * j, vscale, scaled, vmean_hi, vmean_lo, vrstd, weighted,
                         biased);
    }
    for (size_t j = 0; j < 4; j++) {
      wasm_v128_store(y + i + 4 * j, vy[j]);
    }
  }
  for (; i + 4 <= dim; i += 4) {
    wasm_v128_store(
        y + i, normalize4(x, w, b, i, vscale, scaled, vmean_hi, vmean_lo, vrstd, weighted, biased));
  }
  for (; i < dim; i++) {
    float v = (((scaled ? x[i] * scale : x[i]) - mean_hi) - mean_lo) * rstd;
    v = weighted ? v * w[i] : v;
    y[i] = biased ? v + b[i] : v;
  }
}

/* One specialised loop per (weight, bias) combination. */
static inline void normalize_row(const float* x, const float* w, const float* b, float* y,
                                 size_t dim, float scale, bool scaled, float mean_hi, float mean_lo,
                                 float rstd) {
  if (w != NULL && b != NULL) {
    normalize_row_impl(x, w, b, y, dim, scale, scaled, mean_hi, mean_lo, rstd, true, true);
  } else if (w != NULL) {
    normalize_row_impl(x, w, b, y, dim, scale, scaled, mean_hi, mean_lo, rstd, true, false);
  } else if (b != NULL) {
    normalize_row_impl(x, w, b, y, dim, scale, scaled, mean_hi, mean_lo, rstd, false, true);
  } else {
    normalize_row_impl(x, w, b, y, dim, scale, scaled, mean_hi, mean_lo, rstd, false, false);
  }
}

#define LAYERNORM_F32_KERNEL rmsnorm_wasm_f32_layernorm_ukernel__wasmsimd
#include "rows.inc"
