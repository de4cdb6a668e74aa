/*
 * rmsnorm_wasm_quantize and rmsnorm_wasm_dequantize (tests/c-library.test.js
 * builds this with emcc against each library and runs it in Node). The same
 * float32 rows, random ones at many scales and edge blocks (ties, zeros,
 * +-amax, huge, subnormal, NaN, infinities), quantized to each format; the
 * blocks dequantized; random bytes dequantized (every kind of float16 d);
 * the prepared forms with strided float32 rows against the packed calls;
 * the status of each wrong argument. Printed as one JSON object, values as
 * hexadecimal bit patterns, for the test to compare with the JS reference.
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "rmsnorm_wasm.h"

#define RANDOM_SEED 0x5eed0046u
#include "random_inputs.h"

#define DIM 512
#define RANDOM_ROWS 48
#define EDGE_ROWS 14
#define ROWS (RANDOM_ROWS + EDGE_ROWS)
#define STRIDE (DIM + 40)

static float x[ROWS * DIM], strided[ROWS * STRIDE], y[ROWS * DIM], y_strided[ROWS * STRIDE];
/* The largest row of blocks: q8_K's, 292 bytes a 256 values. */
static uint8_t blocks[ROWS * DIM / 256 * 292], blocks_strided[sizeof blocks], noise[sizeof blocks];

static void print_hex32(const char* name, const float* a, size_t n) {
  printf("\"%s\":[", name);
  for (size_t i = 0; i < n; i++) {
    uint32_t u;
    memcpy(&u, &a[i], sizeof u);
    printf("%s\"%08x\"", i == 0 ? "" : ",", (unsigned) u);
  }
  printf("],");
}

static void print_bytes(const char* name, const uint8_t* a, size_t n) {
  printf("\"%s\":\"", name);
  for (size_t i = 0; i < n; i++) printf("%02x", a[i]);
  printf("\",");
}

/* One 256-value stretch of an edge row (a q8_K block, eight q8_0 blocks). */
static void edge(float* v, int kind) {
  for (int j = 0; j < 256; j++) {
    const float ramp = (float) (j % 50) - 24.5f; /* halves: ties once d is 1 */
    switch (kind) {
      case 0: v[j] = 0.0f; break;
      case 1: v[j] = -0.0f; break;
      /* amax 127 in every 32 (d = 1, id = 1) and in the q8_K block (iscale -+1). */
      case 2: v[j] = j % 32 == 5 ? 127.0f : ramp; break;
      case 3: v[j] = j % 32 == 5 ? -127.0f : ramp; break;
      /* +-amax: the same magnitude with both signs, the negative first. */
      case 4: v[j] = j % 32 == 3 ? -3.0f : j % 32 == 9 ? 3.0f : random_value(); break;
      case 5: v[j] = j % 2 == 0 ? FLT_MAX : -FLT_MAX; break;
      case 6: v[j] = j % 3 == 0 ? 3.0e38f : random_value() * 1e30f; break;
      case 7: v[j] = random_value() * 0x1p-140f; break; /* subnormal: 1/d overflows */
      case 8: v[j] = j % 4 == 0 ? 0x1p-149f : 0.0f; break;
      case 9: v[j] = j % 32 == 0 ? NAN : random_value(); break;
      case 10: v[j] = j % 32 == 17 ? -NAN : random_value(); break;
      case 11: v[j] = j % 32 == 7 ? INFINITY : random_value(); break;
      case 12: v[j] = j % 64 == 40 ? -INFINITY : random_value() * 1e-3f; break;
      default: v[j] = (float) ((int) (next_random() % 255) - 127) * 0.5f; break; /* halves */
    }
  }
}

static void fill(void) {
  for (int r = 0; r < RANDOM_ROWS; r++) {
    /* Scales 2^-24 .. 2^23, and rows whose blocks differ in scale. */
    const float scale = ldexpf(1.0f, (int) (r % 48) - 24);
    for (int j = 0; j < DIM; j++) {
      const float block_scale = r % 5 == 0 ? ldexpf(1.0f, (j / 32) % 9 - 4) : 1.0f;
      x[r * DIM + j] = random_value() * scale * block_scale;
    }
  }
  for (int e = 0; e < EDGE_ROWS; e++) {
    float* row = x + (RANDOM_ROWS + e) * DIM;
    edge(row, e);
    edge(row + 256, (e + 5) % EDGE_ROWS);
  }
  for (size_t i = 0; i < sizeof noise; i++) noise[i] = (uint8_t) next_random();
}

/* The gaps of strided float32 rows: every value -7 still. */
static int gaps_kept(const float* a) {
  for (int r = 0; r < ROWS; r++) {
    for (int j = DIM; j < STRIDE; j++) {
      if (a[r * STRIDE + j] != -7.0f) return 0;
    }
  }
  return 1;
}

static int run_format(rmsnorm_wasm_block_format format, int last) {
  const size_t row_bytes = rmsnorm_wasm_block_row_bytes(format, DIM);
  const size_t bytes = ROWS * row_bytes;
  memset(blocks, 0xAB, sizeof blocks);
  int status = rmsnorm_wasm_quantize(x, blocks, ROWS, DIM, format);
  int tail_kept = 1;
  for (size_t i = bytes; i < sizeof blocks; i++) tail_kept &= blocks[i] == 0xAB;
  status |= rmsnorm_wasm_dequantize(blocks, y, ROWS, DIM, format);

  /* The prepared forms on float32 rows STRIDE apart, run twice. */
  for (int i = 0; i < ROWS * STRIDE; i++) strided[i] = y_strided[i] = -7.0f;
  for (int r = 0; r < ROWS; r++) memcpy(strided + r * STRIDE, x + r * DIM, DIM * sizeof(float));
  rmsnorm_wasm_call quantize, dequantize;
  status |=
      rmsnorm_wasm_prepare_quantize(&quantize, strided, blocks_strided, ROWS, DIM, STRIDE, format);
  status |= rmsnorm_wasm_prepare_dequantize(&dequantize, blocks_strided, y_strided, ROWS, DIM,
                                            STRIDE, format);
  memset(blocks_strided, 0, sizeof blocks_strided);
  rmsnorm_wasm_run(&quantize);
  rmsnorm_wasm_run(&quantize);
  rmsnorm_wasm_run(&dequantize);
  int strided_same = memcmp(blocks, blocks_strided, bytes) == 0 && gaps_kept(strided);
  for (int r = 0; r < ROWS; r++) {
    strided_same &= memcmp(y_strided + r * STRIDE, y + r * DIM, DIM * sizeof(float)) == 0;
  }
  strided_same &= gaps_kept(y_strided);

  /* Random bytes as blocks: every kind of d. */
  status |= rmsnorm_wasm_dequantize(noise, y_strided, ROWS, DIM, format);

  printf("{\"format\":%d,\"status\":%d,\"rowBytes\":%u,\"tailKept\":%d,\"stridedSame\":%d,",
         (int) format, status, (unsigned) row_bytes, tail_kept, strided_same);
  print_bytes("blocks", blocks, bytes);
  print_hex32("y", y, ROWS * DIM);
  print_bytes("noise", noise, bytes);
  print_hex32("noiseY", y_strided, ROWS * DIM);
  printf("\"end\":0}%s\n", last ? "" : ",");
  return status;
}

/* Wrong arguments: each status, and nothing written. */
static void errors(void) {
  static float v[4 * 64];
  static uint8_t out[4 * 292];
  for (int i = 0; i < 4 * 64; i++) v[i] = 1.0f;
  memset(out, 0x5A, sizeof out);
  float* const top_floats = (float*) (uintptr_t) (UINTPTR_MAX - 63); /* 64 bytes below the top */
  uint8_t* const top_bytes = (uint8_t*) (uintptr_t) (UINTPTR_MAX - 33);
  rmsnorm_wasm_call call;
#define Q(name, ...) printf("\"%s\":%d,", name, (int) rmsnorm_wasm_quantize(__VA_ARGS__))
#define D(name, ...) printf("\"%s\":%d,", name, (int) rmsnorm_wasm_dequantize(__VA_ARGS__))
  printf("{\"op\":\"errors\",\"statuses\":{");
  Q("format 0", v, out, 2, 32, (rmsnorm_wasm_block_format) 0);
  Q("format 4", v, out, 2, 32, (rmsnorm_wasm_block_format) 4);
  D("dequantize format 4", out, v, 2, 32, (rmsnorm_wasm_block_format) 4);
  Q("dim 0", v, out, 2, 0, RMSNORM_WASM_Q8_0);
  Q("dim 48 for q8_0", v, out, 2, 48, RMSNORM_WASM_Q8_0);
  Q("dim 32 for q8_K", v, out, 1, 32, RMSNORM_WASM_Q8_K);
  D("dequantize dim 48 for q8_1", out, v, 2, 48, RMSNORM_WASM_Q8_1);
  Q("rows 0, NULL arrays", NULL, NULL, 0, 32, RMSNORM_WASM_Q8_0);
  Q("x NULL", NULL, out, 2, 32, RMSNORM_WASM_Q8_0);
  Q("blocks NULL", v, NULL, 2, 32, RMSNORM_WASM_Q8_0);
  D("dequantize y NULL", out, NULL, 2, 32, RMSNORM_WASM_Q8_0);
  Q("x's bytes overflow size_t", v, out, SIZE_MAX / 64, 64, RMSNORM_WASM_Q8_0);
  Q("blocks run past the top", v, top_bytes, 1, 32, RMSNORM_WASM_Q8_1);
  D("dequantize y runs past the top", out, top_floats, 1, 32, RMSNORM_WASM_Q8_0);
  Q("blocks overlap x", v, (uint8_t*) v + 100, 2, 32, RMSNORM_WASM_Q8_0);
  D("dequantize y overlaps blocks", out, (float*) (out + 4), 2, 32, RMSNORM_WASM_Q8_0);
  D("dequantize in place", out, (float*) out, 1, 32, RMSNORM_WASM_Q8_0);
  printf("\"null call\":%d,",
         (int) rmsnorm_wasm_prepare_quantize(NULL, v, out, 2, 32, 32, RMSNORM_WASM_Q8_0));
  printf("\"row_stride below dim\":%d,",
         (int) rmsnorm_wasm_prepare_quantize(&call, v, out, 2, 32, 31, RMSNORM_WASM_Q8_0));
  rmsnorm_wasm_run(&call); /* refused: runs as nothing */
  printf("\"one row takes any row_stride\":%d,",
         (int) rmsnorm_wasm_prepare_quantize(&call, v, out, 1, 32, SIZE_MAX, RMSNORM_WASM_Q8_0));
  memset(out, 0x5A, sizeof out);
  printf("\"blocks in a gap of strided x\":%d,",
         (int) rmsnorm_wasm_prepare_quantize(&call, v, (uint8_t*) (v + 32), 2, 32, 64,
                                             RMSNORM_WASM_Q8_0));
  printf("\"blocks across a gap onto x's second row\":%d,",
         (int) rmsnorm_wasm_prepare_quantize(&call, v, (uint8_t*) (v + 50), 2, 32, 64,
                                             RMSNORM_WASM_Q8_0));
  printf("\"dequantize y's rows around the blocks\":%d,",
         (int) rmsnorm_wasm_prepare_dequantize(&call, (uint8_t*) (v + 32), v, 2, 32, 64,
                                               RMSNORM_WASM_Q8_0));
  int kept = 1;
  for (int i = 0; i < 4 * 64; i++) kept &= v[i] == 1.0f;
  for (size_t i = 0; i < sizeof out; i++) kept &= out[i] == 0x5A;
  printf("\"end\":0},\"kept\":%d}\n", kept);
#undef Q
#undef D
}

int main(void) {
  fill();
  printf("{");
  print_hex32("x", x, ROWS * DIM);
  printf("\"dim\":%d,\"formats\":[\n", DIM);
  int status = 0;
  status |= run_format(RMSNORM_WASM_Q8_0, 0);
  status |= run_format(RMSNORM_WASM_Q8_1, 0);
  status |= run_format(RMSNORM_WASM_Q8_K, 1);
  printf("],\"errors\":");
  errors();
  printf("}\n");
  return status != 0;
}
