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
    case RMSNORM_WASM_ERROR_DIM: return "dim must be >= 1 and every array's size fit in size_t";
    case RMSNORM_WASM_ERROR_EPS: return "eps must be finite and >= 0";
    case RMSNORM_WASM_ERROR_OPTION:
      return "unknown dtype or cast mode, or weight_offset not finite";
    case RMSNORM_WASM_ERROR_OVERLAP:
      return "an output overlaps another array (only y == x and dx == dy are allowed)";
  }
  return "unknown status";
}

/* One array of a call: where it is, how many bytes, whether it is written,
 * and which other array of the call (index) it may equal exactly (-1: none). */
struct span {
  const void* at;
  size_t bytes;
  bool output;
  int may_equal;
};

static bool overlap(const struct span* a, const struct span* b) {
  const uintptr_t a0 = (uintptr_t) a->at;
  const uintptr_t b0 = (uintptr_t) b->at;
  return a->at != NULL && b->at != NULL && a->bytes > 0 && b->bytes > 0 && a0 < b0 + b->bytes &&
         b0 < a0 + a->bytes;
}

/* The aliasing rules of rmsnorm_wasm.h over the n arrays of one call. */
static rmsnorm_wasm_status check_overlaps(const struct span* spans, int n) {
  for (int i = 0; i < n; i++) {
    for (int j = i + 1; j < n; j++) {
      if (!(spans[i].output || spans[j].output) || !overlap(&spans[i], &spans[j])) {
        continue;
      }
      const bool allowed = (spans[i].may_equal == j || spans[j].may_equal == i) &&
                           spans[i].at == spans[j].at && spans[i].bytes == spans[j].bytes;
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

static size_t element_bytes(rmsnorm_wasm_dtype dtype) {
  return dtype == RMSNORM_WASM_FLOAT32 ? 4 : 2;
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
  /* the weight (dim values) is no larger than the rows when rows >= 1 */
  rmsnorm_wasm_status status =
      weight != NULL ? check_shape(1, dim, element_bytes(weight_dtype)) : RMSNORM_WASM_OK;
  if (status == RMSNORM_WASM_OK) {
    status = check_rows(rows, dim, element_bytes(dtype), eps);
  }
  if (status != RMSNORM_WASM_OK || rows == 0) {
    return status;
  }
  if (x == NULL || (stats_only ? rstd == NULL : y == NULL)) {
    return RMSNORM_WASM_ERROR_NULL;
  }
  const size_t bytes = rows * dim * element_bytes(dtype);
  enum { X, RESIDUAL, WEIGHT, Y, RSTD };
  const struct span spans[] = {
      [X] = {x, bytes, false, Y},
      [RESIDUAL] = {residual, bytes, true, -1},
      [WEIGHT] = {weight, weight != NULL ? dim * element_bytes(weight_dtype) : 0, false, -1},
      [Y] = {y, bytes, true, X},
      [RSTD] = {rstd, rstd != NULL ? rows * sizeof(float) : 0, true, -1},
  };
  status = check_overlaps(spans, 5);
  if (status == RMSNORM_WASM_OK) {
    UKERNEL(rmsnorm)
    (x, residual, weight, y, rstd, rows, dim, eps, dtype, weight_dtype, cast_mode, weight_offset);
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

void rmsnorm_wasm_f32(const float* x, const float* weight, float* y, size_t rows, size_t dim,
                      float eps) {
  (void) rmsnorm_wasm_rmsnorm(x, NULL, weight, y, NULL, rows, dim, eps, RMSNORM_WASM_FLOAT32,
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
  const size_t bytes = rows * dim * sizeof(float);
  const size_t row_bytes = dim * sizeof(float);
  const size_t stat_bytes = rows * sizeof(float);
  enum { X, WEIGHT, BIAS, Y, MEAN, RSTD };
  const struct span spans[] = {
      [X] = {x, bytes, false, Y},
      [WEIGHT] = {weight, row_bytes, false, -1},
      [BIAS] = {bias, row_bytes, false, -1},
      [Y] = {y, bytes, true, X},
      [MEAN] = {mean, stat_bytes, true, -1},
      [RSTD] = {rstd, stat_bytes, true, -1},
  };
  status = check_overlaps(spans, 6);
  if (status == RMSNORM_WASM_OK) {
    UKERNEL(layernorm)(x, weight, bias, y, mean, rstd, rows, dim, eps);
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
  const size_t bytes = rows * dim * sizeof(float);
  const size_t row_bytes = dim * sizeof(float);
  const size_t stat_bytes = rows * sizeof(float);
  enum { DY, X, WEIGHT, MEAN, RSTD, DX, DWEIGHT, DBIAS };
  const struct span spans[] = {
      [DY] = {dy, bytes, false, DX},
      [X] = {x, bytes, false, -1},
      [WEIGHT] = {weight, row_bytes, false, -1},
      [MEAN] = {mean, stat_bytes, false, -1},
      [RSTD] = {rstd, stat_bytes, false, -1},
      [DX] = {dx, bytes, true, DY},
      [DWEIGHT] = {dweight, row_bytes, true, -1},
      [DBIAS] = {dbias, row_bytes, true, -1},
  };
  return check_overlaps(spans, 8);
}

rmsnorm_wasm_status rmsnorm_wasm_rmsnorm_backward_f32(const float* dy, const float* x,
                                                      const float* weight, const float* rstd,
                                                      float* dx, float* dweight, size_t rows,
                                                      size_t dim) {
  const rmsnorm_wasm_status status =
      check_backward(dy, x, weight, NULL, rstd, dx, dweight, NULL, rows, dim, false);
  if (status == RMSNORM_WASM_OK && rows > 0) {
    UKERNEL(rmsnorm_backward)(dy, x, weight, rstd, dx, dweight, rows, dim);
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
    UKERNEL(layernorm_backward)(dy, x, weight, mean, rstd, dx, dweight, dbias, rows, dim);
  }
  return status;
}
