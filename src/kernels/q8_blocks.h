/*
 * ggml's 8-bit block formats, one block at a time: the scalar quantizers
 * (the scalar kernels'; the SIMD ones hand them the rare block that holds
 * an Inf or NaN, or whose 1/d overflows), and the rule every
 * implementation follows (the SIMD
 * quantizers in f32-quantize/blocks_wasmsimd.h, the JS reference in
 * src/reference/q8.js).
 *
 * THE RULE
 * ========
 * Exactly ggml's reference quantizers (ggml/src/ggml-quants.c), every
 * float operation one IEEE binary32 operation rounded to nearest-even, no
 * contraction:
 *   q8_0 (block_q8_0: ggml_half d; int8_t qs[32]) and
 *   q8_1 (block_q8_1: ggml_half d, s; int8_t qs[32]),
 *   quantize_row_q8_0_ref / quantize_row_q8_1_ref:
 *     amax = MAX(amax, |x_j|) for j = 0..31 from 0, MAX(a, b) being
 *            `a > b ? a : b` (so a NaN makes amax NaN and the next value
 *            replaces it);
 *     d = amax / 127; id = d != 0 ? 1 / d : 0 (NaN != 0);
 *     qs_j = int8(roundf(x_j * id)), roundf rounding halves away from 0;
 *     q8_1: s = fp16((float) Σqs_j * d), with the float32 d.
 *   q8_K (block_q8_K: float d; int8_t qs[256]; int16_t bsums[16]),
 *   quantize_row_q8_K_ref:
 *     max = the first x_j of the largest |x_j| (`|x_j| > amax`: a NaN is
 *           never it); amax == 0: d = 0, qs = 0, and bsums = 0 (ggml leaves
 *           bsums as they were: the package writes zeros);
 *     iscale = -127 / max; qs_j = int8(MIN(127, nearest_int(iscale * x_j)))
 *           (nearest_int rounds halves to even); bsums_g = Σ qs of values
 *           16g..16g+15; d = 1 / iscale.
 *   fp16() is ../float16.h's f32_to_f16, which ggml's
 *   ggml_compute_fp32_to_fp16 is too (nearest-even, subnormals kept,
 *   overflow to Inf) except for a NaN's sign, which float32 arithmetic
 *   leaves open: every NaN is 0x7E00 here.
 *
 * Where ggml's C is undefined, defined: the conversion of a float to int8
 * (C's is undefined for NaN and outside [-128, 127], and nearest_int
 * asserts |v| <= 4194303) maps NaN to 0 and saturates everything else to
 * [-128, 127]. It is reached only by a block holding an infinity or a NaN,
 * or so tiny that 1/d (q8_0, q8_1: amax below about 127 * 2^-128) or
 * -127/max (q8_K: |max| below about 3.7e-37) overflows to Inf. On every
 * other block the bytes are ggml's reference's. (ggml's WebAssembly
 * quantize_row_q8_0 truncates instead of rounding: its bytes differ.)
 */
#ifndef RMSNORM_Q8_BLOCKS_H
#define RMSNORM_Q8_BLOCKS_H

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "float16.h"

/* Block formats: written by src/abi/block-formats.js from src/loader/abi.js. */
/* The formats, as the C ABI numbers them (0: the storage dtype, no blocks),
 * and each one's values and bytes a block and its fields' byte offsets. */
enum rmsnorm_q8_format {
  RMSNORM_Q8_0 = 1,
  RMSNORM_Q8_1 = 2,
  RMSNORM_Q8_K = 3,
};
#define Q8_FORMAT_COUNT 3
#define Q8_0_VALUES 32
#define Q8_0_BYTES 34
#define Q8_0_D 0
#define Q8_0_QS 2
#define Q8_1_VALUES 32
#define Q8_1_BYTES 36
#define Q8_1_D 0
#define Q8_1_S 2
#define Q8_1_QS 4
#define Q8_K_VALUES 256
#define Q8_K_BYTES 292
#define Q8_K_D 0
#define Q8_K_QS 4
#define Q8_K_BSUMS 260
/* The most values a block holds. */
#define Q8_MAX_VALUES 256

static inline size_t q8_block_values(int format) {
  return format == RMSNORM_Q8_K ? Q8_K_VALUES : Q8_0_VALUES;
}

static inline size_t q8_block_bytes(int format) {
  return format == RMSNORM_Q8_0 ? Q8_0_BYTES : format == RMSNORM_Q8_1 ? Q8_1_BYTES : Q8_K_BYTES;
}
/* End of the written block formats. */

/* Whether `format` is one of the formats (their codes run from 1). */
static inline bool q8_known_format(int format) {
  return format >= 1 && format <= Q8_FORMAT_COUNT;
}

/* The rule's float -> int8 conversion of an integral value (or +-Inf, NaN). */
static inline int8_t q8_to_int8(float v) {
  if (v != v) {
    return 0;
  }
  return v >= 127.0f ? 127 : v <= -128.0f ? -128 : (int8_t) v;
}

/* C's roundf, halves away from zero, from the instructions wasm has
 * (f32.trunc; libc's roundf is no instruction, and the wasm64 build has no
 * libc): v - trunc(v) is exact. */
static inline float q8_round_half_away(float v) {
  const float t = truncf(v);
  return fabsf(v - t) >= 0.5f ? t + copysignf(1.0f, v) : t;
}

/* ggml's nearest_int: halves to even (f32.nearest). */
static inline float q8_round_half_even(float v) {
  return rintf(v);
}

static inline void q8_put16(uint8_t* p, uint16_t v) {
  memcpy(p, &v, sizeof v);
}

/* Loops a compiler would unroll 32 or 256 times: kept loops, for the
 * modules' size (these serve the scalar build, and the SIMD build's rare
 * block with a NaN). */
#define Q8_KEEP_LOOP _Pragma("clang loop unroll(disable)")

/* q8_0 and q8_1 differ only in q8_1's s: one rule serves both. */
_Static_assert(Q8_0_VALUES == Q8_1_VALUES, "q8_0 and q8_1 blocks hold as many values");

/* q8_0's and q8_1's amax of 32 values, in MAX's order. */
static inline float q8_amax32(const void* x, int dtype) {
  float amax = 0.0f;
  Q8_KEEP_LOOP
  for (size_t j = 0; j < Q8_0_VALUES; j++) {
    const float a = fabsf(load_f32(x, j, dtype));
    amax = amax > a ? amax : a;
  }
  return amax;
}

/* q8_0 (with_sum false) or q8_1: 32 values of `dtype` at x to out. */
static inline void q8_quantize32_scalar(const void* x, int dtype, uint8_t* out, bool with_sum) {
  const float d = q8_amax32(x, dtype) / 127.0f;
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  int8_t* qs = (int8_t*) (out + (with_sum ? Q8_1_QS : Q8_0_QS));
  int sum = 0;
  Q8_KEEP_LOOP
  for (size_t j = 0; j < Q8_0_VALUES; j++) {
    qs[j] = q8_to_int8(q8_round_half_away(load_f32(x, j, dtype) * id));
    sum += qs[j];
  }
  q8_put16(out, f32_to_f16(d));
  if (with_sum) {
    q8_put16(out + Q8_1_S, f32_to_f16((float) sum * d));
  }
}

/* q8_K: 256 values of `dtype` at x to out. */
static inline void q8_quantize256_scalar(const void* x, int dtype, uint8_t* out) {
  float amax = 0.0f;
  float max = 0.0f;
  Q8_KEEP_LOOP
  for (size_t j = 0; j < Q8_K_VALUES; j++) {
    const float v = load_f32(x, j, dtype);
    if (fabsf(v) > amax) {
      amax = fabsf(v);
      max = v;
    }
  }
  if (amax == 0.0f) {
    memset(out, 0, Q8_K_BYTES);
    return;
  }
  const float iscale = -127.0f / max;
  int8_t* qs = (int8_t*) (out + Q8_K_QS);
  for (size_t g = 0; g < Q8_K_VALUES / 16; g++) {
    int sum = 0;
    Q8_KEEP_LOOP
    for (size_t j = 16 * g; j < 16 * g + 16; j++) {
      qs[j] = q8_to_int8(q8_round_half_even(iscale * load_f32(x, j, dtype)));
      sum += qs[j];
    }
    q8_put16(out + Q8_K_BSUMS + 2 * g, (uint16_t) (int16_t) sum);
  }
  const float d = 1.0f / iscale;
  memcpy(out, &d, sizeof d);
}

/* One block of `format` from its values (in `dtype`). */
static inline void q8_quantize_block_scalar(const void* x, int dtype, int format, uint8_t* out) {
  if (format == RMSNORM_Q8_K) {
    q8_quantize256_scalar(x, dtype, out);
  } else {
    q8_quantize32_scalar(x, dtype, out, format == RMSNORM_Q8_1);
  }
}

/* ggml's dequantize_row_q8_0 and dequantize_row_q8_K, q8_1 alike (the JS
 * reference's dequantizeValues): one block of `format` at `in` to its
 * values at y, each (float) qs_j * d, one float32 product, d the block's
 * float16 d widened exactly (q8_0, q8_1) or its float32 d (q8_K). */
static inline void q8_dequantize_block(const uint8_t* in, int format, float* y) {
  float d;
  if (format == RMSNORM_Q8_K) {
    memcpy(&d, in, sizeof d);
  } else {
    uint16_t h;
    memcpy(&h, in, sizeof h);
    d = f16_to_f32(h);
  }
  _Static_assert(Q8_1_QS == Q8_K_QS, "q8_1's and q8_K's quants start at one offset");
  const int8_t* qs = (const int8_t*) (in + (format == RMSNORM_Q8_0 ? Q8_0_QS : Q8_1_QS));
  for (size_t j = 0, n = q8_block_values(format); j < n; j++) {
    y[j] = (float) qs[j] * d;
  }
}

/* The formats the rules above choose between (the two functions above
 * take any other for q8_0 or q8_1): a switch over the enum with no
 * default, so that a format added to the table and not here fails the
 * build (-Wswitch) until its rule is in q8_quantize_block_scalar and
 * q8_dequantize_block. Never called: no code. */
static inline void q8_scalar_rules_cover(enum rmsnorm_q8_format format) {
  switch (format) {
    case RMSNORM_Q8_0:
    case RMSNORM_Q8_1:
    case RMSNORM_Q8_K: break;
  }
}

#endif
