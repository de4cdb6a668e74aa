/*
 * rmsnorm_wasm_prepare_rmsnorm_heads against the calls it replaces
 * (tests/c-library.test.js builds this with emcc against each library and
 * runs it in Node). Qwen3's prefill QK-norm: 7 tokens, 16 q and 8 k heads of
 * 128 in each token's row of a fused QKV buffer (row stride 32 * 128). The
 * buffer is normalized twice: by 24 per-head prepared calls (head h of
 * every token, rows row_stride apart), and by one heads call for q and one
 * for k; both, and their rstd, are printed as hexadecimal bit patterns,
 * with the input, for the test to compare with each other and with the JS
 * API. Then heads with gaps between them fused with a residual, against
 * per-head calls; the statuses of wrong arguments; the aliasing rule on
 * a grid of placements against a byte model; and heads to ggml blocks
 * (rmsnorm_wasm_prepare_rmsnorm_heads_q8) against per-head calls.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "rmsnorm_wasm.h"

#define TOKENS 7
#define Q_HEADS 16
#define KV_HEADS 8
#define HEAD_DIM 128
#define WIDTH ((Q_HEADS + 2 * KV_HEADS) * HEAD_DIM)
#define N (TOKENS * WIDTH)

static float input[N], per_head[N], heads[N];
static float per_head_rstd[(Q_HEADS + KV_HEADS) * TOKENS], q_rstd[TOKENS * Q_HEADS],
    k_rstd[TOKENS * KV_HEADS];
static float q_norm[HEAD_DIM], k_norm[HEAD_DIM];

/* Deterministic values in about [-4, 4), exact in float32. */
static uint32_t state = 12345;
static float next_value(void) {
  state = state * 1664525u + 1013904223u;
  return (float) ((int32_t) (state >> 8) - (1 << 23)) / (float) (1 << 21);
}

static void print_floats(const char* name, const float* a, size_t n, int last) {
  printf("\"%s\":[", name);
  for (size_t i = 0; i < n; i++) {
    uint32_t u;
    memcpy(&u, &a[i], sizeof u);
    printf("%s\"%08x\"", i == 0 ? "" : ",", (unsigned) u);
  }
  printf("]%s\n", last ? "" : ",");
}

/* Whether value i of a buffer is in a row of a heads layout starting at `at`. */
static int in_rows(long i, long at, long tokens, long heads, long dim, long hs, long rs) {
  for (long t = 0; t < tokens; t++) {
    for (long h = 0; h < heads; h++) {
      const long start = at + t * rs + h * hs;
      if (i >= start && i < start + dim) return 1;
    }
  }
  return 0;
}

/* The aliasing rule on heads against a model that compares values: y (and
 * then rstd) at every offset around x, over a grid of layouts; prepare must
 * refuse exactly the placements where they share a value with x's rows (y
 * == x in place being allowed). Prints the counts. */
static void overlap_grid(void) {
  static float buf[1024];
  long placements = 0, refused = 0, wrong = 0;
  const long base = 400;
  for (long dim = 1; dim <= 3; dim++) {
    for (long heads = 2; heads <= 3; heads++) {
      for (long hs = dim; hs <= dim + 3; hs++) {
        const long extent = (heads - 1) * hs + dim;
        for (long rs = extent; rs <= extent + 3; rs++) {
          for (long tokens = 2; tokens <= 3; tokens++) {
            for (long shift = -2 * rs - 2; shift <= 2 * rs + 2; shift++) {
              int overlap = 0;
              for (long i = 0; i < 1024 && shift != 0; i++) {
                overlap |= in_rows(i, base, tokens, heads, dim, hs, rs) &&
                           in_rows(i, base + shift, tokens, heads, dim, hs, rs);
              }
              rmsnorm_wasm_call call;
              const rmsnorm_wasm_status status = rmsnorm_wasm_prepare_rmsnorm_heads(
                  &call, buf + base, NULL, NULL, buf + base + shift, NULL, (size_t) tokens,
                  (size_t) heads, (size_t) dim, (size_t) hs, (size_t) rs, 1e-6f,
                  RMSNORM_WASM_FLOAT32, RMSNORM_WASM_FLOAT32, RMSNORM_WASM_CAST_LLAMA, 0.0f);
              placements++;
              refused += status != RMSNORM_WASM_OK;
              wrong += status != (overlap ? RMSNORM_WASM_ERROR_OVERLAP : RMSNORM_WASM_OK);
              /* rstd, tokens * heads values, at the same offset (y apart from x). */
              const long n = tokens * heads;
              int rstd_overlap = 0;
              for (long i = base + shift; i < base + shift + n; i++) {
                rstd_overlap |= in_rows(i, base, tokens, heads, dim, hs, rs);
              }
              const rmsnorm_wasm_status with_rstd = rmsnorm_wasm_prepare_rmsnorm_heads(
                  &call, buf + base, NULL, NULL, buf + base, buf + base + shift, (size_t) tokens,
                  (size_t) heads, (size_t) dim, (size_t) hs, (size_t) rs, 1e-6f,
                  RMSNORM_WASM_FLOAT32, RMSNORM_WASM_FLOAT32, RMSNORM_WASM_CAST_LLAMA, 0.0f);
              placements++;
              refused += with_rstd != RMSNORM_WASM_OK;
              wrong += with_rstd != (rstd_overlap ? RMSNORM_WASM_ERROR_OVERLAP : RMSNORM_WASM_OK);
            }
          }
        }
      }
    }
  }
  printf("\"overlapGrid\":{\"placements\":%ld,\"refused\":%ld,\"wrong\":%ld},\n", placements,
         refused, wrong);
}

static int check(const char* what, rmsnorm_wasm_status status) {
  if (status != RMSNORM_WASM_OK) {
    fprintf(stderr, "%s: %s\n", what, rmsnorm_wasm_status_string(status));
    return 1;
  }
  return 0;
}

static void print_bytes(const char* name, const uint8_t* a, size_t n) {
  printf("\"%s\":\"", name);
  for (size_t i = 0; i < n; i++) printf("%02x", a[i]);
  printf("\",");
}

/* Heads to ggml blocks (rmsnorm_wasm_prepare_rmsnorm_heads_q8): the q heads
 * of the input to q8_0 in one call, against one
 * rmsnorm_wasm_prepare_rmsnorm_q8 call per head; heads with gaps fused with
 * a residual to q8_K, against per-head calls; the statuses of wrong
 * arguments. Prints "q8":{...}. */
static int block_outputs(void) {
  enum { QROW = HEAD_DIM / 32 * 34 };
  static uint8_t q_blocks[TOKENS * Q_HEADS * QROW], head_blocks[Q_HEADS][TOKENS * QROW];
  static float q8_rstd[TOKENS * Q_HEADS], head_rstd[Q_HEADS][TOKENS];
  const float eps = 1e-6f;
  int same = 1;
  rmsnorm_wasm_call call;
#define F32 RMSNORM_WASM_FLOAT32, RMSNORM_WASM_FLOAT32, RMSNORM_WASM_CAST_LLAMA, 0.0f
  if (check("q8_0 heads", rmsnorm_wasm_prepare_rmsnorm_heads_q8(
                              &call, input, NULL, q_norm, q_blocks, q8_rstd, TOKENS, Q_HEADS,
                              HEAD_DIM, HEAD_DIM, WIDTH, eps, F32, RMSNORM_WASM_Q8_0))) {
    return 1;
  }
  rmsnorm_wasm_run(&call);
  for (int h = 0; h < Q_HEADS; h++) {
    if (check("q8_0 per head",
              rmsnorm_wasm_prepare_rmsnorm_q8(&call, input + h * HEAD_DIM, NULL, q_norm,
                                              head_blocks[h], head_rstd[h], TOKENS, HEAD_DIM, WIDTH,
                                              eps, F32, RMSNORM_WASM_Q8_0))) {
      return 1;
    }
    rmsnorm_wasm_run(&call);
    for (int t = 0; t < TOKENS; t++) {
      same &= memcmp(q_blocks + (t * Q_HEADS + h) * QROW, head_blocks[h] + t * QROW, QROW) == 0;
      same &= memcmp(&q8_rstd[t * Q_HEADS + h], &head_rstd[h][t], sizeof(float)) == 0;
    }
  }

  /* One token: its heads as plain rows head_stride apart, the first token's blocks. */
  static uint8_t one_token[Q_HEADS * QROW];
  if (check("q8_0 heads, one token", rmsnorm_wasm_prepare_rmsnorm_heads_q8(
                                         &call, input, NULL, q_norm, one_token, NULL, 1, Q_HEADS,
                                         HEAD_DIM, HEAD_DIM, WIDTH, eps, F32, RMSNORM_WASM_Q8_0))) {
    return 1;
  }
  rmsnorm_wasm_run(&call);
  same &= memcmp(one_token, q_blocks, sizeof one_token) == 0;

  /* Two heads of 256, 300 apart, tokens 700 apart, fused with a residual, to q8_K. */
  enum { T = 3, H = 2, D = 256, HS = 300, RS = 700, LEN = (T - 1) * RS + (H - 1) * HS + D };
  enum { KROW = 292 };
  static float gx[LEN], gres[LEN], pres[LEN], res0[LEN], w[D];
  static uint8_t k_blocks[T * H * KROW], k_head_blocks[H][T * KROW];
  for (int i = 0; i < LEN; i++) {
    gx[i] = next_value();
    gres[i] = pres[i] = res0[i] = next_value();
  }
  for (int i = 0; i < D; i++) w[i] = 0.75f + (float) (i % 16) / 16.0f;
  if (check("q8_K heads",
            rmsnorm_wasm_prepare_rmsnorm_heads_q8(&call, gx, gres, w, k_blocks, NULL, T, H, D, HS,
                                                  RS, eps, F32, RMSNORM_WASM_Q8_K))) {
    return 1;
  }
  rmsnorm_wasm_run(&call);
  for (int h = 0; h < H; h++) {
    if (check("q8_K per head", rmsnorm_wasm_prepare_rmsnorm_q8(&call, gx + h * HS, pres + h * HS, w,
                                                               k_head_blocks[h], NULL, T, D, RS,
                                                               eps, F32, RMSNORM_WASM_Q8_K))) {
      return 1;
    }
    rmsnorm_wasm_run(&call);
    for (int t = 0; t < T; t++) {
      same &= memcmp(k_blocks + (t * H + h) * KROW, k_head_blocks[h] + t * KROW, KROW) == 0;
    }
  }
  same &= memcmp(gres, pres, sizeof gres) == 0;

  printf("\"q8\":{\"same\":%d,", same);
  print_bytes("qBlocks", q_blocks, sizeof q_blocks);
  print_floats("qRstd", q8_rstd, TOKENS * Q_HEADS, 0);
  print_floats("gapsX", gx, LEN, 0);
  print_floats("gapsResidualIn", res0, LEN, 0);
  print_floats("gapsResidual", gres, LEN, 0);
  print_bytes("gapsBlocks", k_blocks, sizeof k_blocks);

  /* Wrong arguments, in the header's order. */
  static float buf[4 * 64];
  uint8_t* const out = (uint8_t*) (buf + 3 * 64);
#define Q8_STATUS(name, ...) \
  printf("\"%s\":%d,", name, (int) rmsnorm_wasm_prepare_rmsnorm_heads_q8(__VA_ARGS__))
  printf("\"statuses\":{");
  Q8_STATUS("unknown format", &call, buf, NULL, NULL, out, NULL, 1, 2, 32, 32, 64, eps, F32,
            (rmsnorm_wasm_block_format) 7);
  Q8_STATUS("dim 8 for q8_0", &call, buf, NULL, NULL, out, NULL, 1, 2, 8, 8, 16, eps, F32,
            RMSNORM_WASM_Q8_0);
  Q8_STATUS("dim 128 for q8_K", &call, buf, NULL, NULL, out, NULL, 1, 1, 128, 128, 128, eps, F32,
            RMSNORM_WASM_Q8_K);
  Q8_STATUS("out NULL", &call, buf, NULL, NULL, NULL, NULL, 1, 2, 32, 32, 64, eps, F32,
            RMSNORM_WASM_Q8_0);
  Q8_STATUS("out is x: blocks are never in place", &call, buf, NULL, NULL, (uint8_t*) buf, NULL, 1,
            2, 32, 32, 64, eps, F32, RMSNORM_WASM_Q8_0);
  Q8_STATUS("out over x's second head", &call, buf, NULL, NULL, (uint8_t*) (buf + 50), NULL, 1, 2,
            32, 64, 128, eps, F32, RMSNORM_WASM_Q8_0);
  Q8_STATUS("out in the gap between x's heads", &call, buf, NULL, NULL, (uint8_t*) (buf + 32), NULL,
            1, 2, 32, 64, 128, eps, F32, RMSNORM_WASM_Q8_0);
  Q8_STATUS("rstd over the blocks", &call, buf, NULL, NULL, out, (float*) out, 1, 2, 32, 32, 64,
            eps, F32, RMSNORM_WASM_Q8_0);
  printf("\"end\":0}},\n");
#undef Q8_STATUS
#undef F32
  return 0;
}

int main(void) {
  for (size_t i = 0; i < N; i++) input[i] = next_value();
  for (size_t i = 0; i < HEAD_DIM; i++) {
    q_norm[i] = 0.5f + (float) (i % 8) / 8.0f;
    k_norm[i] = 1.5f - (float) (i % 4) / 4.0f;
  }
  memcpy(per_head, input, sizeof input);
  memcpy(heads, input, sizeof input);
  const float eps = 1e-6f;
  /* The calls heads replaces: head h of every token, rows WIDTH apart. */
  for (int h = 0; h < Q_HEADS + KV_HEADS; h++) {
    rmsnorm_wasm_call call;
    float* x = per_head + h * HEAD_DIM;
    if (check("per head",
              rmsnorm_wasm_prepare_rmsnorm(&call, x, NULL, h < Q_HEADS ? q_norm : k_norm, x,
                                           per_head_rstd + h * TOKENS, TOKENS, HEAD_DIM, WIDTH, eps,
                                           RMSNORM_WASM_FLOAT32, RMSNORM_WASM_FLOAT32,
                                           RMSNORM_WASM_CAST_LLAMA, 0.0f))) {
      return 1;
    }
    rmsnorm_wasm_run(&call);
  }
  /* One call for the q heads, one for the k heads. */
  rmsnorm_wasm_call q, k;
  if (check("q", rmsnorm_wasm_prepare_rmsnorm_heads(&q, heads, NULL, q_norm, heads, q_rstd, TOKENS,
                                                    Q_HEADS, HEAD_DIM, HEAD_DIM, WIDTH, eps,
                                                    RMSNORM_WASM_FLOAT32, RMSNORM_WASM_FLOAT32,
                                                    RMSNORM_WASM_CAST_LLAMA, 0.0f)) ||
      check("k", rmsnorm_wasm_prepare_rmsnorm_heads(
                     &k, heads + Q_HEADS * HEAD_DIM, NULL, k_norm, heads + Q_HEADS * HEAD_DIM,
                     k_rstd, TOKENS, KV_HEADS, HEAD_DIM, HEAD_DIM, WIDTH, eps, RMSNORM_WASM_FLOAT32,
                     RMSNORM_WASM_FLOAT32, RMSNORM_WASM_CAST_LLAMA, 0.0f))) {
    return 1;
  }
  rmsnorm_wasm_run(&q);
  rmsnorm_wasm_run(&k);

  /* Three heads of 8, 11 apart, tokens 40 apart, fused with a residual, into another y. */
  enum { T = 5, H = 3, D = 8, HS = 11, RS = 40, LEN = (T - 1) * RS + (H - 1) * HS + D };
  static float gx[LEN], gres[LEN], gy[LEN], pres[LEN], py[LEN], res0[LEN], grstd[T * H], w[D];
  for (int i = 0; i < LEN; i++) {
    gx[i] = next_value();
    gres[i] = pres[i] = res0[i] = next_value();
    gy[i] = py[i] = -7.0f;
  }
  for (int i = 0; i < D; i++) w[i] = 0.75f + (float) i / 16.0f;
  for (int h = 0; h < H; h++) {
    rmsnorm_wasm_call call;
    if (check("gaps, per head",
              rmsnorm_wasm_prepare_rmsnorm(&call, gx + h * HS, pres + h * HS, w, py + h * HS, NULL,
                                           T, D, RS, eps, RMSNORM_WASM_FLOAT32,
                                           RMSNORM_WASM_FLOAT32, RMSNORM_WASM_CAST_LLAMA, 0.0f))) {
      return 1;
    }
    rmsnorm_wasm_run(&call);
  }
  rmsnorm_wasm_call gaps;
  if (check("gaps", rmsnorm_wasm_prepare_rmsnorm_heads(
                        &gaps, gx, gres, w, gy, grstd, T, H, D, HS, RS, eps, RMSNORM_WASM_FLOAT32,
                        RMSNORM_WASM_FLOAT32, RMSNORM_WASM_CAST_LLAMA, 0.0f))) {
    return 1;
  }
  rmsnorm_wasm_run(&gaps);

  /* Wrong arguments: each status, in the header's order. */
  static float buf[4 * RS];
  rmsnorm_wasm_call bad;
#define STATUS(name, ...)                          \
  printf("{\"case\":\"%s\",\"status\":%d},", name, \
         (int) rmsnorm_wasm_prepare_rmsnorm_heads(__VA_ARGS__))
#define F32 RMSNORM_WASM_FLOAT32, RMSNORM_WASM_FLOAT32, RMSNORM_WASM_CAST_LLAMA, 0.0f
  printf("{\"statuses\":[");
  STATUS("null call", NULL, buf, NULL, w, buf, NULL, 2, 2, D, D, RS, eps, F32);
  STATUS("unknown dtype", &bad, buf, NULL, w, buf, NULL, 2, 2, D, D, RS, eps,
         (rmsnorm_wasm_dtype) 9, RMSNORM_WASM_FLOAT32, RMSNORM_WASM_CAST_LLAMA, 0.0f);
  STATUS("heads 0", &bad, buf, NULL, w, buf, NULL, 2, 0, D, D, RS, eps, F32);
  STATUS("dim 0", &bad, buf, NULL, w, buf, NULL, 2, 2, 0, D, RS, eps, F32);
  STATUS("head_stride below dim", &bad, buf, NULL, w, buf, NULL, 2, 2, D, D - 1, RS, eps, F32);
  STATUS("heads past the next token", &bad, buf, NULL, w, buf, NULL, 2, 4, D, 11, RS, eps, F32);
  STATUS("one token: row_stride unused", &bad, buf, NULL, w, buf, NULL, 1, 4, D, 11, D, eps, F32);
  STATUS("token span overflows", &bad, buf, NULL, w, buf, NULL, 1, 3, D, SIZE_MAX / 2, RS, eps,
         F32);
  STATUS("eps negative", &bad, buf, NULL, w, buf, NULL, 2, 2, D, D, RS, -1.0f, F32);
  STATUS("no tokens, no arrays", &bad, NULL, NULL, NULL, NULL, NULL, 0, 2, D, D, RS, eps, F32);
  STATUS("y NULL", &bad, buf, NULL, w, NULL, NULL, 2, 2, D, D, RS, eps, F32);
  STATUS("in place", &bad, buf, NULL, w, buf, NULL, 2, 2, D, HS, RS, eps, F32);
  STATUS("y in the gaps between x's heads", &bad, buf, NULL, w, buf + D, NULL, 2, 2, D, 2 * D, RS,
         eps, F32);
  STATUS("y one value after x", &bad, buf, NULL, w, buf + 1, NULL, 2, 2, D, 2 * D, RS, eps, F32);
  STATUS("y over x's second head", &bad, buf, NULL, w, buf + 2 * D, NULL, 2, 2, D, 2 * D, RS, eps,
         F32);
  STATUS("rstd in a gap between heads", &bad, buf, NULL, w, buf, buf + D, 2, 2, D, 2 * D, 4 * D,
         eps, F32);
  STATUS("rstd across a head", &bad, buf, NULL, w, buf, buf + D - 1, 2, 2, D, 2 * D, 4 * D, eps,
         F32);
  STATUS("residual is x", &bad, buf, buf, w, buf + 2 * RS, NULL, 2, 2, D, D, RS, eps, F32);
  printf("{\"case\":\"end\",\"status\":0}],\n");
  overlap_grid();
  if (block_outputs()) {
    return 1;
  }
  print_floats("input", input, N, 0);
  print_floats("perHead", per_head, N, 0);
  print_floats("heads", heads, N, 0);
  print_floats("perHeadRstd", per_head_rstd, (Q_HEADS + KV_HEADS) * TOKENS, 0);
  print_floats("qRstd", q_rstd, TOKENS * Q_HEADS, 0);
  print_floats("kRstd", k_rstd, TOKENS * KV_HEADS, 0);
  print_floats("gapsX", gx, LEN, 0);
  print_floats("gapsResidualIn", res0, LEN, 0);
  print_floats("gapsPerHeadY", py, LEN, 0);
  print_floats("gapsY", gy, LEN, 0);
  print_floats("gapsPerHeadResidual", pres, LEN, 0);
  print_floats("gapsResidual", gres, LEN, 1);
  printf("}\n");
  return 0;
}
