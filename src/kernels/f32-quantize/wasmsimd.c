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
  for (size_t b = 0; b < blocks; b++, x += values, out += bytes) {
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
