/*
 * Scalar RMSNorm: the baseline for engines without SIMD128. It is the
 * contract one value at a time (the scalar_* helpers of scalar_steps.h),
 * walking the same 16 lanes as the SIMD kernel, so both return the same bits.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../q8_blocks.h"
#include "scalar_steps.h"

RMSNORM_INLINE float block_sumsq(const void* x, size_t n, int dtype) {
  return scalar_block_sumsq(x, n, dtype, 1.0f, false);
}

RMSNORM_INLINE float block_add_sumsq(const void* x, void* r, size_t n, int dtype) {
  return scalar_block_add_sumsq(x, r, n, dtype);
}

RMSNORM_INLINE void write_row(const void* src, const void* w, void* y, size_t dim, float inv,
                              float weight_offset, int dtype, int weight_dtype, bool offset,
                              int cast_mode) {
  scalar_write_row(src, w, y, 0, dim, inv, 1.0f, false, weight_offset, dtype, weight_dtype, offset,
                   cast_mode);
}

/* One after the other: the scalar loops gain nothing from sharing one. */
RMSNORM_INLINE float block_sumsq_writing(const void* next, const void* src, const void* w, void* y,
                                         size_t start, size_t n, float inv, float weight_offset,
                                         int dtype, int weight_dtype, bool offset, int cast_mode) {
  scalar_write_row(src, w, y, start, start + n, inv, 1.0f, false, weight_offset, dtype,
                   weight_dtype, offset, cast_mode);
  return block_sumsq((const char*) next + start * dtype_size(dtype), n, dtype);
}

RMSNORM_INLINE uint32_t largest_magnitude_bits(const void* x, size_t n, int dtype) {
  return scalar_largest_magnitude_bits(x, n, dtype);
}

static void quantize_blocks(const void* x, size_t n, int dtype, int format, uint8_t* out) {
  const size_t values = q8_block_values(format);
  for (size_t i = 0; i < n; i += values, out += q8_block_bytes(format)) {
    q8_quantize_block_scalar((const char*) x + i * dtype_size(dtype), dtype, format, out);
  }
}

#define RMSNORM_F32_KERNEL rmsnorm_wasm_f32_rmsnorm_ukernel__scalar
#define RMSNORM_F32_Q8_KERNEL rmsnorm_wasm_f32_rmsnorm_q8_ukernel__scalar
#include "rows.inc"
