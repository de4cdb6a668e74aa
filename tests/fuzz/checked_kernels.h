/*
 * Runs one kernel call on both implementations (scalar and wasmsimd),
 * natively, and aborts with a description on any breach of the contracts in
 * the *_f32.h headers of src/kernels/f32-rmsnorm, f32-layernorm, f32-norm-backward:
 *   - both return the same bits in every output, 16-bit NaNs included (one
 *     fixed pattern per format); a float32 NaN matches any NaN, since
 *     WebAssembly leaves its sign and payload open;
 *   - where an output may alias an input (y == x, dx == dy), doing so gives
 *     the same bits as not;
 *   - only outputs are written: guard bytes before and after each of them
 *     keep their pattern, and every input keeps its bytes.
 * Inputs end exactly at the end of their malloc block, so AddressSanitizer
 * reports any read past them; every buffer starts after a guard whose length
 * sets its alignment (the kernels need none beyond the element's).
 * Shared by the libFuzzer target and the known-answer harness.
 */
#ifndef CHECKED_KERNELS_H
#define CHECKED_KERNELS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/kernels/f32-layernorm/layernorm_f32.h"
#include "../../src/kernels/f32-norm-backward/norm_backward_f32.h"
#include "../../src/kernels/f32-rmsnorm/rmsnorm_f32.h"

static size_t elem_size(int dtype) {
  return dtype == RMSNORM_F32 ? 4 : 2;
}

/* One pointer argument of a kernel call. */
struct arg {
  bool present;     /* false: the kernel gets NULL */
  bool written;     /* an output, or updated in place (residual, dw, db) */
  const void* data; /* initial contents, or NULL for a fresh output */
  size_t count;     /* elements */
  int dtype;        /* storage type, for sizes and the NaN rule */
};

#define MAX_ARGS 8

/* A kernel call: its pointer arguments, which output may alias which input,
 * and how to make the call on either implementation. */
struct call {
  char what[200]; /* the parameters, for messages */
  size_t nargs;
  struct arg args[MAX_ARGS];
  int alias_out, alias_in; /* -1 when no output may alias an input */
  void (*invoke)(const struct call* c, bool simd, void* const* p);
  /* Scalar parameters, as the invoke functions need them. */
  size_t rows, dim;
  float eps, weight_offset;
  int dtype, weight_dtype, cast_mode;
};

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

static void fail(const char* what, const struct call* c) {
  fprintf(stderr, "CONTRACT BREACH: %s (%s)\n", what, c->what);
  abort();
}

static bool guard_intact(const unsigned char* from, const unsigned char* to) {
  for (; from < to; from++) {
    if (*from != GUARD_BYTE) return false;
  }
  return true;
}

static void guarded_check(const struct guarded* g, const char* what, const struct call* c) {
  const unsigned char* end = g->data + g->bytes;
  if (!guard_intact(g->block, g->data) || !guard_intact(end, end + g->post)) fail(what, c);
}

static bool is_nan32(const unsigned char* p) {
  uint32_t u;
  memcpy(&u, p, sizeof u);
  return (u & UINT32_C(0x7FFFFFFF)) > UINT32_C(0x7F800000);
}

static void require_same_bits(const void* a, const void* b, const struct arg* arg, const char* what,
                              const struct call* c) {
  const size_t size = elem_size(arg->dtype);
  const unsigned char* pa = a;
  const unsigned char* pb = b;
  for (size_t i = 0; i < arg->count; i++, pa += size, pb += size) {
    const bool both_nan32 = arg->dtype == RMSNORM_F32 && is_nan32(pa) && is_nan32(pb);
    if (memcmp(pa, pb, size) != 0 && !both_nan32) {
      uint32_t ua = 0, ub = 0;
      memcpy(&ua, pa, size);
      memcpy(&ub, pb, size);
      fprintf(stderr, "first difference at index %zu: 0x%08x vs 0x%08x\n", i, (unsigned) ua,
              (unsigned) ub);
      fail(what, c);
    }
  }
}

/* The outputs of one implementation: a malloc'ed copy of each written
 * argument (NULL for the others). */
struct outputs {
  void* of[MAX_ARGS];
};

static void free_outputs(struct outputs* o) {
  for (size_t i = 0; i < MAX_ARGS; i++) free(o->of[i]);
}

/* Guarded copies of every argument; when `alias` is set, the aliasing output
 * is the aliased input's buffer. Argument i starts ((misalign >> 2i) & 3)
 * elements after its guard. */
static void place_args(const struct call* c, unsigned misalign, bool alias, struct guarded* g,
                       void** p) {
  for (size_t i = 0; i < c->nargs; i++) {
    const struct arg* a = &c->args[i];
    p[i] = NULL;
    if (!a->present || (alias && (int) i == c->alias_out)) continue;
    const size_t size = elem_size(a->dtype);
    const bool written = a->written || (alias && (int) i == c->alias_in);
    p[i] = guarded_alloc(&g[i], a->data, a->count * size, ((misalign >> (2 * i)) & 3) * size,
                         written ? GUARD_BYTES : 0);
  }
  if (alias) p[c->alias_out] = p[c->alias_in];
}

static void check_and_free(const struct call* c, bool alias, struct guarded* g, void** p,
                           const char* name) {
  char what[96];
  for (size_t i = 0; i < c->nargs; i++) {
    const struct arg* a = &c->args[i];
    if (!a->present || (alias && (int) i == c->alias_out)) continue;
    snprintf(what, sizeof what, "%s wrote around argument %zu%s", name, i,
             alias ? " (aliased call)" : "");
    guarded_check(&g[i], what, c);
    const bool written = a->written || (alias && (int) i == c->alias_in);
    if (!written && a->count > 0 && memcmp(p[i], a->data, a->count * elem_size(a->dtype)) != 0) {
      snprintf(what, sizeof what, "%s modified input argument %zu", name, i);
      fail(what, c);
    }
  }
}

static void free_args(const struct call* c, bool alias, struct guarded* g) {
  for (size_t i = 0; i < c->nargs; i++) {
    if (c->args[i].present && !(alias && (int) i == c->alias_out)) free(g[i].block);
  }
}

/* One implementation, without and (where allowed) with aliasing. */
static struct outputs run_checked(const struct call* c, bool simd, unsigned misalign) {
  const char* name = simd ? "wasmsimd" : "scalar";
  struct guarded g[MAX_ARGS];
  void* p[MAX_ARGS];
  struct outputs o = {{NULL}};
  place_args(c, misalign, false, g, p);
  c->invoke(c, simd, p);
  check_and_free(c, false, g, p, name);
  for (size_t i = 0; i < c->nargs; i++) {
    const struct arg* a = &c->args[i];
    if (!a->present || !a->written) continue;
    const size_t bytes = a->count * elem_size(a->dtype);
    o.of[i] = malloc(bytes + 1);
    if (o.of[i] == NULL) abort();
    if (bytes > 0) memcpy(o.of[i], p[i], bytes);
  }
  free_args(c, false, g);

  if (c->alias_out >= 0 && c->args[c->alias_out].present) {
    place_args(c, misalign, true, g, p);
    c->invoke(c, simd, p);
    check_and_free(c, true, g, p, name);
    char what[96];
    for (size_t i = 0; i < c->nargs; i++) {
      if (o.of[i] == NULL) continue;
      snprintf(what, sizeof what, "%s: argument %zu differs when output %d aliases input %d", name,
               i, c->alias_out, c->alias_in);
      require_same_bits(p[i], o.of[i], &c->args[i], what, c);
    }
    free_args(c, true, g);
  }
  return o;
}

/* Both implementations on one call; every output must agree. */
static void run_both_checked(const struct call* c, unsigned misalign, struct outputs* simd,
                             struct outputs* scalar) {
  *scalar = run_checked(c, false, misalign);
  *simd = run_checked(c, true, misalign);
  char what[96];
  for (size_t i = 0; i < c->nargs; i++) {
    if (scalar->of[i] == NULL) continue;
    snprintf(what, sizeof what, "wasmsimd and scalar differ in argument %zu", i);
    require_same_bits(simd->of[i], scalar->of[i], &c->args[i], what, c);
  }
}

/* ---- the kernels' calls --------------------------------------------------- */

/* Argument order of each call, as `args` holds them. */
enum { RMS_X, RMS_RESIDUAL, RMS_W, RMS_Y, RMS_RSTD, RMS_ARGS };
enum { LN_X, LN_W, LN_B, LN_Y, LN_MEAN, LN_RSTD, LN_ARGS };
enum { BW_DY, BW_X, BW_W, BW_MEAN, BW_RSTD, BW_DX, BW_DW, BW_DB, BW_ARGS };

static inline void invoke_rmsnorm(const struct call* c, bool simd, void* const* p) {
  (simd ? rmsnorm_wasm_f32_rmsnorm_ukernel__wasmsimd : rmsnorm_wasm_f32_rmsnorm_ukernel__scalar)(
      p[RMS_X], p[RMS_RESIDUAL], p[RMS_W], p[RMS_Y], p[RMS_RSTD], c->rows, c->dim, c->eps, c->dtype,
      c->weight_dtype, c->cast_mode, c->weight_offset);
}

static inline void invoke_layernorm(const struct call* c, bool simd, void* const* p) {
  (simd ? rmsnorm_wasm_f32_layernorm_ukernel__wasmsimd
        : rmsnorm_wasm_f32_layernorm_ukernel__scalar)(
      p[LN_X], p[LN_W], p[LN_B], p[LN_Y], p[LN_MEAN], p[LN_RSTD], c->rows, c->dim, c->eps);
}

static inline void invoke_rmsnorm_backward(const struct call* c, bool simd, void* const* p) {
  (simd ? rmsnorm_wasm_f32_rmsnorm_backward_ukernel__wasmsimd
        : rmsnorm_wasm_f32_rmsnorm_backward_ukernel__scalar)(p[BW_DY], p[BW_X], p[BW_W], p[BW_RSTD],
                                                             p[BW_DX], p[BW_DW], c->rows, c->dim);
}

static inline void invoke_layernorm_backward(const struct call* c, bool simd, void* const* p) {
  (simd ? rmsnorm_wasm_f32_layernorm_backward_ukernel__wasmsimd
        : rmsnorm_wasm_f32_layernorm_backward_ukernel__scalar)(p[BW_DY], p[BW_X], p[BW_W],
                                                               p[BW_MEAN], p[BW_RSTD], p[BW_DX],
                                                               p[BW_DW], p[BW_DB], c->rows, c->dim);
}

static struct arg input(const void* data, size_t count, int dtype) {
  return (struct arg){data != NULL, false, data, count, dtype};
}

static struct arg output(bool present, const void* initial, size_t count) {
  return (struct arg){present, true, initial, count, RMSNORM_F32};
}

static void describe(struct call* c, const char* op) {
  uint32_t eps_bits, offset_bits;
  memcpy(&eps_bits, &c->eps, sizeof eps_bits);
  memcpy(&offset_bits, &c->weight_offset, sizeof offset_bits);
  snprintf(c->what, sizeof c->what,
           "%s rows=%zu dim=%zu eps=0x%08x dtype=%d weight_dtype=%d cast_mode=%d "
           "weight_offset=0x%08x present=",
           op, c->rows, c->dim, (unsigned) eps_bits, c->dtype, c->weight_dtype, c->cast_mode,
           (unsigned) offset_bits);
  for (size_t i = 0; i < c->nargs; i++) {
    const size_t at = strlen(c->what);
    snprintf(c->what + at, sizeof c->what - at, "%c", c->args[i].present ? '1' : '0');
  }
}

/* RMSNorm, or with a residual the fused add (src/kernels/f32-rmsnorm/rmsnorm_f32.h): y and rstd
 * each optional (y absent: the statistics alone); y may equal x. */
static inline struct call rmsnorm_call(const void* x, const void* residual, const void* w, bool y,
                                       bool rstd, size_t rows, size_t dim, float eps, int dtype,
                                       int weight_dtype, int cast_mode, float weight_offset) {
  struct call c = {.nargs = RMS_ARGS,
                   .alias_out = RMS_Y,
                   .alias_in = RMS_X,
                   .invoke = invoke_rmsnorm,
                   .rows = rows,
                   .dim = dim,
                   .eps = eps,
                   .weight_offset = weight_offset,
                   .dtype = dtype,
                   .weight_dtype = weight_dtype,
                   .cast_mode = cast_mode};
  const size_t n = rows * dim;
  c.args[RMS_X] = input(x, n, dtype);
  c.args[RMS_RESIDUAL] = (struct arg){residual != NULL, true, residual, n, dtype};
  c.args[RMS_W] = input(w, dim, weight_dtype);
  c.args[RMS_Y] = (struct arg){y, true, NULL, n, dtype};
  c.args[RMS_RSTD] = output(rstd, NULL, rows);
  describe(&c, residual != NULL ? "addRmsNorm" : "rmsNorm");
  return c;
}

/* An RMSNorm call with both optional outputs, then with each alone: y must
 * be the same bits without rstd, and rstd and the residual the same
 * without y. *simd and *scalar get the outputs of the call with both. */
static void run_rmsnorm_checked(const void* x, const void* residual, const void* w, size_t rows,
                                size_t dim, float eps, int dtype, int weight_dtype, int cast_mode,
                                float weight_offset, unsigned misalign, struct outputs* simd,
                                struct outputs* scalar) {
  const struct call full = rmsnorm_call(x, residual, w, true, true, rows, dim, eps, dtype,
                                        weight_dtype, cast_mode, weight_offset);
  run_both_checked(&full, misalign, simd, scalar);
  for (int with_y = 0; with_y < 2; with_y++) {
    const struct call part = rmsnorm_call(x, residual, w, with_y, !with_y, rows, dim, eps, dtype,
                                          weight_dtype, cast_mode, weight_offset);
    struct outputs part_simd, part_scalar;
    run_both_checked(&part, misalign, &part_simd, &part_scalar);
    char what[96];
    for (size_t i = 0; i < part.nargs; i++) {
      if (part_simd.of[i] == NULL) continue;
      snprintf(what, sizeof what, "argument %zu differs without %s", i, with_y ? "rstd" : "y");
      require_same_bits(part_simd.of[i], simd->of[i], &part.args[i], what, &part);
    }
    free_outputs(&part_simd);
    free_outputs(&part_scalar);
  }
}

/* LayerNorm (src/kernels/f32-layernorm/layernorm_f32.h): y, mean and rstd each optional; y may
 * equal x. */
static inline struct call layernorm_call(const float* x, const float* w, const float* b, bool y,
                                         bool mean, bool rstd, size_t rows, size_t dim, float eps) {
  struct call c = {.nargs = LN_ARGS,
                   .alias_out = LN_Y,
                   .alias_in = LN_X,
                   .invoke = invoke_layernorm,
                   .rows = rows,
                   .dim = dim,
                   .eps = eps};
  c.args[LN_X] = input(x, rows * dim, RMSNORM_F32);
  c.args[LN_W] = input(w, dim, RMSNORM_F32);
  c.args[LN_B] = input(b, dim, RMSNORM_F32);
  c.args[LN_Y] = output(y, NULL, rows * dim);
  c.args[LN_MEAN] = output(mean, NULL, rows);
  c.args[LN_RSTD] = output(rstd, NULL, rows);
  describe(&c, "layerNorm");
  return c;
}

/* The backward passes (src/kernels/f32-norm-backward/norm_backward_f32.h): dw and db are running
 * sums (their initial contents count), dw only with w; dx may equal dy. mean is NULL for RMSNorm's.
 */
static inline struct call backward_call(bool layernorm, const float* dy, const float* x,
                                        const float* w, const float* mean, const float* rstd,
                                        const float* dw, const float* db, size_t rows, size_t dim) {
  struct call c = {.nargs = BW_ARGS,
                   .alias_out = BW_DX,
                   .alias_in = BW_DY,
                   .invoke = layernorm ? invoke_layernorm_backward : invoke_rmsnorm_backward,
                   .rows = rows,
                   .dim = dim};
  c.args[BW_DY] = input(dy, rows * dim, RMSNORM_F32);
  c.args[BW_X] = input(x, rows * dim, RMSNORM_F32);
  c.args[BW_W] = input(w, dim, RMSNORM_F32);
  c.args[BW_MEAN] = input(layernorm ? mean : NULL, rows, RMSNORM_F32);
  c.args[BW_RSTD] = input(rstd, rows, RMSNORM_F32);
  c.args[BW_DX] = output(true, NULL, rows * dim);
  c.args[BW_DW] = output(w != NULL, dw, dim);
  c.args[BW_DB] = output(layernorm && db != NULL, db, dim);
  describe(&c, layernorm ? "layerNormBackward" : "rmsNormBackward");
  return c;
}

#endif
