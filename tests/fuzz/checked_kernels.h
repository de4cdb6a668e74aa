/*
 * Runs both float32 RMSNorm kernels on one case, natively, and aborts with a
 * description on any breach of the contract in src/kernels/rmsnorm_f32.h:
 *   - the SIMD kernel and the scalar kernel return the same bits (a NaN
 *     matches a NaN: WebAssembly leaves its sign and payload open);
 *   - in place (y == x) gives the same bits as out of place;
 *   - only the output is written: guard floats before and after every output
 *     buffer keep their pattern, and x and w keep their bits.
 * Inputs end exactly at the end of their malloc block, so AddressSanitizer
 * reports any read past them; they start after a guard whose length sets
 * their alignment (the kernels promise to need none).
 * Shared by the libFuzzer target and the known-answer harness.
 */
#ifndef CHECKED_KERNELS_H
#define CHECKED_KERNELS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/kernels/rmsnorm_f32.h"

typedef void (*rmsnorm_f32_kernel)(const float* x, const float* w, float* y,
                                   size_t rows, size_t dim, float eps);

#define GUARD_FLOATS 16
/* A NaN with a payload no kernel produces: a guard overwritten by any float
 * the kernels compute no longer has this pattern. */
#define GUARD_BITS UINT32_C(0x7FA5A5A5)

struct guarded {
  float* block;
  float* data;
  size_t pre, n, post;
};

static float* guarded_alloc(struct guarded* g, const float* init, size_t n, size_t misalign,
                            size_t post) {
  g->pre = GUARD_FLOATS + misalign;
  g->n = n;
  g->post = post;
  g->block = malloc((g->pre + n + post) * sizeof(float) + 1);
  if (g->block == NULL) abort();
  const uint32_t pattern = GUARD_BITS;
  for (size_t i = 0; i < g->pre + n + post; i++) memcpy(&g->block[i], &pattern, sizeof pattern);
  g->data = g->block + g->pre;
  if (init != NULL && n > 0) memcpy(g->data, init, n * sizeof(float));
  return g->data;
}

static void fail(const char* what, size_t rows, size_t dim, float eps) {
  uint32_t eps_bits;
  memcpy(&eps_bits, &eps, sizeof eps_bits);
  fprintf(stderr, "CONTRACT BREACH: %s (rows=%zu dim=%zu eps=0x%08x)\n", what, rows, dim,
          (unsigned) eps_bits);
  abort();
}

static bool guard_intact(const float* from, const float* to) {
  for (; from < to; from++) {
    uint32_t bits;
    memcpy(&bits, from, sizeof bits);
    if (bits != GUARD_BITS) return false;
  }
  return true;
}

static void guarded_check(const struct guarded* g, const char* what, size_t rows, size_t dim,
                          float eps) {
  const float* end = g->data + g->n;
  if (!guard_intact(g->block, g->data) || !guard_intact(end, end + g->post)) {
    fail(what, rows, dim, eps);
  }
}

/* Index of the first element whose bits differ (NaN matching NaN), or n. */
static size_t first_bit_difference(const float* a, const float* b, size_t n) {
  for (size_t i = 0; i < n; i++) {
    uint32_t ua, ub;
    memcpy(&ua, &a[i], sizeof ua);
    memcpy(&ub, &b[i], sizeof ub);
    if (ua != ub && !(a[i] != a[i] && b[i] != b[i])) return i;
  }
  return n;
}

static void require_same_bits(const float* a, const float* b, size_t n, const char* what,
                              size_t rows, size_t dim, float eps) {
  const size_t i = first_bit_difference(a, b, n);
  if (i < n) {
    fprintf(stderr, "first difference at index %zu: %a vs %a\n", i, (double) a[i], (double) b[i]);
    fail(what, rows, dim, eps);
  }
}

/* Runs one kernel out of place and in place; returns its malloc'ed output. */
static float* run_checked(rmsnorm_f32_kernel kernel, const char* name, const float* x,
                          const float* w, size_t rows, size_t dim, float eps, unsigned misalign) {
  const size_t n = rows * dim;
  char what[96];
  struct guarded gx, gw, gy, gi;
  const float* kx = guarded_alloc(&gx, x, n, misalign & 3, 0);
  const float* kw = w != NULL ? guarded_alloc(&gw, w, dim, (misalign >> 2) & 3, 0) : NULL;
  float* ky = guarded_alloc(&gy, NULL, n, (misalign >> 4) & 3, GUARD_FLOATS);
  kernel(kx, kw, ky, rows, dim, eps);
  snprintf(what, sizeof what, "%s wrote outside y", name);
  guarded_check(&gy, what, rows, dim, eps);
  snprintf(what, sizeof what, "%s modified x", name);
  if (n > 0 && memcmp(kx, x, n * sizeof(float)) != 0) fail(what, rows, dim, eps);
  guarded_check(&gx, what, rows, dim, eps);
  if (w != NULL) {
    snprintf(what, sizeof what, "%s modified w", name);
    if (memcmp(kw, w, dim * sizeof(float)) != 0) fail(what, rows, dim, eps);
    guarded_check(&gw, what, rows, dim, eps);
  }

  float* inplace = guarded_alloc(&gi, x, n, misalign & 3, GUARD_FLOATS);
  kernel(inplace, w, inplace, rows, dim, eps);
  snprintf(what, sizeof what, "%s in place wrote outside x", name);
  guarded_check(&gi, what, rows, dim, eps);
  snprintf(what, sizeof what, "%s in place differs from out of place", name);
  require_same_bits(inplace, ky, n, what, rows, dim, eps);

  float* result = malloc(n * sizeof(float) + 1);
  if (result == NULL) abort();
  if (n > 0) memcpy(result, ky, n * sizeof(float));
  free(gx.block);
  if (w != NULL) free(gw.block);
  free(gy.block);
  free(gi.block);
  return result;
}

/* Both kernels on one case; they must agree. Returns the two outputs. */
static void run_both_checked(const float* x, const float* w, size_t rows, size_t dim, float eps,
                             unsigned misalign, float** y_simd, float** y_scalar) {
  *y_scalar = run_checked(rmsnorm_f32__scalar, "scalar", x, w, rows, dim, eps, misalign);
  *y_simd = run_checked(rmsnorm_f32__wasmsimd_u16_acc4, "wasmsimd", x, w, rows, dim, eps,
                        misalign);
  require_same_bits(*y_simd, *y_scalar, rows * dim, "wasmsimd and scalar differ", rows, dim, eps);
}

#endif
