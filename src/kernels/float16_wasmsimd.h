/*
 * bfloat16 / float16 <-> float32 for four SIMD128 lanes at a time: the same
 * conversions as float16.h (which explains the rounding), with selects in
 * place of branches. 16-bit values travel in u32 lanes: in the low half, or,
 * where a function says so, in the high half.
 */
#ifndef RMSNORM_FLOAT16_WASMSIMD_H
#define RMSNORM_FLOAT16_WASMSIMD_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#include "simd128.h"

static inline v128_t bf16x4_to_f32x4(v128_t vh) {
  return wasm_i32x4_shl(vh, 16);
}

/* Halves 0-3 (or 4-7) of eight bfloat16 values, widened: interleaving with
 * zeros puts each pattern in the high half of a 32-bit lane, one instruction. */
static inline v128_t bf16x8_low_to_f32x4(v128_t vh) {
  return wasm_i16x8_shuffle(wasm_i16x8_splat(0), vh, 0, 8, 1, 9, 2, 10, 3, 11);
}
static inline v128_t bf16x8_high_to_f32x4(v128_t vh) {
  return wasm_i16x8_shuffle(wasm_i16x8_splat(0), vh, 4, 12, 5, 13, 6, 14, 7, 15);
}

/* Eight bfloat16 values (one v128 load) widened in an interleaved lane
 * order: a bfloat16 is the high half of its float32, so `<< 16` widens
 * values 0, 2, 4, 6 and clearing the low halves widens values 1, 3, 5, 7,
 * one instruction each, on any vector port (the shuffles above need the
 * shuffle ports). The order pays off when narrowing back, below. */
static inline v128_t bf16x8_even_to_f32x4(v128_t vh) {
  return wasm_i32x4_shl(vh, 16);
}
static inline v128_t bf16x8_odd_to_f32x4(v128_t vh) {
  return wasm_v128_and(vh, wasm_i32x4_splat((int32_t) 0xFFFF0000));
}

/* x + the rounding bias: its high 16 bits are x rounded to bfloat16, except
 * for NaN lanes. `finite`: the caller knows no lane is NaN, which spares the
 * NaN select (a large part of the cost). */
static inline v128_t bf16_rounded_bits(v128_t vx, bool finite) {
  const v128_t vodd = wasm_v128_and(wasm_u32x4_shr(vx, 16), wasm_i32x4_splat(1));
  v128_t vrounded = wasm_i32x4_add(vx, wasm_i32x4_add(wasm_i32x4_splat(0x7FFF), vodd));
  if (!finite) {
    /* |x| < 2^31, so a signed compare serves (one instruction, unlike unsigned) */
    const v128_t vabs = wasm_v128_and(vx, wasm_i32x4_splat(0x7FFFFFFF));
    const v128_t vnan = wasm_i32x4_gt(vabs, wasm_i32x4_splat(0x7F800000));
    vrounded = wasm_v128_bitselect(wasm_i32x4_splat(0x7FC00000), vrounded, vnan);
  }
  return vrounded;
}

static inline v128_t f32x4_to_bf16x4(v128_t vx, bool finite) {
  return wasm_u32x4_shr(bf16_rounded_bits(vx, finite), 16);
}

/* The inverse of the two above: values 0, 2, 4, 6 (veven) and 1, 3, 5, 7
 * (vodd) rounded to bfloat16, as eight consecutive patterns. The rounded
 * patterns of vodd already sit in the high halves, where they belong; those
 * of veven move down to the low halves, and a blend of 16-bit lanes joins
 * the two (one instruction where two narrows and a pack were). */
static inline v128_t f32x4x2_to_bf16x8_interleaved(v128_t veven, v128_t vodd, bool finite) {
  const v128_t vlow = wasm_u32x4_shr(bf16_rounded_bits(veven, finite), 16);
  return wasm_i16x8_shuffle(vlow, bf16_rounded_bits(vodd, finite), 0, 9, 2, 11, 4, 13, 6, 15);
}

/* x rounded to bfloat16 and widened back, without the round trip. */
static inline v128_t f32x4_round_bf16(v128_t vx, bool finite) {
  return wasm_v128_and(bf16_rounded_bits(vx, finite), wasm_i32x4_splat((int32_t) 0xFFFF0000));
}

/* float16 -> float32 for halves held in the HIGH half of each 32-bit lane
 * (low half zero), the form the bfloat16 widenings above produce: they serve
 * float16 too, so both formats load alike. The fields move down three bits
 * and the exponent is rebiased by 127 - 15; Inf/NaN take exponent 255.
 * Subnormal halves get exponent 113 in place of 112 + 0, i.e.
 * 2^-14 * (1 + m/2^10), and then 2^-14 is subtracted: m * 2^-24 exactly
 * (Sterbenz), +0 for m = 0; no int-to-float conversion, which clang turns
 * into one scalar conversion per lane. The classes are told by equality
 * tests on the exponent field: clang rewrites ordered tests on values it
 * knows to be non-negative as unsigned ones, which V8 builds from three or
 * four instructions on x64. */
static inline v128_t f16hi_to_f32x4(v128_t vhi) {
  const v128_t vsign = wasm_v128_and(vhi, wasm_i32x4_splat((int32_t) 0x80000000));
  const v128_t vexponent = wasm_v128_and(vhi, wasm_i32x4_splat(0x7C000000));
  const v128_t vfields = wasm_u32x4_shr(wasm_i32x4_shl(vhi, 1), 4); /* |h| << 13 */
  const v128_t vnormal = wasm_i32x4_add(vfields, wasm_i32x4_splat(112 << 23));
  const v128_t vinfnan = wasm_i32x4_add(vfields, wasm_i32x4_splat(224 << 23));
  const v128_t vsubnormal = wasm_f32x4_sub(wasm_i32x4_add(vfields, wasm_i32x4_splat(113 << 23)),
                                           wasm_f32x4_splat(0x1p-14f));
  v128_t vbits =
      wasm_v128_bitselect(vinfnan, vnormal, wasm_i32x4_eq(vexponent, wasm_i32x4_splat(0x7C000000)));
  vbits = wasm_v128_bitselect(vsubnormal, vbits, wasm_i32x4_eq(vexponent, wasm_i32x4_splat(0)));
  return wasm_v128_or(vbits, vsign);
}

/* float16 -> float32 for FINITE halves in the high half of each lane,
 * whatever the low half holds: an arithmetic shift moves the exponent and
 * mantissa fields down three bits, beside the sign, and the mask clears the
 * sign's copies and the low half. That float32 has the half's exponent
 * field, so it is the half's value times 2^-112 (a float32 subnormal,
 * m * 2^-136, for a subnormal half), and the product by 2^112 is exact for
 * every finite half: three instructions where f16hi_to_f32x4 takes about
 * fourteen. An Inf or NaN half would come out finite: callers pass only
 * values known finite (a weight checked once per call, a row whose sum of
 * squares is finite). */
static inline v128_t f16hi_to_f32x4_finite(v128_t vhi) {
  const v128_t vfields =
      wasm_v128_and(wasm_i32x4_shr(vhi, 3), wasm_i32x4_splat((int32_t) 0x8FFFE000));
  return wasm_f32x4_mul(vfields, wasm_f32x4_splat(0x1p112f));
}

/* The short conversion's guard, for eight halves at a time (a v128 of
 * them): the largest magnitude's bits so far, and whether none of them is
 * an Inf or a NaN (all below 0x7C00). */
static inline v128_t f16x8_largest_magnitude(v128_t vlargest, v128_t vh) {
  return wasm_u16x8_max(vlargest, wasm_v128_and(vh, wasm_i16x8_splat(0x7FFF)));
}
static inline bool f16x8_all_finite(v128_t vlargest) {
  return wasm_i16x8_all_true(wasm_u16x8_lt(vlargest, wasm_i16x8_splat(0x7C00)));
}

/* Halves in the low half of each lane (wasm_u32x4_load16x4). */
static inline v128_t f16x4_to_f32x4(v128_t vh) {
  return f16hi_to_f32x4(wasm_i32x4_shl(vh, 16));
}

/* |x| on float16's grid, as float32 (vabs: |x|'s bits). Adding and
 * subtracting m = 1.5 * 2^(e + 13), e the binade of |x| but at least -14
 * (float16's subnormals share binade -14's spacing, 2^-24), puts the sum
 * in a binade whose float32 spacing is float16's in binade e: the addition
 * rounds |x| to nearest even on that grid, a carry to 2^(e + 1) included,
 * and the subtraction is exact. `capped`: m is capped at 1.5 * 2^28
 * (binade 15's, the largest): from 65520 up the result is 65536 or more.
 * An exponent field of 242 or more overflows the integer add to a
 * negative m, which the max takes to 0.75: |x| is then far above 65536 and
 * stays so, Inf stays Inf, and a NaN stays a NaN. Below 65520 the cap
 * changes nothing, and vabs may be x itself, sign and all: m - |x| is
 * rounded on the grid as |x| is, ties to even alike (m is an even multiple
 * of the spacing), and a zero comes out +0. */
static inline v128_t f16_grid_abs(v128_t vabs, bool capped) {
  v128_t vmagic = wasm_i32x4_add(wasm_v128_and(vabs, wasm_i32x4_splat(0x7F800000)),
                                 wasm_i32x4_splat((13 << 23) | 0x00400000));
  vmagic = wasm_i32x4_max(vmagic, wasm_i32x4_splat(0x3F400000));
  if (capped) {
    vmagic = wasm_i32x4_min(vmagic, wasm_i32x4_splat(0x4DC00000));
  }
  return wasm_f32x4_sub(wasm_f32x4_add(vabs, vmagic), vmagic);
}

/* float32 -> float16 patterns, in the low half of each lane (high half
 * zero). |x| on float16's grid (f16_grid_abs), times 2^-112: the float32
 * whose fields, 13 bits up, are the half's (a float32 subnormal, m *
 * 2^-136, for a subnormal half); from 65536 up, Inf included, they are
 * 0x7C00 or more, and the min clamps them to Inf. */
static inline v128_t f32x4_to_f16x4(v128_t vx, bool finite) {
  const v128_t vsign = wasm_v128_and(wasm_u32x4_shr(vx, 16), wasm_i32x4_splat(0x8000));
  const v128_t vgrid = f16_grid_abs(wasm_v128_and(vx, wasm_i32x4_splat(0x7FFFFFFF)), true);
  const v128_t vfields = wasm_u32x4_shr(wasm_f32x4_mul(vgrid, wasm_f32x4_splat(0x1p-112f)), 13);
  const v128_t vbits = wasm_v128_or(wasm_u32x4_min(vfields, wasm_i32x4_splat(0x7C00)), vsign);
  /* NaN: the fixed pattern, without the sign (float16.h) */
  return finite ? vbits
                : wasm_v128_bitselect(wasm_i32x4_splat(0x7E00), vbits, wasm_f32x4_ne(vx, vx));
}

/* Eight values in the interleaved order (0, 2, 4, 6 in veven; 1, 3, 5, 7 in
 * vodd) as eight consecutive float16 patterns. */
static inline v128_t f32x4x2_to_f16x8_interleaved(v128_t veven, v128_t vodd, bool finite) {
  return wasm_v128_or(f32x4_to_f16x4(veven, finite),
                      wasm_i32x4_shl(f32x4_to_f16x4(vodd, finite), 16));
}

/* x rounded to float16 and widened back, without the round trip through
 * 16-bit patterns: |x| on float16's grid (f16_grid_abs), then times 2^112
 * and 2^-112, which is exact up to 65504 and overflows 65536 and above to
 * Inf, and the sign put back. (Every conversion in this file is checked
 * against float16.h on all inputs: tests/fuzz/conversions_exhaustive.c.) */
static inline v128_t f32x4_round_f16(v128_t vx, bool finite) {
  const v128_t vsign = wasm_v128_and(vx, wasm_i32x4_splat((int32_t) 0x80000000));
  v128_t vgrid = f16_grid_abs(wasm_v128_and(vx, wasm_i32x4_splat(0x7FFFFFFF)), true);
  vgrid = wasm_f32x4_mul(wasm_f32x4_mul(vgrid, wasm_f32x4_splat(0x1p112f)),
                         wasm_f32x4_splat(0x1p-112f));
  const v128_t vbits = wasm_v128_or(vgrid, vsign);
  /* NaN: float16's fixed 0x7E00, widened */
  return finite ? vbits
                : wasm_v128_bitselect(wasm_i32x4_splat(0x7FC00000), vbits, wasm_f32x4_ne(vx, vx));
}

/* f32x4_round_f16 for finite x below 65520 in magnitude, which rounds to a
 * finite half: no cap on m and no trip through 2^112, and x's sign rides
 * through the grid (f16_grid_abs), put back for the zeros. */
static inline v128_t f32x4_round_f16_bounded(v128_t vx) {
  return wasm_v128_or(f16_grid_abs(vx, false),
                      wasm_v128_and(vx, wasm_i32x4_splat((int32_t) 0x80000000)));
}

#endif
