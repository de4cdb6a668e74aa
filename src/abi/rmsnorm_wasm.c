/*
 * The C API for C engines (rmsnorm_wasm.h): the JS API's argument checks,
 * made once by a prepare function into a rmsnorm_wasm_call, then the same
 * kernel calls as exports.c, made by rmsnorm_wasm_run with no check at all.
 * The one-shot entry points are prepare + run with row_stride = dim. The
 * checks cost a few compares per call, nothing per value.
 */
#include "rmsnorm_wasm.h"

#include <float.h>
#include <stdbool.h>
#include <stdint.h>

#include "../kernels/q8_blocks.h"
#include "ukernels.h"

/* Block formats: written by src/abi/block-formats.js from src/loader/abi.js. */
/* The formats and their block sizes, as the status messages name them. */
#define FORMAT_NAMES    \
  "RMSNORM_WASM_Q8_0"   \
  ", RMSNORM_WASM_Q8_1" \
  " or RMSNORM_WASM_Q8_K"
#define BLOCK_SIZES                                  \
  "32 for RMSNORM_WASM_Q8_0 and RMSNORM_WASM_Q8_1, " \
  "256 for RMSNORM_WASM_Q8_K"
/* End of the written block formats. */

const char* rmsnorm_wasm_status_string(rmsnorm_wasm_status status) {
  switch (status) {
    case RMSNORM_WASM_OK: return "ok";
    case RMSNORM_WASM_ERROR_NULL:
      return "a required array is NULL: pass x and the output (y, out, dx, dst), rstd (and mean) "
             "to a backward pass, and dweight exactly when weight is given";
    case RMSNORM_WASM_ERROR_DIM:
      return "dim (or heads) is 0: pass the number of values a row holds (and the heads a token "
             "holds), >= 1";
    case RMSNORM_WASM_ERROR_EPS:
      return "eps must be finite and >= 0: pass the model's epsilon (its rms_norm_eps, e.g. 1e-6)";
    case RMSNORM_WASM_ERROR_DTYPE:
      return "unknown dtype or weight_dtype: use RMSNORM_WASM_FLOAT32, RMSNORM_WASM_BFLOAT16 or "
             "RMSNORM_WASM_FLOAT16 (the converters take RMSNORM_WASM_BFLOAT16 or "
             "RMSNORM_WASM_FLOAT16)";
    case RMSNORM_WASM_ERROR_OVERLAP:
      return "an output shares a byte with another array's values: give each output its own "
             "memory (only y == x and dx == dy, exactly, may share; block outputs never)";
    case RMSNORM_WASM_ERROR_RANGE:
      return "an array runs past the end of the address space (pointer + size overflows): check "
             "the pointer and rows, dim and row_stride";
    case RMSNORM_WASM_ERROR_STRIDE:
      return "row_stride and head_stride must be >= dim, and with several tokens row_stride >= "
             "(heads - 1) * head_stride + dim: pass the distance in values from one row's (or "
             "head's) start to the next";
    case RMSNORM_WASM_ERROR_BLOCK:
      return "dim is not a multiple of the block size, " BLOCK_SIZES
             ": pick a format whose block divides dim, or write the rows unquantized (float32, as "
             "ggml keeps such tensors)";
    case RMSNORM_WASM_ERROR_CAST_MODE:
      return "unknown cast mode: use RMSNORM_WASM_CAST_LLAMA or RMSNORM_WASM_CAST_GEMMA";
    case RMSNORM_WASM_ERROR_FORMAT: return "unknown block format: use " FORMAT_NAMES;
    case RMSNORM_WASM_ERROR_WEIGHT_OFFSET:
      return "weight_offset must be finite: pass 0 for none, 1 for Gemma's weights stored as w - 1";
    case RMSNORM_WASM_ERROR_SIZE:
      return "an array's size in bytes overflows size_t: rows, dim, heads or a stride is far too "
             "large (a negative count converted to size_t?)";
  }
  return "unknown status";
}

/* ---- spans: where a call's arrays lie ------------------------------------
 * One array of a call: `rows` rows of `per_row` values of `size` bytes,
 * `stride` values from one row's start to the next (per_row for a packed
 * array: the per-row arrays are rows x dim with the call's row stride, a
 * weight or a running sum 1 x dim, a statistic rows x 1), whether it is
 * written, and which other array of the call (index) it may equal exactly
 * (-1: none). */
struct span {
  const void* at;
  size_t rows, per_row, stride, size;
  bool output;
  int may_equal;
};

/* A span's bytes as rows: `rows` rows of `row_bytes` bytes, `stride_bytes`
 * apart from `first` (a packed array is one row). With the last byte rather
 * than the end, an array that ends at the very top of the address space (end
 * 2^32 in wasm32) needs no number beyond uintptr_t. */
struct extent {
  uintptr_t first, last;
  size_t rows, row_bytes, stride_bytes;
  bool empty;
};

/* The bytes from a span's first value to its last, if that count fits
 * size_t: (rows - 1) * stride + per_row values. One row has no next row:
 * its stride, whatever it is, is never multiplied (the JS API's rowSpan,
 * src/ops/options.js). */
static bool bytes_of(const struct span* s, size_t* bytes) {
  if (s->rows == 0 || s->per_row == 0) {
    *bytes = 0;
    return true;
  }
  const size_t most = SIZE_MAX / s->size; /* values */
  if (s->per_row > most ||
      (s->rows > 1 && (s->stride > most || s->rows - 1 > (most - s->per_row) / s->stride))) {
    return false;
  }
  *bytes = ((s->rows - 1) * s->stride + s->per_row) * s->size;
  return true;
}

static struct extent extent_of(const struct span* s, size_t bytes) {
  const uintptr_t first = (uintptr_t) s->at;
  struct extent e = {first, first, 1, bytes, bytes, true};
  if (s->at == NULL || bytes == 0) {
    return e;
  }
  e.last = first + (bytes - 1);
  e.empty = false;
  if (s->rows > 1 && s->stride != s->per_row) {
    e.rows = s->rows;
    e.row_bytes = s->per_row * s->size;
    e.stride_bytes = s->stride * s->size;
  }
  return e;
}

/* Whether a row of strided `a` shares a byte with the bytes [p, last] of a
 * packed array: only the first row of `a` that ends after p can meet it. */
static bool rows_meet(const struct extent* a, uintptr_t p, uintptr_t last) {
  if (last < a->first || a->last < p) {
    return false;
  }
  size_t r = 0;
  if (p >= a->first && p - a->first >= a->row_bytes) {
    r = (p - a->first - a->row_bytes) / a->stride_bytes + 1;
  }
  return r < a->rows && a->first + r * a->stride_bytes <= last;
}

/* Whether two arrays share a byte of their values. Two strided ones are per-row
 * arrays of one call, with the same stride and row bytes: with d the
 * distance between their first bytes, rows m apart meet iff |d - m * S| < D,
 * and only the m nearest d / S can. */
static bool extents_overlap(const struct extent* a, const struct extent* b) {
  if (a->empty || b->empty || a->last < b->first || b->last < a->first) {
    return false;
  }
  if (a->rows == 1) {
    return rows_meet(b, a->first, a->last);
  }
  if (b->rows == 1) {
    return rows_meet(a, b->first, b->last);
  }
  const struct extent* low = a->first <= b->first ? a : b;
  const uintptr_t d = (a->first <= b->first ? b->first : a->first) - low->first;
  const size_t S = low->stride_bytes, D = low->row_bytes;
  size_t m = d / S;
  if (m > low->rows - 1) {
    m = low->rows - 1;
  }
  if (d - m * S < D) {
    return true;
  }
  return m + 1 <= low->rows - 1 && (m + 1) * S - d < D;
}

/* The n arrays of one call (NULL ones are absent), in three passes, so that
 * the status does not depend on where the arrays happen to lie: every
 * array's size fits size_t (else ERROR_DIM), every array fits below the end
 * of the address space (else ERROR_RANGE), then the aliasing rules of
 * rmsnorm_wasm.h (else ERROR_OVERLAP). */
#define MAX_SPANS 8
static rmsnorm_wasm_status check_spans(const struct span* spans, int n) {
  size_t bytes[MAX_SPANS];
  for (int i = 0; i < n; i++) {
    if (spans[i].at != NULL && !bytes_of(&spans[i], &bytes[i])) {
      return RMSNORM_WASM_ERROR_SIZE;
    }
  }
  struct extent extents[MAX_SPANS];
  for (int i = 0; i < n; i++) {
    const uintptr_t first = (uintptr_t) spans[i].at;
    if (spans[i].at != NULL && bytes[i] != 0 && first > UINTPTR_MAX - (bytes[i] - 1)) {
      return RMSNORM_WASM_ERROR_RANGE;
    }
    extents[i] = extent_of(&spans[i], spans[i].at != NULL ? bytes[i] : 0);
  }
  for (int i = 0; i < n; i++) {
    for (int j = i + 1; j < n; j++) {
      if (!(spans[i].output || spans[j].output) || !extents_overlap(&extents[i], &extents[j])) {
        continue;
      }
      const bool allowed = (spans[i].may_equal == j || spans[j].may_equal == i) &&
                           extents[i].first == extents[j].first &&
                           extents[i].last == extents[j].last;
      if (!allowed) {
        return RMSNORM_WASM_ERROR_OVERLAP;
      }
    }
  }
  return RMSNORM_WASM_OK;
}

/* ---- the checks of the options and the shape ----------------------------- */

static bool known_dtype(rmsnorm_wasm_dtype dtype) {
  return dtype == RMSNORM_WASM_FLOAT32 || dtype == RMSNORM_WASM_BFLOAT16 ||
         dtype == RMSNORM_WASM_FLOAT16;
}

/* The kernels' own rule (../kernels/float16.h), whose codes are these. */
static size_t element_bytes(rmsnorm_wasm_dtype dtype) {
  return dtype_size((int) dtype);
}

/* dim >= 1 (ERROR_DIM), row_stride >= dim (ERROR_STRIDE), and the rows'
 * span, (rows - 1) * row_stride + dim elements of `bytes` each, fits in
 * size_t (ERROR_DIM). */
static rmsnorm_wasm_status check_shape(size_t rows, size_t dim, size_t row_stride, size_t bytes) {
  if (dim == 0) {
    return RMSNORM_WASM_ERROR_DIM;
  }
  if (row_stride < dim) {
    return RMSNORM_WASM_ERROR_STRIDE;
  }
  const struct span rows_span = {NULL, rows, dim, row_stride, bytes, false, -1};
  size_t span_bytes;
  return bytes_of(&rows_span, &span_bytes) ? RMSNORM_WASM_OK : RMSNORM_WASM_ERROR_SIZE;
}

/* -0 passes (-0 >= 0), as in JS; NaN fails both compares. */
static bool valid_eps(float eps) {
  return eps >= 0.0f && eps <= FLT_MAX;
}

/* What every normalization checks of its rows: the shape, then eps. */
static rmsnorm_wasm_status check_rows(size_t rows, size_t dim, size_t row_stride, size_t bytes,
                                      float eps) {
  const rmsnorm_wasm_status status = check_shape(rows, dim, row_stride, bytes);
  if (status != RMSNORM_WASM_OK) {
    return status;
  }
  return valid_eps(eps) ? RMSNORM_WASM_OK : RMSNORM_WASM_ERROR_EPS;
}

/* ---- prepared calls ------------------------------------------------------ */

enum call_op {
  OP_NONE = 0, /* nothing to do: rows == 0, or the prepare failed */
  OP_RMSNORM,
  OP_RMSNORM_Q8,
  OP_QUANTIZE,
  OP_DEQUANTIZE,
  OP_LAYERNORM,
  OP_RMSNORM_BACKWARD,
  OP_LAYERNORM_BACKWARD,
};

/* The slots of rmsnorm_wasm_call.arrays, per operation. */
enum { RMS_X, RMS_RESIDUAL, RMS_WEIGHT, RMS_Y, RMS_RSTD };
enum { LN_X, LN_WEIGHT, LN_BIAS, LN_Y, LN_MEAN, LN_RSTD };
enum { BW_DY, BW_X, BW_WEIGHT, BW_MEAN, BW_RSTD, BW_DX, BW_DWEIGHT, BW_DBIAS };
enum { Q8_FLOATS, Q8_BLOCKS }; /* the quantizer's and the dequantizer's */

/* A call that does nothing: what a failed prepare leaves, so that running
 * it anyway touches no array. */
static rmsnorm_wasm_status prepared(rmsnorm_wasm_call* call, rmsnorm_wasm_status status) {
  if (status != RMSNORM_WASM_OK) {
    call->op = OP_NONE;
  }
  return status;
}

static void set_shape(rmsnorm_wasm_call* call, int op, size_t rows, size_t dim, size_t row_stride,
                      float eps) {
  call->op = rows == 0 ? OP_NONE : op;
  call->rows = rows;
  call->dim = dim;
  /* One row has no next row: its stride never reaches the kernels, as in JS. */
  call->row_stride = rows <= 1 ? dim : row_stride;
  call->heads = 1;
  call->head_stride = dim;
  call->block_format = 0;
  call->eps = eps;
}

/* The format a _q8 entry point was given, as the checks take it: 0 there
 * means no blocks, so a _q8 call's 0 (no format) becomes -1, unknown. */
static int blocks_of(rmsnorm_wasm_block_format format) {
  return format == 0 ? -1 : (int) format;
}

/* RMSNorm's options, each its own status, in the header's order: dtypes,
 * cast mode and block format (0: none) known, weight_offset finite. */
static rmsnorm_wasm_status check_rms_options(const void* weight, rmsnorm_wasm_dtype dtype,
                                             rmsnorm_wasm_dtype weight_dtype,
                                             rmsnorm_wasm_cast_mode cast_mode, float weight_offset,
                                             int format) {
  if (!known_dtype(dtype) || (weight != NULL && !known_dtype(weight_dtype))) {
    return RMSNORM_WASM_ERROR_DTYPE;
  }
  if (cast_mode != RMSNORM_WASM_CAST_GEMMA && cast_mode != RMSNORM_WASM_CAST_LLAMA) {
    return RMSNORM_WASM_ERROR_CAST_MODE;
  }
  if (format != 0 && !q8_known_format(format)) {
    return RMSNORM_WASM_ERROR_FORMAT;
  }
  if (!(weight_offset >= -FLT_MAX && weight_offset <= FLT_MAX)) {
    return RMSNORM_WASM_ERROR_WEIGHT_OFFSET;
  }
  return RMSNORM_WASM_OK;
}

/* The checks of both RMSNorm prepares: the full one (y required), or rstd alone
 * (`stats_only`: rstd required, y NULL). */
static rmsnorm_wasm_status check_rmsnorm(const void* x, void* residual, const void* weight, void* y,
                                         float* rstd, size_t rows, size_t dim, size_t row_stride,
                                         float eps, rmsnorm_wasm_dtype dtype,
                                         rmsnorm_wasm_dtype weight_dtype,
                                         rmsnorm_wasm_cast_mode cast_mode, float weight_offset,
                                         bool stats_only, int format) {
  rmsnorm_wasm_status status =
      check_rms_options(weight, dtype, weight_dtype, cast_mode, weight_offset, format);
  if (status != RMSNORM_WASM_OK) {
    return status;
  }
  const size_t size = element_bytes(dtype);
  status = check_shape(rows, dim, row_stride, size);
  if (status == RMSNORM_WASM_OK && format != 0 && dim % q8_block_values(format) != 0) {
    status = RMSNORM_WASM_ERROR_BLOCK;
  }
  if (status == RMSNORM_WASM_OK && !valid_eps(eps)) {
    status = RMSNORM_WASM_ERROR_EPS;
  }
  if (status != RMSNORM_WASM_OK || rows == 0) {
    return status;
  }
  if (x == NULL || (stats_only ? rstd == NULL : y == NULL)) {
    return RMSNORM_WASM_ERROR_NULL;
  }
  const size_t weight_size = weight != NULL ? element_bytes(weight_dtype) : 1;
  const struct span spans[] = {
      [RMS_X] = {x, rows, dim, row_stride, size, false, format == 0 ? RMS_Y : -1},
      [RMS_RESIDUAL] = {residual, rows, dim, row_stride, size, true, -1},
      [RMS_WEIGHT] = {weight, 1, dim, dim, weight_size, false, -1},
      /* Blocks: packed rows of bytes, never in place. */
      [RMS_Y] = format == 0 ? (struct span){y, rows, dim, row_stride, size, true, RMS_X}
                            : (struct span){y, rows, rmsnorm_wasm_block_row_bytes(format, dim),
                                            rmsnorm_wasm_block_row_bytes(format, dim), 1, true, -1},
      [RMS_RSTD] = {rstd, rows, 1, 1, sizeof(float), true, -1},
  };
  return check_spans(spans, 5);
}

/* An RMSNorm call's arrays and terms (its shape: set_shape). */
static void set_rms_arrays(rmsnorm_wasm_call* call, const void* x, void* residual,
                           const void* weight, void* y, float* rstd, rmsnorm_wasm_dtype dtype,
                           rmsnorm_wasm_dtype weight_dtype, rmsnorm_wasm_cast_mode cast_mode,
                           float weight_offset) {
  call->arrays[RMS_X] = x;
  call->arrays[RMS_RESIDUAL] = residual;
  call->arrays[RMS_WEIGHT] = weight;
  call->arrays[RMS_Y] = y;
  call->arrays[RMS_RSTD] = rstd;
  call->dtype = (int) dtype;
  call->weight_dtype = (int) weight_dtype;
  call->cast_mode = (int) cast_mode;
  call->weight_offset = weight_offset;
}

/* Both RMSNorm preparations: the arguments checked, then the call filled. */
static rmsnorm_wasm_status prepare_rms(rmsnorm_wasm_call* call, const void* x, void* residual,
                                       const void* weight, void* y, float* rstd, size_t rows,
                                       size_t dim, size_t row_stride, float eps,
                                       rmsnorm_wasm_dtype dtype, rmsnorm_wasm_dtype weight_dtype,
                                       rmsnorm_wasm_cast_mode cast_mode, float weight_offset,
                                       bool stats_only, int format) {
  if (call == NULL) {
    return RMSNORM_WASM_ERROR_NULL;
  }
  const rmsnorm_wasm_status status =
      check_rmsnorm(x, residual, weight, y, rstd, rows, dim, row_stride, eps, dtype, weight_dtype,
                    cast_mode, weight_offset, stats_only, format);
  if (status == RMSNORM_WASM_OK) {
    set_shape(call, format == 0 ? OP_RMSNORM : OP_RMSNORM_Q8, rows, dim, row_stride, eps);
    call->block_format = format;
    set_rms_arrays(call, x, residual, weight, y, rstd, dtype, weight_dtype, cast_mode,
                   weight_offset);
  }
  return prepared(call, status);
}

rmsnorm_wasm_status rmsnorm_wasm_prepare_rmsnorm(
    rmsnorm_wasm_call* call, const void* x, void* residual, const void* weight, void* y,
    float* rstd, size_t rows, size_t dim, size_t row_stride, float eps, rmsnorm_wasm_dtype dtype,
    rmsnorm_wasm_dtype weight_dtype, rmsnorm_wasm_cast_mode cast_mode, float weight_offset) {
  return prepare_rms(call, x, residual, weight, y, rstd, rows, dim, row_stride, eps, dtype,
                     weight_dtype, cast_mode, weight_offset, false, 0);
}

rmsnorm_wasm_status rmsnorm_wasm_prepare_rmsnorm_q8(
    rmsnorm_wasm_call* call, const void* x, void* residual, const void* weight, void* out,
    float* rstd, size_t rows, size_t dim, size_t row_stride, float eps, rmsnorm_wasm_dtype dtype,
    rmsnorm_wasm_dtype weight_dtype, rmsnorm_wasm_cast_mode cast_mode, float weight_offset,
    rmsnorm_wasm_block_format format) {
  return prepare_rms(call, x, residual, weight, out, rstd, rows, dim, row_stride, eps, dtype,
                     weight_dtype, cast_mode, weight_offset, false, blocks_of(format));
}

size_t rmsnorm_wasm_block_row_bytes(rmsnorm_wasm_block_format format, size_t dim) {
  if (!q8_known_format((int) format) || dim % q8_block_values(format) != 0) {
    return 0;
  }
  return dim / q8_block_values(format) * q8_block_bytes(format);
}

/* ---- the quantizer and the dequantizer alone ------------------------------
 * Rows of float32 values, row_stride apart, and rows of blocks, packed. */

/* Both directions' checks, in the header's order; `dequantize`: the
 * float32 rows are written, else the blocks. */
static rmsnorm_wasm_status check_blockwise(const float* values, const void* blocks, size_t rows,
                                           size_t dim, size_t row_stride, int format,
                                           bool dequantize) {
  if (!q8_known_format(format)) {
    return RMSNORM_WASM_ERROR_FORMAT;
  }
  rmsnorm_wasm_status status = check_shape(rows, dim, row_stride, sizeof(float));
  if (status == RMSNORM_WASM_OK && dim % q8_block_values(format) != 0) {
    status = RMSNORM_WASM_ERROR_BLOCK;
  }
  if (status != RMSNORM_WASM_OK || rows == 0) {
    return status;
  }
  if (values == NULL || blocks == NULL) {
    return RMSNORM_WASM_ERROR_NULL;
  }
  /* A row of blocks takes fewer bytes than its float32 values, whose span was checked. */
  const size_t row_bytes = rmsnorm_wasm_block_row_bytes(format, dim);
  const struct span spans[] = {
      [Q8_FLOATS] = {values, rows, dim, row_stride, sizeof(float), dequantize, -1},
      [Q8_BLOCKS] = {blocks, rows, row_bytes, row_bytes, 1, !dequantize, -1},
  };
  return check_spans(spans, 2);
}

static rmsnorm_wasm_status prepare_blockwise(rmsnorm_wasm_call* call, const float* values,
                                             const void* blocks, size_t rows, size_t dim,
                                             size_t row_stride, int format, bool dequantize) {
  if (call == NULL) {
    return RMSNORM_WASM_ERROR_NULL;
  }
  const rmsnorm_wasm_status status =
      check_blockwise(values, blocks, rows, dim, row_stride, format, dequantize);
  if (status == RMSNORM_WASM_OK) {
    set_shape(call, dequantize ? OP_DEQUANTIZE : OP_QUANTIZE, rows, dim, row_stride, 0.0f);
    call->block_format = format;
    call->arrays[Q8_FLOATS] = values;
    call->arrays[Q8_BLOCKS] = blocks;
  }
  return prepared(call, status);
}

rmsnorm_wasm_status rmsnorm_wasm_prepare_quantize(rmsnorm_wasm_call* call, const float* x,
                                                  void* blocks, size_t rows, size_t dim,
                                                  size_t row_stride,
                                                  rmsnorm_wasm_block_format format) {
  return prepare_blockwise(call, x, blocks, rows, dim, row_stride, (int) format, false);
}

rmsnorm_wasm_status rmsnorm_wasm_prepare_dequantize(rmsnorm_wasm_call* call, const void* blocks,
                                                    float* y, size_t rows, size_t dim,
                                                    size_t row_stride,
                                                    rmsnorm_wasm_block_format format) {
  return prepare_blockwise(call, y, blocks, rows, dim, row_stride, (int) format, true);
}

rmsnorm_wasm_status rmsnorm_wasm_prepare_rmsnorm_rstd(rmsnorm_wasm_call* call, const void* x,
                                                      float* rstd, size_t rows, size_t dim,
                                                      size_t row_stride, float eps,
                                                      rmsnorm_wasm_dtype dtype) {
  return prepare_rms(call, x, NULL, NULL, NULL, rstd, rows, dim, row_stride, eps, dtype,
                     RMSNORM_WASM_FLOAT32, RMSNORM_WASM_CAST_LLAMA, 0.0f, true, 0);
}

/* ---- heads: tokens of several rows ----------------------------------------
 * Row (t, h) of x, residual and y at element t * row_stride + h *
 * head_stride. The overlap rule is checked head by head: head h of a
 * per-row array is a strided array of its own, tokens rows row_stride
 * apart, which the one-head rule (extents_overlap) compares. */

/* Head h of a per-row array (`whole`, its tokens rows of a token's span). */
static struct span head_of(const struct span* whole, size_t h, size_t dim, size_t head_stride) {
  struct span s = *whole;
  s.at = (const unsigned char*) whole->at + h * head_stride * whole->size;
  s.per_row = dim;
  return s;
}

/* Whether two spans, each inside an array whose size and range were checked, share a byte. */
static bool spans_meet(const struct span* a, const struct span* b) {
  size_t bytes_a, bytes_b;
  (void) bytes_of(a, &bytes_a);
  (void) bytes_of(b, &bytes_b);
  const struct extent ea = extent_of(a, bytes_a), eb = extent_of(b, bytes_b);
  return extents_overlap(&ea, &eb);
}

/* The aliasing rules on a heads call's arrays (RMS_* slots; x, residual and
 * y per-row, unless y is `blocks`, `whole` their whole spans): y may be x
 * itself, head for head. */
static rmsnorm_wasm_status check_heads_overlap(const struct span* whole, size_t heads, size_t dim,
                                               size_t head_stride, bool blocks) {
  const bool per_row[5] = {[RMS_X] = true, [RMS_RESIDUAL] = true, [RMS_Y] = !blocks};
  for (int i = 0; i < 5; i++) {
    for (int j = i + 1; j < 5; j++) {
      if (whole[i].at == NULL || whole[j].at == NULL || !(whole[i].output || whole[j].output)) {
        continue;
      }
      const size_t heads_i = per_row[i] ? heads : 1, heads_j = per_row[j] ? heads : 1;
      for (size_t hi = 0; hi < heads_i; hi++) {
        const struct span a = per_row[i] ? head_of(&whole[i], hi, dim, head_stride) : whole[i];
        for (size_t hj = 0; hj < heads_j; hj++) {
          const struct span b = per_row[j] ? head_of(&whole[j], hj, dim, head_stride) : whole[j];
          if (!spans_meet(&a, &b)) {
            continue;
          }
          const bool in_place = whole[i].may_equal == j && whole[i].at == whole[j].at && hi == hj;
          if (!in_place) {
            return RMSNORM_WASM_ERROR_OVERLAP;
          }
        }
      }
    }
  }
  return RMSNORM_WASM_OK;
}

/* The checks of rmsnorm_wasm_prepare_rmsnorm_heads (format 0) and _heads_q8,
 * in the header's order; `token_span`: a token's values,
 * (heads - 1) * head_stride + dim. */
static rmsnorm_wasm_status check_rmsnorm_heads(
    const void* x, void* residual, const void* weight, void* y, float* rstd, size_t tokens,
    size_t heads, size_t dim, size_t head_stride, size_t row_stride, float eps,
    rmsnorm_wasm_dtype dtype, rmsnorm_wasm_dtype weight_dtype, rmsnorm_wasm_cast_mode cast_mode,
    float weight_offset, int format, size_t* token_span) {
  const rmsnorm_wasm_status options =
      check_rms_options(weight, dtype, weight_dtype, cast_mode, weight_offset, format);
  if (options != RMSNORM_WASM_OK) {
    return options;
  }
  if (dim == 0 || heads == 0) {
    return RMSNORM_WASM_ERROR_DIM;
  }
  if (row_stride < dim || head_stride < dim) {
    return RMSNORM_WASM_ERROR_STRIDE;
  }
  const size_t size = element_bytes(dtype);
  const struct span token = {NULL, heads, dim, head_stride, size, false, -1};
  size_t token_bytes;
  if (!bytes_of(&token, &token_bytes)) {
    return RMSNORM_WASM_ERROR_SIZE;
  }
  *token_span = token_bytes / size;
  if (tokens > 1 && *token_span > row_stride) {
    return RMSNORM_WASM_ERROR_STRIDE; /* a token's heads would run into the next token's */
  }
  const struct span all = {NULL, tokens, *token_span, row_stride, size, false, -1};
  size_t all_bytes;
  if (!bytes_of(&all, &all_bytes)) {
    return RMSNORM_WASM_ERROR_SIZE;
  }
  if (format != 0 && dim % q8_block_values(format) != 0) {
    return RMSNORM_WASM_ERROR_BLOCK;
  }
  if (!valid_eps(eps)) {
    return RMSNORM_WASM_ERROR_EPS;
  }
  if (tokens == 0) {
    return RMSNORM_WASM_OK;
  }
  if (x == NULL || y == NULL) {
    return RMSNORM_WASM_ERROR_NULL;
  }
  if (heads > SIZE_MAX / tokens) {
    return RMSNORM_WASM_ERROR_SIZE; /* rstd's tokens * heads values */
  }
  const size_t weight_size = weight != NULL ? element_bytes(weight_dtype) : 1;
  /* Blocks: tokens * heads packed rows of bytes, never in place. */
  const size_t block_row = format != 0 ? rmsnorm_wasm_block_row_bytes(format, dim) : 0;
  struct span whole[] = {
      [RMS_X] = {x, tokens, *token_span, row_stride, size, false, format == 0 ? RMS_Y : -1},
      [RMS_RESIDUAL] = {residual, tokens, *token_span, row_stride, size, false, -1},
      [RMS_WEIGHT] = {weight, 1, dim, dim, weight_size, false, -1},
      [RMS_Y] = format == 0 ? (struct span){y, tokens, *token_span, row_stride, size, false, RMS_X}
                            : (struct span){y, tokens * heads, block_row, block_row, 1, false, -1},
      [RMS_RSTD] = {rstd, tokens * heads, 1, 1, sizeof(float), false, -1},
  };
  /* Sizes and ranges of the whole arrays (no output, so no overlap check there). */
  const rmsnorm_wasm_status status = check_spans(whole, 5);
  if (status != RMSNORM_WASM_OK) {
    return status;
  }
  whole[RMS_RESIDUAL].output = whole[RMS_Y].output = whole[RMS_RSTD].output = true;
  return check_heads_overlap(whole, heads, dim, head_stride, format != 0);
}

static rmsnorm_wasm_status prepare_heads(rmsnorm_wasm_call* call, const void* x, void* residual,
                                         const void* weight, void* y, float* rstd, size_t tokens,
                                         size_t heads, size_t dim, size_t head_stride,
                                         size_t row_stride, float eps, rmsnorm_wasm_dtype dtype,
                                         rmsnorm_wasm_dtype weight_dtype,
                                         rmsnorm_wasm_cast_mode cast_mode, float weight_offset,
                                         int format) {
  if (call == NULL) {
    return RMSNORM_WASM_ERROR_NULL;
  }
  size_t token_span = 0;
  const rmsnorm_wasm_status status =
      check_rmsnorm_heads(x, residual, weight, y, rstd, tokens, heads, dim, head_stride, row_stride,
                          eps, dtype, weight_dtype, cast_mode, weight_offset, format, &token_span);
  if (status != RMSNORM_WASM_OK) {
    return prepared(call, status);
  }
  const int op = format == 0 ? OP_RMSNORM : OP_RMSNORM_Q8;
  if (tokens <= 1 || row_stride == heads * head_stride) {
    /* Heads evenly spaced across tokens too: plain rows head_stride apart, in the same order. */
    set_shape(call, op, tokens * heads, dim, head_stride, eps);
  } else {
    set_shape(call, op, tokens, dim, row_stride, eps);
    call->heads = heads;
    call->head_stride = head_stride;
  }
  call->block_format = format;
  set_rms_arrays(call, x, residual, weight, y, rstd, dtype, weight_dtype, cast_mode, weight_offset);
  return RMSNORM_WASM_OK;
}

rmsnorm_wasm_status rmsnorm_wasm_prepare_rmsnorm_heads(
    rmsnorm_wasm_call* call, const void* x, void* residual, const void* weight, void* y,
    float* rstd, size_t tokens, size_t heads, size_t dim, size_t head_stride, size_t row_stride,
    float eps, rmsnorm_wasm_dtype dtype, rmsnorm_wasm_dtype weight_dtype,
    rmsnorm_wasm_cast_mode cast_mode, float weight_offset) {
  return prepare_heads(call, x, residual, weight, y, rstd, tokens, heads, dim, head_stride,
                       row_stride, eps, dtype, weight_dtype, cast_mode, weight_offset, 0);
}

rmsnorm_wasm_status rmsnorm_wasm_prepare_rmsnorm_heads_q8(
    rmsnorm_wasm_call* call, const void* x, void* residual, const void* weight, void* out,
    float* rstd, size_t tokens, size_t heads, size_t dim, size_t head_stride, size_t row_stride,
    float eps, rmsnorm_wasm_dtype dtype, rmsnorm_wasm_dtype weight_dtype,
    rmsnorm_wasm_cast_mode cast_mode, float weight_offset, rmsnorm_wasm_block_format format) {
  return prepare_heads(call, x, residual, weight, out, rstd, tokens, heads, dim, head_stride,
                       row_stride, eps, dtype, weight_dtype, cast_mode, weight_offset,
                       blocks_of(format));
}

rmsnorm_wasm_status rmsnorm_wasm_prepare_layernorm_f32(rmsnorm_wasm_call* call, const float* x,
                                                       const float* weight, const float* bias,
                                                       float* y, float* mean, float* rstd,
                                                       size_t rows, size_t dim, size_t row_stride,
                                                       float eps) {
  if (call == NULL) {
    return RMSNORM_WASM_ERROR_NULL;
  }
  const size_t size = sizeof(float);
  rmsnorm_wasm_status status = check_rows(rows, dim, row_stride, size, eps);
  if (status == RMSNORM_WASM_OK && rows > 0) {
    if (x == NULL) {
      status = RMSNORM_WASM_ERROR_NULL;
    } else {
      const struct span spans[] = {
          [LN_X] = {x, rows, dim, row_stride, size, false, LN_Y},
          [LN_WEIGHT] = {weight, 1, dim, dim, size, false, -1},
          [LN_BIAS] = {bias, 1, dim, dim, size, false, -1},
          [LN_Y] = {y, rows, dim, row_stride, size, true, LN_X},
          [LN_MEAN] = {mean, rows, 1, 1, size, true, -1},
          [LN_RSTD] = {rstd, rows, 1, 1, size, true, -1},
      };
      status = check_spans(spans, 6);
    }
  }
  if (status == RMSNORM_WASM_OK) {
    set_shape(call, OP_LAYERNORM, rows, dim, row_stride, eps);
    call->arrays[LN_X] = x;
    call->arrays[LN_WEIGHT] = weight;
    call->arrays[LN_BIAS] = bias;
    call->arrays[LN_Y] = y;
    call->arrays[LN_MEAN] = mean;
    call->arrays[LN_RSTD] = rstd;
  }
  return prepared(call, status);
}

/* Both backward passes; mean is NULL for RMSNorm's. */
static rmsnorm_wasm_status check_backward(const float* dy, const float* x, const float* weight,
                                          const float* mean, const float* rstd, const float* dx,
                                          const float* dweight, const float* dbias, size_t rows,
                                          size_t dim, size_t row_stride, bool layernorm) {
  const size_t size = sizeof(float);
  const rmsnorm_wasm_status status = check_shape(rows, dim, row_stride, size);
  if (status != RMSNORM_WASM_OK) {
    return status;
  }
  if ((weight == NULL) != (dweight == NULL)) {
    return RMSNORM_WASM_ERROR_NULL;
  }
  if (rows == 0) {
    return RMSNORM_WASM_OK;
  }
  if (dy == NULL || x == NULL || rstd == NULL || dx == NULL || (layernorm && mean == NULL)) {
    return RMSNORM_WASM_ERROR_NULL;
  }
  const struct span spans[] = {
      [BW_DY] = {dy, rows, dim, row_stride, size, false, BW_DX},
      [BW_X] = {x, rows, dim, row_stride, size, false, -1},
      [BW_WEIGHT] = {weight, 1, dim, dim, size, false, -1},
      [BW_MEAN] = {mean, rows, 1, 1, size, false, -1},
      [BW_RSTD] = {rstd, rows, 1, 1, size, false, -1},
      [BW_DX] = {dx, rows, dim, row_stride, size, true, BW_DY},
      [BW_DWEIGHT] = {dweight, 1, dim, dim, size, true, -1},
      [BW_DBIAS] = {dbias, 1, dim, dim, size, true, -1},
  };
  return check_spans(spans, 8);
}

static rmsnorm_wasm_status prepare_backward(rmsnorm_wasm_call* call, const float* dy,
                                            const float* x, const float* weight, const float* mean,
                                            const float* rstd, float* dx, float* dweight,
                                            float* dbias, size_t rows, size_t dim,
                                            size_t row_stride, bool layernorm) {
  if (call == NULL) {
    return RMSNORM_WASM_ERROR_NULL;
  }
  const rmsnorm_wasm_status status = check_backward(dy, x, weight, mean, rstd, dx, dweight, dbias,
                                                    rows, dim, row_stride, layernorm);
  if (status == RMSNORM_WASM_OK) {
    set_shape(call, layernorm ? OP_LAYERNORM_BACKWARD : OP_RMSNORM_BACKWARD, rows, dim, row_stride,
              0.0f);
    call->arrays[BW_DY] = dy;
    call->arrays[BW_X] = x;
    call->arrays[BW_WEIGHT] = weight;
    call->arrays[BW_MEAN] = mean;
    call->arrays[BW_RSTD] = rstd;
    call->arrays[BW_DX] = dx;
    call->arrays[BW_DWEIGHT] = dweight;
    call->arrays[BW_DBIAS] = dbias;
  }
  return prepared(call, status);
}

rmsnorm_wasm_status rmsnorm_wasm_prepare_rmsnorm_backward_f32(
    rmsnorm_wasm_call* call, const float* dy, const float* x, const float* weight,
    const float* rstd, float* dx, float* dweight, size_t rows, size_t dim, size_t row_stride) {
  return prepare_backward(call, dy, x, weight, NULL, rstd, dx, dweight, NULL, rows, dim, row_stride,
                          false);
}

rmsnorm_wasm_status rmsnorm_wasm_prepare_layernorm_backward_f32(
    rmsnorm_wasm_call* call, const float* dy, const float* x, const float* weight,
    const float* mean, const float* rstd, float* dx, float* dweight, float* dbias, size_t rows,
    size_t dim, size_t row_stride) {
  return prepare_backward(call, dy, x, weight, mean, rstd, dx, dweight, dbias, rows, dim,
                          row_stride, true);
}

/* The prepared arrays are the caller's: outputs were given as writable
 * pointers, kept as const void* only so one array holds them all. */
#define OUT(type, slot) ((type*) (uintptr_t) a[slot])
#define IN(type, slot) ((const type*) a[slot])

/* One runner per operation, so that a one-shot entry point links only its
 * own kernel (wasm-ld drops the functions nothing calls). */
/* `p` moved on by `bytes`, NULL staying NULL (an array not given). */
static const void* moved(const void* p, size_t bytes) {
  return p == NULL ? NULL : (const unsigned char*) p + bytes;
}

/* With heads (rmsnorm_wasm_prepare_rmsnorm_heads), call->rows is the number
 * of tokens, and the kernel runs once a token on its heads, rows
 * head_stride apart: the rows in the order (t, h), each computed alone, so
 * the bits are those of one call per head; rstd's index is t * heads + h. */
static void run_rmsnorm(const rmsnorm_wasm_call* call) {
  const void* const* a = call->arrays;
  const size_t token_bytes = call->row_stride * dtype_size(call->dtype);
  for (size_t t = 0, n = call->heads == 1 ? 1 : call->rows; t < n; t++) {
    const size_t at = t * token_bytes;
    float* rstd = OUT(float, RMS_RSTD);
    UKERNEL(rmsnorm)
    (moved(a[RMS_X], at), (void*) (uintptr_t) moved(a[RMS_RESIDUAL], at), a[RMS_WEIGHT],
     (void*) (uintptr_t) moved(a[RMS_Y], at), rstd == NULL ? NULL : rstd + t * call->heads,
     call->heads == 1 ? call->rows : call->heads, call->dim,
     call->heads == 1 ? call->row_stride : call->head_stride, call->eps, call->dtype,
     call->weight_dtype, call->cast_mode, call->weight_offset);
  }
}

/* As run_rmsnorm, the blocks packed: token t's at t * heads rows of blocks. */
static void run_rmsnorm_q8(const rmsnorm_wasm_call* call) {
  const void* const* a = call->arrays;
  const size_t token_bytes = call->row_stride * dtype_size(call->dtype);
  const size_t token_blocks =
      call->heads * rmsnorm_wasm_block_row_bytes(call->block_format, call->dim);
  for (size_t t = 0, n = call->heads == 1 ? 1 : call->rows; t < n; t++) {
    const size_t at = t * token_bytes;
    float* rstd = OUT(float, RMS_RSTD);
    UKERNEL(rmsnorm_q8)
    (moved(a[RMS_X], at), (void*) (uintptr_t) moved(a[RMS_RESIDUAL], at), a[RMS_WEIGHT],
     (void*) (uintptr_t) moved(a[RMS_Y], t * token_blocks),
     rstd == NULL ? NULL : rstd + t * call->heads, call->heads == 1 ? call->rows : call->heads,
     call->dim, call->heads == 1 ? call->row_stride : call->head_stride, call->eps, call->dtype,
     call->weight_dtype, call->cast_mode, call->weight_offset, call->block_format);
  }
}

/* Packed rows are one run of blocks; strided ones go row by row. */
static void run_quantize(const rmsnorm_wasm_call* call) {
  const void* const* a = call->arrays;
  const int format = call->block_format;
  const size_t per_row = call->dim / q8_block_values(format);
  const size_t row_bytes = per_row * q8_block_bytes(format);
  const size_t n = call->row_stride == call->dim ? 1 : call->rows;
  const size_t blocks = call->row_stride == call->dim ? call->rows * per_row : per_row;
  for (size_t r = 0; r < n; r++) {
    UKERNEL(quantize_q8)
    (IN(float, Q8_FLOATS) + r * call->row_stride, OUT(uint8_t, Q8_BLOCKS) + r * row_bytes, blocks,
     format);
  }
}

static void run_dequantize(const rmsnorm_wasm_call* call) {
  const void* const* a = call->arrays;
  const int format = call->block_format;
  const size_t values = q8_block_values(format), bytes = q8_block_bytes(format);
  const size_t per_row = call->dim / values;
  for (size_t r = 0; r < call->rows; r++) {
    for (size_t b = 0; b < per_row; b++) {
      q8_dequantize_block(IN(uint8_t, Q8_BLOCKS) + (r * per_row + b) * bytes, format,
                          OUT(float, Q8_FLOATS) + r * call->row_stride + b * values);
    }
  }
}

static void run_layernorm(const rmsnorm_wasm_call* call) {
  const void* const* a = call->arrays;
  UKERNEL(layernorm)
  (IN(float, LN_X), IN(float, LN_WEIGHT), IN(float, LN_BIAS), OUT(float, LN_Y), OUT(float, LN_MEAN),
   OUT(float, LN_RSTD), call->rows, call->dim, call->row_stride, call->eps);
}

static void run_rmsnorm_backward(const rmsnorm_wasm_call* call) {
  const void* const* a = call->arrays;
  UKERNEL(rmsnorm_backward)
  (IN(float, BW_DY), IN(float, BW_X), IN(float, BW_WEIGHT), IN(float, BW_RSTD), OUT(float, BW_DX),
   OUT(float, BW_DWEIGHT), call->rows, call->dim, call->row_stride);
}

static void run_layernorm_backward(const rmsnorm_wasm_call* call) {
  const void* const* a = call->arrays;
  UKERNEL(layernorm_backward)
  (IN(float, BW_DY), IN(float, BW_X), IN(float, BW_WEIGHT), IN(float, BW_MEAN), IN(float, BW_RSTD),
   OUT(float, BW_DX), OUT(float, BW_DWEIGHT), OUT(float, BW_DBIAS), call->rows, call->dim,
   call->row_stride);
}

void rmsnorm_wasm_run(const rmsnorm_wasm_call* call) {
  switch (call->op) {
    case OP_RMSNORM: run_rmsnorm(call); break;
    case OP_RMSNORM_Q8: run_rmsnorm_q8(call); break;
    case OP_QUANTIZE: run_quantize(call); break;
    case OP_DEQUANTIZE: run_dequantize(call); break;
    case OP_LAYERNORM: run_layernorm(call); break;
    case OP_RMSNORM_BACKWARD: run_rmsnorm_backward(call); break;
    case OP_LAYERNORM_BACKWARD: run_layernorm_backward(call); break;
    default: break;
  }
}

/* ---- one-shot calls: prepare, then run, with row_stride = dim ------------- */

/* Runs, with `runner`, a call its prepare accepted (rows == 0: nothing). */
static rmsnorm_wasm_status ran(const rmsnorm_wasm_call* call, rmsnorm_wasm_status status,
                               void (*runner)(const rmsnorm_wasm_call*)) {
  if (status == RMSNORM_WASM_OK && call->op != OP_NONE) {
    runner(call);
  }
  return status;
}

rmsnorm_wasm_status rmsnorm_wasm_rmsnorm(const void* x, void* residual, const void* weight, void* y,
                                         float* rstd, size_t rows, size_t dim, float eps,
                                         rmsnorm_wasm_dtype dtype, rmsnorm_wasm_dtype weight_dtype,
                                         rmsnorm_wasm_cast_mode cast_mode, float weight_offset) {
  rmsnorm_wasm_call call;
  return ran(&call,
             rmsnorm_wasm_prepare_rmsnorm(&call, x, residual, weight, y, rstd, rows, dim, dim, eps,
                                          dtype, weight_dtype, cast_mode, weight_offset),
             run_rmsnorm);
}

rmsnorm_wasm_status rmsnorm_wasm_rmsnorm_q8(const void* x, void* residual, const void* weight,
                                            void* out, float* rstd, size_t rows, size_t dim,
                                            float eps, rmsnorm_wasm_dtype dtype,
                                            rmsnorm_wasm_dtype weight_dtype,
                                            rmsnorm_wasm_cast_mode cast_mode, float weight_offset,
                                            rmsnorm_wasm_block_format format) {
  rmsnorm_wasm_call call;
  return ran(
      &call,
      rmsnorm_wasm_prepare_rmsnorm_q8(&call, x, residual, weight, out, rstd, rows, dim, dim, eps,
                                      dtype, weight_dtype, cast_mode, weight_offset, format),
      run_rmsnorm_q8);
}

rmsnorm_wasm_status rmsnorm_wasm_quantize(const float* x, void* blocks, size_t rows, size_t dim,
                                          rmsnorm_wasm_block_format format) {
  rmsnorm_wasm_call call;
  return ran(&call, rmsnorm_wasm_prepare_quantize(&call, x, blocks, rows, dim, dim, format),
             run_quantize);
}

rmsnorm_wasm_status rmsnorm_wasm_dequantize(const void* blocks, float* y, size_t rows, size_t dim,
                                            rmsnorm_wasm_block_format format) {
  rmsnorm_wasm_call call;
  return ran(&call, rmsnorm_wasm_prepare_dequantize(&call, blocks, y, rows, dim, dim, format),
             run_dequantize);
}

rmsnorm_wasm_status rmsnorm_wasm_f32(const float* x, const float* weight, float* y, size_t rows,
                                     size_t dim, float eps) {
  return rmsnorm_wasm_rmsnorm(x, NULL, weight, y, NULL, rows, dim, eps, RMSNORM_WASM_FLOAT32,
                              RMSNORM_WASM_FLOAT32, RMSNORM_WASM_CAST_LLAMA, 0.0f);
}

rmsnorm_wasm_status rmsnorm_wasm_rmsnorm_rstd(const void* x, float* rstd, size_t rows, size_t dim,
                                              float eps, rmsnorm_wasm_dtype dtype) {
  rmsnorm_wasm_call call;
  return ran(&call, rmsnorm_wasm_prepare_rmsnorm_rstd(&call, x, rstd, rows, dim, dim, eps, dtype),
             run_rmsnorm);
}

rmsnorm_wasm_status rmsnorm_wasm_layernorm_f32(const float* x, const float* weight,
                                               const float* bias, float* y, float* mean,
                                               float* rstd, size_t rows, size_t dim, float eps) {
  rmsnorm_wasm_call call;
  return ran(&call,
             rmsnorm_wasm_prepare_layernorm_f32(&call, x, weight, bias, y, mean, rstd, rows, dim,
                                                dim, eps),
             run_layernorm);
}

rmsnorm_wasm_status rmsnorm_wasm_rmsnorm_backward_f32(const float* dy, const float* x,
                                                      const float* weight, const float* rstd,
                                                      float* dx, float* dweight, size_t rows,
                                                      size_t dim) {
  rmsnorm_wasm_call call;
  return ran(&call,
             rmsnorm_wasm_prepare_rmsnorm_backward_f32(&call, dy, x, weight, rstd, dx, dweight,
                                                       rows, dim, dim),
             run_rmsnorm_backward);
}

rmsnorm_wasm_status rmsnorm_wasm_layernorm_backward_f32(const float* dy, const float* x,
                                                        const float* weight, const float* mean,
                                                        const float* rstd, float* dx,
                                                        float* dweight, float* dbias, size_t rows,
                                                        size_t dim) {
  rmsnorm_wasm_call call;
  return ran(&call,
             rmsnorm_wasm_prepare_layernorm_backward_f32(&call, dy, x, weight, mean, rstd, dx,
                                                         dweight, dbias, rows, dim, dim),
             run_layernorm_backward);
}

/* ---- converters ---------------------------------------------------------- */

/* Both converters: src holds n values of src_size bytes, dst n of
 * dst_size. */
static rmsnorm_wasm_status check_conversion(const void* src, size_t src_size, const void* dst,
                                            size_t dst_size, size_t n, rmsnorm_wasm_dtype dtype) {
  if (dtype != RMSNORM_WASM_BFLOAT16 && dtype != RMSNORM_WASM_FLOAT16) {
    return RMSNORM_WASM_ERROR_DTYPE;
  }
  if (n == 0) {
    return RMSNORM_WASM_OK;
  }
  if (src == NULL || dst == NULL) {
    return RMSNORM_WASM_ERROR_NULL;
  }
  const struct span spans[] = {
      {src, 1, n, n, src_size, false, -1},
      {dst, 1, n, n, dst_size, true, -1},
  };
  return check_spans(spans, 2);
}

rmsnorm_wasm_status rmsnorm_wasm_to_f32(const uint16_t* src, float* dst, size_t n,
                                        rmsnorm_wasm_dtype dtype) {
  const rmsnorm_wasm_status status =
      check_conversion(src, sizeof(uint16_t), dst, sizeof(float), n, dtype);
  if (status == RMSNORM_WASM_OK && n > 0) {
    UKERNEL(widen)(src, dst, n, (int) dtype);
  }
  return status;
}

rmsnorm_wasm_status rmsnorm_wasm_from_f32(const float* src, uint16_t* dst, size_t n,
                                          rmsnorm_wasm_dtype dtype) {
  const rmsnorm_wasm_status status =
      check_conversion(src, sizeof(float), dst, sizeof(uint16_t), n, dtype);
  if (status == RMSNORM_WASM_OK && n > 0) {
    UKERNEL(narrow)(src, dst, n, (int) dtype);
  }
  return status;
}
