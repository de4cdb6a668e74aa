/*
 * Runs one kernel call on both implementations (scalar and wasmsimd),
 * natively, and aborts with a description on any breach of the contracts in
 * the *_f32.h headers of src/kernels/f32-rmsnorm, f32-layernorm, f32-norm-backward:
 *   - both return the same bits in every output, 16-bit NaNs included (one
 *     fixed pattern per format); a float32 NaN matches any NaN, since
 *     WebAssembly leaves its sign and payload open;
 *   - the per-row arrays' rows `stride` elements apart give the bits of the
 *     packed call (stride == dim), each array in its own buffer, with the
 *     aliasing the contract allows (y == x, dx == dy), and with every
 *     per-row array's rows interleaved in one buffer (the rows of each in
 *     the gaps of the others', as a fused QKV buffer holds q, k and v);
 *   - only output values are written: guard bytes before and after each
 *     buffer, and in every gap between rows, keep their pattern, and every
 *     input keeps its values.
 * Inputs alone in a buffer end exactly at the end of their malloc block, so
 * AddressSanitizer reports any read past them; every buffer starts after a
 * guard whose length sets its alignment (the kernels need none beyond the
 * element's). Shared by the libFuzzer target and the known-answer harness.
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
#include "../../src/kernels/q8_blocks.h"

/* One pointer argument of a kernel call. */
struct arg {
  bool present;     /* false: the kernel gets NULL */
  bool written;     /* an output, or updated in place (residual, dw, db) */
  bool per_row;     /* rows of dim values, `stride` apart; else packed */
  const void* data; /* initial contents (packed), or NULL for a fresh output */
  size_t count;     /* elements (packed) */
  int dtype;        /* storage type, for sizes and the NaN rule */
};

#define MAX_ARGS 8

/* A kernel call: its pointer arguments, which output may alias which input,
 * and how to make the call on either implementation with a row stride. */
struct call {
  char what[240]; /* the parameters, for messages */
  size_t nargs;
  struct arg args[MAX_ARGS];
  int alias_out, alias_in; /* -1 when no output may alias an input */
  void (*invoke)(const struct call* c, bool simd, void* const* p, size_t stride);
  /* Scalar parameters, as the invoke functions need them; stride is the
   * strided layouts' (>= dim; the packed ones use dim). */
  size_t rows, dim, stride;
  float eps, weight_offset;
  int dtype, weight_dtype, cast_mode, format;
};

#define GUARD_BYTES 64
#define GUARD_BYTE 0xA5

static void fail(const char* what, const struct call* c) {
  fprintf(stderr, "CONTRACT BREACH: %s (%s)\n", what, c->what);
  abort();
}

static bool is_nan32(const unsigned char* p) {
  uint32_t u;
  memcpy(&u, p, sizeof u);
  return (u & UINT32_C(0x7FFFFFFF)) > UINT32_C(0x7F800000);
}

static void require_same_bits(const void* a, const void* b, const struct arg* arg, const char* what,
                              const struct call* c) {
  const size_t size = dtype_size(arg->dtype);
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

/* The outputs of one implementation: a malloc'ed packed copy of each
 * written argument (NULL for the others). */
struct outputs {
  void* of[MAX_ARGS];
};

static void free_outputs(struct outputs* o) {
  for (size_t i = 0; i < MAX_ARGS; i++) free(o->of[i]);
}

/* How the arguments of one run lie in memory. */
enum layout {
  LAYOUT_SEPARATE,   /* each argument in a buffer of its own */
  LAYOUT_ALIASED,    /* the same, the aliasing output on its input (in place) */
  LAYOUT_INTERLEAVED /* the per-row arguments in one buffer, argument j's rows
                        j * dim elements into each stride (needs stride >= that) */
};
static const char* const layout_names[] = {"separate", "aliased", "interleaved"};

struct buffer {
  unsigned char* block; /* guard, data, guard */
  size_t pre, bytes, post;
};

/* The arguments of one run: the buffers, and where in them each argument's
 * values are. */
struct placed {
  struct buffer buffers[MAX_ARGS];
  size_t nbuffers;
  int buffer_of[MAX_ARGS];    /* -1: absent */
  size_t offset_of[MAX_ARGS]; /* bytes from the buffer's data */
  bool changes[MAX_ARGS];     /* whether its values may change */
  void* p[MAX_ARGS];          /* what the kernel gets */
  size_t stride;
};

/* Byte offset of value k (packed index) of argument i, from its first value. */
static size_t value_offset(const struct call* c, size_t i, size_t k, size_t stride) {
  const struct arg* a = &c->args[i];
  const size_t index = a->per_row ? (k / c->dim) * stride + k % c->dim : k;
  return index * dtype_size(a->dtype);
}

/* Elements from an argument's first value to just past its last. */
static size_t span_elements(const struct call* c, size_t i, size_t stride) {
  const struct arg* a = &c->args[i];
  if (!a->per_row || a->count == 0) return a->count;
  return (c->rows - 1) * stride + c->dim;
}

static bool layout_fits(const struct call* c, enum layout layout, size_t stride) {
  if (layout == LAYOUT_ALIASED) return c->alias_out >= 0 && c->args[c->alias_out].present;
  if (layout != LAYOUT_INTERLEAVED) return true;
  size_t per_row = 0;
  for (size_t i = 0; i < c->nargs; i++) per_row += c->args[i].present && c->args[i].per_row;
  return c->rows >= 1 && per_row >= 2 && stride >= per_row * c->dim;
}

static void new_buffer(struct placed* pl, size_t bytes, size_t misalign, bool written) {
  struct buffer* b = &pl->buffers[pl->nbuffers++];
  b->pre = GUARD_BYTES + misalign;
  b->bytes = bytes;
  b->post = written ? GUARD_BYTES : 0; /* an input ends at its block's end */
  b->block = malloc(b->pre + bytes + b->post + 1);
  if (b->block == NULL) abort();
  memset(b->block, GUARD_BYTE, b->pre + bytes + b->post);
}

static unsigned char* value_at(const struct call* c, const struct placed* pl, size_t i, size_t k) {
  const struct buffer* b = &pl->buffers[pl->buffer_of[i]];
  return b->block + b->pre + pl->offset_of[i] + value_offset(c, i, k, pl->stride);
}

/* Places every argument as `layout` says, each buffer's first argument i
 * ((misalign >> 2i) & 3) elements after its guard, and copies the inputs
 * in; the bytes around and between values keep the guard pattern. */
static void place_args(const struct call* c, enum layout layout, size_t stride, unsigned misalign,
                       struct placed* pl) {
  pl->nbuffers = 0;
  pl->stride = stride;
  int shared = -1; /* the interleaved buffer */
  size_t next_offset = 0;
  for (size_t i = 0; i < c->nargs; i++) {
    const struct arg* a = &c->args[i];
    pl->buffer_of[i] = -1;
    pl->p[i] = NULL;
    pl->changes[i] = a->written;
    if (!a->present) continue;
    const size_t size = dtype_size(a->dtype);
    const size_t shift = ((misalign >> (2 * i)) & 3) * size;
    if (layout == LAYOUT_ALIASED && (int) i == c->alias_out) {
      pl->buffer_of[i] = pl->buffer_of[c->alias_in];
      pl->offset_of[i] = pl->offset_of[c->alias_in];
      pl->changes[c->alias_in] = true;
    } else if (layout == LAYOUT_INTERLEAVED && a->per_row) {
      if (shared < 0) {
        size_t per_row = 0;
        bool written = false;
        for (size_t j = 0; j < c->nargs; j++) {
          per_row += c->args[j].present && c->args[j].per_row;
          written |= c->args[j].present && c->args[j].per_row && c->args[j].written;
        }
        shared = (int) pl->nbuffers;
        new_buffer(pl, ((c->rows - 1) * stride + per_row * c->dim) * size, shift, written);
      }
      pl->buffer_of[i] = shared;
      pl->offset_of[i] = next_offset * size;
      next_offset += c->dim;
    } else {
      pl->buffer_of[i] = (int) pl->nbuffers;
      pl->offset_of[i] = 0;
      new_buffer(pl, span_elements(c, i, stride) * size, shift, a->written);
    }
  }
  for (size_t i = 0; i < c->nargs; i++) {
    const struct arg* a = &c->args[i];
    if (pl->buffer_of[i] < 0) continue;
    const struct buffer* b = &pl->buffers[pl->buffer_of[i]];
    pl->p[i] = b->block + b->pre + pl->offset_of[i];
    const bool aliased = layout == LAYOUT_ALIASED && (int) i == c->alias_out;
    if (a->data == NULL || aliased) continue;
    for (size_t k = 0; k < a->count; k++) {
      memcpy(value_at(c, pl, i, k), (const char*) a->data + k * dtype_size(a->dtype),
             dtype_size(a->dtype));
    }
  }
}

/* After a run: every byte that is no argument's value kept the guard
 * pattern, and every argument whose values may not change kept them. */
static void check_placed(const struct call* c, const struct placed* pl, const char* name) {
  char what[160];
  for (size_t n = 0; n < pl->nbuffers; n++) {
    const struct buffer* b = &pl->buffers[n];
    const size_t total = b->pre + b->bytes + b->post;
    bool* value = calloc(total + 1, sizeof *value);
    if (value == NULL) abort();
    for (size_t i = 0; i < c->nargs; i++) {
      if (pl->buffer_of[i] != (int) n) continue;
      const size_t size = dtype_size(c->args[i].dtype);
      for (size_t k = 0; k < c->args[i].count; k++) {
        const size_t at = (size_t) (value_at(c, pl, i, k) - b->block);
        for (size_t j = 0; j < size; j++) value[at + j] = true;
      }
    }
    for (size_t at = 0; at < total; at++) {
      if (!value[at] && b->block[at] != GUARD_BYTE) {
        snprintf(what, sizeof what,
                 "%s wrote byte %zd of buffer %zu, outside every argument's values "
                 "(stride %zu)",
                 name, (ptrdiff_t) at - (ptrdiff_t) b->pre, n, pl->stride);
        fail(what, c);
      }
    }
    free(value);
  }
  for (size_t i = 0; i < c->nargs; i++) {
    const struct arg* a = &c->args[i];
    if (pl->buffer_of[i] < 0 || pl->changes[i]) continue;
    const size_t size = dtype_size(a->dtype);
    for (size_t k = 0; k < a->count; k++) {
      if (memcmp(value_at(c, pl, i, k), (const char*) a->data + k * size, size) != 0) {
        snprintf(what, sizeof what, "%s modified input argument %zu (stride %zu)", name, i,
                 pl->stride);
        fail(what, c);
      }
    }
  }
}

/* Packed copies of the written arguments. */
static struct outputs outputs_of(const struct call* c, const struct placed* pl) {
  struct outputs o = {{NULL}};
  for (size_t i = 0; i < c->nargs; i++) {
    const struct arg* a = &c->args[i];
    if (!a->present || !a->written) continue;
    const size_t size = dtype_size(a->dtype);
    o.of[i] = malloc(a->count * size + 1);
    if (o.of[i] == NULL) abort();
    for (size_t k = 0; k < a->count; k++) {
      memcpy((char*) o.of[i] + k * size, value_at(c, pl, i, k), size);
    }
  }
  return o;
}

static void free_placed(struct placed* pl) {
  for (size_t n = 0; n < pl->nbuffers; n++) free(pl->buffers[n].block);
}

/* One implementation in every layout: packed (stride == dim) on their own
 * and aliased, then with the call's stride on their own, aliased and
 * interleaved. Each layout's outputs must be the first one's bits, which are
 * returned. */
static struct outputs run_checked(const struct call* c, bool simd, unsigned misalign) {
  const char* name = simd ? "wasmsimd" : "scalar";
  struct outputs first = {{NULL}};
  bool have_first = false;
  for (int strided = 0; strided < 2; strided++) {
    const size_t stride = strided ? c->stride : c->dim;
    if (strided && stride == c->dim) break;
    for (int layout = LAYOUT_SEPARATE; layout <= LAYOUT_INTERLEAVED; layout++) {
      if (!layout_fits(c, (enum layout) layout, stride)) continue;
      struct placed pl;
      place_args(c, (enum layout) layout, stride, misalign, &pl);
      c->invoke(c, simd, pl.p, stride);
      char what[160];
      snprintf(what, sizeof what, "%s, %s layout", name, layout_names[layout]);
      check_placed(c, &pl, what);
      struct outputs o = outputs_of(c, &pl);
      free_placed(&pl);
      if (!have_first) {
        first = o;
        have_first = true;
        continue;
      }
      for (size_t i = 0; i < c->nargs; i++) {
        if (o.of[i] == NULL) continue;
        snprintf(what, sizeof what, "%s: argument %zu differs with stride %zu, %s layout", name, i,
                 stride, layout_names[layout]);
        require_same_bits(o.of[i], first.of[i], &c->args[i], what, c);
      }
      free_outputs(&o);
    }
  }
  return first;
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

static inline void invoke_rmsnorm(const struct call* c, bool simd, void* const* p, size_t stride) {
  (simd ? rmsnorm_wasm_f32_rmsnorm_ukernel__wasmsimd : rmsnorm_wasm_f32_rmsnorm_ukernel__scalar)(
      p[RMS_X], p[RMS_RESIDUAL], p[RMS_W], p[RMS_Y], p[RMS_RSTD], c->rows, c->dim, stride, c->eps,
      c->dtype, c->weight_dtype, c->cast_mode, c->weight_offset);
}

static inline void invoke_layernorm(const struct call* c, bool simd, void* const* p,
                                    size_t stride) {
  (simd ? rmsnorm_wasm_f32_layernorm_ukernel__wasmsimd
        : rmsnorm_wasm_f32_layernorm_ukernel__scalar)(
      p[LN_X], p[LN_W], p[LN_B], p[LN_Y], p[LN_MEAN], p[LN_RSTD], c->rows, c->dim, stride, c->eps);
}

static inline void invoke_rmsnorm_backward(const struct call* c, bool simd, void* const* p,
                                           size_t stride) {
  (simd ? rmsnorm_wasm_f32_rmsnorm_backward_ukernel__wasmsimd
        : rmsnorm_wasm_f32_rmsnorm_backward_ukernel__scalar)(
      p[BW_DY], p[BW_X], p[BW_W], p[BW_RSTD], p[BW_DX], p[BW_DW], c->rows, c->dim, stride);
}

static inline void invoke_layernorm_backward(const struct call* c, bool simd, void* const* p,
                                             size_t stride) {
  (simd ? rmsnorm_wasm_f32_layernorm_backward_ukernel__wasmsimd
        : rmsnorm_wasm_f32_layernorm_backward_ukernel__scalar)(
      p[BW_DY], p[BW_X], p[BW_W], p[BW_MEAN], p[BW_RSTD], p[BW_DX], p[BW_DW], p[BW_DB], c->rows,
      c->dim, stride);
}

static struct arg input(const void* data, size_t count, int dtype) {
  return (struct arg){data != NULL, false, false, data, count, dtype};
}

static struct arg row_input(const void* data, size_t count, int dtype) {
  return (struct arg){data != NULL, false, true, data, count, dtype};
}

static struct arg output(bool present, const void* initial, size_t count) {
  return (struct arg){present, true, false, initial, count, RMSNORM_F32};
}

static struct arg row_output(bool present, const void* initial, size_t count, int dtype) {
  return (struct arg){present, true, true, initial, count, dtype};
}

static void describe(struct call* c, const char* op) {
  uint32_t eps_bits, offset_bits;
  memcpy(&eps_bits, &c->eps, sizeof eps_bits);
  memcpy(&offset_bits, &c->weight_offset, sizeof offset_bits);
  snprintf(c->what, sizeof c->what,
           "%s rows=%zu dim=%zu stride=%zu eps=0x%08x dtype=%d weight_dtype=%d cast_mode=%d "
           "weight_offset=0x%08x present=",
           op, c->rows, c->dim, c->stride, (unsigned) eps_bits, c->dtype, c->weight_dtype,
           c->cast_mode, (unsigned) offset_bits);
  for (size_t i = 0; i < c->nargs; i++) {
    const size_t at = strlen(c->what);
    snprintf(c->what + at, sizeof c->what - at, "%c", c->args[i].present ? '1' : '0');
  }
}

/* RMSNorm, or with a residual the fused add (src/kernels/f32-rmsnorm/rmsnorm_f32.h): y and rstd
 * each optional (y absent: the statistics alone); y may equal x. */
static inline struct call rmsnorm_call(const void* x, const void* residual, const void* w, bool y,
                                       bool rstd, size_t rows, size_t dim, size_t stride, float eps,
                                       int dtype, int weight_dtype, int cast_mode,
                                       float weight_offset) {
  struct call c = {.nargs = RMS_ARGS,
                   .alias_out = RMS_Y,
                   .alias_in = RMS_X,
                   .invoke = invoke_rmsnorm,
                   .rows = rows,
                   .dim = dim,
                   .stride = stride,
                   .eps = eps,
                   .weight_offset = weight_offset,
                   .dtype = dtype,
                   .weight_dtype = weight_dtype,
                   .cast_mode = cast_mode};
  const size_t n = rows * dim;
  c.args[RMS_X] = row_input(x, n, dtype);
  c.args[RMS_RESIDUAL] = row_output(residual != NULL, residual, n, dtype);
  c.args[RMS_W] = input(w, dim, weight_dtype);
  c.args[RMS_Y] = row_output(y, NULL, n, dtype);
  c.args[RMS_RSTD] = output(rstd, NULL, rows);
  describe(&c, residual != NULL ? "addRmsNorm" : "rmsNorm");
  return c;
}

/* An RMSNorm call with both optional outputs, then with each alone: y must
 * be the same bits without rstd, and rstd and the residual the same
 * without y. *simd and *scalar get the outputs of the call with both. */
static void run_rmsnorm_checked(const void* x, const void* residual, const void* w, size_t rows,
                                size_t dim, size_t stride, float eps, int dtype, int weight_dtype,
                                int cast_mode, float weight_offset, unsigned misalign,
                                struct outputs* simd, struct outputs* scalar) {
  const struct call full = rmsnorm_call(x, residual, w, true, true, rows, dim, stride, eps, dtype,
                                        weight_dtype, cast_mode, weight_offset);
  run_both_checked(&full, misalign, simd, scalar);
  for (int with_y = 0; with_y < 2; with_y++) {
    const struct call part = rmsnorm_call(x, residual, w, with_y, !with_y, rows, dim, stride, eps,
                                          dtype, weight_dtype, cast_mode, weight_offset);
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

static inline void invoke_rmsnorm_q8(const struct call* c, bool simd, void* const* p,
                                     size_t stride) {
  (simd ? rmsnorm_wasm_f32_rmsnorm_q8_ukernel__wasmsimd
        : rmsnorm_wasm_f32_rmsnorm_q8_ukernel__scalar)(
      p[RMS_X], p[RMS_RESIDUAL], p[RMS_W], p[RMS_Y], p[RMS_RSTD], c->rows, c->dim, stride, c->eps,
      c->dtype, c->weight_dtype, c->cast_mode, c->weight_offset, c->format);
}

/* RMSNorm (or the fused add) to ggml blocks of `format`: y is the rows'
 * blocks, packed whatever the stride, never over x; as 16-bit elements (every
 * row of blocks is an even number of bytes) they compare bit for bit. rstd
 * always given. */
static inline struct call rmsnorm_q8_call(const void* x, const void* residual, const void* w,
                                          size_t rows, size_t dim, size_t stride, float eps,
                                          int dtype, int weight_dtype, int cast_mode,
                                          float weight_offset, int format) {
  struct call c = rmsnorm_call(x, residual, w, true, true, rows, dim, stride, eps, dtype,
                               weight_dtype, cast_mode, weight_offset);
  c.invoke = invoke_rmsnorm_q8;
  c.alias_out = -1;
  c.alias_in = -1;
  c.format = format;
  const size_t bytes = rows * (dim / q8_block_values(format)) * q8_block_bytes(format);
  c.args[RMS_Y] = (struct arg){true, true, false, NULL, bytes / 2, RMSNORM_BF16};
  const size_t at = strlen(c.what);
  snprintf(c.what + at, sizeof c.what - at, " format=%d", format);
  return c;
}

/* The block outputs: both implementations in every layout, and the fused
 * blocks must be the scalar quantizer (q8_blocks.h) applied to y of the
 * plain call, and rstd and the residual the plain call's. */
static inline void run_rmsnorm_q8_checked(const void* x, const void* residual, const void* w,
                                          size_t rows, size_t dim, size_t stride, float eps,
                                          int dtype, int weight_dtype, int cast_mode,
                                          float weight_offset, int format, unsigned misalign) {
  const struct call q8 = rmsnorm_q8_call(x, residual, w, rows, dim, stride, eps, dtype,
                                         weight_dtype, cast_mode, weight_offset, format);
  const struct call plain = rmsnorm_call(x, residual, w, true, true, rows, dim, stride, eps, dtype,
                                         weight_dtype, cast_mode, weight_offset);
  struct outputs q8_simd, q8_scalar, plain_simd, plain_scalar;
  run_both_checked(&q8, misalign, &q8_simd, &q8_scalar);
  run_both_checked(&plain, misalign, &plain_simd, &plain_scalar);
  if (rows > 0) {
    const size_t values = q8_block_values(format), bytes = q8_block_bytes(format);
    const size_t blocks = rows * dim / values;
    uint8_t* want = malloc(blocks * bytes + 1);
    if (want == NULL) abort();
    for (size_t b = 0; b < blocks; b++) {
      q8_quantize_block_scalar(
          (const char*) plain_scalar.of[RMS_Y] + b * values * dtype_size(dtype), dtype, format,
          want + b * bytes);
    }
    require_same_bits(q8_scalar.of[RMS_Y], want, &q8.args[RMS_Y],
                      "blocks differ from the scalar quantizer on the plain call's y", &q8);
    free(want);
  }
  require_same_bits(q8_scalar.of[RMS_RSTD], plain_scalar.of[RMS_RSTD], &q8.args[RMS_RSTD],
                    "rstd differs from the plain call's", &q8);
  if (residual != NULL) {
    require_same_bits(q8_scalar.of[RMS_RESIDUAL], plain_scalar.of[RMS_RESIDUAL],
                      &q8.args[RMS_RESIDUAL], "the residual differs from the plain call's", &q8);
  }
  free_outputs(&q8_simd);
  free_outputs(&q8_scalar);
  free_outputs(&plain_simd);
  free_outputs(&plain_scalar);
}

/* LayerNorm (src/kernels/f32-layernorm/layernorm_f32.h): y, mean and rstd each optional; y may
 * equal x. */
static inline struct call layernorm_call(const float* x, const float* w, const float* b, bool y,
                                         bool mean, bool rstd, size_t rows, size_t dim,
                                         size_t stride, float eps) {
  struct call c = {.nargs = LN_ARGS,
                   .alias_out = LN_Y,
                   .alias_in = LN_X,
                   .invoke = invoke_layernorm,
                   .rows = rows,
                   .dim = dim,
                   .stride = stride,
                   .eps = eps};
  c.args[LN_X] = row_input(x, rows * dim, RMSNORM_F32);
  c.args[LN_W] = input(w, dim, RMSNORM_F32);
  c.args[LN_B] = input(b, dim, RMSNORM_F32);
  c.args[LN_Y] = row_output(y, NULL, rows * dim, RMSNORM_F32);
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
                                        const float* dw, const float* db, size_t rows, size_t dim,
                                        size_t stride) {
  struct call c = {.nargs = BW_ARGS,
                   .alias_out = BW_DX,
                   .alias_in = BW_DY,
                   .invoke = layernorm ? invoke_layernorm_backward : invoke_rmsnorm_backward,
                   .rows = rows,
                   .dim = dim,
                   .stride = stride};
  c.args[BW_DY] = row_input(dy, rows * dim, RMSNORM_F32);
  c.args[BW_X] = row_input(x, rows * dim, RMSNORM_F32);
  c.args[BW_W] = input(w, dim, RMSNORM_F32);
  c.args[BW_MEAN] = input(layernorm ? mean : NULL, rows, RMSNORM_F32);
  c.args[BW_RSTD] = input(rstd, rows, RMSNORM_F32);
  c.args[BW_DX] = row_output(true, NULL, rows * dim, RMSNORM_F32);
  c.args[BW_DW] = output(w != NULL, dw, dim);
  c.args[BW_DB] = output(layernorm && db != NULL, db, dim);
  describe(&c, layernorm ? "layerNormBackward" : "rmsNormBackward");
  return c;
}

#endif
