/*
 * SIMD128 quantizer (quantize_f32.h): blocks_wasmsimd.h's per-block bodies
 * on values loaded from memory; a block that is not regular goes to the
 * rule's scalar body (../q8_blocks.h).
 */
#include <assert.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../q8_blocks.h"
#include "../simd128.h"
#include "blocks_wasmsimd.h"
#include "quantize_f32.h"

/* The rule's body, for the rare block that is not regular: one copy,
 * compiled for size (the module's size budget). */
static __attribute__((noinline, minsize)) void quantize_by_rule(const float* x, int format,
                                                                uint8_t* out) {
  q8_quantize_block_scalar(x, RMSNORM_F32, format, out);
}

static __attribute__((noinline)) bool quantize32(const float* x, uint8_t* out, bool with_sum) {
  v128_t v[8];
  for (size_t k = 0; k < 8; k++) {
    v[k] = wasm_v128_load(x + 4 * k);
  }
  return q8_32_regular(
      (uint32_t) wasm_i32x4_extract_lane(q8_block32_wasmsimd(v, out, with_sum), 0));
}

/* The four q8_0 or q8_1 blocks at x: their amax bits (lane k: block k's)
 * into their scales (q8_scales32x4: one division of each kind and one
 * float16 conversion for the four, where quantize32 takes two scalar
 * divisions and a scalar conversion a block). Returns a bit per block that
 * is not regular. */
RMSNORM_INLINE uint32_t scales32x4(const float* x, struct q8_scales32x4* scales) {
  v128_t vbits[4];
  for (size_t b = 0; b < 4; b++) {
    v128_t v[8];
    for (size_t k = 0; k < 8; k++) {
      v[k] = wasm_v128_load(x + Q8_0_VALUES * b + 4 * k);
    }
    vbits[b] = q8_magnitudes32(v);
  }
  const v128_t vamax = q8_max_lanes_u32x4(vbits);
  q8_scales32x4(vamax, scales);
  return (uint32_t) wasm_i32x4_bitmask(wasm_v128_not(q8_32_regular4(vamax)));
}

/* groups * 4 blocks of `format` (q8_0 or q8_1) at x, to out. Pipelined: a group's scales
 * are made while the group before it is quantized, so that the divisions'
 * latency is spent on that group's quants rather than waited for
 * (docs/benchmarks.md). A block that was not regular is written again by
 * the rule. */
static __attribute__((noinline)) void quantize32_groups(const float* x, uint8_t* out, size_t groups,
                                                        int format) {
  const bool with_sum = format == RMSNORM_Q8_1;
  const size_t block_bytes = q8_block_bytes(format);
  struct q8_scales32x4 scales[2];
  uint32_t irregular[2] = {0, 0};
  for (size_t g = 0; g <= groups; g++) {
    if (g < groups) { /* group g's scales */
      irregular[g & 1] = scales32x4(x + g * 4 * Q8_0_VALUES, &scales[g & 1]);
    }
    if (g > 0) { /* group g - 1's blocks */
      const float* xg = x + (g - 1) * 4 * Q8_0_VALUES;
      uint8_t* og = out + (g - 1) * 4 * block_bytes;
      q8_blocks32x4(xg, &scales[(g - 1) & 1], og, with_sum);
      for (uint32_t bits = irregular[(g - 1) & 1]; bits != 0; bits &= bits - 1) {
        const size_t k = (size_t) __builtin_ctz(bits);
        quantize_by_rule(xg + k * Q8_0_VALUES, format, og + k * block_bytes);
      }
    }
  }
}

/* The formats the switch below chooses between (its default is q8_0): a
 * format added to the table and not here fails the build (-Wswitch) until
 * its SIMD rule is below. Never called: no code. */
__attribute__((unused)) static void simd_rules_cover(enum rmsnorm_q8_format format) {
  switch (format) {
    case RMSNORM_Q8_0:
    case RMSNORM_Q8_1:
    case RMSNORM_Q8_K: break;
  }
}

void rmsnorm_wasm_f32_quantize_q8_ukernel__wasmsimd(const float* x, void* y, size_t blocks,
                                                    int format) {
  assert(q8_known_format(format));
  const size_t values = q8_block_values(format);
  const size_t bytes = q8_block_bytes(format);
  uint8_t* out = (uint8_t*) y;
  size_t b = 0;
  if (format != RMSNORM_Q8_K) {
    const size_t groups = blocks / 4;
    quantize32_groups(x, out, groups, format);
    b = 4 * groups;
    x += b * values;
    out += b * bytes;
  }
  for (; b < blocks; b++, x += values, out += bytes) {
    bool regular;
    switch (format) {
      case RMSNORM_Q8_K: regular = q8_quantize256_wasmsimd(x, out); break;
      case RMSNORM_Q8_1: regular = quantize32(x, out, true); break;
      default: regular = quantize32(x, out, false); break;
    }
    if (!regular) {
      quantize_by_rule(x, format, out);
    }
  }
}
