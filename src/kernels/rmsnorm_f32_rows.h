/*
 * The row driver shared by every RMSNorm kernel: the block cascade, the
 * per-row finish, the rescue path and the choice of specialized loops, all
 * as the numerics contract in rmsnorm_f32.h says. It is included once by each
 * instruction-set file, which first defines three primitives, each called
 * with compile-time constant dtype / weight / mode arguments:
 *
 *   static float block_sumsq(const void* x, size_t n, int dtype);
 *       The folded 16-lane sum of squares of x[0..n), 1 <= n <= RMSNORM_BLOCK.
 *   static float block_add_sumsq(const void* x, void* r, size_t n, int dtype);
 *       r_i = round(x_i + r_i) stored back, and the folded sum of their squares.
 *   static void write_row(const void* src, const void* w, void* y, size_t dim,
 *                         float inv, float weight_offset, int dtype,
 *                         int weight_dtype, bool offset, int cast_mode);
 *       Step 4 of the contract for a whole row.
 *
 * and names the kernel it defines with RMSNORM_F32_KERNEL. The scalar_*
 * helpers of rmsnorm_scalar.h serve for the rare rescue rows.
 */
#include <assert.h>
#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#include "float16.h"
#include "rmsnorm_f32.h"

#include "rmsnorm_scalar.h"

/* ---- rows ---------------------------------------------------------------- */

enum sum_mode { SUM_PLAIN, SUM_ADD_RESIDUAL, SUM_SCALED };

/* Step 1 for a whole row: block sums added pairwise with a binary-counter
 * stack (after block k, merge while k+1 is even, then fold what is left from
 * the top), which is exactly the contract's split-at-a-power-of-two tree.
 * 64 levels cover any size_t. */
RMSNORM_INLINE float row_sumsq(const void* x, void* r, size_t dim, int dtype, int mode,
                               float scale) {
  const size_t size = dtype_size(dtype);
  float stack[64];
  size_t depth = 0;
  size_t k = 0;
  for (size_t start = 0; start < dim; start += RMSNORM_BLOCK, k++) {
    const size_t n = dim - start < RMSNORM_BLOCK ? dim - start : RMSNORM_BLOCK;
    const void* xb = (const char*) x + start * size;
    float s;
    switch (mode) {
      case SUM_PLAIN: s = block_sumsq(xb, n, dtype); break;
      case SUM_ADD_RESIDUAL: s = block_add_sumsq(xb, (char*) r + start * size, n, dtype); break;
      default: s = scalar_block_sumsq(xb, n, dtype, scale, true); break;
    }
    for (size_t c = k + 1; (c & 1) == 0; c >>= 1) {
      s = stack[--depth] + s;
    }
    stack[depth++] = s;
  }
  float total = stack[--depth];
  while (depth > 0) {
    total = stack[--depth] + total;
  }
  return total;
}

/* Steps 2 and 3. */
static inline float inv_rms(float sumsq, size_t dim, float eps) {
  const float ms = sumsq / (float) dim;
  return 1.0f / sqrtf(ms + eps);
}

/* max |x_i| as bits: ordered like the magnitudes, with any NaN above +Inf. */
static uint32_t max_abs_bits(const void* x, size_t dim, int dtype) {
  uint32_t m = 0;
  for (size_t i = 0; i < dim; i++) {
    const uint32_t a = f32_bits(load_f32(x, i, dtype)) & UINT32_C(0x7FFFFFFF);
    m = a > m ? a : m;
  }
  return m;
}

/* The rescue path: only rows whose plain sum of squares overflowed, came out
 * tiny, or is NaN get here, so it runs the generic scalar code. */
static void rescue_row(const void* src, const void* w, void* y, size_t dim, float eps,
                       float plain_sumsq, float weight_offset, int dtype, int weight_dtype,
                       bool offset, int cast_mode) {
  float scale = 1.0f;
  bool scaled = false;
  float inv = inv_rms(plain_sumsq, dim, eps);
  const uint32_t m = max_abs_bits(src, dim, dtype);
  if (m != 0 && m < UINT32_C(0x7F800000)) {
    /* 2^k with max|x| * 2^k in [1, 2): k = 127 - biased exponent, clamped so
     * that 2^k is a normal float32. */
    int k = 127 - (int) (m >> 23);
    k = k > 126 ? 126 : (k < -126 ? -126 : k);
    const float s = f32_from_bits((uint32_t) (k + 127) << 23);
    const float eps_scaled = (eps * s) * s;
    if (eps_scaled <= FLT_MAX) {
      scale = s;
      scaled = true;
      inv = inv_rms(row_sumsq(src, NULL, dim, dtype, SUM_SCALED, s), dim, eps_scaled);
    }
  }
  scalar_write_row(src, w, y, 0, dim, inv, scale, scaled, weight_offset, dtype, weight_dtype,
                   offset, cast_mode);
}

/* ---- specializations ------------------------------------------------------
 * Each combination of storage type, weight type, offset and cast mode gets
 * its own copy of the loops with those choices folded in at compile time; the
 * kernel picks the two it needs once per call. */

typedef float (*row_sumsq_fn)(const void* x, void* r, size_t dim);
typedef void (*row_writer_fn)(const void* src, const void* w, void* y, size_t dim, float inv,
                              float weight_offset);

#define DEFINE_ROW_SUMSQ(NAME, DTYPE, MODE)                        \
  static float NAME(const void* x, void* r, size_t dim) {          \
    return row_sumsq(x, r, dim, DTYPE, MODE, 1.0f);                \
  }
DEFINE_ROW_SUMSQ(sumsq_f32, RMSNORM_F32, SUM_PLAIN)
DEFINE_ROW_SUMSQ(sumsq_bf16, RMSNORM_BF16, SUM_PLAIN)
DEFINE_ROW_SUMSQ(sumsq_f16, RMSNORM_F16, SUM_PLAIN)
DEFINE_ROW_SUMSQ(add_sumsq_f32, RMSNORM_F32, SUM_ADD_RESIDUAL)
DEFINE_ROW_SUMSQ(add_sumsq_bf16, RMSNORM_BF16, SUM_ADD_RESIDUAL)
DEFINE_ROW_SUMSQ(add_sumsq_f16, RMSNORM_F16, SUM_ADD_RESIDUAL)

static const row_sumsq_fn row_sumsq_fns[3][2] = {
    [RMSNORM_F32] = {sumsq_f32, add_sumsq_f32},
    [RMSNORM_BF16] = {sumsq_bf16, add_sumsq_bf16},
    [RMSNORM_F16] = {sumsq_f16, add_sumsq_f16},
};

#define DEFINE_WRITER(NAME, DTYPE, WEIGHT_DTYPE, OFFSET, CAST)                                \
  static void NAME(const void* src, const void* w, void* y, size_t dim, float inv,           \
                   float weight_offset) {                                                    \
    write_row(src, w, y, dim, inv, weight_offset, DTYPE, WEIGHT_DTYPE, OFFSET, CAST);        \
  }
/* The four (offset, cast mode) variants of one (storage, weight) pair. */
#define DEFINE_WRITERS(PREFIX, DTYPE, WEIGHT_DTYPE)                                          \
  DEFINE_WRITER(PREFIX##_gemma, DTYPE, WEIGHT_DTYPE, false, RMSNORM_CAST_GEMMA)              \
  DEFINE_WRITER(PREFIX##_llama, DTYPE, WEIGHT_DTYPE, false, RMSNORM_CAST_LLAMA)              \
  DEFINE_WRITER(PREFIX##_offset_gemma, DTYPE, WEIGHT_DTYPE, true, RMSNORM_CAST_GEMMA)        \
  DEFINE_WRITER(PREFIX##_offset_llama, DTYPE, WEIGHT_DTYPE, true, RMSNORM_CAST_LLAMA)
#define WRITERS(PREFIX) {{PREFIX##_gemma, PREFIX##_llama}, {PREFIX##_offset_gemma, PREFIX##_offset_llama}}

DEFINE_WRITER(write_f32_unweighted, RMSNORM_F32, RMSNORM_NO_WEIGHT, false, RMSNORM_CAST_GEMMA)
DEFINE_WRITER(write_bf16_unweighted, RMSNORM_BF16, RMSNORM_NO_WEIGHT, false, RMSNORM_CAST_GEMMA)
DEFINE_WRITER(write_f16_unweighted, RMSNORM_F16, RMSNORM_NO_WEIGHT, false, RMSNORM_CAST_GEMMA)
/* float32 storage: both cast modes are the same computation. */
DEFINE_WRITER(write_f32_f32, RMSNORM_F32, RMSNORM_F32, false, RMSNORM_CAST_GEMMA)
DEFINE_WRITER(write_f32_f32_offset, RMSNORM_F32, RMSNORM_F32, true, RMSNORM_CAST_GEMMA)
DEFINE_WRITERS(write_bf16_f32, RMSNORM_BF16, RMSNORM_F32)
DEFINE_WRITERS(write_bf16_bf16, RMSNORM_BF16, RMSNORM_BF16)
DEFINE_WRITERS(write_f16_f32, RMSNORM_F16, RMSNORM_F32)
DEFINE_WRITERS(write_f16_f16, RMSNORM_F16, RMSNORM_F16)

/* [storage][weight: float32 or the storage type][offset][cast mode] */
static const row_writer_fn weighted_writers[3][2][2][2] = {
    [RMSNORM_F32] = {{{write_f32_f32, write_f32_f32}, {write_f32_f32_offset, write_f32_f32_offset}},
                     {{write_f32_f32, write_f32_f32}, {write_f32_f32_offset, write_f32_f32_offset}}},
    [RMSNORM_BF16] = {WRITERS(write_bf16_f32), WRITERS(write_bf16_bf16)},
    [RMSNORM_F16] = {WRITERS(write_f16_f32), WRITERS(write_f16_f16)},
};
static const row_writer_fn unweighted_writers[3] = {
    [RMSNORM_F32] = write_f32_unweighted,
    [RMSNORM_BF16] = write_bf16_unweighted,
    [RMSNORM_F16] = write_f16_unweighted,
};

void RMSNORM_F32_KERNEL(const void* x, void* residual, const void* w, void* y, size_t rows,
                        size_t dim, float eps, int dtype, int weight_dtype, int cast_mode,
                        float weight_offset) {
  assert(dim >= 1);
  assert(eps >= 0.0f && eps <= FLT_MAX);
  assert(dtype >= RMSNORM_F32 && dtype <= RMSNORM_F16);
  assert(w == NULL || weight_dtype == RMSNORM_F32 || weight_dtype == dtype);
  if (w == NULL) {
    weight_dtype = RMSNORM_NO_WEIGHT;
  }
  const bool offset = w != NULL && weight_offset != 0.0f;
  const bool llama = cast_mode == RMSNORM_CAST_LLAMA;
  const row_sumsq_fn sumsq_of = row_sumsq_fns[dtype][residual != NULL];
  const row_writer_fn write = w == NULL
      ? unweighted_writers[dtype]
      : weighted_writers[dtype][weight_dtype != RMSNORM_F32][offset][llama];
  const size_t row_bytes = dim * dtype_size(dtype);
  for (size_t r = 0; r < rows; r++) {
    const char* xr = (const char*) x + r * row_bytes;
    char* rr = residual != NULL ? (char*) residual + r * row_bytes : NULL;
    char* yr = (char*) y + r * row_bytes;
    /* With a residual, the row to normalize is the updated residual. */
    const void* src = rr != NULL ? (const void*) rr : (const void*) xr;
    const float sumsq = sumsq_of(xr, rr, dim);
    if (sumsq >= RMSNORM_TINY_SUM && sumsq <= FLT_MAX) {
      write(src, w, yr, dim, inv_rms(sumsq, dim, eps), weight_offset);
    } else {
      rescue_row(src, w, yr, dim, eps, sumsq, weight_offset, dtype, weight_dtype, offset,
                 llama ? RMSNORM_CAST_LLAMA : RMSNORM_CAST_GEMMA);
    }
  }
}
