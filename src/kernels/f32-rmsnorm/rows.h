/*
 * The row driver shared by every RMSNorm kernel: the block cascade, the
 * per-row finish, the rescue path and the choice of specialized loops, all
 * as the numerics contract in rmsnorm_f32.h says. It is included once by each
 * instruction-set file, which first defines four primitives, each called
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
 *   static float block_sumsq_writing(const void* next, const void* src, const void* w,
 *                                    void* y, size_t start, size_t n, float inv,
 *                                    float weight_offset, int dtype, int weight_dtype,
 *                                    bool offset, int cast_mode);
 *       block_sumsq of next[start..start+n) and, in the same loop, write_row's
 *       step 4 for values start..start+n of the current row (src, w, y).
 *
 * and names the kernel it defines with RMSNORM_F32_KERNEL. The scalar_*
 * helpers of scalar_steps.h serve for the rare rescue rows.
 */
#include <assert.h>
#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#include "../common.h"
#include "../float16.h"
#include "rmsnorm_f32.h"
#include "scalar_steps.h"

/* ---- rows ---------------------------------------------------------------- */

enum sum_mode { SUM_PLAIN, SUM_ADD_RESIDUAL, SUM_SCALED };

/* Step 1 for a whole row: block sums added pairwise (../common.h). */
RMSNORM_INLINE float row_sumsq(const void* x, void* r, size_t dim, int dtype, int mode,
                               float scale) {
  const size_t size = dtype_size(dtype);
  f32_pairwise sums;
  f32_pairwise_init(&sums);
  for (size_t start = 0; start < dim; start += RMSNORM_BLOCK) {
    const size_t n = block_len(dim, start);
    const void* xb = (const char*) x + start * size;
    float s;
    switch (mode) {
      case SUM_PLAIN: s = block_sumsq(xb, n, dtype); break;
      case SUM_ADD_RESIDUAL: s = block_add_sumsq(xb, (char*) r + start * size, n, dtype); break;
      default: s = scalar_block_sumsq(xb, n, dtype, scale, true); break;
    }
    f32_pairwise_push(&sums, s);
  }
  return f32_pairwise_total(&sums);
}

/* Step 1 for row `next` while step 4 writes the current row (src -> y), block
 * by block in one loop: the loads of the next row and the stores of this one
 * stay in flight together, and the sum's add chains overlap the multiplies.
 * Each row still gets exactly its own operations; one pass over memory per
 * row instead of two (figures in the CHANGELOG). */
RMSNORM_INLINE float row_sumsq_writing(const void* next, const void* src, const void* w, void* y,
                                       size_t dim, float inv, float weight_offset, int dtype,
                                       int weight_dtype, bool offset, int cast_mode) {
  f32_pairwise sums;
  f32_pairwise_init(&sums);
  for (size_t start = 0; start < dim; start += RMSNORM_BLOCK) {
    const size_t n = block_len(dim, start);
    f32_pairwise_push(&sums, block_sumsq_writing(next, src, w, y, start, n, inv, weight_offset,
                                                 dtype, weight_dtype, offset, cast_mode));
  }
  return f32_pairwise_total(&sums);
}

/* Steps 2 and 3. */
static inline float inv_rms(float sumsq, size_t dim, float eps) {
  const float ms = sumsq / (float) dim;
  return 1.0f / sqrtf(ms + eps);
}

/* Whether a row keeps the plain result: its sum of squares is neither tiny,
 * nor beyond float32, nor NaN, and mean + eps did not overflow (inv is 0
 * exactly then: below FLT_MAX, 1/sqrt(ms + eps) is at least 5.4e-20). */
static inline bool is_plain(float sumsq, float inv) {
  return sumsq >= RMSNORM_TINY_SUM && sumsq <= FLT_MAX && inv != 0.0f;
}

/* The rescue path: only rows whose plain sum of squares overflowed, came out
 * tiny, or is NaN, or whose mean + eps overflowed get here, so it runs the
 * generic scalar code. Returns the
 * row's inv, and sets *scale to 2^k when the row was rescued (else 1). */
static float rescue_inv(const void* src, size_t dim, float eps, float plain_sumsq, int dtype,
                        float* scale) {
  const float s = rescue_scale(max_abs_bits(src, dim, dtype));
  const float eps_scaled = (eps * s) * s;
  if (s != 0.0f && eps_scaled <= FLT_MAX) {
    *scale = s;
    return inv_rms(row_sumsq(src, NULL, dim, dtype, SUM_SCALED, s), dim, eps_scaled);
  }
  *scale = 1.0f;
  return inv_rms(plain_sumsq, dim, eps);
}

/* Whether every weight applied (w_i, or weight_offset + w_i, which can
 * overflow to +-Inf though both are finite) is finite: the vector writers
 * may assume their outputs are not NaN only then (see wasmsimd.c), since
 * 0 * Inf is NaN. */
/* Whether no element has an all-ones exponent field (Inf or NaN). A branchless
 * loop over the bits, which the compiler vectorizes: this runs on every call,
 * and one row is often all the work there is. */
#define DEFINE_EXPONENTS_FINITE(NAME, TYPE, EXPONENT)    \
  static bool NAME(const TYPE* w, size_t dim) {          \
    TYPE special = 0;                                    \
    for (size_t i = 0; i < dim; i++) {                   \
      special |= (TYPE) ((w[i] & EXPONENT) == EXPONENT); \
    }                                                    \
    return special == 0;                                 \
  }
DEFINE_EXPONENTS_FINITE(exponents_finite_32, uint32_t, UINT32_C(0x7F800000))
DEFINE_EXPONENTS_FINITE(exponents_finite_16, uint16_t, 0x7F80)
DEFINE_EXPONENTS_FINITE(exponents_finite_f16, uint16_t, 0x7C00)

static bool all_finite(const void* w, size_t dim, int weight_dtype, bool offset,
                       float weight_offset) {
  if (!offset) {
    switch (weight_dtype) {
      case RMSNORM_BF16: return exponents_finite_16((const uint16_t*) w, dim);
      case RMSNORM_F16: return exponents_finite_f16((const uint16_t*) w, dim);
      default: return exponents_finite_32((const uint32_t*) w, dim);
    }
  }
  /* offset + w can overflow even where w is finite */
  for (size_t i = 0; i < dim; i++) {
    if (!(fabsf(weight_offset + load_f32(w, i, weight_dtype)) <= FLT_MAX)) {
      return false;
    }
  }
  return true;
}

/* ---- specializations ------------------------------------------------------
 * Each combination of storage type, weight type, offset and cast mode gets
 * its own copy of the loops with those choices folded in at compile time; the
 * kernel picks the ones it needs once per call. The choice is made with
 * switches, not tables of function pointers: a table would be data in linear
 * memory, and the imported-memory build must not own any bytes of the
 * memory it is given (see bindMemory in src/api/bind.js). */

typedef float (*row_sumsq_fn)(const void* x, void* r, size_t dim);

#define DEFINE_ROW_SUMSQ(NAME, DTYPE, MODE)               \
  static float NAME(const void* x, void* r, size_t dim) { \
    return row_sumsq(x, r, dim, DTYPE, MODE, 1.0f);       \
  }
DEFINE_ROW_SUMSQ(sumsq_f32, RMSNORM_F32, SUM_PLAIN)
DEFINE_ROW_SUMSQ(sumsq_bf16, RMSNORM_BF16, SUM_PLAIN)
DEFINE_ROW_SUMSQ(sumsq_f16, RMSNORM_F16, SUM_PLAIN)
DEFINE_ROW_SUMSQ(add_sumsq_f32, RMSNORM_F32, SUM_ADD_RESIDUAL)
DEFINE_ROW_SUMSQ(add_sumsq_bf16, RMSNORM_BF16, SUM_ADD_RESIDUAL)
DEFINE_ROW_SUMSQ(add_sumsq_f16, RMSNORM_F16, SUM_ADD_RESIDUAL)

static row_sumsq_fn select_sumsq(int dtype, bool add_residual) {
  switch (dtype) {
    case RMSNORM_BF16: return add_residual ? add_sumsq_bf16 : sumsq_bf16;
    case RMSNORM_F16: return add_residual ? add_sumsq_f16 : sumsq_f16;
    default: return add_residual ? add_sumsq_f32 : sumsq_f32;
  }
}

/* The two loops of one specialization: step 4 for a row, and the same fused
 * with the next row's sum of squares (returned). write_summing is NULL where
 * rows are written one at a time: float16 storage, whose conversions make it
 * compute-bound anyway (its fused loops would double its code for nothing).
 * float32 and bfloat16 are the memory-bound cases the fusion pays for. */
struct row_writers {
  void (*write)(const void* src, const void* w, void* y, size_t dim, float inv,
                float weight_offset);
  float (*write_summing)(const void* next, const void* src, const void* w, void* y, size_t dim,
                         float inv, float weight_offset);
};

/* static inline: the fused loop of a float16 specialization is never
 * referenced, and so never emitted. */
#define DEFINE_WRITER(NAME, DTYPE, WEIGHT_DTYPE, OFFSET, CAST)                                  \
  static inline void NAME(const void* src, const void* w, void* y, size_t dim, float inv,       \
                          float weight_offset) {                                                \
    write_row(src, w, y, dim, inv, weight_offset, DTYPE, WEIGHT_DTYPE, OFFSET, CAST);           \
  }                                                                                             \
  static inline float NAME##_summing(const void* next, const void* src, const void* w, void* y, \
                                     size_t dim, float inv, float weight_offset) {              \
    return row_sumsq_writing(next, src, w, y, dim, inv, weight_offset, DTYPE, WEIGHT_DTYPE,     \
                             OFFSET, CAST);                                                     \
  }
#define WRITERS(NAME, DTYPE) \
  ((struct row_writers){NAME, (DTYPE) == RMSNORM_F16 ? NULL : NAME##_summing})

/* The (offset, cast mode) variants of one (storage, weight) pair, and the
 * choice among them. For float32 storage both cast modes are the same
 * computation: only the gemma ones are used. */
#define DEFINE_WEIGHTED_WRITERS(PREFIX, DTYPE, WEIGHT_DTYPE)                                   \
  DEFINE_WRITER(PREFIX##_gemma, DTYPE, WEIGHT_DTYPE, false, RMSNORM_CAST_GEMMA)                \
  DEFINE_WRITER(PREFIX##_llama, DTYPE, WEIGHT_DTYPE, false, RMSNORM_CAST_LLAMA)                \
  DEFINE_WRITER(PREFIX##_offset_gemma, DTYPE, WEIGHT_DTYPE, true, RMSNORM_CAST_GEMMA)          \
  DEFINE_WRITER(PREFIX##_offset_llama, DTYPE, WEIGHT_DTYPE, true, RMSNORM_CAST_LLAMA)          \
  static struct row_writers PREFIX(bool offset, bool llama) {                                  \
    if ((DTYPE) == RMSNORM_F32) llama = false;                                                 \
    return offset ? (llama ? WRITERS(PREFIX##_offset_llama, DTYPE)                             \
                           : WRITERS(PREFIX##_offset_gemma, DTYPE))                            \
                  : (llama ? WRITERS(PREFIX##_llama, DTYPE) : WRITERS(PREFIX##_gemma, DTYPE)); \
  }

/* Every specialization of one storage type: without a weight, and with a
 * weight of each type (any weight type goes with any storage type). */
#define DEFINE_STORAGE_WRITERS(PREFIX, DTYPE)                                             \
  DEFINE_WRITER(PREFIX##_unweighted, DTYPE, RMSNORM_NO_WEIGHT, false, RMSNORM_CAST_GEMMA) \
  DEFINE_WEIGHTED_WRITERS(PREFIX##_f32, DTYPE, RMSNORM_F32)                               \
  DEFINE_WEIGHTED_WRITERS(PREFIX##_bf16, DTYPE, RMSNORM_BF16)                             \
  DEFINE_WEIGHTED_WRITERS(PREFIX##_f16, DTYPE, RMSNORM_F16)                               \
  static struct row_writers PREFIX(int weight_dtype, bool offset, bool llama) {           \
    switch (weight_dtype) {                                                               \
      case RMSNORM_NO_WEIGHT: return WRITERS(PREFIX##_unweighted, DTYPE);                 \
      case RMSNORM_BF16: return PREFIX##_bf16(offset, llama);                             \
      case RMSNORM_F16: return PREFIX##_f16(offset, llama);                               \
      default: return PREFIX##_f32(offset, llama);                                        \
    }                                                                                     \
  }
DEFINE_STORAGE_WRITERS(write_f32, RMSNORM_F32)
DEFINE_STORAGE_WRITERS(write_bf16, RMSNORM_BF16)
DEFINE_STORAGE_WRITERS(write_f16, RMSNORM_F16)

static struct row_writers select_writers(int dtype, int weight_dtype, bool offset, bool llama) {
  switch (dtype) {
    case RMSNORM_BF16: return write_bf16(weight_dtype, offset, llama);
    case RMSNORM_F16: return write_f16(weight_dtype, offset, llama);
    default: return write_f32(weight_dtype, offset, llama);
  }
}

void RMSNORM_F32_KERNEL(const void* x, void* residual, const void* w, void* y, float* rstd,
                        size_t rows, size_t dim, float eps, int dtype, int weight_dtype,
                        int cast_mode, float weight_offset) {
  assert(dim >= 1);
  assert(eps >= 0.0f && eps <= FLT_MAX);
  assert(dtype >= RMSNORM_F32 && dtype <= RMSNORM_F16);
  assert(w == NULL || (weight_dtype >= RMSNORM_F32 && weight_dtype <= RMSNORM_F16));
  assert(cast_mode == RMSNORM_CAST_LLAMA || cast_mode == RMSNORM_CAST_GEMMA);
  if (w == NULL) {
    weight_dtype = RMSNORM_NO_WEIGHT;
  }
  const bool offset = w != NULL && weight_offset != 0.0f;
  const bool llama = cast_mode == RMSNORM_CAST_LLAMA;
  const int cast = llama ? RMSNORM_CAST_LLAMA : RMSNORM_CAST_GEMMA;
  const row_sumsq_fn sumsq_of = select_sumsq(dtype, residual != NULL);
  /* A weight holding NaN or Inf (or overflowing with the offset) is valid
   * input but no model's: its rows take the scalar writer, so that the
   * vector writers need not handle NaN. */
  const bool vector_writer = y != NULL && (dtype == RMSNORM_F32 || w == NULL ||
                                           all_finite(w, dim, weight_dtype, offset, weight_offset));
  const struct row_writers writers = select_writers(dtype, weight_dtype, offset, llama);
  const size_t row_bytes = dim * dtype_size(dtype);
  /* Without a residual, row r+1's sum of squares is taken while row r is
   * written (row_sumsq_writing); y == x is safe, as row r's stores never
   * touch row r+1. With a residual the sum pass writes too: one row at a time. */
  float (*const write_summing)(const void*, const void*, const void*, void*, size_t, float, float) =
      residual == NULL && vector_writer ? writers.write_summing : NULL;
  float sumsq = write_summing != NULL && rows > 0 ? sumsq_of(x, NULL, dim) : 0.0f;
  for (size_t r = 0; r < rows; r++) {
    const char* xr = (const char*) x + r * row_bytes;
    char* rr = residual != NULL ? (char*) residual + r * row_bytes : NULL;
    char* yr = y != NULL ? (char*) y + r * row_bytes : NULL;
    /* With a residual, the row to normalize is the updated residual. */
    const void* src = rr != NULL ? (const void*) rr : (const void*) xr;
    if (write_summing == NULL) {
      sumsq = sumsq_of(xr, rr, dim);
    }
    const float plain_inv = inv_rms(sumsq, dim, eps);
    const bool plain = is_plain(sumsq, plain_inv);
    const bool sum_next = write_summing != NULL && r + 1 < rows;
    float scale = 1.0f;
    const float inv = plain ? plain_inv : rescue_inv(src, dim, eps, sumsq, dtype, &scale);
    /* Step 5, before step 4 writes y (which may be x). */
    if (rstd != NULL) {
      rstd[r] = inv * scale;
    }
    if (plain && sum_next) {
      sumsq = write_summing(xr + row_bytes, src, w, yr, dim, plain_inv, weight_offset);
      continue;
    }
    if (yr == NULL) {
      continue;
    }
    /* A row the rescue left as it was (all zeros, say: padding) goes to the
     * vector writer too when x * inv cannot be NaN: x finite (its sum of
     * squares is) and inv finite (not an all-zero row with eps = 0). The
     * scalar writer is many times slower. */
    if (vector_writer && scale == 1.0f && sumsq <= FLT_MAX && inv <= FLT_MAX) {
      writers.write(src, w, yr, dim, inv, weight_offset);
    } else {
      scalar_write_row(src, w, yr, 0, dim, inv, scale, scale != 1.0f, weight_offset, dtype,
                       weight_dtype, offset, cast);
    }
    if (sum_next) {
      sumsq = sumsq_of(xr + row_bytes, NULL, dim);
    }
  }
}
