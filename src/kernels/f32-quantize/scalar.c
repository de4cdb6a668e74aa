/*
 * Scalar quantizer (quantize_f32.h): ../q8_blocks.h's per-block bodies, the
 * rule itself, one block after another.
 */
#include <assert.h>
#include <stddef.h>
#include <stdint.h>

#include "../q8_blocks.h"
#include "quantize_f32.h"

void rmsnorm_wasm_f32_quantize_q8_ukernel__scalar(const float* x, void* y, size_t blocks,
                                                  int format) {
  assert(q8_known_format(format));
  const size_t values = q8_block_values(format);
  const size_t bytes = q8_block_bytes(format);
  uint8_t* out = (uint8_t*) y;
  for (size_t b = 0; b < blocks; b++) {
    q8_quantize_block_scalar(x + b * values, RMSNORM_F32, format, out + b * bytes);
  }
}
