/*
 * The native row of the benchmark: the very kernel source the SIMD128 module
 * is built from (src/kernels/f32-rmsnorm/wasmsimd.c, wasm_* intrinsics mapped
 * to SSE4.2 by SIMDe), timed the way the JS rows are timed: a clock around
 * `iters` back-to-back calls, the process's CPU time (argument `cpu`, the
 * default) or the monotonic wall clock (`wall`), as tests/bench/timing.js
 * explains. The bench (tests/bench/rows/native.js) drives it over stdin, one
 * command a line, one reply a line:
 *
 *   load PATH ROWS DIM EPS_BITS  x (ROWS*DIM floats) then w (DIM floats) from PATH
 *   time ITERS                   -> nanoseconds for ITERS calls
 *   dump PATH                    y (ROWS*DIM floats) to PATH
 *
 * so its rounds interleave with the JS rows' rounds in one run.
 */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../../src/kernels/f32-rmsnorm/rmsnorm_f32.h"

static float* x;
static float* w;
static float* y;
static size_t rows, dim;
static float eps;

static float* alloc_floats(size_t n) {
  /* 16-byte aligned like wasm malloc's blocks, rounded up for aligned_alloc. */
  float* p = aligned_alloc(64, (n * sizeof(float) + 63) / 64 * 64);
  if (p == NULL) {
    fprintf(stderr, "harness: out of memory for %zu floats\n", n);
    exit(1);
  }
  return p;
}

static int load(const char* path, size_t r, size_t d, uint32_t eps_bits) {
  free(x), free(w), free(y);
  rows = r, dim = d;
  memcpy(&eps, &eps_bits, sizeof eps);
  x = alloc_floats(rows * dim);
  w = alloc_floats(dim);
  y = alloc_floats(rows * dim);
  memset(y, 0, rows * dim * sizeof(float)); /* touch the pages before timing */
  FILE* f = fopen(path, "rb");
  if (f == NULL) return 0;
  const int ok = fread(x, sizeof(float), rows * dim, f) == rows * dim &&
                 fread(w, sizeof(float), dim, f) == dim;
  fclose(f);
  return ok;
}

static clockid_t clock_id = CLOCK_PROCESS_CPUTIME_ID;

static uint64_t now_ns(void) {
  struct timespec t;
  clock_gettime(clock_id, &t);
  return (uint64_t) t.tv_sec * 1000000000u + (uint64_t) t.tv_nsec;
}

int main(int argc, char** argv) {
  if (argc > 1 && strcmp(argv[1], "wall") == 0) {
    clock_id = CLOCK_MONOTONIC;
  }
  char line[4096], path[4000];
  size_t r, d, iters;
  uint32_t eps_bits;
  while (fgets(line, sizeof line, stdin) != NULL) {
    if (sscanf(line, "load %3999s %zu %zu %" SCNu32, path, &r, &d, &eps_bits) == 4) {
      puts(load(path, r, d, eps_bits) ? "ok" : "error: cannot read the input file");
    } else if (sscanf(line, "time %zu", &iters) == 1) {
      const uint64_t t0 = now_ns();
      for (size_t i = 0; i < iters; i++) {
        rmsnorm_wasm_f32_rmsnorm_ukernel__wasmsimd(x, NULL, w, y, NULL, rows, dim, dim, eps,
                                                   RMSNORM_F32, RMSNORM_F32, RMSNORM_CAST_LLAMA,
                                                   0.0f);
      }
      printf("%" PRIu64 "\n", now_ns() - t0);
    } else if (sscanf(line, "dump %3999s", path) == 1) {
      FILE* f = fopen(path, "wb");
      const int ok = f != NULL && fwrite(y, sizeof(float), rows * dim, f) == rows * dim;
      if (f != NULL) fclose(f);
      puts(ok ? "ok" : "error: cannot write the output file");
    } else {
      printf("error: unknown command %s", line);
    }
    fflush(stdout);
  }
  return 0;
}
