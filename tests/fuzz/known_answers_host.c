/*
 * The known-answer harness: both kernels built natively under ASan + UBSan
 * with live asserts, run on calls the JS test sends (tests/native.test.js),
 * which checks the outputs against the JS reference and known answers.
 *
 * stdin, repeated until EOF (little-endian, 32-bit fields):
 *   rows, dim, eps (f32), flags (bit 0 weight, bit 1 residual), dtype,
 *   weight_dtype, cast_mode, weight_offset (f32), stride (of the strided
 *   runs, >= dim: checked_kernels.h runs every call packed and strided),
 *   then x[rows*dim], w[dim] if weighted, residual[rows*dim] if any,
 *   each in its storage type (float32, or 16-bit patterns)
 * stdout, per call: y_simd, y_scalar, then residual_simd, residual_scalar
 * if any, then rstd_simd, rstd_scalar (rows floats each).
 * checked_kernels.h aborts on any breach (the kernels disagree, write outside
 * their outputs or into the gaps between rows, differ in place, strided or
 * interleaved, or give other bits for y without rstd or for rstd and the
 * residual without y).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "checked_kernels.h"

static void* read_array(size_t bytes) {
  void* p = malloc(bytes + 1);
  if (p == NULL) abort();
  if (bytes > 0 && fread(p, 1, bytes, stdin) != bytes) {
    fprintf(stderr, "known_answers_host: truncated input\n");
    exit(2);
  }
  return p;
}

static void write_array(const void* p, size_t bytes) {
  if (bytes > 0 && fwrite(p, 1, bytes, stdout) != bytes) exit(3);
}

int main(void) {
  uint32_t header[9];
  while (fread(header, sizeof header[0], 1, stdin) == 1) {
    if (fread(header + 1, sizeof header[0], 8, stdin) != 8) {
      fprintf(stderr, "known_answers_host: truncated header\n");
      return 2;
    }
    const size_t rows = header[0], dim = header[1], stride = header[8];
    if (stride < dim) {
      fprintf(stderr, "known_answers_host: stride %zu below dim %zu\n", stride, dim);
      return 2;
    }
    const int dtype = (int) header[4], weight_dtype = (int) header[5];
    float eps, weight_offset;
    memcpy(&eps, &header[2], sizeof eps);
    memcpy(&weight_offset, &header[7], sizeof weight_offset);
    const size_t bytes = rows * dim * dtype_size(dtype);
    void* x = read_array(bytes);
    void* w = (header[3] & 1) ? read_array(dim * dtype_size(weight_dtype)) : NULL;
    void* residual = (header[3] & 2) ? read_array(bytes) : NULL;
    struct outputs simd, scalar;
    run_rmsnorm_checked(x, residual, w, rows, dim, stride, eps, dtype, weight_dtype,
                        (int) header[6], weight_offset, (unsigned) (rows * 7 + dim) * 0x9E3779B1u,
                        &simd, &scalar);
    write_array(simd.of[RMS_Y], bytes);
    write_array(scalar.of[RMS_Y], bytes);
    if (residual != NULL) {
      write_array(simd.of[RMS_RESIDUAL], bytes);
      write_array(scalar.of[RMS_RESIDUAL], bytes);
    }
    write_array(simd.of[RMS_RSTD], rows * sizeof(float));
    write_array(scalar.of[RMS_RSTD], rows * sizeof(float));
    free_outputs(&simd);
    free_outputs(&scalar);
    free(x);
    free(w);
    free(residual);
  }
  return ferror(stdin) ? 2 : 0;
}
