/*
 * The known-answer harness: both kernels built natively under ASan + UBSan
 * with live asserts, run on cases the JS test sends (tests/native.test.js),
 * which checks the outputs against the JS reference and the seeds' answers.
 *
 * stdin, repeated until EOF (little-endian):
 *   u32 rows, u32 dim, f32 eps, u32 has_weight, f32 x[rows*dim], f32 w[dim]
 * stdout, per case: f32 y_simd[rows*dim], f32 y_scalar[rows*dim]
 * checked_kernels.h aborts on any breach (the kernels disagree, write outside
 * y, or differ in place).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "checked_kernels.h"

static void read_exact(void* p, size_t bytes) {
  if (bytes > 0 && fread(p, 1, bytes, stdin) != bytes) {
    fprintf(stderr, "known_answers_host: truncated input\n");
    exit(2);
  }
}

int main(void) {
  uint32_t header[4];
  while (fread(header, sizeof header[0], 1, stdin) == 1) {
    read_exact(header + 1, 3 * sizeof header[0]);
    const size_t rows = header[0], dim = header[1], n = rows * dim;
    float eps;
    memcpy(&eps, &header[2], sizeof eps);
    float* x = malloc(n * sizeof(float) + 1);
    float* w = header[3] ? malloc(dim * sizeof(float)) : NULL;
    if (x == NULL || (header[3] && w == NULL)) abort();
    read_exact(x, n * sizeof(float));
    if (w != NULL) read_exact(w, dim * sizeof(float));
    float *y_simd, *y_scalar;
    run_both_checked(x, w, rows, dim, eps, (unsigned) (rows * 7 + dim), &y_simd, &y_scalar);
    fwrite(y_simd, sizeof(float), n, stdout);
    fwrite(y_scalar, sizeof(float), n, stdout);
    free(y_simd);
    free(y_scalar);
    free(x);
    free(w);
  }
  return ferror(stdin) ? 2 : 0;
}
