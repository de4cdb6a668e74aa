/*
 * SIMD128 RMSNorm: 16 values a step in four f32x4 accumulators.
 * vacc0 holds lanes 0-3, vacc1 lanes 4-7, vacc2 lanes 8-11 and vacc3 lanes
 * 12-15 of the contract's 16 lanes (rmsnorm_f32.h), so the vector adds are
 * the lane adds, and the fold below is the contract's fold. 16-bit storage is
 * widened on load and narrowed on store (../float16_wasmsimd.h).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../f32-convert/convert_f32.h"
#include "../f32-quantize/blocks_wasmsimd.h"
#include "../f32-quantize/quantize_f32.h"
#include "../float16_wasmsimd.h"
#include "../q8_blocks.h"
#include "../simd128.h"
#include "scalar_steps.h"

/* Lane order. Vectors of float32 values hold consecutive values. 16-bit
 * ones may also hold them interleaved, which widens and narrows with fewer
 * instructions (../float16_wasmsimd.h): eight values 0..7 are then the two
 * vectors 0,2,4,6 and 1,3,5,7 instead of 0-3 and 4-7.
 *
 * The sums of squares always take 16-bit values interleaved: a 16-value step is
 * the vectors 0,2,4,6 | 1,3,5,7 | 8,10,12,14 | 9,11,13,15, and vector k goes
 * to accumulator k, so each of the contract's 16 lanes still sums exactly
 * its own values in index order, only in another register lane;
 * fold_accumulators puts the lanes back in order before folding.
 *
 * Step 4 takes them interleaved too, except with float32 weights, which
 * would then need two shuffles per eight values (consecutive values cost one
 * instruction more per eight to store). */
RMSNORM_INLINE bool write_interleaved(int dtype, int weight_dtype) {
  return dtype != RMSNORM_F32 && weight_dtype != RMSNORM_F32;
}

/* Values 0..7 at p, widened to float32, as two f32x4: consecutive, or
 * interleaved if `interleaved` and dtype is 16-bit. Either way the 16-bit
 * patterns land in the high halves of the lanes, where a bfloat16 is its
 * float32 and float16 takes one conversion: the short one
 * (f16hi_to_f32x4_finite) where the caller knows the values `finite`. */
RMSNORM_INLINE void load8(const void* p, int dtype, bool interleaved, bool finite, v128_t v[2]) {
  if (dtype == RMSNORM_F32) {
    v[0] = wasm_v128_load(p);
    v[1] = wasm_v128_load((const float*) p + 4);
    return;
  }
  const v128_t vh = wasm_v128_load(p);
  if (dtype == RMSNORM_F16 && finite) {
    /* the short conversion ignores the low halves: odd values need no mask */
    v[0] = f16hi_to_f32x4_finite(interleaved ? bf16x8_even_to_f32x4(vh) : bf16x8_low_to_f32x4(vh));
    v[1] = f16hi_to_f32x4_finite(interleaved ? vh : bf16x8_high_to_f32x4(vh));
    return;
  }
  if (interleaved) {
    v[0] = bf16x8_even_to_f32x4(vh);
    v[1] = bf16x8_odd_to_f32x4(vh);
  } else {
    v[0] = bf16x8_low_to_f32x4(vh);
    v[1] = bf16x8_high_to_f32x4(vh);
  }
  if (dtype == RMSNORM_F16) {
    v[0] = f16hi_to_f32x4(v[0]);
    v[1] = f16hi_to_f32x4(v[1]);
  }
}

/* Values i..i+15 of a row of `dtype`, widened, as four f32x4 in the order
 * of the sums of squares (which must see any Inf or NaN: not `finite`). */
RMSNORM_INLINE void load16(const void* x, size_t i, int dtype, v128_t v[4]) {
  const char* p = (const char*) x + i * dtype_size(dtype);
  load8(p, dtype, true, false, v);
  load8(p + 8 * dtype_size(dtype), dtype, true, false, v + 2);
}

/* Values i..i+3, widened (`finite` as in load8). */
RMSNORM_INLINE v128_t load4(const void* x, size_t i, int dtype, bool finite) {
  if (dtype == RMSNORM_F32) {
    return wasm_v128_load((const float*) x + i);
  }
  const v128_t vh = wasm_u32x4_load16x4((const uint16_t*) x + i);
  if (dtype == RMSNORM_BF16) {
    return bf16x4_to_f32x4(vh);
  }
  return finite ? f16hi_to_f32x4_finite(wasm_i32x4_shl(vh, 16)) : f16x4_to_f32x4(vh);
}

/* The rounding below takes `finite` (a compile-time constant): true where
 * no lane can be NaN, which spares the NaN handling. Rows on the vector
 * path are finite (their sum of squares is), so x * inv is finite; times a
 * finite weight it may overflow to Inf, which the conversions round
 * correctly, but not become NaN. The kernel checks the weight once per call
 * (rows.inc) and sends rows to the scalar writer if it is not. */

/* The 16-bit patterns of four float32 values, in u32 lanes. */
RMSNORM_INLINE v128_t narrow4(v128_t v, int dtype, bool finite) {
  return dtype == RMSNORM_BF16 ? f32x4_to_bf16x4(v, finite) : f32x4_to_f16x4(v, finite);
}

/* v rounded to `dtype`, still as float32 (identity for float32). */
RMSNORM_INLINE v128_t round4(v128_t v, int dtype, bool finite) {
  switch (dtype) {
    case RMSNORM_BF16: return f32x4_round_bf16(v, finite);
    case RMSNORM_F16: return f32x4_round_f16(v, finite);
    default: return v;
  }
}

/* Stores four float32 values, rounded to `dtype`, as values i..i+3. */
RMSNORM_INLINE void store4(void* y, size_t i, v128_t v, int dtype, bool finite) {
  if (dtype == RMSNORM_F32) {
    wasm_v128_store((float*) y + i, v);
    return;
  }
  const v128_t vh = narrow4(v, dtype, finite);
  wasm_v128_store64_lane((uint16_t*) y + i, wasm_u16x8_narrow_i32x4(vh, vh), 0);
}

/* Stores eight float32 values, in load8's order, rounded to `dtype`, as
 * values 0..7 at p. */
RMSNORM_INLINE void store8(void* p, const v128_t v[2], int dtype, bool interleaved, bool finite) {
  if (dtype == RMSNORM_F32) {
    wasm_v128_store(p, v[0]);
    wasm_v128_store((float*) p + 4, v[1]);
  } else if (interleaved) {
    wasm_v128_store(p, dtype == RMSNORM_BF16 ? f32x4x2_to_bf16x8_interleaved(v[0], v[1], finite)
                                             : f32x4x2_to_f16x8_interleaved(v[0], v[1], finite));
  } else {
    /* u16 patterns in u32 lanes: the saturating narrow keeps them as they are */
    wasm_v128_store(
        p, wasm_u16x8_narrow_i32x4(narrow4(v[0], dtype, finite), narrow4(v[1], dtype, finite)));
  }
}

/* Stores sixteen values, in load16's order, as values i..i+15. */
RMSNORM_INLINE void store16(void* y, size_t i, const v128_t v[4], int dtype, bool finite) {
  char* p = (char*) y + i * dtype_size(dtype);
  store8(p, v, dtype, true, finite);
  store8(p + 8 * dtype_size(dtype), v + 2, dtype, true, finite);
}

RMSNORM_INLINE void accumulate_squares(v128_t vacc[4], const v128_t v[4]) {
  for (int k = 0; k < 4; k++) {
    vacc[k] = wasm_f32x4_add(vacc[k], wasm_f32x4_mul(v[k], v[k]));
  }
}

/* v_j = (L_j + L_j+4) + (L_j+8 + L_j+12), then (v0 + v2) + (v1 + v3), once
 * the lanes are back in order (16-bit: vacc[0] holds lanes 0,2,4,6 and
 * vacc[1] lanes 1,3,5,7; likewise vacc[2], vacc[3] for lanes 8-15). */
RMSNORM_INLINE float fold_accumulators(const v128_t vacc[4], int dtype) {
  v128_t vlanes[4] = {vacc[0], vacc[1], vacc[2], vacc[3]};
  if (dtype != RMSNORM_F32) {
    for (int k = 0; k < 4; k += 2) {
      vlanes[k] = wasm_i32x4_shuffle(vacc[k], vacc[k + 1], 0, 4, 1, 5);
      vlanes[k + 1] = wasm_i32x4_shuffle(vacc[k], vacc[k + 1], 2, 6, 3, 7);
    }
  }
  const v128_t vsum =
      wasm_f32x4_add(wasm_f32x4_add(vlanes[0], vlanes[1]), wasm_f32x4_add(vlanes[2], vlanes[3]));
  const v128_t vpair = wasm_f32x4_add(vsum, wasm_i32x4_shuffle(vsum, vsum, 2, 3, 0, 1));
  const v128_t vtotal = wasm_f32x4_add(vpair, wasm_i32x4_shuffle(vpair, vpair, 1, 0, 3, 2));
  return wasm_f32x4_extract_lane(vtotal, 0);
}

/* Values i..n-1 (1..15 of them) in one zero-padded step. They are staged in
 * `dtype` (each is exactly a value of it: loaded from it, or rounded to it)
 * so that the step loads them in the lane order of `dtype`; the padding, +0,
 * adds +0 to its lanes, which changes nothing. */
RMSNORM_INLINE void accumulate_tail(v128_t vacc[4], const void* x, void* r, size_t i, size_t n,
                                    int dtype, bool add) {
  union {
    float f32[RMSNORM_LANES];
    uint16_t u16[RMSNORM_LANES];
  } vtail = {{0.0f}};
  for (size_t j = 0; i + j < n; j++) {
    float value = load_f32(x, i + j, dtype);
    if (add) {
      value = round_to(value + load_f32(r, i + j, dtype), dtype);
      store_f32(r, i + j, value, dtype);
    }
    store_f32(&vtail, j, value, dtype);
  }
  v128_t v[4];
  load16(&vtail, 0, dtype, v);
  accumulate_squares(vacc, v);
}

/* Both block sums: the plain one (r == NULL) and the fused residual add. The
 * last 1..15 values go through a zero-padded float32 step: the padding adds
 * +0 to its lanes, which changes nothing, and nothing past n is touched. */
RMSNORM_INLINE float block_sumsq_impl(const void* x, void* r, size_t n, int dtype, bool add) {
  v128_t vacc[4];
  for (int k = 0; k < 4; k++) {
    vacc[k] = wasm_f32x4_splat(0.0f);
  }
  size_t i = 0;
  /* Pointers advance, as in block_sumsq_writing (which says why). */
  const size_t step = RMSNORM_LANES * dtype_size(dtype);
  const char* px = (const char*) x;
  char* pr = (char*) r;
  for (; i + RMSNORM_LANES <= n; i += RMSNORM_LANES, px += step) {
    v128_t v[4];
    load16(px, 0, dtype, v);
    if (add) {
      v128_t vr[4];
      load16(pr, 0, dtype, vr);
      for (int k = 0; k < 4; k++) {
        v[k] = round4(wasm_f32x4_add(v[k], vr[k]), dtype, false);
      }
      store16(pr, 0, v, dtype, false);
      pr += step;
    }
    accumulate_squares(vacc, v);
  }
  if (i < n) {
    accumulate_tail(vacc, x, r, i, n, dtype, add);
  }
  return fold_accumulators(vacc, dtype);
}

/* float16's plain sum with the short conversion (f16hi_to_f32x4_finite),
 * exact on finite halves, and the largest magnitude's bits tracked beside
 * it (two instructions per eight halves, where the full conversion costs
 * about twenty-five more). A block holding an Inf or a NaN is summed again
 * with the full conversion, whose sum is the contract's Inf or NaN. Same
 * lanes, same order: the same sum. */
RMSNORM_INLINE float block_sumsq_f16(const void* x, size_t n) {
  v128_t vacc[4];
  for (int k = 0; k < 4; k++) {
    vacc[k] = wasm_f32x4_splat(0.0f);
  }
  v128_t vlargest = wasm_i16x8_splat(0);
  size_t i = 0;
  const char* px = (const char*) x;
  for (; i + RMSNORM_LANES <= n; i += RMSNORM_LANES, px += RMSNORM_LANES * sizeof(uint16_t)) {
    v128_t v[4];
    for (size_t h = 0; h < 2; h++) {
      vlargest = f16x8_largest_magnitude(vlargest, wasm_v128_load(px + 16 * h));
      load8(px + 16 * h, RMSNORM_F16, true, true, v + 2 * h);
    }
    accumulate_squares(vacc, v);
  }
  if (!f16x8_all_finite(vlargest)) {
    return block_sumsq_impl(x, NULL, n, RMSNORM_F16, false);
  }
  if (i < n) {
    accumulate_tail(vacc, x, NULL, i, n, RMSNORM_F16, false);
  }
  return fold_accumulators(vacc, RMSNORM_F16);
}

RMSNORM_INLINE float block_sumsq(const void* x, size_t n, int dtype) {
  return dtype == RMSNORM_F16 ? block_sumsq_f16(x, n) : block_sumsq_impl(x, NULL, n, dtype, false);
}

RMSNORM_INLINE float block_add_sumsq(const void* x, void* r, size_t n, int dtype) {
  return block_sumsq_impl(x, r, n, dtype, true);
}

/* round4 of four values v = x * inv of a vector row (not the rescue's):
 * |v| is at most about sqrt(dim), as x_i^2 is at most the row's sum of
 * squares (a sum of non-negative terms rounded to nearest is never below
 * one of them) and inv is 1 / sqrt(sum / dim + eps), to a few roundings.
 * That is below float16's overflow (65520) for any row a 32-bit memory
 * holds (dim < 2^31: sqrt(dim) < 46341), so float16 takes the rounding
 * without the overflow's steps there; memory64 rows may be longer. */
RMSNORM_INLINE v128_t round4_normalized(v128_t v, int dtype) {
  if (dtype == RMSNORM_F16 && SIZE_MAX <= UINT32_MAX) {
    return f32x4_round_f16_bounded(v);
  }
  return round4(v, dtype, true);
}

/* The weight's part of step 4 for four values v = x * inv and their weights
 * vw, widened: offset, cast mode, multiply; the output rounding is the
 * store's (compare scalar_finish). vw is unused without a weight. */
RMSNORM_INLINE v128_t weigh4(v128_t v, v128_t vw, v128_t voffset, int dtype, int weight_dtype,
                             bool offset, int cast_mode) {
  if (weight_dtype == RMSNORM_NO_WEIGHT) {
    return v;
  }
  if (offset) {
    vw = wasm_f32x4_add(voffset, vw);
  }
  if (cast_mode == RMSNORM_CAST_LLAMA) {
    v = round4_normalized(v, dtype);
  }
  return wasm_f32x4_mul(v, vw);
}

/* All of step 4 for values i..i+7: load, times inv, weigh4, store. */
RMSNORM_INLINE void write8(const void* src, const void* w, void* y, size_t i, v128_t vinv,
                           v128_t voffset, int dtype, int weight_dtype, bool offset,
                           int cast_mode) {
  const bool interleaved = write_interleaved(dtype, weight_dtype);
  v128_t v[2];
  v128_t vw[2] = {vinv, vinv}; /* unused without a weight */
  load8((const char*) src + i * dtype_size(dtype), dtype, interleaved, true, v);
  if (weight_dtype != RMSNORM_NO_WEIGHT) {
    load8((const char*) w + i * dtype_size(weight_dtype), weight_dtype, interleaved, true, vw);
  }
  for (int k = 0; k < 2; k++) {
    v[k] =
        weigh4(wasm_f32x4_mul(v[k], vinv), vw[k], voffset, dtype, weight_dtype, offset, cast_mode);
  }
  store8((char*) y + i * dtype_size(dtype), v, dtype, interleaved, true);
}

/* All of step 4 for values i..i+3, in order, 16-bit storage narrowed four
 * at a time. */
RMSNORM_INLINE void write4(const void* src, const void* w, void* y, size_t i, v128_t vinv,
                           v128_t voffset, int dtype, int weight_dtype, bool offset,
                           int cast_mode) {
  const v128_t v = wasm_f32x4_mul(load4(src, i, dtype, true), vinv);
  const v128_t vw = weight_dtype == RMSNORM_NO_WEIGHT ? vinv : load4(w, i, weight_dtype, true);
  store4(y, i, weigh4(v, vw, voffset, dtype, weight_dtype, offset, cast_mode), dtype, true);
}

/* The 1..3 values a row's vector loop leaves over go to rows.inc's one
 * shared copy of the scalar writer, with every choice made at run time. */
static void write_scalar(const void* src, const void* w, void* y, size_t start, size_t end,
                         float inv, float scale, float weight_offset, int dtype, int weight_dtype,
                         bool offset, int cast_mode);

RMSNORM_INLINE void write_row(const void* src, const void* w, void* y, size_t dim, float inv,
                              float weight_offset, int dtype, int weight_dtype, bool offset,
                              int cast_mode) {
  const v128_t vinv = wasm_f32x4_splat(inv);
  const v128_t voffset = wasm_f32x4_splat(weight_offset);
  size_t i = 0;
  /* All loads of a step come before its stores, so y == src is safe.
   * Pointers advance, as in block_sumsq_writing (which says why). */
  const size_t step = 16 * dtype_size(dtype);
  const size_t weight_step = weight_dtype == RMSNORM_NO_WEIGHT ? 0 : 16 * dtype_size(weight_dtype);
  const char* ps = (const char*) src;
  const char* pw = (const char*) w;
  char* py = (char*) y;
  for (; i + 16 <= dim; i += 16, ps += step, py += step) {
    for (size_t h = 0; h < 16; h += 8) {
      write8(ps, pw, py, h, vinv, voffset, dtype, weight_dtype, offset, cast_mode);
    }
    if (weight_step != 0) {
      pw += weight_step;
    }
  }
  for (; i + 4 <= dim; i += 4) {
    write4(src, w, y, i, vinv, voffset, dtype, weight_dtype, offset, cast_mode);
  }
  if (i < dim) {
    write_scalar(src, w, y, i, dim, inv, 1.0f, weight_offset, dtype, weight_dtype, offset,
                 cast_mode);
  }
}

/* One 16-value step of block_sumsq_writing: the squares of next[j..j+15]
 * into the accumulators, step 4 for src[j..j+15] (w[j..j+15]) into y. */
RMSNORM_INLINE void step_sumsq_writing(v128_t vacc[4], const char* pn, const char* ps,
                                       const char* pw, char* py, size_t j, v128_t vinv,
                                       v128_t voffset, int dtype, int weight_dtype, bool offset,
                                       int cast_mode) {
  if (dtype == RMSNORM_F32) {
    /* Four values of each stream at a time, so that few vectors are live:
     * the four accumulators, two constants and a handful of temporaries fit
     * the 16 registers of x86-64 without spills (V8 allocates them in
     * program order). */
    for (size_t k = 0; k < 4; k++) {
      const v128_t vn = load4(pn, j + 4 * k, dtype, false);
      vacc[k] = wasm_f32x4_add(vacc[k], wasm_f32x4_mul(vn, vn));
      write4(ps, pw, py, j + 4 * k, vinv, voffset, dtype, weight_dtype, offset, cast_mode);
    }
    return;
  }
  /* bfloat16: eight values, one vector of each stream, at a time. */
  for (size_t h = 0; h < 2; h++) {
    v128_t vn[2];
    load8(pn + (j + 8 * h) * dtype_size(dtype), dtype, true, false, vn);
    for (size_t k = 0; k < 2; k++) {
      vacc[2 * h + k] = wasm_f32x4_add(vacc[2 * h + k], wasm_f32x4_mul(vn[k], vn[k]));
    }
    write8(ps, pw, py, j + 8 * h, vinv, voffset, dtype, weight_dtype, offset, cast_mode);
  }
}

RMSNORM_INLINE float block_sumsq_writing(const void* next, const void* src, const void* w, void* y,
                                         size_t start, size_t n, float inv, float weight_offset,
                                         int dtype, int weight_dtype, bool offset, int cast_mode) {
  const v128_t vinv = wasm_f32x4_splat(inv);
  const v128_t voffset = wasm_f32x4_splat(weight_offset);
  v128_t vacc[4];
  for (int k = 0; k < 4; k++) {
    vacc[k] = wasm_f32x4_splat(0.0f);
  }
  const size_t end = start + n;
  size_t i = start;
  /* The steps advance pointers rather than index from the bases: clang then
   * gives each access of a step a constant offset from one address
   * (`v128.load offset=16`), where an index it knows to be a multiple of 16
   * becomes `(i << 2) | 16` plus a base, one more add per access in V8's
   * code. */
  const size_t size = dtype_size(dtype);
  const size_t weight_size = weight_dtype == RMSNORM_NO_WEIGHT ? 0 : dtype_size(weight_dtype);
  const char* pn = (const char*) next + start * size;
  const char* ps = (const char*) src + start * size;
  const char* pw = weight_size == 0 ? NULL : (const char*) w + i * weight_size;
  char* py = (char*) y + start * size;
  /* float32: two steps per iteration. A float32 step is only 16 vector
   * instructions, and V8 adds to each iteration a stack-guard check, one add
   * per pointer and the loop test (about 12 scalar instructions); two steps
   * halve that share (a small gain: CHANGELOG). bfloat16 steps are long
   * enough already. */
  const size_t unroll = dtype == RMSNORM_F32 ? 2 : 1;
  const size_t lanes = unroll * RMSNORM_LANES;
  for (; i + lanes <= end; i += lanes, pn += lanes * size, ps += lanes * size, py += lanes * size) {
    for (size_t u = 0; u < unroll; u++) {
      step_sumsq_writing(vacc, pn, ps, pw, py, u * RMSNORM_LANES, vinv, voffset, dtype,
                         weight_dtype, offset, cast_mode);
    }
    if (weight_size != 0) {
      pw += lanes * weight_size;
    }
  }
  if (unroll > 1 && i + RMSNORM_LANES <= end) {
    step_sumsq_writing(vacc, pn, ps, pw, py, 0, vinv, voffset, dtype, weight_dtype, offset,
                       cast_mode);
    i += RMSNORM_LANES;
  }
  if (i < end) {
    accumulate_tail(vacc, next, NULL, i, end, dtype, false);
    for (; i + 4 <= end; i += 4) {
      write4(src, w, y, i, vinv, voffset, dtype, weight_dtype, offset, cast_mode);
    }
    if (i < end) {
      write_scalar(src, w, y, i, end, inv, 1.0f, weight_offset, dtype, weight_dtype, offset,
                   cast_mode);
    }
  }
  return fold_accumulators(vacc, dtype);
}

/* ---- ggml blocks: the register path ---------------------------------------
 * Step 4 straight into q8_0 or q8_1 blocks: a block's amax is taken from
 * its 32 values of y while they are in registers (the quantizer's bodies,
 * ../f32-quantize/blocks_wasmsimd.h), where rows.inc's chunk writes the
 * row's values first and reads them twice. write8's operations on each
 * value (x * inv, weigh4, and the storage rounding, which is what the
 * chunk would hold), so the same bytes on every regular block: false if a
 * block was not (y overflowed), and the chunk writes the row again. (A
 * call in the loop for such a block, or a branch around the fast path,
 * costs V8 a tenth of the loop's time: docs/benchmarks.md.) */

/* A block's 32 values of y (write8's operations) into v[0..7], lanes in
 * order, advancing *ps and *pw past them. */
RMSNORM_INLINE void load_y32(const char** ps, const char** pw, v128_t v[8], v128_t vinv,
                             v128_t voffset, int dtype, int weight_dtype, bool offset,
                             int cast_mode) {
  const size_t step = 8 * dtype_size(dtype);
  const size_t weight_step = weight_dtype == RMSNORM_NO_WEIGHT ? 0 : 8 * dtype_size(weight_dtype);
  for (size_t h = 0; h < 4; h++, *ps += step) {
    v128_t vw[2] = {vinv, vinv}; /* unused without a weight */
    load8(*ps, dtype, false, true, v + 2 * h);
    if (weight_step != 0) {
      load8(*pw, weight_dtype, false, true, vw);
      *pw += weight_step;
    }
    for (size_t k = 0; k < 2; k++) {
      v[2 * h + k] = round4(weigh4(wasm_f32x4_mul(v[2 * h + k], vinv), vw[k], voffset, dtype,
                                   weight_dtype, offset, cast_mode),
                            dtype, true);
    }
  }
}

/* Four blocks go together: their values wait in a small buffer on the
 * stack while one division of each kind and one float16 conversion make
 * the four scales (q8_scales32x4), where a block at a time took two scalar
 * divisions and a scalar conversion, about a fifth of the loop's
 * instructions. Pipelined, as the quantizer's groups (quantize32_groups):
 * a group's values and scales are made while the group before it is
 * quantized from the other buffer, so the divisions' latency is not waited
 * for. The loops stay loops (see q8_blocks32x4). The row's last dim % 128
 * values go a block at a time. */
RMSNORM_INLINE bool write_q8_32(const void* src, const void* w, uint8_t* out, size_t dim, float inv,
                                float weight_offset, int dtype, int weight_dtype, bool offset,
                                int cast_mode, bool with_sum) {
  const v128_t vinv = wasm_f32x4_splat(inv);
  const v128_t voffset = wasm_f32x4_splat(weight_offset);
  const size_t bytes = with_sum ? Q8_1_BYTES : Q8_0_BYTES;
  const char* ps = (const char*) src;
  const char* pw = (const char*) w;
  /* The row's largest block amax (bits), and its smallest less one (an
   * all-zero block's wraps to the largest u32). */
  v128_t vlargest = wasm_i32x4_splat(0);
  v128_t vsmallest = wasm_i32x4_splat(-1);
  const size_t groups = dim / (4 * Q8_0_VALUES);
  float ys[2][4 * Q8_0_VALUES] __attribute__((aligned(16)));
  struct q8_scales32x4 scales[2];
  for (size_t g = 0; g <= groups; g++) {
    if (g < groups) { /* group g's values and scales */
      float* yg = ys[g & 1];
      v128_t vbits[4];
#pragma clang loop unroll(disable)
      for (size_t b = 0; b < 4; b++) {
        v128_t v[8];
        load_y32(&ps, &pw, v, vinv, voffset, dtype, weight_dtype, offset, cast_mode);
        for (size_t k = 0; k < 8; k++) {
          wasm_v128_store(yg + Q8_0_VALUES * b + 4 * k, v[k]);
        }
        vbits[b] = q8_magnitudes32(v);
      }
      const v128_t vamax = q8_max_lanes_u32x4(vbits);
      vlargest = wasm_u32x4_max(vlargest, vamax);
      vsmallest = wasm_u32x4_min(vsmallest, wasm_i32x4_sub(vamax, wasm_i32x4_splat(1)));
      q8_scales32x4(vamax, &scales[g & 1]);
    }
    if (g > 0) { /* group g - 1's blocks */
      q8_blocks32x4(ys[(g - 1) & 1], &scales[(g - 1) & 1], out, with_sum);
      out += 4 * bytes;
    }
  }
  uint32_t largest = (uint32_t) wasm_i32x4_extract_lane(q8_max_lanes_u32(vlargest), 0);
  uint32_t smallest = (uint32_t) wasm_i32x4_extract_lane(q8_min_lanes_u32(vsmallest), 0);
  for (size_t i = groups * 4 * Q8_0_VALUES; i < dim; i += Q8_0_VALUES, out += bytes) {
    v128_t v[8];
    load_y32(&ps, &pw, v, vinv, voffset, dtype, weight_dtype, offset, cast_mode);
    const uint32_t amax =
        (uint32_t) wasm_i32x4_extract_lane(q8_block32_wasmsimd(v, out, with_sum), 0);
    largest = amax > largest ? amax : largest;
    smallest = amax - 1 < smallest ? amax - 1 : smallest;
  }
  /* Every block is regular if the block of the largest amax and the block
   * of the smallest amax - 1 are (smallest + 1 is that block's amax). */
  return q8_32_regular(largest) && q8_32_regular(smallest + 1);
}

/* Step 4 straight into q8_K blocks. A block's 256 values of y cannot all
 * stay in registers until its scale is known: they go to a stack chunk as
 * write8 makes them, their extremes taken on the way
 * (q8k_track_extremes), and the quants are made from the chunk; the chunk
 * path (rows.inc) reads each chunk once more for the extremes. The same
 * values, so the same bytes on every regular block: false if a block was
 * not (y overflowed, or -127 / max did), and the chunk writes the row
 * again. */
RMSNORM_INLINE bool write_q8_k(const void* src, const void* w, uint8_t* out, size_t dim, float inv,
                               int weight_dtype) {
  const v128_t vinv = wasm_f32x4_splat(inv);
  const size_t weight_step = 8 * dtype_size(weight_dtype);
  const char* ps = (const char*) src;
  const char* pw = (const char*) w;
  float chunk[Q8_K_VALUES] __attribute__((aligned(16)));
  for (size_t i = 0; i < dim; i += Q8_K_VALUES, out += Q8_K_BYTES) {
    v128_t vpos = wasm_i32x4_splat(0);
    v128_t vneg = wasm_i32x4_splat(0);
    for (size_t j = 0; j < Q8_K_VALUES; j += 8, ps += 8 * sizeof(float), pw += weight_step) {
      v128_t v[2];
      v128_t vw[2];
      load8(ps, RMSNORM_F32, false, true, v);
      load8(pw, weight_dtype, false, true, vw);
      for (size_t k = 0; k < 2; k++) {
        v[k] = wasm_f32x4_mul(wasm_f32x4_mul(v[k], vinv), vw[k]);
        wasm_v128_store(chunk + j + 4 * k, v[k]);
        q8k_track_extremes(v[k], &vpos, &vneg);
      }
    }
    if (!q8k_quantize256_from_extremes(chunk, vpos, vneg, out)) {
      return false;
    }
  }
  return true;
}

/* The register path's copies (ggml's models' norms): float32 rows with a
 * float32, bfloat16 or float16 weight (finite: rows.inc checks it), one
 * for each format and weight (the cast mode changes nothing on float32
 * rows), and bfloat16 rows with a bfloat16 weight in Llama's cast mode,
 * for q8_0, all without an offset. Float16 rows take the chunk: a
 * copy loading them in the loop was slower than the chunk (V8 runs out of
 * vector registers with the block's eight vectors live beside the float16
 * rounding's constants), and so were copies fed values widened to float32
 * a chunk at a time (docs/benchmarks.md). Other bfloat16 rows (a copy
 * each would outgrow the module's size budget), no weight and an offset
 * take the chunk too. */
#define DEFINE_Q8_32_WRITER(NAME, DTYPE, WEIGHT_DTYPE, CAST_MODE, WITH_SUM)                \
  static bool NAME(const void* src, const void* w, uint8_t* out, size_t dim, float inv) {  \
    return write_q8_32(src, w, out, dim, inv, 0.0f, DTYPE, WEIGHT_DTYPE, false, CAST_MODE, \
                       WITH_SUM);                                                          \
  }
#define DEFINE_Q8_32_WRITERS(FORMAT, WITH_SUM)                                                \
  DEFINE_Q8_32_WRITER(FORMAT##_f32, RMSNORM_F32, RMSNORM_F32, RMSNORM_CAST_GEMMA, WITH_SUM)   \
  DEFINE_Q8_32_WRITER(FORMAT##_bf16, RMSNORM_F32, RMSNORM_BF16, RMSNORM_CAST_GEMMA, WITH_SUM) \
  DEFINE_Q8_32_WRITER(FORMAT##_f16, RMSNORM_F32, RMSNORM_F16, RMSNORM_CAST_GEMMA, WITH_SUM)
DEFINE_Q8_32_WRITERS(q8_0, false)
DEFINE_Q8_32_WRITERS(q8_1, true)
DEFINE_Q8_32_WRITER(q8_0_bf16_rows, RMSNORM_BF16, RMSNORM_BF16, RMSNORM_CAST_LLAMA, false)
#define DEFINE_Q8_K_WRITER(NAME, WEIGHT_DTYPE)                                            \
  static bool NAME(const void* src, const void* w, uint8_t* out, size_t dim, float inv) { \
    return write_q8_k(src, w, out, dim, inv, WEIGHT_DTYPE);                               \
  }
DEFINE_Q8_K_WRITER(q8_k_f32, RMSNORM_F32)
DEFINE_Q8_K_WRITER(q8_k_bf16, RMSNORM_BF16)
DEFINE_Q8_K_WRITER(q8_k_f16, RMSNORM_F16)

/* rows.inc's register path (RMSNORM_Q8_ROW_WRITER): false for the rows
 * no copy serves, and the chunk writes them. */
static bool write_row_q8(const void* src, const void* w, uint8_t* out, size_t dim, float inv,
                         float weight_offset, int dtype, int weight_dtype, bool offset,
                         int cast_mode, int format) {
  (void) weight_offset;
  if (dtype == RMSNORM_BF16 && weight_dtype == RMSNORM_BF16 && !offset &&
      cast_mode == RMSNORM_CAST_LLAMA && format == RMSNORM_Q8_0) {
    return q8_0_bf16_rows(src, w, out, dim, inv);
  }
  if (dtype != RMSNORM_F32 || offset || weight_dtype == RMSNORM_NO_WEIGHT) {
    return false;
  }
  const bool bf16 = weight_dtype == RMSNORM_BF16;
  const bool f16 = weight_dtype == RMSNORM_F16;
  switch ((enum rmsnorm_q8_format) format) {
    case RMSNORM_Q8_K:
      return bf16  ? q8_k_bf16(src, w, out, dim, inv)
             : f16 ? q8_k_f16(src, w, out, dim, inv)
                   : q8_k_f32(src, w, out, dim, inv);
    case RMSNORM_Q8_1:
      return bf16  ? q8_1_bf16(src, w, out, dim, inv)
             : f16 ? q8_1_f16(src, w, out, dim, inv)
                   : q8_1_f32(src, w, out, dim, inv);
    case RMSNORM_Q8_0:
      return bf16  ? q8_0_bf16(src, w, out, dim, inv)
             : f16 ? q8_0_f16(src, w, out, dim, inv)
                   : q8_0_f32(src, w, out, dim, inv);
  }
  return false;
}
#define RMSNORM_Q8_ROW_WRITER write_row_q8

/* n float16 values (a multiple of 8) as float32 at dst with the short
 * conversion, false if one was an Inf or a NaN (dst then partly written):
 * a chunk may hold them even from the vector writer, whose products can
 * overflow float16. */
static bool widen_f16_finite(const uint16_t* x, size_t n, float* dst) {
  v128_t vlargest = wasm_i16x8_splat(0);
  for (size_t i = 0; i < n; i += 8) {
    v128_t v[2];
    vlargest = f16x8_largest_magnitude(vlargest, wasm_v128_load(x + i));
    load8(x + i, RMSNORM_F16, false, true, v);
    wasm_v128_store(dst + i, v[0]);
    wasm_v128_store(dst + i + 4, v[1]);
  }
  return f16x8_all_finite(vlargest);
}

/* rows.inc's weight check, on every call: a vector of values at a time,
 * eight 16-bit ones at their own width (clang's vectorized loop widened
 * each to a 32-bit lane, docs/benchmarks.md). The row's last vector is read
 * first, and may overlap the others: a max does not mind. */
static uint32_t largest_magnitude_bits(const void* x, size_t n, int dtype) {
  const bool wide = dtype == RMSNORM_F32;
  const size_t lanes = wide ? 4 : 8;
  if (n < lanes) {
    return scalar_largest_magnitude_bits(x, n, dtype);
  }
  const v128_t vmask = wide ? wasm_i32x4_splat(0x7FFFFFFF) : wasm_i16x8_splat(0x7FFF);
  const char* p = (const char*) x;
  const char* last = p + (n - lanes) * dtype_size(dtype);
  v128_t vlargest = wasm_v128_and(wasm_v128_load(last), vmask);
  for (; p < last; p += 16) {
    const v128_t v = wasm_v128_and(wasm_v128_load(p), vmask);
    vlargest = wide ? wasm_u32x4_max(vlargest, v) : wasm_u16x8_max(vlargest, v);
  }
  if (!wide) { /* the two halves of each 32-bit lane */
    vlargest = wasm_u32x4_max(wasm_v128_and(vlargest, wasm_i32x4_splat(0xFFFF)),
                              wasm_u32x4_shr(vlargest, 16));
  }
  return (uint32_t) wasm_i32x4_extract_lane(q8_max_lanes_u32(vlargest), 0);
}

/* n values' blocks by the quantizer's kernel. 16-bit values are widened
 * first (exactly: float16 by the short conversion where every value is
 * finite, else by the converters' kernel), so that one copy of each
 * quantizer serves every storage dtype (the module's size budget). */
static void quantize_blocks(const void* x, size_t n, int dtype, int format, uint8_t* out) {
  float widened[Q8_MAX_VALUES] __attribute__((aligned(16)));
  const float* values = (const float*) x;
  if (dtype != RMSNORM_F32) {
    if (dtype != RMSNORM_F16 || !widen_f16_finite((const uint16_t*) x, n, widened)) {
      rmsnorm_wasm_f32_widen_ukernel__wasmsimd((const uint16_t*) x, widened, n, dtype);
    }
    values = widened;
  }
  rmsnorm_wasm_f32_quantize_q8_ukernel__wasmsimd(values, out, n / q8_block_values(format), format);
}

#define RMSNORM_F32_KERNEL rmsnorm_wasm_f32_rmsnorm_ukernel__wasmsimd
#define RMSNORM_F32_Q8_KERNEL rmsnorm_wasm_f32_rmsnorm_q8_ukernel__wasmsimd
#include "rows.inc"
