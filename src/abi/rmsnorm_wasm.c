/*
 * The C API for C engines (rmsnorm_wasm.h): the JS API's argument checks,
 * then the same kernel calls as exports.c. The checks cost a few compares per
 * call, nothing per value.
 */
#include "rmsnorm_wasm.h"

#include <float.h>
#include <stdbool.h>
#include <stdint.h>

#include "ukernels.h"

const char* rmsnorm_wasm_status_string(rmsnorm_wasm_status status) {
  switch (status) {
    case RMSNORM_WASM_OK: return "ok";
    case RMSNORM_WASM_ERROR_NULL: return "a required array is NULL";
    case RMSNORM_WASM_ERROR_DIM:
      return "dim must be >= 1 and every array's size in bytes fit in size_t";
    case RMSNORM_WASM_ERROR_EPS: return "eps must be finite and >= 0";
    case RMSNORM_WASM_ERROR_OPTION:
      return "unknown dtype or cast mode (the converters take a 16-bit dtype), or weight_offset "
             "not finite";
    case RMSNORM_WASM_ERROR_OVERLAP:
      return "an output overlaps another array (only y == x and dx == dy are allowed)";
    case RMSNORM_WASM_ERROR_RANGE:
      return "an array runs past the end of the address space (pointer + size overflows)";
  }
  return "unknown status";
}

/* One array of a call: where it is, its size as `rows` rows of `per_row`
 * values of `size` bytes (the per-row arrays are rows x dim, a weight or a
 * running sum 1 x dim, a statistic rows x 1), whether it is written, and
 * which other array of the call (index) it may equal exactly (-1: none). */
struct span {
  const void* at;
  size_t rows, per_row, size;
  bool output;
  int may_equal;
};

/* The bytes a span holds, if that count fits size_t. */
static bool bytes_of(const struct span* s, size_t* bytes) {
  if (s->per_row != 0 && s->rows > SIZE_MAX / s->per_row) {
    return false;
  }
  const size_t count = s->rows * s->per_row;
  if (count > SIZE_MAX / s->size) {
    return false;
  }
  *bytes = count * s->size;
  return true;
}

/* The first and last byte of a non-empty array: with the last byte rather
 * than the end, an array that ends at the very top of the address space
 * (end 2^32 in wasm32) needs no number beyond uintptr_t. */
struct range {
  uintptr_t first, last;
  bool empty;
};

static bool ranges_overlap(const struct range* a, const struct range* b) {
  return !a->empty && !b->empty && a->first <= b->last && b->first <= a->last;
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
      return RMSNORM_WASM_ERROR_DIM;
    }
  }
  struct range ranges[MAX_SPANS];
  for (int i = 0; i < n; i++) {
    const uintptr_t first = (uintptr_t) spans[i].at;
    ranges[i] = (struct range){first, first, true};
    if (spans[i].at == NULL || bytes[i] == 0) {
      continue;
    }
    if (first > UINTPTR_MAX - (bytes[i] - 1)) {
      return RMSNORM_WASM_ERROR_RANGE;
    }
    ranges[i] = (struct range){first, first + (bytes[i] - 1), false};
  }
  for (int i = 0; i < n; i++) {
    for (int j = i + 1; j < n; j++) {
      if (!(spans[i].output || spans[j].output) || !ranges_overlap(&ranges[i], &ranges[j])) {
        continue;
      }
      const bool allowed = (spans[i].may_equal == j || spans[j].may_equal == i) &&
                           ranges[i].first == ranges[j].first && ranges[i].last == ranges[j].last;
      if (!allowed) {
        return RMSNORM_WASM_ERROR_OVERLAP;
      }
    }
  }
  return RMSNORM_WASM_OK;
}

static bool known_dtype(rmsnorm_wasm_dtype dtype) {
  return dtype == RMSNORM_WASM_FLOAT32 || dtype == RMSNORM_WASM_BFLOAT16 ||
         dtype == RMSNORM_WASM_FLOAT16;
}

/* The kernels' own rule (../kernels/float16.h), whose codes are these. */
static size_t element_bytes(rmsnorm_wasm_dtype dtype) {
  return dtype_size((int) dtype);
}

/* dim >= 1, and rows * dim elements of `bytes` each fit in size_t. */
static rmsnorm_wasm_status check_shape(size_t rows, size_t dim, size_t bytes) {
  if (dim == 0 || dim > SIZE_MAX / bytes || (rows > 0 && rows > SIZE_MAX / (dim * bytes))) {
    return RMSNORM_WASM_ERROR_DIM;
  }
  return RMSNORM_WASM_OK;
}

/* -0 passes (-0 >= 0), as in JS; NaN fails both compares. */
static bool valid_eps(float eps) {
  return eps >= 0.0f && eps <= FLT_MAX;
}

/* What every normalization checks of its rows: the shape, then eps. */
static rmsnorm_wasm_status check_rows(size_t rows, size_t dim, size_t bytes, float eps) {
  const rmsnorm_wasm_status status = check_shape(rows, dim, bytes);
  if (status != RMSNORM_WASM_OK) {
    return status;
  }
  return valid_eps(eps) ? RMSNORM_WASM_OK : RMSNORM_WASM_ERROR_EPS;
}

/* Both RMSNorm entry points: the full one (y required), or rstd alone
 * (`stats_only`: rstd required, y NULL). */
static rmsnorm_wasm_status checked_rmsnorm(const void* x, void* residual, const void* weight,
                                           void* y, float* rstd, size_t rows, size_t dim, float eps,
                                           rmsnorm_wasm_dtype dtype,
                                           rmsnorm_wasm_dtype weight_dtype,
                                           rmsnorm_wasm_cast_mode cast_mode, float weight_offset,
                                           bool stats_only) {
  if (!known_dtype(dtype) || (weight != NULL && !known_dtype(weight_dtype)) ||
      (cast_mode != RMSNORM_WASM_CAST_GEMMA && cast_mode != RMSNORM_WASM_CAST_LLAMA) ||
      !(weight_offset >= -FLT_MAX && weight_offset <= FLT_MAX)) {
    return RMSNORM_WASM_ERROR_OPTION;
  }
  rmsnorm_wasm_status status = check_rows(rows, dim, element_bytes(dtype), eps);
  if (status != RMSNORM_WASM_OK || rows == 0) {
    return status;
  }
  if (x == NULL || (stats_only ? rstd == NULL : y == NULL)) {
    return RMSNORM_WASM_ERROR_NULL;
  }
  const size_t size = element_bytes(dtype);
  enum { X, RESIDUAL, WEIGHT, Y, RSTD };
  const struct span spans[] = {
      [X] = {x, rows, dim, size, false, Y},
      [RESIDUAL] = {residual, rows, dim, size, true, -1},
      [WEIGHT] = {weight, 1, dim, weight != NULL ? element_bytes(weight_dtype) : 1, false, -1},
      [Y] = {y, rows, dim, size, true, X},
      [RSTD] = {rstd, rows, 1, sizeof(float), true, -1},
  };
  status = check_spans(spans, 5);
  if (status == RMSNORM_WASM_OK) {
    UKERNEL(rmsnorm)
    (x, residual, weight, y, rstd, rows, dim, dim, eps, dtype, weight_dtype, cast_mode,
     weight_offset);
  }
  return status;
}

rmsnorm_wasm_status rmsnorm_wasm_rmsnorm(const void* x, void* residual, const void* weight, void* y,
                                         float* rstd, size_t rows, size_t dim, float eps,
                                         rmsnorm_wasm_dtype dtype, rmsnorm_wasm_dtype weight_dtype,
                                         rmsnorm_wasm_cast_mode cast_mode, float weight_offset) {
  return checked_rmsnorm(x, residual, weight, y, rstd, rows, dim, eps, dtype, weight_dtype,
                         cast_mode, weight_offset, false);
}

rmsnorm_wasm_status rmsnorm_wasm_f32(const float* x, const float* weight, float* y, size_t rows,
                                     size_t dim, float eps) {
  return rmsnorm_wasm_rmsnorm(x, NULL, weight, y, NULL, rows, dim, eps, RMSNORM_WASM_FLOAT32,
                              RMSNORM_WASM_FLOAT32, RMSNORM_WASM_CAST_LLAMA, 0.0f);
}

rmsnorm_wasm_status rmsnorm_wasm_rmsnorm_rstd(const void* x, float* rstd, size_t rows, size_t dim,
                                              float eps, rmsnorm_wasm_dtype dtype) {
  return checked_rmsnorm(x, NULL, NULL, NULL, rstd, rows, dim, eps, dtype, RMSNORM_WASM_FLOAT32,
                         RMSNORM_WASM_CAST_LLAMA, 0.0f, true);
}

rmsnorm_wasm_status rmsnorm_wasm_layernorm_f32(const float* x, const float* weight,
                                               const float* bias, float* y, float* mean,
                                               float* rstd, size_t rows, size_t dim, float eps) {
  rmsnorm_wasm_status status = check_rows(rows, dim, sizeof(float), eps);
  if (status != RMSNORM_WASM_OK || rows == 0) {
    return status;
  }
  if (x == NULL) {
    return RMSNORM_WASM_ERROR_NULL;
  }
  const size_t size = sizeof(float);
  enum { X, WEIGHT, BIAS, Y, MEAN, RSTD };
  const struct span spans[] = {
      [X] = {x, rows, dim, size, false, Y},     [WEIGHT] = {weight, 1, dim, size, false, -1},
      [BIAS] = {bias, 1, dim, size, false, -1}, [Y] = {y, rows, dim, size, true, X},
      [MEAN] = {mean, rows, 1, size, true, -1}, [RSTD] = {rstd, rows, 1, size, true, -1},
  };
  status = check_spans(spans, 6);
  if (status == RMSNORM_WASM_OK) {
    UKERNEL(layernorm)(x, weight, bias, y, mean, rstd, rows, dim, dim, eps);
  }
  return status;
}

/* Both backward passes; mean is NULL for RMSNorm's. */
static rmsnorm_wasm_status check_backward(const float* dy, const float* x, const float* weight,
                                          const float* mean, const float* rstd, const float* dx,
                                          const float* dweight, const float* dbias, size_t rows,
                                          size_t dim, bool layernorm) {
  const rmsnorm_wasm_status status = check_shape(rows, dim, sizeof(float));
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
  const size_t size = sizeof(float);
  enum { DY, X, WEIGHT, MEAN, RSTD, DX, DWEIGHT, DBIAS };
  const struct span spans[] = {
      [DY] = {dy, rows, dim, size, false, DX},       [X] = {x, rows, dim, size, false, -1},
      [WEIGHT] = {weight, 1, dim, size, false, -1},  [MEAN] = {mean, rows, 1, size, false, -1},
      [RSTD] = {rstd, rows, 1, size, false, -1},     [DX] = {dx, rows, dim, size, true, DY},
      [DWEIGHT] = {dweight, 1, dim, size, true, -1}, [DBIAS] = {dbias, 1, dim, size, true, -1},
  };
  return check_spans(spans, 8);
}

rmsnorm_wasm_status rmsnorm_wasm_rmsnorm_backward_f32(const float* dy, const float* x,
                                                      const float* weight, const float* rstd,
                                                      float* dx, float* dweight, size_t rows,
                                                      size_t dim) {
  const rmsnorm_wasm_status status =
      check_backward(dy, x, weight, NULL, rstd, dx, dweight, NULL, rows, dim, false);
  if (status == RMSNORM_WASM_OK && rows > 0) {
    UKERNEL(rmsnorm_backward)(dy, x, weight, rstd, dx, dweight, rows, dim, dim);
  }
  return status;
}

rmsnorm_wasm_status rmsnorm_wasm_layernorm_backward_f32(const float* dy, const float* x,
                                                        const float* weight, const float* mean,
                                                        const float* rstd, float* dx,
                                                        float* dweight, float* dbias, size_t rows,
                                                        size_t dim) {
  const rmsnorm_wasm_status status =
      check_backward(dy, x, weight, mean, rstd, dx, dweight, dbias, rows, dim, true);
  if (status == RMSNORM_WASM_OK && rows > 0) {
    UKERNEL(layernorm_backward)(dy, x, weight, mean, rstd, dx, dweight, dbias, rows, dim, dim);
  }
  return status;
}

/* Both converters: src holds n values of src_size bytes, dst n of
 * dst_size. */
static rmsnorm_wasm_status check_conversion(const void* src, size_t src_size, const void* dst,
                                            size_t dst_size, size_t n, rmsnorm_wasm_dtype dtype) {
  if (dtype != RMSNORM_WASM_BFLOAT16 && dtype != RMSNORM_WASM_FLOAT16) {
    return RMSNORM_WASM_ERROR_OPTION;
  }
  if (n == 0) {
    return RMSNORM_WASM_OK;
  }
  if (src == NULL || dst == NULL) {
    return RMSNORM_WASM_ERROR_NULL;
  }
  const struct span spans[] = {
      {src, 1, n, src_size, false, -1},
      {dst, 1, n, dst_size, true, -1},
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
