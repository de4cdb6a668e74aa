/*
 * The SIMD128 per-block bodies of the quantizer (../q8_blocks.h's rule):
 * q8_0's and q8_1's on 32 values held in registers, which the standalone
 * kernel (wasmsimd.c) loads from memory and the fused RMSNorm
 * (../f32-rmsnorm/wasmsimd.c) computes in place; q8_K's on 256 values in
 * memory. Each body is exact on a "regular" block, one whose values are
 * finite and whose reciprocal scale is (q8_32_regular, and the check in
 * q8_quantize256_wasmsimd); its callers give any other block to the
 * scalar body of ../q8_blocks.h, the rule itself.
 *
 * Four values a vector. The conversion to integers, exact on a regular
 * block (|x * id| and |iscale * x| are then at most 127 and a few ulps):
 * ggml's own nearest_int trick, v + 1.5 * 2^23 holds v rounded to an
 * integer (ties to even: q8_K's rounding) in its low mantissa bits, so its
 * bits less those of 1.5 * 2^23 are that integer; two instructions where
 * i32x4.trunc_sat is many. Saturating narrows then make int8 lanes.
 *
 * q8_0's and q8_1's roundf (halves away from zero) of p = x * id is
 * (trunc(2p) + [p >= 0]) >> 1, the shift arithmetic: for p >= 0 that is
 * floor((floor(2p) + 1) / 2) = floor(p + 0.5), and for p < 0 it is
 * ceil(2p) >> 1 = ceil(p - 0.5). Checked for every float |p| < 128 when
 * this was written. 2p is x * (2 * id), the same product scaled by two
 * (exact; where it would underflow, trunc gives 0 either way), and
 * trunc(2p) + 1 is one magic add whose constant carries the + 1. [p >= 0]
 * may be [trunc(2p) >= 0]: the two differ only where trunc(2p) is 0, and
 * there both give 0. That test, the final add and the shift are done on
 * eight 16-bit lanes after the first narrow: fewer instructions and
 * constants than the copysign(0.5 - 2^-25, p) this replaced
 * (docs/benchmarks.md).
 */
#ifndef QUANTIZE_BLOCKS_WASMSIMD_H
#define QUANTIZE_BLOCKS_WASMSIMD_H

#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "../common.h"
#include "../float16_wasmsimd.h"
#include "../q8_blocks.h"
#include "../simd128.h"

#define Q8_MAGIC 0x1.8p23f

/* The smallest amax (bits) of a regular q8_0 or q8_1 block (an all-zero
 * block aside): 2^-100, whose d is normal and 1/d finite; a smaller one's
 * 1/d may overflow (about 127 * 2^-128 and below). */
#define Q8_32_TINY UINT32_C(0x0D800000)
#define Q8_INF_BITS UINT32_C(0x7F800000)

/* Whether q8_block32_wasmsimd's bytes are the rule's for a block of this
 * amax (bits of a magnitude; a NaN's are above +Inf's): below +Inf's, and
 * 0 or at least Q8_32_TINY, one comparison for both as amax - 1 wraps 0 to
 * the largest u32. q8_32_regular4 is the same on four lanes. */
static inline bool q8_32_regular(uint32_t amax_bits) {
  return amax_bits < Q8_INF_BITS && amax_bits - 1 >= Q8_32_TINY - 1;
}

/* Eight values' roundf as 16-bit lanes, from q = 2p (two vectors, lanes in
 * order): u = trunc(q) + 1, the + 1 riding on the magic constant, then
 * (u - [u < 1]) >> 1, the comparison's all-ones lanes being -1. */
RMSNORM_INLINE v128_t q8_round_away8(v128_t q0, v128_t q1) {
  const v128_t vmagic = wasm_f32x4_splat(Q8_MAGIC);
  /* Q8_MAGIC's bits less 1 (clang folds it to a constant) */
  const v128_t vless = wasm_i32x4_sub(vmagic, wasm_i32x4_splat(1));
  const v128_t u0 = wasm_i32x4_sub(wasm_f32x4_add(wasm_f32x4_trunc(q0), vmagic), vless);
  const v128_t u1 = wasm_i32x4_sub(wasm_f32x4_add(wasm_f32x4_trunc(q1), vmagic), vless);
  const v128_t u = wasm_i16x8_narrow_i32x4(u0, u1);
  return wasm_i16x8_shr(wasm_i16x8_add(u, wasm_i16x8_lt(u, wasm_i16x8_splat(1))), 1);
}

/* q8_32_regular on four amax (bits), a lane each: all ones where regular. */
RMSNORM_INLINE v128_t q8_32_regular4(v128_t vamax) {
  return wasm_v128_and(wasm_u32x4_lt(vamax, wasm_i32x4_splat((int32_t) Q8_INF_BITS)),
                       wasm_u32x4_ge(wasm_i32x4_sub(vamax, wasm_i32x4_splat(1)),
                                     wasm_i32x4_splat((int32_t) (Q8_32_TINY - 1))));
}

/* Integral values (|v| < 2^22) as int32 lanes. */
RMSNORM_INLINE v128_t q8_to_int32x4(v128_t v) {
  return wasm_i32x4_sub(wasm_f32x4_add(v, wasm_f32x4_splat(Q8_MAGIC)), wasm_f32x4_splat(Q8_MAGIC));
}

/* q8_K's quants of sixteen values x[0..15] (x * iscale, rounded to even)
 * stored at qs, and their sum as four i32 lanes of four quants each. The
 * 16-bit lanes are the quants themselves: on a regular block |iscale * x|
 * is at most 127 and a few ulps, so the int8 narrow saturates none, and
 * their sum is the int8 lanes' sum. */
RMSNORM_INLINE v128_t q8k_quants16(const float* x, v128_t viscale, uint8_t* qs) {
  v128_t q[4];
  for (size_t k = 0; k < 4; k++) {
    q[k] = q8_to_int32x4(wasm_f32x4_mul(wasm_v128_load(x + 4 * k), viscale));
  }
  const v128_t lo = wasm_i16x8_narrow_i32x4(q[0], q[1]);
  const v128_t hi = wasm_i16x8_narrow_i32x4(q[2], q[3]);
  wasm_v128_store(qs, wasm_i8x16_narrow_i16x8(lo, hi));
  return wasm_i32x4_extadd_pairwise_i16x8(wasm_i16x8_add(lo, hi));
}

/* Two vectors of four i32 partial sums of quants each as one of four: a's
 * pairs then b's, each pair added. No narrow saturates: a group's sum is
 * at most 16 * 127 in magnitude. */
RMSNORM_INLINE v128_t q8k_pair_sums(v128_t a, v128_t b) {
  return wasm_i32x4_extadd_pairwise_i16x8(wasm_i16x8_narrow_i32x4(a, b));
}

/* q8_K's quants and bsums of 256 values at x, iscale given. Each group's
 * four partial sums are added pairwise with its neighbours' by narrows
 * and pairwise adds, into the sixteen bsums as 16-bit lanes in group
 * order, stored at once: a horizontal sum per group and a scalar store
 * cost several times as many instructions. */
RMSNORM_INLINE void q8k_quants256(const float* x, float iscale, uint8_t* out) {
  const v128_t viscale = wasm_f32x4_splat(iscale);
  v128_t vsums[4];
  for (size_t h = 0; h < 4; h++) {
    const float* xh = x + 64 * h;
    uint8_t* qs = out + Q8_K_QS + 64 * h;
    const v128_t v01 =
        q8k_pair_sums(q8k_quants16(xh, viscale, qs), q8k_quants16(xh + 16, viscale, qs + 16));
    const v128_t v23 = q8k_pair_sums(q8k_quants16(xh + 32, viscale, qs + 32),
                                     q8k_quants16(xh + 48, viscale, qs + 48));
    vsums[h] = q8k_pair_sums(v01, v23);
  }
  wasm_v128_store(out + Q8_K_BSUMS, wasm_i16x8_narrow_i32x4(vsums[0], vsums[1]));
  wasm_v128_store(out + Q8_K_BSUMS + 16, wasm_i16x8_narrow_i32x4(vsums[2], vsums[3]));
  const float d = 1.0f / iscale;
  memcpy(out + Q8_K_D, &d, sizeof d);
}

/* The sum of sixteen int8 lanes. */
RMSNORM_INLINE int32_t q8_sum_int8x16(v128_t q) {
  const v128_t v = wasm_i32x4_extadd_pairwise_i16x8(wasm_i16x8_extadd_pairwise_i8x16(q));
  const v128_t pair = wasm_i32x4_add(v, wasm_i32x4_shuffle(v, v, 2, 3, 0, 1));
  return wasm_i32x4_extract_lane(wasm_i32x4_add(pair, wasm_i32x4_shuffle(pair, pair, 1, 0, 3, 2)),
                                 0);
}

/* The magnitudes' bits of four values (ordered as the magnitudes, a NaN
 * above +Inf). */
RMSNORM_INLINE v128_t q8_magnitude_bits(v128_t v) {
  return wasm_v128_and(v, wasm_i32x4_splat(0x7FFFFFFF));
}

/* The largest of four u32 lanes, in every lane. */
RMSNORM_INLINE v128_t q8_max_lanes_u32(v128_t v) {
  const v128_t pair = wasm_u32x4_max(v, wasm_i32x4_shuffle(v, v, 2, 3, 0, 1));
  return wasm_u32x4_max(pair, wasm_i32x4_shuffle(pair, pair, 1, 0, 3, 2));
}

/* The smallest of four u32 lanes, in every lane. */
RMSNORM_INLINE v128_t q8_min_lanes_u32(v128_t v) {
  const v128_t pair = wasm_u32x4_min(v, wasm_i32x4_shuffle(v, v, 2, 3, 0, 1));
  return wasm_u32x4_min(pair, wasm_i32x4_shuffle(pair, pair, 1, 0, 3, 2));
}

/* A q8_0 or q8_1 block's d, and q8_1's s from the quants already stored
 * (read back: q8_0, the common format, spends nothing on a sum it does
 * not write). */
RMSNORM_INLINE void q8_put_sum32(uint8_t* out, float d) {
  const int32_t sum = q8_sum_int8x16(wasm_v128_load(out + Q8_1_QS)) +
                      q8_sum_int8x16(wasm_v128_load(out + Q8_1_QS + 16));
  q8_put16(out + Q8_1_S, f32_to_f16((float) sum * d));
}

RMSNORM_INLINE void q8_put_scales32(uint8_t* out, float d, bool with_sum) {
  q8_put16(out, f32_to_f16(d));
  if (with_sum) {
    q8_put_sum32(out, d);
  }
}

/* The magnitudes' bits of the 32 values v[0..7], their largest in each
 * lane (not yet across lanes). */
RMSNORM_INLINE v128_t q8_magnitudes32(const v128_t v[8]) {
  v128_t vbits = q8_magnitude_bits(v[0]);
  for (size_t k = 1; k < 8; k++) {
    vbits = wasm_u32x4_max(vbits, q8_magnitude_bits(v[k]));
  }
  return vbits;
}

/* Lane k: the largest of v[k]'s four u32 lanes (four blocks' amax bits from
 * q8_magnitudes32 at once: nine instructions where one block's take four). */
RMSNORM_INLINE v128_t q8_max_lanes_u32x4(const v128_t v[4]) {
  const v128_t v01 = wasm_u32x4_max(wasm_i32x4_shuffle(v[0], v[1], 0, 4, 1, 5),
                                    wasm_i32x4_shuffle(v[0], v[1], 2, 6, 3, 7));
  const v128_t v23 = wasm_u32x4_max(wasm_i32x4_shuffle(v[2], v[3], 0, 4, 1, 5),
                                    wasm_i32x4_shuffle(v[2], v[3], 2, 6, 3, 7));
  return wasm_u32x4_max(wasm_i32x4_shuffle(v01, v23, 0, 1, 4, 5),
                        wasm_i32x4_shuffle(v01, v23, 2, 3, 6, 7));
}

/* The 32 quants of v[0..7] (lanes in order) to qs, vid2 = 2 * (1 / d) in
 * every lane. */
RMSNORM_INLINE void q8_quants32(const v128_t v[8], v128_t vid2, uint8_t* qs) {
  for (size_t h = 0; h < 2; h++) {
    v128_t r[2];
    for (size_t k = 0; k < 2; k++) {
      r[k] = q8_round_away8(wasm_f32x4_mul(v[4 * h + 2 * k], vid2),
                            wasm_f32x4_mul(v[4 * h + 2 * k + 1], vid2));
    }
    wasm_v128_store(qs + 16 * h, wasm_i8x16_narrow_i16x8(r[0], r[1]));
  }
}

/* Four blocks' scales (lane k: block k's), in memory for q8_blocks32x4's
 * loop to read a block's. */
struct q8_scales32x4 {
  float d[4];
  float id2[4];
  uint32_t d16[4];
} __attribute__((aligned(16)));

/* Four blocks' scales from their amax bits (lane k: block k's), the
 * values q8_block32_wasmsimd computes one block at a time: d = amax / 127,
 * 2 * (1 / d) (0 where d is 0) and d's float16 pattern in each lane's low
 * half, with one division of each kind and one conversion for the four.
 * Exact on regular blocks; on the others the caller writes the rule's
 * bytes afterwards. */
RMSNORM_INLINE void q8_scales32x4(v128_t vamax, struct q8_scales32x4* scales) {
  const v128_t vd = wasm_f32x4_div(vamax, wasm_f32x4_splat(127.0f));
  wasm_v128_store(scales->d, vd);
  wasm_v128_store(scales->id2, wasm_v128_and(wasm_f32x4_div(wasm_f32x4_splat(2.0f), vd),
                                             wasm_f32x4_ne(vd, wasm_f32x4_splat(0.0f))));
  wasm_v128_store(scales->d16, f32x4_to_f16x4(vd, true));
}

/* Four q8_0 (with_sum false) or q8_1 blocks of the 128 float32 values at
 * x, their scales given (q8_scales32x4), to out, a block at a time. The
 * loop stays a loop: before the groups were pipelined, clang kept a
 * caller's buffer of x in locals when it was unrolled, which V8 spilled;
 * since, unrolled, it is no faster, and it is inlined in every writer. */
RMSNORM_INLINE void q8_blocks32x4(const float* x, const struct q8_scales32x4* scales, uint8_t* out,
                                  bool with_sum) {
  const size_t bytes = with_sum ? Q8_1_BYTES : Q8_0_BYTES;
#pragma clang loop unroll(disable)
  for (size_t b = 0; b < 4; b++) {
    v128_t v[8];
    for (size_t k = 0; k < 8; k++) {
      v[k] = wasm_v128_load(x + Q8_0_VALUES * b + 4 * k);
    }
    uint8_t* block = out + b * bytes;
    q8_put16(block, (uint16_t) scales->d16[b]);
    q8_quants32(v, wasm_v128_load32_splat(scales->id2 + b), block + (with_sum ? Q8_1_QS : Q8_0_QS));
    if (with_sum) {
      q8_put_sum32(block, scales->d[b]);
    }
  }
}

/* q8_0 (with_sum false) or q8_1 of the 32 values v[0..7], lanes in order,
 * to out: amax, d = amax / 127, id, the quants, then q8_put_scales32.
 * Returns the amax's bits in every lane, for q8_32_regular. */
RMSNORM_INLINE v128_t q8_block32_wasmsimd(const v128_t v[8], uint8_t* out, bool with_sum) {
  const v128_t vamax = q8_max_lanes_u32(q8_magnitudes32(v));
  const float d = wasm_f32x4_extract_lane(vamax, 0) / 127.0f;
  const v128_t vid2 = wasm_f32x4_splat(d != 0.0f ? 2.0f / d : 0.0f); /* 2 * (1 / d), exactly */
  q8_quants32(v, vid2, out + (with_sum ? Q8_1_QS : Q8_0_QS));
  q8_put_scales32(out, d, with_sum);
  return vamax;
}

/* q8_K's max without a search. A float32's bits as an int32 order the
 * positive values as their magnitudes, all above the negative ones; as a
 * uint32 they order the negative values as their magnitudes, all above
 * the positive ones. So the signed max of the bits is the largest
 * positive value (a positive NaN above +Inf), and the unsigned max the
 * most negative value (a negative NaN below -Inf) if there is a negative
 * one: two one-instruction integer maxima per four values, in the
 * accumulators vpos and vneg (both from 0), where the magnitudes' max
 * took as many and a second pass to find the max's sign. */
RMSNORM_INLINE void q8k_track_extremes(v128_t v, v128_t* vpos, v128_t* vneg) {
  *vpos = wasm_i32x4_max(*vpos, v);
  *vneg = wasm_u32x4_max(*vneg, v);
}

/* The largest of four i32 lanes, in every lane. */
RMSNORM_INLINE v128_t q8_max_lanes_i32(v128_t v) {
  const v128_t pair = wasm_i32x4_max(v, wasm_i32x4_shuffle(v, v, 2, 3, 0, 1));
  return wasm_i32x4_max(pair, wasm_i32x4_shuffle(pair, pair, 1, 0, 3, 2));
}

/* q8_K of the 256 float32 values at x, whose extremes q8k_track_extremes
 * took into vpos and vneg: the rule's max is the extreme of the larger
 * magnitude, or, where +amax and -amax both occur, the first of them
 * (searched for: rare). False, and nothing written, for a block that is
 * not regular (an Inf or NaN, or -127 / max overflowing). Not inlined:
 * one copy per file that includes this, not one per caller (the module's
 * size budget), for a call per 256 values. */
static __attribute__((noinline)) bool q8k_quantize256_from_extremes(const float* x, v128_t vpos,
                                                                    v128_t vneg, uint8_t* out) {
  const uint32_t pos_bits = (uint32_t) wasm_i32x4_extract_lane(q8_max_lanes_i32(vpos), 0);
  const uint32_t neg = (uint32_t) wasm_i32x4_extract_lane(q8_max_lanes_u32(vneg), 0);
  /* -0's bits are 0x80000000: a magnitude of 0, as for no negative value */
  const uint32_t neg_bits = neg > UINT32_C(0x80000000) ? neg & UINT32_C(0x7FFFFFFF) : 0;
  const uint32_t amax_bits = pos_bits > neg_bits ? pos_bits : neg_bits;
  if (amax_bits == 0) {
    memset(out, 0, Q8_K_BYTES);
    return true;
  }
  if (amax_bits >= Q8_INF_BITS) {
    return false;
  }
  float max;
  const uint32_t max_bits = pos_bits > neg_bits ? pos_bits : neg_bits | UINT32_C(0x80000000);
  memcpy(&max, &max_bits, sizeof max);
  if (pos_bits == neg_bits) {
    const v128_t vamax = wasm_i32x4_splat((int32_t) amax_bits);
    for (size_t i = 0; i < Q8_K_VALUES; i += 4) {
      const uint32_t lanes =
          wasm_i32x4_bitmask(wasm_i32x4_eq(q8_magnitude_bits(wasm_v128_load(x + i)), vamax));
      if (lanes != 0) {
        max = x[i + (size_t) __builtin_ctz(lanes)];
        break;
      }
    }
  }
  const float iscale = -127.0f / max;
  if (!(fabsf(iscale) <= FLT_MAX)) {
    return false;
  }
  q8k_quants256(x, iscale, out);
  return true;
}

/* q8_K of 256 float32 values at x (q8k_quantize256_from_extremes). */
static inline bool q8_quantize256_wasmsimd(const float* x, uint8_t* out) {
  v128_t vpos = wasm_i32x4_splat(0);
  v128_t vneg = wasm_i32x4_splat(0);
  for (size_t i = 0; i < Q8_K_VALUES; i += 4) {
    q8k_track_extremes(wasm_v128_load(x + i), &vpos, &vneg);
  }
  return q8k_quantize256_from_extremes(x, vpos, vneg, out);
}

#endif
