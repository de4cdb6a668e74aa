/*
 * Runs both RMSNorm kernels on one call, natively, and aborts with a
 * description on any breach of the contract in src/kernels/rmsnorm_f32.h:
 *   - the SIMD kernel and the scalar kernel return the same bits, for y and
 *     for the updated residual (a NaN matches a NaN: WebAssembly leaves its
 *     sign and payload open, in every storage type);
 *   - in place (y == x) gives the same bits as out of place;
 *   - only y and the residual are written: guard bytes before and after each
 *     of them keep their pattern, and x and w keep their bytes.
 * Inputs end exactly at the end of their malloc block, so AddressSanitizer
 * reports any read past them; every buffer starts after a guard whose length
 * sets its alignment (the kernels promise to need none beyond the element's).
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

typedef void (*rmsnorm_kernel)(const void* x, void* residual, const void* w, void* y,
                               size_t rows, size_t dim, float eps, int dtype, int weight_dtype,
                               int cast_mode, float weight_offset);

/* One call's arguments. x, w and residual are the inputs (residual NULL for
 * plain RMSNorm, w NULL for no weight); the kernels get guarded copies. */
struct rmsnorm_call {
  const void* x;
  const void* w;
  const void* residual;
  size_t rows, dim;
  float eps;
  int dtype, weight_dtype, cast_mode;
  float weight_offset;
};

static size_t elem_size(int dtype) {
  return dtype == RMSNORM_F32 ? 4 : 2;
}

#define GUARD_BYTES 64
#define GUARD_BYTE 0xA5

struct guarded {
  unsigned char* block;
  unsigned char* data;
  size_t pre, bytes, post;
};

/* `bytes` of data (a copy of `init`, or guard bytes) after GUARD_BYTES plus
 * `misalign` bytes (a multiple of the element size), then `post` guard bytes. */
static void* guarded_alloc(struct guarded* g, const void* init, size_t bytes, size_t misalign,
                           size_t post) {
  g->pre = GUARD_BYTES + misalign;
  g->bytes = bytes;
  g->post = post;
  g->block = malloc(g->pre + bytes + post + 1);
  if (g->block == NULL) abort();
  memset(g->block, GUARD_BYTE, g->pre + bytes + post);
  g->data = g->block + g->pre;
  if (init != NULL && bytes > 0) memcpy(g->data, init, bytes);
  return g->data;
}

static void fail(const char* what, const struct rmsnorm_call* c) {
  uint32_t eps_bits, offset_bits;
  memcpy(&eps_bits, &c->eps, sizeof eps_bits);
  memcpy(&offset_bits, &c->weight_offset, sizeof offset_bits);
  fprintf(stderr,
          "CONTRACT BREACH: %s (rows=%zu dim=%zu eps=0x%08x dtype=%d weight=%s weight_dtype=%d "
          "cast_mode=%d weight_offset=0x%08x residual=%s)\n",
          what, c->rows, c->dim, (unsigned) eps_bits, c->dtype, c->w ? "yes" : "no",
          c->weight_dtype, c->cast_mode, (unsigned) offset_bits, c->residual ? "yes" : "no");
  abort();
}

static bool guard_intact(const unsigned char* from, const unsigned char* to) {
  for (; from < to; from++) {
    if (*from != GUARD_BYTE) return false;
  }
  return true;
}

static void guarded_check(const struct guarded* g, const char* what, const struct rmsnorm_call* c) {
  const unsigned char* end = g->data + g->bytes;
  if (!guard_intact(g->block, g->data) || !guard_intact(end, end + g->post)) fail(what, c);
}

static bool is_nan(const unsigned char* p, int dtype) {
  if (dtype == RMSNORM_F32) {
    uint32_t u;
    memcpy(&u, p, sizeof u);
    return (u & UINT32_C(0x7FFFFFFF)) > UINT32_C(0x7F800000);
  }
  uint16_t h;
  memcpy(&h, p, sizeof h);
  const uint16_t exponent = dtype == RMSNORM_BF16 ? 0x7F80 : 0x7C00;
  return (h & exponent) == exponent && (h & (uint16_t) ~(0x8000 | exponent)) != 0;
}

static void require_same_bits(const void* a, const void* b, size_t n, int dtype, const char* what,
                              const struct rmsnorm_call* c) {
  const size_t size = elem_size(dtype);
  const unsigned char* pa = a;
  const unsigned char* pb = b;
  for (size_t i = 0; i < n; i++, pa += size, pb += size) {
    if (memcmp(pa, pb, size) != 0 && !(is_nan(pa, dtype) && is_nan(pb, dtype))) {
      uint32_t ua = 0, ub = 0;
      memcpy(&ua, pa, size);
      memcpy(&ub, pb, size);
      fprintf(stderr, "first difference at index %zu: 0x%08x vs 0x%08x\n", i, (unsigned) ua,
              (unsigned) ub);
      fail(what, c);
    }
  }
}

/* One kernel's results: y, and the updated residual (NULL without one). */
struct kernel_result {
  void* y;
  void* residual;
};

static void* copy_out(const void* p, size_t bytes) {
  void* q = malloc(bytes + 1);
  if (q == NULL) abort();
  if (bytes > 0) memcpy(q, p, bytes);
  return q;
}

/* One kernel, out of place and in place (y == x). */
static struct kernel_result run_checked(rmsnorm_kernel kernel, const char* name,
                                        const struct rmsnorm_call* c, unsigned misalign) {
  const size_t n = c->rows * c->dim;
  const size_t size = elem_size(c->dtype);
  const size_t bytes = n * size;
  const size_t w_size = elem_size(c->weight_dtype);
  const size_t w_bytes = c->dim * w_size;
  char what[96];
  struct guarded gx, gw, gr, gy, gi, gri;
  /* Element offsets 0..3 for x, w (the residual next to w's), y. */
  const size_t x_at = (misalign & 3) * size;
  const size_t w_at = ((misalign >> 2) & 3) * w_size;
  const size_t r_at = (((misalign >> 2) + 1) & 3) * size;
  const size_t y_at = ((misalign >> 4) & 3) * size;
  const void* kx = guarded_alloc(&gx, c->x, bytes, x_at, 0);
  const void* kw = c->w != NULL ? guarded_alloc(&gw, c->w, w_bytes, w_at, 0) : NULL;
  void* kr = c->residual != NULL ? guarded_alloc(&gr, c->residual, bytes, r_at, GUARD_BYTES) : NULL;
  void* ky = guarded_alloc(&gy, NULL, bytes, y_at, GUARD_BYTES);
  kernel(kx, kr, kw, ky, c->rows, c->dim, c->eps, c->dtype, c->weight_dtype, c->cast_mode,
         c->weight_offset);
  snprintf(what, sizeof what, "%s wrote outside y", name);
  guarded_check(&gy, what, c);
  snprintf(what, sizeof what, "%s modified x", name);
  if (bytes > 0 && memcmp(kx, c->x, bytes) != 0) fail(what, c);
  guarded_check(&gx, what, c);
  if (c->w != NULL) {
    snprintf(what, sizeof what, "%s modified w", name);
    if (memcmp(kw, c->w, w_bytes) != 0) fail(what, c);
    guarded_check(&gw, what, c);
  }
  if (c->residual != NULL) {
    snprintf(what, sizeof what, "%s wrote outside the residual", name);
    guarded_check(&gr, what, c);
  }

  void* inplace = guarded_alloc(&gi, c->x, bytes, x_at, GUARD_BYTES);
  void* kri =
      c->residual != NULL ? guarded_alloc(&gri, c->residual, bytes, r_at, GUARD_BYTES) : NULL;
  kernel(inplace, kri, kw, inplace, c->rows, c->dim, c->eps, c->dtype, c->weight_dtype,
         c->cast_mode, c->weight_offset);
  snprintf(what, sizeof what, "%s in place wrote outside x", name);
  guarded_check(&gi, what, c);
  snprintf(what, sizeof what, "%s in place differs from out of place", name);
  require_same_bits(inplace, ky, n, c->dtype, what, c);
  if (c->residual != NULL) {
    snprintf(what, sizeof what, "%s in place wrote outside the residual", name);
    guarded_check(&gri, what, c);
    snprintf(what, sizeof what, "%s in place updated the residual differently", name);
    require_same_bits(kri, kr, n, c->dtype, what, c);
  }

  const struct kernel_result result = {
      copy_out(ky, bytes), c->residual != NULL ? copy_out(kr, bytes) : NULL};
  free(gx.block);
  free(gy.block);
  free(gi.block);
  if (c->w != NULL) free(gw.block);
  if (c->residual != NULL) {
    free(gr.block);
    free(gri.block);
  }
  return result;
}

/* Both kernels on one call; they must agree. */
static void run_both_checked(const struct rmsnorm_call* c, unsigned misalign,
                             struct kernel_result* simd, struct kernel_result* scalar) {
  const size_t n = c->rows * c->dim;
  *scalar = run_checked(rmsnorm_f32__scalar, "scalar", c, misalign);
  *simd = run_checked(rmsnorm_f32__wasmsimd_u16_acc4, "wasmsimd", c, misalign);
  require_same_bits(simd->y, scalar->y, n, c->dtype, "wasmsimd and scalar differ", c);
  if (c->residual != NULL) {
    require_same_bits(simd->residual, scalar->residual, n, c->dtype,
                      "wasmsimd and scalar update the residual differently", c);
  }
}

static void free_result(struct kernel_result* r) {
  free(r->y);
  free(r->residual);
}

#endif
