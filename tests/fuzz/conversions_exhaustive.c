/*
 * Every input of every vector conversion of src/kernels/float16_wasmsimd.h,
 * and of the SIMD array converters built on them
 * (src/kernels/f32-convert/wasmsimd.c: the convert_to_f32 and
 * convert_from_f32 exports), all 2^32 float32 patterns and all 2^16 half
 * patterns, against the scalar conversions of src/kernels/float16.h, which
 * the JS reference matches
 * exhaustively in its turn (tests/float16.test.js). Built for the host with
 * SIMDe standing in for the wasm_* intrinsics (`make test` runs it; about a
 * minute). The vector code replaces branches with selects and some integer
 * steps with float ones, so a random test could miss the one rounding
 * boundary it gets wrong: this leaves none out. Every result must match to
 * the bit, NaNs included: the conversions build NaNs from bit operations and
 * selects, never from float arithmetic (whose NaN bits the engine picks), and
 * narrowing writes one fixed NaN pattern per format.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/kernels/f32-convert/convert_f32.h"
#include "../../src/kernels/float16.h"
#include "../../src/kernels/float16_wasmsimd.h"

static int is_nan32(uint32_t bits) {
  return (bits & 0x7FFFFFFFu) > 0x7F800000u;
}
static uint32_t bits_of(float v) {
  uint32_t b;
  memcpy(&b, &v, sizeof b);
  return b;
}

static uint64_t failures;
static void fail(const char* what, uint32_t input, uint32_t got, uint32_t want) {
  if (failures++ < 10) {
    printf("%s(0x%08" PRIx32 "): got 0x%08" PRIx32 ", want 0x%08" PRIx32 "\n", what, input, got,
           want);
  }
}
static void check32(const char* what, uint32_t input, uint32_t got, uint32_t want) {
  if (got != want) fail(what, input, got, want);
}
static void check16(const char* what, uint32_t input, uint32_t got, uint32_t want) {
  if (got != want) fail(what, input, got, want);
}

/* Widening: each half pattern, in the low half and in the high half of a lane. */
static void check_widening(void) {
  for (uint32_t h = 0; h < 0x10000u; h += 4) {
    uint32_t low[4], high[4], f16_low[4], f16_high[4], bf16_low[4];
    for (uint32_t k = 0; k < 4; k++) {
      low[k] = h + k;
      high[k] = (h + k) << 16;
    }
    wasm_v128_store(f16_low, f16x4_to_f32x4(wasm_v128_load(low)));
    wasm_v128_store(f16_high, f16hi_to_f32x4(wasm_v128_load(high)));
    wasm_v128_store(bf16_low, bf16x4_to_f32x4(wasm_v128_load(low)));
    /* The finite-only widening ignores the low half: give it bits to ignore. */
    uint32_t high_dirty[4], f16_finite[4];
    for (uint32_t k = 0; k < 4; k++) high_dirty[k] = high[k] | (0xFFFFu - (h + k));
    wasm_v128_store(f16_finite, f16hi_to_f32x4_finite(wasm_v128_load(high_dirty)));
    for (uint32_t k = 0; k < 4; k++) {
      const uint32_t want_f16 = bits_of(f16_to_f32((uint16_t) (h + k)));
      check32("f16x4_to_f32x4", h + k, f16_low[k], want_f16);
      check32("f16hi_to_f32x4", h + k, f16_high[k], want_f16);
      if (((h + k) & 0x7C00u) != 0x7C00u)
        check32("f16hi_to_f32x4_finite", h + k, f16_finite[k], want_f16);
      check32("bf16x4_to_f32x4", h + k, bf16_low[k], bits_of(bf16_to_f32((uint16_t) (h + k))));
    }
  }
}

/* Narrowing and rounding: every float32 pattern, with and without the NaN
 * handling (`finite` only where the input is not NaN), and the interleaved
 * narrowings, fed the same four values as even and as odd lanes. */
static void check_narrowing(void) {
  for (uint64_t base = 0; base < (UINT64_C(1) << 32); base += 4) {
    uint32_t in[4];
    for (uint32_t k = 0; k < 4; k++) in[k] = (uint32_t) (base + k);
    const v128_t v = wasm_v128_load(in);
    int any_nan = 0;
    for (uint32_t k = 0; k < 4; k++) any_nan |= is_nan32(in[k]);
    uint32_t f16[4], bf16[4], f16_round[4], bf16_round[4], f16_bounded[4];
    uint16_t f16_pairs[8], bf16_pairs[8];
    for (int finite = 0; finite <= !any_nan; finite++) {
      wasm_v128_store(f16, f32x4_to_f16x4(v, finite));
      wasm_v128_store(bf16, f32x4_to_bf16x4(v, finite));
      wasm_v128_store(f16_round, f32x4_round_f16(v, finite));
      wasm_v128_store(f16_bounded, f32x4_round_f16_bounded(v));
      wasm_v128_store(bf16_round, f32x4_round_bf16(v, finite));
      wasm_v128_store(f16_pairs, f32x4x2_to_f16x8_interleaved(v, v, finite));
      wasm_v128_store(bf16_pairs, f32x4x2_to_bf16x8_interleaved(v, v, finite));
      for (uint32_t k = 0; k < 4; k++) {
        float x;
        memcpy(&x, &in[k], sizeof x);
        const uint16_t want_f16 = f32_to_f16(x);
        const uint16_t want_bf16 = f32_to_bf16(x);
        check16("f32x4_to_f16x4", in[k], f16[k], want_f16);
        check16("f32x4_to_bf16x4", in[k], bf16[k], want_bf16);
        check32("f32x4_round_f16", in[k], f16_round[k], bits_of(f16_to_f32(want_f16)));
        if ((in[k] & 0x7FFFFFFFu) < 0x477FF000u) /* |x| < 65520 */
          check32("f32x4_round_f16_bounded", in[k], f16_bounded[k], bits_of(f16_to_f32(want_f16)));
        check32("f32x4_round_bf16", in[k], bf16_round[k], bits_of(bf16_to_f32(want_bf16)));
        for (uint32_t lane = 0; lane < 2; lane++) {
          check16("f32x4x2_to_f16x8_interleaved", in[k], f16_pairs[2 * k + lane], want_f16);
          check16("f32x4x2_to_bf16x8_interleaved", in[k], bf16_pairs[2 * k + lane], want_bf16);
        }
      }
    }
  }
}

/* The array converters (16 values a step, then a scalar tail) on every
 * input: the halves at each start alignment and length mod 16; the float32
 * patterns in consecutive calls whose lengths cycle through every remainder
 * mod 16, at each start alignment. */
#define CHUNK (UINT32_C(1) << 20)
static void check_array_converters(void) {
  static const int dtypes[] = {RMSNORM_BF16, RMSNORM_F16};
  static const char* const names[] = {"widen bfloat16", "widen float16"};
  static const char* const narrow_names[] = {"narrow bfloat16", "narrow float16"};
  uint16_t* halves = malloc((0x10000 + 16) * sizeof *halves);
  float* widened = malloc((0x10000 + 16) * sizeof *widened);
  float* floats = malloc((CHUNK + 16) * sizeof *floats);
  uint16_t* narrowed = malloc((CHUNK + 16) * sizeof *narrowed);
  if (halves == NULL || widened == NULL || floats == NULL || narrowed == NULL) abort();
  for (int d = 0; d < 2; d++) {
    for (uint32_t skip = 0; skip < 16; skip++) {
      /* 2^16 - skip patterns from a rotation that varies what lands in the
       * tail (all of them when skip is 0), skip elements into the buffers */
      const size_t n = 0x10000 - skip;
      for (uint32_t h = 0; h < n; h++) halves[skip + h] = (uint16_t) (h + skip * 0x0F0Fu);
      rmsnorm_wasm_f32_widen_ukernel__wasmsimd(halves + skip, widened + skip, n, dtypes[d]);
      for (uint32_t h = 0; h < n; h++) {
        const uint16_t pattern = (uint16_t) (h + skip * 0x0F0Fu);
        check32(names[d], pattern, bits_of(widened[skip + h]),
                bits_of(load_f32(&pattern, 0, dtypes[d])));
      }
    }
    uint64_t base = 0;
    for (uint32_t call = 0; base < (UINT64_C(1) << 32); call++) {
      const uint32_t skip = call % 4;
      uint64_t n = CHUNK - call % 16;
      if (n > (UINT64_C(1) << 32) - base) n = (UINT64_C(1) << 32) - base;
      for (uint32_t k = 0; k < n; k++) {
        const uint32_t bits = (uint32_t) (base + k);
        memcpy(&floats[skip + k], &bits, sizeof bits);
      }
      rmsnorm_wasm_f32_narrow_ukernel__wasmsimd(floats + skip, narrowed + skip, (size_t) n,
                                                dtypes[d]);
      for (uint32_t k = 0; k < n; k++) {
        uint16_t want;
        store_f32(&want, 0, floats[skip + k], dtypes[d]);
        check16(narrow_names[d], (uint32_t) (base + k), narrowed[skip + k], want);
      }
      base += n;
    }
  }
  free(halves);
  free(widened);
  free(floats);
  free(narrowed);
}

int main(void) {
  check_widening();
  check_narrowing();
  check_array_converters();
  printf("conversions: %" PRIu64 " mismatches over all 2^16 half and 2^32 float32 patterns\n",
         failures);
  return failures != 0;
}
