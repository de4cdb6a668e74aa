/*
 * Every input of every vector conversion of src/kernels/float16_wasmsimd.h
 * (all 2^32 float32 patterns, all 2^16 half patterns) against the scalar
 * conversions of src/kernels/float16.h, which the JS reference matches
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
#include <string.h>

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
    for (uint32_t k = 0; k < 4; k++) {
      const uint32_t want_f16 = bits_of(f16_to_f32((uint16_t) (h + k)));
      check32("f16x4_to_f32x4", h + k, f16_low[k], want_f16);
      check32("f16hi_to_f32x4", h + k, f16_high[k], want_f16);
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
    uint32_t f16[4], bf16[4], f16_round[4], bf16_round[4];
    uint16_t f16_pairs[8], bf16_pairs[8];
    for (int finite = 0; finite <= !any_nan; finite++) {
      wasm_v128_store(f16, f32x4_to_f16x4(v, finite));
      wasm_v128_store(bf16, f32x4_to_bf16x4(v, finite));
      wasm_v128_store(f16_round, f32x4_round_f16(v, finite));
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
        check32("f32x4_round_bf16", in[k], bf16_round[k], bits_of(bf16_to_f32(want_bf16)));
        for (uint32_t lane = 0; lane < 2; lane++) {
          check16("f32x4x2_to_f16x8_interleaved", in[k], f16_pairs[2 * k + lane], want_f16);
          check16("f32x4x2_to_bf16x8_interleaved", in[k], bf16_pairs[2 * k + lane], want_bf16);
        }
      }
    }
  }
}

int main(void) {
  check_widening();
  check_narrowing();
  printf("conversions: %" PRIu64 " mismatches over all 2^16 half and 2^32 float32 patterns\n",
         failures);
  return failures != 0;
}
