/*
 * A C engine's use of the C library (c/rmsnorm_wasm.h): every entry point
 * on generated inputs, and the statuses of wrong arguments. It prints one
 * JSON object: each call's inputs and outputs as hexadecimal bit patterns,
 * so that tests/c-library.test.js replays the calls through the JS API and
 * compares the bits. Built by emcc against the packed library, and natively
 * against the SIMD kernels through SIMDe (-DRMSNORM_WASM_SIMDE): both
 * must print the same text.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rmsnorm_wasm.h"

#define RANDOM_SEED 0x2545F491u
/* Enough bytes for any block row of q8_error_cases. */
#define Q8_BYTES_FOR_TEST 1168
#include "random_inputs.h"

static uint16_t narrow(float v, rmsnorm_wasm_dtype dtype) {
  uint32_t u;
  memcpy(&u, &v, sizeof u);
  if (dtype == RMSNORM_WASM_BFLOAT16) {
    return (uint16_t) ((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
  }
  /* float16 of a value in [-2, 2), truncated toward zero (any pattern will do) */
  const uint32_t a = u & 0x7FFFFFFFu;
  const uint16_t sign = (uint16_t) ((u >> 16) & 0x8000u);
  return a < 0x38800000u ? sign : (uint16_t) (sign | ((a - (112u << 23)) >> 13));
}

static size_t size_of(rmsnorm_wasm_dtype dtype) {
  return dtype == RMSNORM_WASM_FLOAT32 ? 4 : 2;
}

/* n random values of `dtype`. */
static void* random_array(size_t n, rmsnorm_wasm_dtype dtype) {
  void* p = malloc(n * size_of(dtype) + 1);
  for (size_t i = 0; i < n; i++) {
    const float v = random_value();
    if (dtype == RMSNORM_WASM_FLOAT32) {
      ((float*) p)[i] = v;
    } else {
      ((uint16_t*) p)[i] = narrow(v, dtype);
    }
  }
  return p;
}

/* An output array holding garbage (NaN patterns): the calls overwrite
 * every value of their outputs, whatever they held. */
static void* output_array(size_t bytes) {
  void* p = malloc(bytes + 1);
  memset(p, 0xFF, bytes);
  return p;
}

static void* copy_of(const void* p, size_t bytes) {
  void* q = malloc(bytes + 1);
  memcpy(q, p, bytes);
  return q;
}

static int first_field;

static void field_name(const char* name) {
  printf("%s\"%s\":", first_field ? "" : ",", name);
  first_field = 0;
}

/* A JSON array of bit patterns. */
static void print_array(const char* name, const void* p, size_t n, rmsnorm_wasm_dtype dtype) {
  field_name(name);
  printf("[");
  for (size_t i = 0; i < n; i++) {
    if (dtype == RMSNORM_WASM_FLOAT32) {
      uint32_t u;
      memcpy(&u, (const float*) p + i, sizeof u);
      printf("%s\"%08x\"", i ? "," : "", (unsigned) u);
    } else {
      printf("%s\"%04x\"", i ? "," : "", (unsigned) ((const uint16_t*) p)[i]);
    }
  }
  printf("]");
}

static void print_number(const char* name, double v) {
  field_name(name);
  printf("%.9g", v);
}

static int first_case = 1;

static void begin_case(const char* op) {
  printf("%s{\"op\":\"%s\"", first_case ? "" : ",\n", op);
  first_case = 0;
  first_field = 0;
}

static void end_case(rmsnorm_wasm_status status) {
  print_number("status", status);
  printf("}");
}

/* RMSNorm through the general entry point: the fused add when `add`, with rstd. */
static void rmsnorm_case(size_t rows, size_t dim, float eps, rmsnorm_wasm_dtype dtype,
                         rmsnorm_wasm_dtype weight_dtype, rmsnorm_wasm_cast_mode cast_mode,
                         float weight_offset, int add, int in_place) {
  const size_t n = rows * dim;
  void* x = random_array(n, dtype);
  void* w = random_array(dim, weight_dtype);
  void* residual = add ? random_array(n, dtype) : NULL;
  void* residual_in = add ? copy_of(residual, n * size_of(dtype)) : NULL;
  void* x_in = copy_of(x, n * size_of(dtype));
  void* y = in_place ? x : output_array(n * size_of(dtype));
  float* rstd = output_array(rows * sizeof(float));
  const rmsnorm_wasm_status status = rmsnorm_wasm_rmsnorm(
      x, residual, w, y, rstd, rows, dim, eps, dtype, weight_dtype, cast_mode, weight_offset);
  begin_case(add ? "addRmsNorm" : "rmsNorm");
  print_number("dim", (double) dim);
  print_number("eps", eps);
  print_number("dtype", dtype);
  print_number("weightDtype", weight_dtype);
  print_number("castMode", cast_mode);
  print_number("weightOffset", weight_offset);
  print_number("inPlace", in_place);
  print_array("x", x_in, n, dtype);
  print_array("weight", w, dim, weight_dtype);
  if (add) {
    print_array("residual", residual_in, n, dtype);
    print_array("residualOut", residual, n, dtype);
  }
  print_array("y", y, n, dtype);
  print_array("rstd", rstd, rows, RMSNORM_WASM_FLOAT32);
  end_case(status);
  free(x);
  free(w);
  free(residual);
  free(residual_in);
  free(x_in);
  if (!in_place) free(y);
  free(rstd);
}

/* The float32 shortcut, weighted and not. */
static void f32_case(size_t rows, size_t dim, float eps, int weighted) {
  float* x = random_array(rows * dim, RMSNORM_WASM_FLOAT32);
  float* w = weighted ? random_array(dim, RMSNORM_WASM_FLOAT32) : NULL;
  float* y = output_array(rows * dim * sizeof(float));
  const rmsnorm_wasm_status status = rmsnorm_wasm_f32(x, w, y, rows, dim, eps);
  begin_case("rmsNormF32");
  print_number("dim", (double) dim);
  print_number("eps", eps);
  print_array("x", x, rows * dim, RMSNORM_WASM_FLOAT32);
  if (weighted) print_array("weight", w, dim, RMSNORM_WASM_FLOAT32);
  print_array("y", y, rows * dim, RMSNORM_WASM_FLOAT32);
  end_case(status);
  free(x);
  free(w);
  free(y);
}

static void layernorm_case(size_t rows, size_t dim, float eps) {
  float* x = random_array(rows * dim, RMSNORM_WASM_FLOAT32);
  float* w = random_array(dim, RMSNORM_WASM_FLOAT32);
  float* b = random_array(dim, RMSNORM_WASM_FLOAT32);
  float* y = output_array(rows * dim * sizeof(float));
  float* mean = output_array(rows * sizeof(float));
  float* rstd = output_array(rows * sizeof(float));
  const rmsnorm_wasm_status status =
      rmsnorm_wasm_layernorm_f32(x, w, b, y, mean, rstd, rows, dim, eps);
  begin_case("layerNorm");
  print_number("dim", (double) dim);
  print_number("eps", eps);
  print_array("x", x, rows * dim, RMSNORM_WASM_FLOAT32);
  print_array("weight", w, dim, RMSNORM_WASM_FLOAT32);
  print_array("bias", b, dim, RMSNORM_WASM_FLOAT32);
  print_array("y", y, rows * dim, RMSNORM_WASM_FLOAT32);
  print_array("mean", mean, rows, RMSNORM_WASM_FLOAT32);
  print_array("rstd", rstd, rows, RMSNORM_WASM_FLOAT32);
  end_case(status);
  free(x);
  free(w);
  free(b);
  free(y);
  free(mean);
  free(rstd);
}

/* Both backward passes, from the forward's statistics; dw and db from zero. */
static void backward_case(int layernorm, size_t rows, size_t dim, float eps) {
  const size_t n = rows * dim;
  float* dy = random_array(n, RMSNORM_WASM_FLOAT32);
  float* x = random_array(n, RMSNORM_WASM_FLOAT32);
  float* w = random_array(dim, RMSNORM_WASM_FLOAT32);
  float* mean = output_array(rows * sizeof(float));
  float* rstd = output_array(rows * sizeof(float));
  float* dx = output_array(n * sizeof(float));
  float* dw = calloc(dim, sizeof(float));
  float* db = calloc(dim, sizeof(float));
  rmsnorm_wasm_status status;
  if (layernorm) {
    status = rmsnorm_wasm_layernorm_f32(x, w, NULL, NULL, mean, rstd, rows, dim, eps);
    if (status == RMSNORM_WASM_OK) {
      status = rmsnorm_wasm_layernorm_backward_f32(dy, x, w, mean, rstd, dx, dw, db, rows, dim);
    }
  } else {
    status = rmsnorm_wasm_rmsnorm_rstd(x, rstd, rows, dim, eps, RMSNORM_WASM_FLOAT32);
    if (status == RMSNORM_WASM_OK) {
      status = rmsnorm_wasm_rmsnorm_backward_f32(dy, x, w, rstd, dx, dw, rows, dim);
    }
  }
  /* dweight and dbias accumulate: the same pass over the rows in two calls,
   * from zeros, gives the bits of the one call. */
  float* dw_chunked = calloc(dim, sizeof(float));
  float* db_chunked = calloc(dim, sizeof(float));
  float* dx_chunked = output_array(n * sizeof(float));
  for (size_t first = 0; first < rows && status == RMSNORM_WASM_OK; first += 1) {
    const size_t at = first * dim;
    status = layernorm ? rmsnorm_wasm_layernorm_backward_f32(dy + at, x + at, w, mean + first,
                                                             rstd + first, dx_chunked + at,
                                                             dw_chunked, db_chunked, 1, dim)
                       : rmsnorm_wasm_rmsnorm_backward_f32(dy + at, x + at, w, rstd + first,
                                                           dx_chunked + at, dw_chunked, 1, dim);
  }
  const int chunked_same = memcmp(dw_chunked, dw, dim * sizeof(float)) == 0 &&
                           memcmp(db_chunked, db, dim * sizeof(float)) == 0 &&
                           memcmp(dx_chunked, dx, n * sizeof(float)) == 0;
  begin_case(layernorm ? "layerNormBackward" : "rmsNormBackward");
  print_number("dim", (double) dim);
  print_number("eps", eps);
  print_array("dy", dy, n, RMSNORM_WASM_FLOAT32);
  print_array("x", x, n, RMSNORM_WASM_FLOAT32);
  print_array("weight", w, dim, RMSNORM_WASM_FLOAT32);
  print_array("dx", dx, n, RMSNORM_WASM_FLOAT32);
  print_array("dweight", dw, dim, RMSNORM_WASM_FLOAT32);
  if (layernorm) print_array("dbias", db, dim, RMSNORM_WASM_FLOAT32);
  print_number("rowByRowSame", chunked_same);
  end_case(status);
  free(dw_chunked);
  free(db_chunked);
  free(dx_chunked);
  free(dy);
  free(x);
  free(w);
  free(mean);
  free(rstd);
  free(dx);
  free(dw);
  free(db);
}

/* The converters: every 16-bit pattern widened, and float32 values with
 * every class (zeros, subnormals of both formats, ties, overflow, Inf, NaN
 * of both signs and any payload) and random bits narrowed, each for both
 * formats; printed for the JS side to check against the reference's
 * conversions. */
static void conversion_case(void) {
  const size_t halves = 0x10000;
  uint16_t* patterns = malloc(halves * sizeof *patterns);
  float* widened = output_array(halves * sizeof(float));
  for (size_t h = 0; h < halves; h++) patterns[h] = (uint16_t) h;
  static const uint32_t specials[] = {
      0x00000000, 0x80000000, 0x00000001, 0x807FFFFF, 0x00800000, 0x33800000, 0x33000000,
      0x33000001, 0x387FE000, 0x387FF000, 0x38800000, 0x3F808000, 0x3F818000, 0x3F800001,
      0x477FE000, 0x477FEFFF, 0x477FF000, 0x7F7F8000, 0x7F7F7FFF, 0x7F7FFFFF, 0x7F800000,
      0xFF800000, 0x7FC00000, 0xFFC00000, 0x7F800001, 0xFFBFFFFF, 0x7FA00000, 0x3F800000};
  const size_t specials_count = sizeof specials / sizeof *specials;
  const size_t n = specials_count + 3000;
  float* floats = malloc(n * sizeof *floats);
  for (size_t i = 0; i < n; i++) {
    const uint32_t bits = i < specials_count ? specials[i] : next_random();
    memcpy(&floats[i], &bits, sizeof bits);
  }
  begin_case("convert");
  print_array("floats", floats, n, RMSNORM_WASM_FLOAT32);
  rmsnorm_wasm_status status = RMSNORM_WASM_OK;
  const rmsnorm_wasm_dtype dtypes[] = {RMSNORM_WASM_BFLOAT16, RMSNORM_WASM_FLOAT16};
  const char* const widened_names[] = {"widenedBfloat16", "widenedFloat16"};
  const char* const narrowed_names[] = {"narrowedBfloat16", "narrowedFloat16"};
  for (int d = 0; d < 2; d++) {
    uint16_t* narrowed = output_array(n * sizeof *narrowed);
    status |= rmsnorm_wasm_to_f32(patterns, widened, halves, dtypes[d]);
    status |= rmsnorm_wasm_from_f32(floats, narrowed, n, dtypes[d]);
    print_array(widened_names[d], widened, halves, RMSNORM_WASM_FLOAT32);
    print_array(narrowed_names[d], narrowed, n, dtypes[d]);
    free(narrowed);
  }
  end_case(status);
  free(patterns);
  free(widened);
  free(floats);
}

/* An address `below` bytes under the top of the address space (2^32 in
 * wasm32): arrays the checks must refuse there are never touched, so these
 * pointers need no memory behind them, and the native build refuses them
 * the same way. */
static void* near_top(uintptr_t below) {
  return (void*) (UINTPTR_MAX - (below - 1));
}

/* Wrong arguments: each call's status, and that y kept its bytes. */
static void error_cases(void) {
  float x[64] = {1, 2, 3, 4, 5, 6, 7, 8};
  float y[8] = {0};
  float rstd[2];
  /* rows of 4 values 8 apart in `rows8`: room for other arrays in the gaps */
  float rows8[32] = {1, 2, 3, 4, 0, 0, 0, 0, 5, 6, 7, 8};
  float* gap = rows8 + 4; /* the first gap; the next row starts at rows8 + 8 */
  rmsnorm_wasm_call c;
  /* rows whose 16-bit x fits size_t but whose rstd (4 bytes a row) does not */
  const size_t rows_rstd_too_big = SIZE_MAX / 4 + 1;
  const float sentinel = 42.0f;
  for (int i = 0; i < 8; i++) y[i] = sentinel;
  const struct {
    const char* what;
    rmsnorm_wasm_status status;
  } calls[] = {
      {"dim 0", rmsnorm_wasm_rmsnorm(x, NULL, NULL, y, NULL, 2, 0, 1e-6f, RMSNORM_WASM_FLOAT32,
                                     RMSNORM_WASM_FLOAT32, RMSNORM_WASM_CAST_LLAMA, 0.0f)},
      {"size overflow",
       rmsnorm_wasm_rmsnorm(x, NULL, NULL, y, NULL, SIZE_MAX / 2, 4, 1e-6f, RMSNORM_WASM_FLOAT32,
                            RMSNORM_WASM_FLOAT32, RMSNORM_WASM_CAST_LLAMA, 0.0f)},
      {"eps -1", rmsnorm_wasm_rmsnorm(x, NULL, NULL, y, NULL, 2, 4, -1.0f, RMSNORM_WASM_FLOAT32,
                                      RMSNORM_WASM_FLOAT32, RMSNORM_WASM_CAST_LLAMA, 0.0f)},
      {"eps NaN", rmsnorm_wasm_rmsnorm(x, NULL, NULL, y, NULL, 2, 4, NAN, RMSNORM_WASM_FLOAT32,
                                       RMSNORM_WASM_FLOAT32, RMSNORM_WASM_CAST_LLAMA, 0.0f)},
      {"eps Inf", rmsnorm_wasm_rmsnorm(x, NULL, NULL, y, NULL, 2, 4, INFINITY, RMSNORM_WASM_FLOAT32,
                                       RMSNORM_WASM_FLOAT32, RMSNORM_WASM_CAST_LLAMA, 0.0f)},
      {"x NULL", rmsnorm_wasm_rmsnorm(NULL, NULL, NULL, y, NULL, 2, 4, 1e-6f, RMSNORM_WASM_FLOAT32,
                                      RMSNORM_WASM_FLOAT32, RMSNORM_WASM_CAST_LLAMA, 0.0f)},
      {"dtype 3", rmsnorm_wasm_rmsnorm(x, NULL, NULL, y, NULL, 2, 4, 1e-6f, (rmsnorm_wasm_dtype) 3,
                                       RMSNORM_WASM_FLOAT32, RMSNORM_WASM_CAST_LLAMA, 0.0f)},
      {"weight offset Inf",
       rmsnorm_wasm_rmsnorm(x, NULL, x, y, NULL, 2, 4, 1e-6f, RMSNORM_WASM_FLOAT32,
                            RMSNORM_WASM_FLOAT32, RMSNORM_WASM_CAST_LLAMA, INFINITY)},
      {"y overlaps x",
       rmsnorm_wasm_rmsnorm(x, NULL, NULL, x + 1, NULL, 1, 4, 1e-6f, RMSNORM_WASM_FLOAT32,
                            RMSNORM_WASM_FLOAT32, RMSNORM_WASM_CAST_LLAMA, 0.0f)},
      {"y overlaps the weight",
       rmsnorm_wasm_rmsnorm(x, NULL, y + 2, y, NULL, 2, 4, 1e-6f, RMSNORM_WASM_FLOAT32,
                            RMSNORM_WASM_FLOAT32, RMSNORM_WASM_CAST_LLAMA, 0.0f)},
      {"rstd overlaps x",
       rmsnorm_wasm_rmsnorm(x, NULL, NULL, y, x + 6, 2, 4, 1e-6f, RMSNORM_WASM_FLOAT32,
                            RMSNORM_WASM_FLOAT32, RMSNORM_WASM_CAST_LLAMA, 0.0f)},
      {"layerNorm mean NULL is fine, dim 0 is not",
       rmsnorm_wasm_layernorm_f32(x, NULL, NULL, y, NULL, rstd, 2, 0, 1e-5f)},
      {"backward dweight without weight",
       rmsnorm_wasm_rmsnorm_backward_f32(x, x, NULL, rstd, y, y, 2, 4)},
      {"backward dx overlaps x",
       rmsnorm_wasm_rmsnorm_backward_f32(x, x, NULL, rstd, x, NULL, 2, 4)},
      {"rstd bytes overflow size_t",
       rmsnorm_wasm_rmsnorm(x, NULL, NULL, x, rstd, rows_rstd_too_big, 1, 1e-6f,
                            RMSNORM_WASM_BFLOAT16, RMSNORM_WASM_FLOAT32, RMSNORM_WASM_CAST_LLAMA,
                            0.0f)},
      {"rmsnorm_rstd bytes overflow size_t",
       rmsnorm_wasm_rmsnorm_rstd(x, rstd, rows_rstd_too_big, 1, 1e-6f, RMSNORM_WASM_BFLOAT16)},
      /* y ends exactly at the top: no range error, but rstd's last 64 bytes */
      {"y and rstd overlap at the top of memory",
       rmsnorm_wasm_rmsnorm(x, NULL, NULL, near_top(256), near_top(64), 16, 4, 1e-6f,
                            RMSNORM_WASM_FLOAT32, RMSNORM_WASM_FLOAT32, RMSNORM_WASM_CAST_LLAMA,
                            0.0f)},
      {"y runs past the top",
       rmsnorm_wasm_rmsnorm(x, NULL, NULL, near_top(128), NULL, 16, 4, 1e-6f, RMSNORM_WASM_FLOAT32,
                            RMSNORM_WASM_FLOAT32, RMSNORM_WASM_CAST_LLAMA, 0.0f)},
      {"weight runs past the top",
       rmsnorm_wasm_rmsnorm(x, NULL, near_top(8), y, NULL, 2, 4, 1e-6f, RMSNORM_WASM_BFLOAT16,
                            RMSNORM_WASM_FLOAT32, RMSNORM_WASM_CAST_LLAMA, 0.0f)},
      {"layerNorm y and mean overlap at the top of memory",
       rmsnorm_wasm_layernorm_f32(x, NULL, NULL, near_top(256), near_top(64), NULL, 16, 4, 1e-5f)},
      {"layerNorm rstd runs past the top",
       rmsnorm_wasm_layernorm_f32(x, NULL, NULL, y, NULL, near_top(4), 2, 4, 1e-5f)},
      {"backward dx runs past the top",
       rmsnorm_wasm_rmsnorm_backward_f32(x, x + 8, NULL, rstd, near_top(16), NULL, 2, 4)},
      {"backward dweight and dbias overlap at the top of memory",
       rmsnorm_wasm_layernorm_backward_f32(x, x + 8, x + 16, rstd, rstd, y, near_top(24),
                                           near_top(16), 2, 4)},
      {"rmsnorm_wasm_f32 eps -1", rmsnorm_wasm_f32(x, NULL, y, 2, 4, -1.0f)},
      {"rmsnorm_wasm_f32 dim 0", rmsnorm_wasm_f32(x, NULL, y, 2, 0, 1e-6f)},
      {"rows 0 touches nothing",
       rmsnorm_wasm_rmsnorm(NULL, NULL, NULL, NULL, NULL, 0, 4, 1e-6f, RMSNORM_WASM_FLOAT32,
                            RMSNORM_WASM_FLOAT32, RMSNORM_WASM_CAST_LLAMA, 0.0f)},
      {"to_f32 dtype float32",
       rmsnorm_wasm_to_f32((const uint16_t*) x, y, 4, RMSNORM_WASM_FLOAT32)},
      {"from_f32 dtype 3", rmsnorm_wasm_from_f32(x, (uint16_t*) y, 4, (rmsnorm_wasm_dtype) 3)},
      {"to_f32 n 0 touches nothing", rmsnorm_wasm_to_f32(NULL, NULL, 0, RMSNORM_WASM_FLOAT16)},
      {"from_f32 dst NULL", rmsnorm_wasm_from_f32(x, NULL, 4, RMSNORM_WASM_BFLOAT16)},
      {"to_f32 dst bytes overflow size_t",
       rmsnorm_wasm_to_f32((const uint16_t*) x, y, SIZE_MAX / 4 + 1, RMSNORM_WASM_BFLOAT16)},
      {"from_f32 dst runs past the top",
       rmsnorm_wasm_from_f32(x, near_top(6), 4, RMSNORM_WASM_FLOAT16)},
      {"to_f32 dst overlaps src",
       rmsnorm_wasm_to_f32((const uint16_t*) (y + 1), y, 4, RMSNORM_WASM_BFLOAT16)},
      {"from_f32 dst overlaps src",
       rmsnorm_wasm_from_f32(y, (uint16_t*) (y + 3), 4, RMSNORM_WASM_FLOAT16)},
      {"row_stride below dim", rmsnorm_wasm_prepare_rmsnorm(
                                   &c, x, NULL, NULL, y, NULL, 2, 4, 3, 1e-6f, RMSNORM_WASM_FLOAT32,
                                   RMSNORM_WASM_FLOAT32, RMSNORM_WASM_CAST_LLAMA, 0.0f)},
      {"row_stride below dim, rows 0",
       rmsnorm_wasm_prepare_layernorm_f32(&c, NULL, NULL, NULL, NULL, NULL, NULL, 0, 4, 0, 1e-5f)},
      {"backward row_stride below dim",
       rmsnorm_wasm_prepare_rmsnorm_backward_f32(&c, x, x, NULL, rstd, y, NULL, 2, 4, 2)},
      {"rows row_stride apart overflow size_t",
       rmsnorm_wasm_prepare_rmsnorm(&c, x, NULL, NULL, y, NULL, 3, 4, SIZE_MAX / 8, 1e-6f,
                                    RMSNORM_WASM_FLOAT32, RMSNORM_WASM_FLOAT32,
                                    RMSNORM_WASM_CAST_LLAMA, 0.0f)},
      {"16-bit rows row_stride apart overflow size_t",
       rmsnorm_wasm_prepare_rmsnorm_rstd(&c, x, rstd, 2, 1, SIZE_MAX / 2, 1e-6f,
                                         RMSNORM_WASM_BFLOAT16)},
      {"strided rows run past the top",
       rmsnorm_wasm_prepare_rmsnorm(&c, x, NULL, NULL, near_top(100), NULL, 2, 4, 24, 1e-6f,
                                    RMSNORM_WASM_FLOAT32, RMSNORM_WASM_FLOAT32,
                                    RMSNORM_WASM_CAST_LLAMA, 0.0f)},
      {"y in the gaps of x is fine",
       rmsnorm_wasm_prepare_rmsnorm(&c, rows8, NULL, NULL, gap, NULL, 2, 4, 8, 1e-6f,
                                    RMSNORM_WASM_FLOAT32, RMSNORM_WASM_FLOAT32,
                                    RMSNORM_WASM_CAST_LLAMA, 0.0f)},
      {"y on x exactly, strided, is fine",
       rmsnorm_wasm_prepare_rmsnorm(&c, rows8, NULL, NULL, rows8, NULL, 2, 4, 8, 1e-6f,
                                    RMSNORM_WASM_FLOAT32, RMSNORM_WASM_FLOAT32,
                                    RMSNORM_WASM_CAST_LLAMA, 0.0f)},
      {"y half a row into x",
       rmsnorm_wasm_prepare_rmsnorm(&c, rows8, NULL, NULL, rows8 + 2, NULL, 2, 4, 8, 1e-6f,
                                    RMSNORM_WASM_FLOAT32, RMSNORM_WASM_FLOAT32,
                                    RMSNORM_WASM_CAST_LLAMA, 0.0f)},
      {"y's first row on x's second through the stride",
       rmsnorm_wasm_prepare_rmsnorm(&c, rows8, NULL, NULL, rows8 + 6, NULL, 2, 4, 8, 1e-6f,
                                    RMSNORM_WASM_FLOAT32, RMSNORM_WASM_FLOAT32,
                                    RMSNORM_WASM_CAST_LLAMA, 0.0f)},
      {"residual in the gaps of x, y after both, is fine",
       rmsnorm_wasm_prepare_rmsnorm(&c, rows8, gap, NULL, rows8 + 16, NULL, 2, 4, 8, 1e-6f,
                                    RMSNORM_WASM_FLOAT32, RMSNORM_WASM_FLOAT32,
                                    RMSNORM_WASM_CAST_LLAMA, 0.0f)},
      {"residual on x through the stride",
       rmsnorm_wasm_prepare_rmsnorm(&c, rows8, rows8 + 7, NULL, y, NULL, 2, 4, 8, 1e-6f,
                                    RMSNORM_WASM_FLOAT32, RMSNORM_WASM_FLOAT32,
                                    RMSNORM_WASM_CAST_LLAMA, 0.0f)},
      {"rstd in a gap of y is fine",
       rmsnorm_wasm_prepare_rmsnorm(&c, x, NULL, NULL, rows8, gap, 2, 4, 8, 1e-6f,
                                    RMSNORM_WASM_FLOAT32, RMSNORM_WASM_FLOAT32,
                                    RMSNORM_WASM_CAST_LLAMA, 0.0f)},
      {"rstd across a gap onto y's second row",
       rmsnorm_wasm_prepare_rmsnorm(&c, x, NULL, NULL, rows8, rows8 + 7, 2, 4, 8, 1e-6f,
                                    RMSNORM_WASM_FLOAT32, RMSNORM_WASM_FLOAT32,
                                    RMSNORM_WASM_CAST_LLAMA, 0.0f)},
      {"weight in a gap of y is fine",
       rmsnorm_wasm_prepare_rmsnorm(&c, x, NULL, gap, rows8, NULL, 2, 4, 8, 1e-6f,
                                    RMSNORM_WASM_FLOAT32, RMSNORM_WASM_FLOAT32,
                                    RMSNORM_WASM_CAST_LLAMA, 0.0f)},
      {"weight across a gap onto y's second row",
       rmsnorm_wasm_prepare_rmsnorm(&c, x, NULL, rows8 + 5, rows8, NULL, 2, 4, 8, 1e-6f,
                                    RMSNORM_WASM_FLOAT32, RMSNORM_WASM_FLOAT32,
                                    RMSNORM_WASM_CAST_LLAMA, 0.0f)},
      {"layerNorm mean in a gap of y is fine",
       rmsnorm_wasm_prepare_layernorm_f32(&c, x, NULL, NULL, rows8, gap, NULL, 2, 4, 8, 1e-5f)},
      {"backward dx in the gaps of dy and x is fine",
       rmsnorm_wasm_prepare_rmsnorm_backward_f32(&c, rows8, rows8 + 16, NULL, rstd, gap, NULL, 2, 4,
                                                 8)},
      {"backward dx on x through the stride",
       rmsnorm_wasm_prepare_rmsnorm_backward_f32(&c, rows8, rows8 + 12, NULL, rstd, gap, NULL, 2, 4,
                                                 8)},
      {"backward dweight in a gap of dx is fine",
       rmsnorm_wasm_prepare_rmsnorm_backward_f32(&c, x, x + 16, x + 32, rstd, rows8, gap, 2, 4, 8)},
  };
  /* Every call above was rejected: none wrote y. */
  int kept = 1;
  for (int i = 0; i < 8; i++) kept &= y[i] == sentinel;
  begin_case("errors");
  field_name("statuses");
  printf("{");
  for (size_t i = 0; i < sizeof calls / sizeof *calls; i++) {
    printf("%s\"%s\":[%d,\"%s\"]", i ? "," : "", calls[i].what, calls[i].status,
           rmsnorm_wasm_status_string(calls[i].status));
  }
  printf("}");
  print_number("untouched", kept);
  end_case(RMSNORM_WASM_OK);
}

/* The status two arrays near the top of the address space must get, from
 * distances below the top, where nothing wraps: an array whose first byte
 * is `below` bytes under the top and which holds `bytes` bytes occupies the
 * distances [below - bytes + 1, below]. 0 (OK) when the call is valid. */
static rmsnorm_wasm_status top_model(uintptr_t a_below, uintptr_t a_bytes, uintptr_t b_below,
                                     uintptr_t b_bytes) {
  if (a_bytes > a_below || b_bytes > b_below) {
    return RMSNORM_WASM_ERROR_RANGE;
  }
  const uintptr_t a_near = a_below - a_bytes + 1, b_near = b_below - b_bytes + 1;
  const uintptr_t near = a_near > b_near ? a_near : b_near;
  const uintptr_t far = a_below < b_below ? a_below : b_below;
  return near <= far ? RMSNORM_WASM_ERROR_OVERLAP : RMSNORM_WASM_OK;
}

/* Two outputs of each entry point at every placement of a grid near the top
 * of the address space: every placement the model refuses must get its
 * status (the valid ones are not run: nothing is there). Prints how many
 * placements were refused and how many got another status. */
static void top_of_memory_cases(void) {
  float x[64] = {0};
  float stats[16] = {0};
  unsigned refused = 0, wrong = 0;
  for (int op = 0; op < 4; op++) {
    for (uintptr_t a = 4; a <= 400; a += 4) {
      for (uintptr_t b = 4; b <= 400; b += 4) {
        /* op 0: rmsnorm's y (16 rows of 4) and rstd (16 floats); 1:
         * layernorm's y and mean; 2: rmsnorm_backward's dx (1 row of 16) and
         * dweight (16); 3: layernorm_backward's dweight and dbias (16 each). */
        const uintptr_t a_bytes = op <= 1 ? 256 : 64, b_bytes = 64;
        const rmsnorm_wasm_status expected = top_model(a, a_bytes, b, b_bytes);
        if (expected == RMSNORM_WASM_OK) {
          continue;
        }
        rmsnorm_wasm_status status;
        switch (op) {
          case 0:
            status = rmsnorm_wasm_rmsnorm(x, NULL, NULL, near_top(a), near_top(b), 16, 4, 1e-6f,
                                          RMSNORM_WASM_FLOAT32, RMSNORM_WASM_FLOAT32,
                                          RMSNORM_WASM_CAST_LLAMA, 0.0f);
            break;
          case 1:
            status = rmsnorm_wasm_layernorm_f32(x, NULL, NULL, near_top(a), near_top(b), NULL, 16,
                                                4, 1e-5f);
            break;
          case 2:
            status = rmsnorm_wasm_rmsnorm_backward_f32(x, x + 16, x + 32, stats, near_top(a),
                                                       near_top(b), 1, 16);
            break;
          default:
            status = rmsnorm_wasm_layernorm_backward_f32(x, x + 16, x + 32, stats, stats, x + 48,
                                                         near_top(a), near_top(b), 1, 16);
            break;
        }
        refused++;
        wrong += status != expected;
      }
    }
  }
  begin_case("topOfMemory");
  print_number("refused", refused);
  print_number("wrong", wrong);
  end_case(RMSNORM_WASM_OK);
}

/* ---- row strides and prepared calls -------------------------------------- */

#define GAP_BYTE 0xA5

/* A buffer holding the per-row arrays of a call: `count` arrays' rows
 * `stride` elements apart, array j's row r at element r * stride + j *
 * offset, every other byte GAP_BYTE. */
struct rows_buffer {
  unsigned char* bytes;
  size_t total, rows, dim, stride, offset, size, count;
};

static struct rows_buffer rows_buffer(size_t count, size_t rows, size_t dim, size_t stride,
                                      size_t offset, size_t size) {
  struct rows_buffer b = {NULL, 0, rows, dim, stride, offset, size, count};
  b.total = ((rows - 1) * stride + (count - 1) * offset + dim) * size;
  b.bytes = malloc(b.total + 1);
  memset(b.bytes, GAP_BYTE, b.total);
  return b;
}

static void* array_in(const struct rows_buffer* b, size_t j) {
  return b->bytes + j * b->offset * b->size;
}

/* Packed rows into array j, or array j's rows packed. */
static void scatter(const struct rows_buffer* b, size_t j, const void* packed) {
  for (size_t r = 0; r < b->rows; r++) {
    memcpy((unsigned char*) array_in(b, j) + r * b->stride * b->size,
           (const unsigned char*) packed + r * b->dim * b->size, b->dim * b->size);
  }
}

static void* gather(const struct rows_buffer* b, size_t j) {
  unsigned char* packed = malloc(b->rows * b->dim * b->size + 1);
  for (size_t r = 0; r < b->rows; r++) {
    memcpy(packed + r * b->dim * b->size,
           (const unsigned char*) array_in(b, j) + r * b->stride * b->size, b->dim * b->size);
  }
  return packed;
}

/* Whether every byte that is no array's value still holds GAP_BYTE. */
static int gaps_untouched(const struct rows_buffer* b) {
  for (size_t at = 0; at < b->total; at++) {
    const size_t element = at / b->size;
    int value = 0;
    for (size_t j = 0; j < b->count && !value; j++) {
      const size_t from = j * b->offset;
      if (element < from) continue;
      const size_t r = (element - from) / b->stride, col = (element - from) % b->stride;
      value = r < b->rows && col < b->dim;
    }
    if (!value && b->bytes[at] != GAP_BYTE) return 0;
  }
  return 1;
}

/* RMSNorm (or the fused add) with rows row_stride apart, prepared and run:
 * x, the residual and y each in a buffer of their own, y == x (in place),
 * or all in one buffer, the rows of each in the gaps of the others'
 * (`interleaved`). Printed packed, so that the JS API replays it as any
 * rmsNorm call; the gaps must be untouched. */
enum { SEPARATE, IN_PLACE, INTERLEAVED };
static void strided_rmsnorm_case(size_t rows, size_t dim, size_t row_stride, float eps,
                                 rmsnorm_wasm_dtype dtype, rmsnorm_wasm_dtype weight_dtype,
                                 rmsnorm_wasm_cast_mode cast_mode, float weight_offset, int add,
                                 int layout) {
  const size_t n = rows * dim, size = size_of(dtype);
  void* x_in = random_array(n, dtype);
  void* residual_in = add ? random_array(n, dtype) : NULL;
  void* w = random_array(dim, weight_dtype);
  const size_t count = layout == INTERLEAVED ? 2 + (size_t) add : 1;
  struct rows_buffer one = rows_buffer(count, rows, dim, row_stride, dim, size);
  struct rows_buffer ys = one, residuals = one;
  int gaps = 1;
  if (layout == SEPARATE) ys = rows_buffer(1, rows, dim, row_stride, 0, size);
  if (add && layout != INTERLEAVED) residuals = rows_buffer(1, rows, dim, row_stride, 0, size);
  const size_t y_slot = layout == INTERLEAVED ? 1 : 0,
               residual_slot = layout == INTERLEAVED ? 2 : 0;
  scatter(&one, 0, x_in);
  if (add) scatter(&residuals, residual_slot, residual_in);
  void* y = array_in(&ys, y_slot);
  void* residual = add ? array_in(&residuals, residual_slot) : NULL;
  float* rstd = output_array(rows * sizeof(float));
  rmsnorm_wasm_call call;
  const rmsnorm_wasm_status status =
      rmsnorm_wasm_prepare_rmsnorm(&call, array_in(&one, 0), residual, w, y, rstd, rows, dim,
                                   row_stride, eps, dtype, weight_dtype, cast_mode, weight_offset);
  rmsnorm_wasm_run(&call);
  void* y_out = gather(&ys, y_slot);
  void* residual_out = add ? gather(&residuals, residual_slot) : NULL;
  void* x_out = gather(&one, 0);
  const int x_kept = layout == IN_PLACE || memcmp(x_out, x_in, n * size) == 0;
  free(x_out);
  gaps &= gaps_untouched(&one);
  if (layout == SEPARATE) gaps &= gaps_untouched(&ys);
  if (add && layout != INTERLEAVED) gaps &= gaps_untouched(&residuals);
  begin_case(add ? "addRmsNorm" : "rmsNorm");
  print_number("dim", (double) dim);
  print_number("rowStride", (double) row_stride);
  print_number("layout", layout);
  print_number("eps", eps);
  print_number("dtype", dtype);
  print_number("weightDtype", weight_dtype);
  print_number("castMode", cast_mode);
  print_number("weightOffset", weight_offset);
  print_array("x", x_in, n, dtype);
  print_array("weight", w, dim, weight_dtype);
  if (add) {
    print_array("residual", residual_in, n, dtype);
    print_array("residualOut", residual_out, n, dtype);
  }
  print_array("y", y_out, n, dtype);
  print_array("rstd", rstd, rows, RMSNORM_WASM_FLOAT32);
  print_number("gapsUntouched", gaps);
  print_number("xKept", x_kept);
  end_case(status);
  if (layout == SEPARATE) free(ys.bytes);
  if (add && layout != INTERLEAVED) free(residuals.bytes);
  free(one.bytes);
  free(x_in);
  free(residual_in);
  free(w);
  free(rstd);
  free(y_out);
  free(residual_out);
}

/* RMSNorm to ggml blocks (rmsnorm_wasm_rmsnorm_q8 one-shot, or prepared
 * with x's and the residual's rows row_stride apart): the blocks printed as
 * bytes, with the packed inputs. */
static void q8_case(size_t rows, size_t dim, size_t row_stride, rmsnorm_wasm_dtype dtype,
                    rmsnorm_wasm_dtype weight_dtype, rmsnorm_wasm_cast_mode cast_mode,
                    float weight_offset, int add, rmsnorm_wasm_block_format format) {
  const size_t n = rows * dim, size = size_of(dtype);
  void* x_in = random_array(n, dtype);
  void* residual_in = add ? random_array(n, dtype) : NULL;
  void* w = random_array(dim, weight_dtype);
  struct rows_buffer xs = rows_buffer(1, rows, dim, row_stride, dim, size);
  struct rows_buffer residuals = rows_buffer(1, rows, dim, row_stride, dim, size);
  scatter(&xs, 0, x_in);
  if (add) scatter(&residuals, 0, residual_in);
  const size_t bytes = rows * rmsnorm_wasm_block_row_bytes(format, dim);
  uint8_t* out = output_array(bytes);
  float* rstd = output_array(rows * sizeof(float));
  void* residual = add ? array_in(&residuals, 0) : NULL;
  rmsnorm_wasm_status status;
  if (row_stride == dim) {
    status = rmsnorm_wasm_rmsnorm_q8(array_in(&xs, 0), residual, w, out, rstd, rows, dim, 1e-6f,
                                     dtype, weight_dtype, cast_mode, weight_offset, format);
  } else {
    rmsnorm_wasm_call call;
    status = rmsnorm_wasm_prepare_rmsnorm_q8(&call, array_in(&xs, 0), residual, w, out, rstd, rows,
                                             dim, row_stride, 1e-6f, dtype, weight_dtype, cast_mode,
                                             weight_offset, format);
    rmsnorm_wasm_run(&call);
  }
  void* residual_out = add ? gather(&residuals, 0) : NULL;
  begin_case("rmsNormQ8");
  print_number("format", format);
  print_number("add", add);
  print_number("dim", (double) dim);
  print_number("rowStride", (double) row_stride);
  print_number("dtype", dtype);
  print_number("weightDtype", weight_dtype);
  print_number("castMode", cast_mode);
  print_number("weightOffset", weight_offset);
  print_number("gapsUntouched", gaps_untouched(&xs) && (!add || gaps_untouched(&residuals)));
  print_array("x", x_in, n, dtype);
  print_array("weight", w, dim, weight_dtype);
  if (add) {
    print_array("residual", residual_in, n, dtype);
    print_array("residualOut", residual_out, n, dtype);
  }
  field_name("blocks");
  printf("\"");
  for (size_t i = 0; i < bytes; i++) printf("%02x", out[i]);
  printf("\"");
  print_array("rstd", rstd, rows, RMSNORM_WASM_FLOAT32);
  end_case(status);
  free(xs.bytes);
  free(residuals.bytes);
  free(x_in);
  free(residual_in);
  free(residual_out);
  free(w);
  free(out);
  free(rstd);
}

/* The block output's own refusals, each with every array kept. */
static void q8_error_cases(void) {
  float* x = random_array(128, RMSNORM_WASM_FLOAT32);
  float* x_in = copy_of(x, 128 * sizeof(float));
  uint8_t* out = output_array(4 * Q8_BYTES_FOR_TEST);
  uint8_t* out_in = copy_of(out, 4 * Q8_BYTES_FOR_TEST);
  rmsnorm_wasm_call call;
  const rmsnorm_wasm_status not_a_multiple = rmsnorm_wasm_rmsnorm_q8(
      x, NULL, NULL, out, NULL, 2, 48, 1e-6f, RMSNORM_WASM_FLOAT32, RMSNORM_WASM_FLOAT32,
      RMSNORM_WASM_CAST_LLAMA, 0.0f, RMSNORM_WASM_Q8_0);
  const rmsnorm_wasm_status k_not_a_multiple = rmsnorm_wasm_rmsnorm_q8(
      x, NULL, NULL, out, NULL, 1, 128, 1e-6f, RMSNORM_WASM_FLOAT32, RMSNORM_WASM_FLOAT32,
      RMSNORM_WASM_CAST_LLAMA, 0.0f, RMSNORM_WASM_Q8_K);
  const rmsnorm_wasm_status unknown = rmsnorm_wasm_rmsnorm_q8(
      x, NULL, NULL, out, NULL, 2, 64, 1e-6f, RMSNORM_WASM_FLOAT32, RMSNORM_WASM_FLOAT32,
      RMSNORM_WASM_CAST_LLAMA, 0.0f, (rmsnorm_wasm_block_format) 4);
  const rmsnorm_wasm_status over_x = rmsnorm_wasm_rmsnorm_q8(
      x, NULL, NULL, (uint8_t*) x + 8, NULL, 2, 64, 1e-6f, RMSNORM_WASM_FLOAT32,
      RMSNORM_WASM_FLOAT32, RMSNORM_WASM_CAST_LLAMA, 0.0f, RMSNORM_WASM_Q8_0);
  const rmsnorm_wasm_status in_place = rmsnorm_wasm_rmsnorm_q8(
      x, NULL, NULL, x, NULL, 2, 64, 1e-6f, RMSNORM_WASM_FLOAT32, RMSNORM_WASM_FLOAT32,
      RMSNORM_WASM_CAST_LLAMA, 0.0f, RMSNORM_WASM_Q8_1);
  const rmsnorm_wasm_status null_out = rmsnorm_wasm_prepare_rmsnorm_q8(
      &call, x, NULL, NULL, NULL, NULL, 2, 64, 64, 1e-6f, RMSNORM_WASM_FLOAT32,
      RMSNORM_WASM_FLOAT32, RMSNORM_WASM_CAST_LLAMA, 0.0f, RMSNORM_WASM_Q8_0);
  rmsnorm_wasm_run(&call); /* a refused prepare runs as nothing */
  begin_case("q8Errors");
  print_number("notAMultiple", not_a_multiple);
  print_number("kNotAMultiple", k_not_a_multiple);
  print_number("unknownFormat", unknown);
  print_number("overX", over_x);
  print_number("inPlace", in_place);
  print_number("nullOut", null_out);
  print_number("rowBytes", (double) rmsnorm_wasm_block_row_bytes(RMSNORM_WASM_Q8_K, 512));
  print_number("rowBytesNotAMultiple",
               (double) rmsnorm_wasm_block_row_bytes(RMSNORM_WASM_Q8_0, 48));
  print_number("kept", memcmp(x, x_in, 128 * sizeof(float)) == 0 &&
                           memcmp(out, out_in, 4 * Q8_BYTES_FOR_TEST) == 0);
  end_case(RMSNORM_WASM_OK);
  free(x);
  free(x_in);
  free(out);
  free(out_in);
}

/* LayerNorm with y's rows in the gaps of x's, then both backward passes with
 * dx == dy in place, all rows row_stride apart. */
static void strided_layernorm_case(size_t rows, size_t dim, size_t row_stride, float eps) {
  const size_t n = rows * dim;
  float* x_in = random_array(n, RMSNORM_WASM_FLOAT32);
  float* w = random_array(dim, RMSNORM_WASM_FLOAT32);
  float* b = random_array(dim, RMSNORM_WASM_FLOAT32);
  struct rows_buffer xy = rows_buffer(2, rows, dim, row_stride, dim, sizeof(float));
  scatter(&xy, 0, x_in);
  float* mean = output_array(rows * sizeof(float));
  float* rstd = output_array(rows * sizeof(float));
  rmsnorm_wasm_call call;
  const rmsnorm_wasm_status status = rmsnorm_wasm_prepare_layernorm_f32(
      &call, array_in(&xy, 0), w, b, array_in(&xy, 1), mean, rstd, rows, dim, row_stride, eps);
  rmsnorm_wasm_run(&call);
  float* y = gather(&xy, 1);
  begin_case("layerNorm");
  print_number("dim", (double) dim);
  print_number("rowStride", (double) row_stride);
  print_number("eps", eps);
  print_array("x", x_in, n, RMSNORM_WASM_FLOAT32);
  print_array("weight", w, dim, RMSNORM_WASM_FLOAT32);
  print_array("bias", b, dim, RMSNORM_WASM_FLOAT32);
  print_array("y", y, n, RMSNORM_WASM_FLOAT32);
  print_array("mean", mean, rows, RMSNORM_WASM_FLOAT32);
  print_array("rstd", rstd, rows, RMSNORM_WASM_FLOAT32);
  print_number("gapsUntouched", gaps_untouched(&xy));
  end_case(status);
  free(xy.bytes);
  free(x_in);
  free(w);
  free(b);
  free(mean);
  free(rstd);
  free(y);
}

static void strided_backward_case(int layernorm, size_t rows, size_t dim, size_t row_stride,
                                  float eps) {
  const size_t n = rows * dim;
  float* dy_in = random_array(n, RMSNORM_WASM_FLOAT32);
  float* x_in = random_array(n, RMSNORM_WASM_FLOAT32);
  float* w = random_array(dim, RMSNORM_WASM_FLOAT32);
  /* dy (then dx, in place) and x interleaved in one buffer */
  struct rows_buffer both = rows_buffer(2, rows, dim, row_stride, dim, sizeof(float));
  scatter(&both, 0, dy_in);
  scatter(&both, 1, x_in);
  float* dy = array_in(&both, 0);
  const float* x = array_in(&both, 1);
  float* mean = output_array(rows * sizeof(float));
  float* rstd = output_array(rows * sizeof(float));
  float* dw = calloc(dim, sizeof(float));
  float* db = calloc(dim, sizeof(float));
  rmsnorm_wasm_call forward, backward;
  rmsnorm_wasm_status status =
      layernorm ? rmsnorm_wasm_prepare_layernorm_f32(&forward, x, NULL, NULL, NULL, mean, rstd,
                                                     rows, dim, row_stride, eps)
                : rmsnorm_wasm_prepare_rmsnorm_rstd(&forward, x, rstd, rows, dim, row_stride, eps,
                                                    RMSNORM_WASM_FLOAT32);
  rmsnorm_wasm_run(&forward);
  if (status == RMSNORM_WASM_OK) {
    status = layernorm ? rmsnorm_wasm_prepare_layernorm_backward_f32(
                             &backward, dy, x, w, mean, rstd, dy, dw, db, rows, dim, row_stride)
                       : rmsnorm_wasm_prepare_rmsnorm_backward_f32(&backward, dy, x, w, rstd, dy,
                                                                   dw, rows, dim, row_stride);
    rmsnorm_wasm_run(&backward);
  }
  float* dx = gather(&both, 0);
  begin_case(layernorm ? "layerNormBackward" : "rmsNormBackward");
  print_number("dim", (double) dim);
  print_number("rowStride", (double) row_stride);
  print_number("eps", eps);
  print_array("dy", dy_in, n, RMSNORM_WASM_FLOAT32);
  print_array("x", x_in, n, RMSNORM_WASM_FLOAT32);
  print_array("weight", w, dim, RMSNORM_WASM_FLOAT32);
  print_array("dx", dx, n, RMSNORM_WASM_FLOAT32);
  print_array("dweight", dw, dim, RMSNORM_WASM_FLOAT32);
  if (layernorm) print_array("dbias", db, dim, RMSNORM_WASM_FLOAT32);
  print_number("rowByRowSame", 1);
  print_number("gapsUntouched", gaps_untouched(&both));
  end_case(status);
  free(both.bytes);
  free(dy_in);
  free(x_in);
  free(w);
  free(mean);
  free(rstd);
  free(dw);
  free(db);
  free(dx);
}

/* QK-norm (Qwen3, Gemma 3): RMSNorm over each attention head of q and of k,
 * in place, inside one fused QKV buffer of `tokens` rows of (q_heads +
 * 2 * kv_heads) * head_dim values, with a weight of head_dim values for q
 * and another for k. One prepared call per head: rows = tokens, the QKV
 * row's length as the row stride. The same heads normalized a token at a
 * time (packed rows of head_dim) must give the same bytes, and v must keep
 * every byte. Printed: q and k packed (head after head within a token, token
 * after token), before and after. */
static void qk_norm_case(size_t tokens, size_t q_heads, size_t kv_heads, size_t head_dim, float eps,
                         rmsnorm_wasm_dtype dtype) {
  const size_t size = size_of(dtype), width = (q_heads + 2 * kv_heads) * head_dim;
  const size_t values = tokens * width;
  unsigned char* qkv = random_array(values, dtype);
  unsigned char* before = copy_of(qkv, values * size);
  unsigned char* per_token = copy_of(qkv, values * size);
  void* q_weight = random_array(head_dim, RMSNORM_WASM_FLOAT32);
  void* k_weight = random_array(head_dim, RMSNORM_WASM_FLOAT32);
  rmsnorm_wasm_status status = RMSNORM_WASM_OK;
  for (size_t h = 0; h < q_heads + kv_heads; h++) {
    void* head = qkv + h * head_dim * size;
    rmsnorm_wasm_call call;
    status |= rmsnorm_wasm_prepare_rmsnorm(&call, head, NULL, h < q_heads ? q_weight : k_weight,
                                           head, NULL, tokens, head_dim, width, eps, dtype,
                                           RMSNORM_WASM_FLOAT32, RMSNORM_WASM_CAST_LLAMA, 0.0f);
    rmsnorm_wasm_run(&call);
  }
  for (size_t t = 0; t < tokens; t++) {
    unsigned char* q = per_token + t * width * size;
    status |= rmsnorm_wasm_rmsnorm(q, NULL, q_weight, q, NULL, q_heads, head_dim, eps, dtype,
                                   RMSNORM_WASM_FLOAT32, RMSNORM_WASM_CAST_LLAMA, 0.0f);
    unsigned char* k = q + q_heads * head_dim * size;
    status |= rmsnorm_wasm_rmsnorm(k, NULL, k_weight, k, NULL, kv_heads, head_dim, eps, dtype,
                                   RMSNORM_WASM_FLOAT32, RMSNORM_WASM_CAST_LLAMA, 0.0f);
  }
  const size_t v_at = (q_heads + kv_heads) * head_dim * size, v_bytes = kv_heads * head_dim * size;
  int v_untouched = 1;
  for (size_t t = 0; t < tokens; t++) {
    v_untouched &=
        memcmp(qkv + t * width * size + v_at, before + t * width * size + v_at, v_bytes) == 0;
  }
  /* q and k of every token, packed: the rows the JS API normalizes */
  unsigned char* q_in = malloc(tokens * q_heads * head_dim * size + 1);
  unsigned char* q_out = malloc(tokens * q_heads * head_dim * size + 1);
  unsigned char* k_in = malloc(tokens * kv_heads * head_dim * size + 1);
  unsigned char* k_out = malloc(tokens * kv_heads * head_dim * size + 1);
  const size_t q_bytes = q_heads * head_dim * size, k_bytes = kv_heads * head_dim * size;
  for (size_t t = 0; t < tokens; t++) {
    memcpy(q_in + t * q_bytes, before + t * width * size, q_bytes);
    memcpy(q_out + t * q_bytes, qkv + t * width * size, q_bytes);
    memcpy(k_in + t * k_bytes, before + t * width * size + q_bytes, k_bytes);
    memcpy(k_out + t * k_bytes, qkv + t * width * size + q_bytes, k_bytes);
  }
  begin_case("qkNorm");
  print_number("dim", (double) head_dim);
  print_number("eps", eps);
  print_number("dtype", dtype);
  print_array("q", q_in, tokens * q_heads * head_dim, dtype);
  print_array("qWeight", q_weight, head_dim, RMSNORM_WASM_FLOAT32);
  print_array("qOut", q_out, tokens * q_heads * head_dim, dtype);
  print_array("k", k_in, tokens * kv_heads * head_dim, dtype);
  print_array("kWeight", k_weight, head_dim, RMSNORM_WASM_FLOAT32);
  print_array("kOut", k_out, tokens * kv_heads * head_dim, dtype);
  print_number("vUntouched", v_untouched);
  print_number("perTokenSame", memcmp(qkv, per_token, values * size) == 0);
  end_case(status);
  free(qkv);
  free(before);
  free(per_token);
  free(q_weight);
  free(k_weight);
  free(q_in);
  free(q_out);
  free(k_in);
  free(k_out);
}

/* A decode loop: each operation prepared once, then run token after token
 * on new contents of the same arrays, must give the one-shot call's bits
 * every time (dweight accumulating across runs as across calls); a failed
 * prepare runs as nothing. */
static void prepared_loop_case(void) {
  const size_t rows = 3, dim = 77;
  const size_t n = rows * dim;
  uint16_t* x = random_array(n, RMSNORM_WASM_BFLOAT16);
  uint16_t* w = random_array(dim, RMSNORM_WASM_BFLOAT16);
  uint16_t* y = output_array(n * 2);
  uint16_t* y_once = output_array(n * 2);
  float* xf = random_array(n, RMSNORM_WASM_FLOAT32);
  float* dy = random_array(n, RMSNORM_WASM_FLOAT32);
  float* wf = random_array(dim, RMSNORM_WASM_FLOAT32);
  float* yf = output_array(n * sizeof(float));
  float* yf_once = output_array(n * sizeof(float));
  float rstd[3], rstd_once[3], mean[3], mean_once[3];
  float* dx = output_array(n * sizeof(float));
  float* dx_once = output_array(n * sizeof(float));
  float* dw = calloc(dim, sizeof(float));
  float* dw_once = calloc(dim, sizeof(float));
  rmsnorm_wasm_call norm, layer, backward;
  rmsnorm_wasm_status status = rmsnorm_wasm_prepare_rmsnorm(
      &norm, x, NULL, w, y, rstd, rows, dim, dim, 1e-6f, RMSNORM_WASM_BFLOAT16,
      RMSNORM_WASM_BFLOAT16, RMSNORM_WASM_CAST_GEMMA, 1.0f);
  status |= rmsnorm_wasm_prepare_layernorm_f32(&layer, xf, wf, NULL, yf, mean, rstd, rows, dim, dim,
                                               1e-5f);
  status |= rmsnorm_wasm_prepare_rmsnorm_backward_f32(&backward, dy, xf, wf, rstd, dx, dw, rows,
                                                      dim, dim);
  int same = 1;
  for (int token = 0; token < 4; token++) {
    void* fresh = random_array(n, RMSNORM_WASM_BFLOAT16);
    memcpy(x, fresh, n * 2);
    free(fresh);
    rmsnorm_wasm_run(&norm);
    status |=
        rmsnorm_wasm_rmsnorm(x, NULL, w, y_once, rstd_once, rows, dim, 1e-6f, RMSNORM_WASM_BFLOAT16,
                             RMSNORM_WASM_BFLOAT16, RMSNORM_WASM_CAST_GEMMA, 1.0f);
    same &= memcmp(y, y_once, n * 2) == 0 && memcmp(rstd, rstd_once, sizeof rstd) == 0;
    float* fresh_f = random_array(n, RMSNORM_WASM_FLOAT32);
    memcpy(xf, fresh_f, n * sizeof(float));
    free(fresh_f);
    rmsnorm_wasm_run(&layer);
    status |=
        rmsnorm_wasm_layernorm_f32(xf, wf, NULL, yf_once, mean_once, rstd_once, rows, dim, 1e-5f);
    same &= memcmp(yf, yf_once, n * sizeof(float)) == 0 &&
            memcmp(mean, mean_once, sizeof mean) == 0 && memcmp(rstd, rstd_once, sizeof rstd) == 0;
    rmsnorm_wasm_run(&backward);
    status |= rmsnorm_wasm_rmsnorm_backward_f32(dy, xf, wf, rstd, dx_once, dw_once, rows, dim);
    same &= memcmp(dx, dx_once, n * sizeof(float)) == 0 &&
            memcmp(dw, dw_once, dim * sizeof(float)) == 0;
  }
  /* A prepare refused (eps -1) leaves a call that runs as nothing. */
  memcpy(y_once, y, n * 2);
  rmsnorm_wasm_call refused;
  const rmsnorm_wasm_status refused_status = rmsnorm_wasm_prepare_rmsnorm(
      &refused, x, NULL, w, y, rstd, rows, dim, dim, -1.0f, RMSNORM_WASM_BFLOAT16,
      RMSNORM_WASM_BFLOAT16, RMSNORM_WASM_CAST_GEMMA, 1.0f);
  memset(x, 0, n * 2);
  rmsnorm_wasm_run(&refused);
  begin_case("prepared");
  print_number("same", same);
  print_number("refusedStatus", refused_status);
  print_number("refusedRunUntouched", memcmp(y, y_once, n * 2) == 0);
  print_number("nullCall", rmsnorm_wasm_prepare_rmsnorm_rstd(NULL, x, rstd, rows, dim, dim, 1e-6f,
                                                             RMSNORM_WASM_FLOAT32));
  end_case(status);
  free(x);
  free(w);
  free(y);
  free(y_once);
  free(xf);
  free(dy);
  free(wf);
  free(yf);
  free(yf_once);
  free(dx);
  free(dx_once);
  free(dw);
  free(dw_once);
}

/* The overlap rule on strided spans, against a model that looks at every
 * byte: y's rows placed at every offset from x's (from -3 rows to +3
 * rows, element by element) and rstd at every offset, for strides from dim
 * to 3 dim and 1 to 3 rows; prepare must refuse exactly the placements
 * where an output shares a byte with another array's values (and accept y
 * == x). Prepare only: nothing runs, so the pointers need no values. */
static unsigned char overlap_arena[4096];

static int shares_a_value(size_t a, size_t a_rows, size_t b, size_t b_rows, size_t dim,
                          size_t stride, size_t b_per_row) {
  for (size_t r = 0; r < a_rows; r++) {
    for (size_t i = 0; i < dim; i++) {
      const size_t ea = a + r * stride + i;
      for (size_t q = 0; q < b_rows; q++) {
        const size_t eb = b + q * (b_per_row == dim ? stride : b_per_row);
        if (ea >= eb && ea < eb + b_per_row) return 1;
      }
    }
  }
  return 0;
}

/* One row has no next row: every prepare takes it with any row_stride >= dim
 * (2^30, SIZE_MAX: no span to overflow), and each run gives the packed
 * one-shot call's bits. */
static void one_row_cases(void) {
  const size_t dim = 6, strides[] = {6, 7, (size_t) 1 << 30, SIZE_MAX / 2, SIZE_MAX};
  float* x = random_array(dim, RMSNORM_WASM_FLOAT32);
  float* dy = random_array(dim, RMSNORM_WASM_FLOAT32);
  float* w = random_array(dim, RMSNORM_WASM_FLOAT32);
  float y0[6], rstd0[1], ln0[6], dx0[6], dw0[6] = {0};
  float y[6], rstd[1], ln[6], dx[6], dw[6];
  int statuses = 0, same = 1;
  rmsnorm_wasm_rmsnorm(x, NULL, w, y0, rstd0, 1, dim, 1e-6f, RMSNORM_WASM_FLOAT32,
                       RMSNORM_WASM_FLOAT32, RMSNORM_WASM_CAST_LLAMA, 0.0f);
  rmsnorm_wasm_layernorm_f32(x, w, NULL, ln0, NULL, NULL, 1, dim, 1e-5f);
  rmsnorm_wasm_rmsnorm_backward_f32(dy, x, w, rstd0, dx0, dw0, 1, dim);
  for (size_t i = 0; i < sizeof strides / sizeof *strides; i++) {
    rmsnorm_wasm_call c;
    memset(dw, 0, sizeof dw);
    statuses |= rmsnorm_wasm_prepare_rmsnorm(&c, x, NULL, w, y, rstd, 1, dim, strides[i], 1e-6f,
                                             RMSNORM_WASM_FLOAT32, RMSNORM_WASM_FLOAT32,
                                             RMSNORM_WASM_CAST_LLAMA, 0.0f);
    rmsnorm_wasm_run(&c);
    statuses |= rmsnorm_wasm_prepare_layernorm_f32(&c, x, w, NULL, ln, NULL, NULL, 1, dim,
                                                   strides[i], 1e-5f);
    rmsnorm_wasm_run(&c);
    statuses |=
        rmsnorm_wasm_prepare_rmsnorm_backward_f32(&c, dy, x, w, rstd0, dx, dw, 1, dim, strides[i]);
    rmsnorm_wasm_run(&c);
    same &= memcmp(y, y0, sizeof y) == 0 && memcmp(rstd, rstd0, sizeof rstd) == 0 &&
            memcmp(ln, ln0, sizeof ln) == 0 && memcmp(dx, dx0, sizeof dx) == 0 &&
            memcmp(dw, dw0, sizeof dw) == 0;
  }
  begin_case("oneRow");
  print_number("statuses", statuses);
  print_number("same", same);
  end_case(RMSNORM_WASM_OK);
  free(x);
  free(dy);
  free(w);
}

static void strided_overlap_cases(void) {
  unsigned placements = 0, refused = 0, wrong = 0;
  const size_t dim = 5, at = 400; /* x's (or y's) first value, in floats from the arena's start */
  float* arena = (float*) overlap_arena;
  for (size_t rows = 1; rows <= 3; rows++) {
    for (size_t stride = dim; stride <= 3 * dim; stride++) {
      for (size_t y_at = at - 3 * stride; y_at <= at + 3 * stride; y_at++) {
        const int overlap = y_at != at && shares_a_value(at, rows, y_at, rows, dim, stride, dim);
        rmsnorm_wasm_call call;
        const rmsnorm_wasm_status status = rmsnorm_wasm_prepare_rmsnorm(
            &call, arena + at, NULL, NULL, arena + y_at, NULL, rows, dim, stride, 1e-6f,
            RMSNORM_WASM_FLOAT32, RMSNORM_WASM_FLOAT32, RMSNORM_WASM_CAST_LLAMA, 0.0f);
        placements++;
        refused += status != RMSNORM_WASM_OK;
        wrong += status != (overlap ? RMSNORM_WASM_ERROR_OVERLAP : RMSNORM_WASM_OK);
      }
      /* rstd (rows floats, packed) against y's strided rows, x far away */
      for (size_t r_at = at - 3 * stride; r_at <= at + 3 * stride; r_at++) {
        const int overlap = shares_a_value(at, rows, r_at, 1, dim, stride, rows);
        rmsnorm_wasm_call call;
        const rmsnorm_wasm_status status = rmsnorm_wasm_prepare_rmsnorm(
            &call, arena, NULL, NULL, arena + at, arena + r_at, rows, dim, stride, 1e-6f,
            RMSNORM_WASM_FLOAT32, RMSNORM_WASM_FLOAT32, RMSNORM_WASM_CAST_LLAMA, 0.0f);
        placements++;
        refused += status != RMSNORM_WASM_OK;
        wrong += status != (overlap ? RMSNORM_WASM_ERROR_OVERLAP : RMSNORM_WASM_OK);
      }
    }
  }
  begin_case("stridedOverlap");
  print_number("placements", placements);
  print_number("refused", refused);
  print_number("wrong", wrong);
  end_case(RMSNORM_WASM_OK);
}

int main(void) {
  printf("[");
  f32_case(3, 37, 1e-6f, 1);
  f32_case(2, 300, 1e-5f, 0);
  rmsnorm_case(2, 40, 1e-6f, RMSNORM_WASM_FLOAT32, RMSNORM_WASM_FLOAT32, RMSNORM_WASM_CAST_LLAMA,
               0.0f, 0, 1);
  rmsnorm_case(3, 300, 1e-6f, RMSNORM_WASM_BFLOAT16, RMSNORM_WASM_BFLOAT16, RMSNORM_WASM_CAST_LLAMA,
               0.0f, 0, 0);
  rmsnorm_case(2, 300, 1e-6f, RMSNORM_WASM_BFLOAT16, RMSNORM_WASM_FLOAT16, RMSNORM_WASM_CAST_LLAMA,
               1.0f, 1, 0);
  rmsnorm_case(3, 19, 1e-5f, RMSNORM_WASM_FLOAT16, RMSNORM_WASM_BFLOAT16, RMSNORM_WASM_CAST_GEMMA,
               0.0f, 0, 1);
  rmsnorm_case(2, 64, 1e-6f, RMSNORM_WASM_FLOAT16, RMSNORM_WASM_FLOAT32, RMSNORM_WASM_CAST_GEMMA,
               1.0f, 1, 0);
  rmsnorm_case(4, 33, 1e-6f, RMSNORM_WASM_FLOAT32, RMSNORM_WASM_BFLOAT16, RMSNORM_WASM_CAST_LLAMA,
               0.0f, 0, 0);
  rmsnorm_case(2, 257, 1e-6f, RMSNORM_WASM_FLOAT32, RMSNORM_WASM_FLOAT16, RMSNORM_WASM_CAST_LLAMA,
               1.0f, 1, 0);
  layernorm_case(3, 50, 1e-5f);
  backward_case(0, 3, 45, 1e-6f);
  backward_case(1, 2, 260, 1e-5f);
  conversion_case();
  strided_rmsnorm_case(3, 40, 45, 1e-6f, RMSNORM_WASM_FLOAT32, RMSNORM_WASM_FLOAT32,
                       RMSNORM_WASM_CAST_LLAMA, 0.0f, 0, SEPARATE);
  strided_rmsnorm_case(4, 33, 99, 1e-6f, RMSNORM_WASM_FLOAT32, RMSNORM_WASM_BFLOAT16,
                       RMSNORM_WASM_CAST_LLAMA, 0.0f, 0, INTERLEAVED);
  strided_rmsnorm_case(3, 300, 301, 1e-6f, RMSNORM_WASM_BFLOAT16, RMSNORM_WASM_BFLOAT16,
                       RMSNORM_WASM_CAST_GEMMA, 1.0f, 0, IN_PLACE);
  strided_rmsnorm_case(2, 64, 200, 1e-6f, RMSNORM_WASM_FLOAT16, RMSNORM_WASM_FLOAT32,
                       RMSNORM_WASM_CAST_GEMMA, 0.0f, 1, INTERLEAVED);
  strided_rmsnorm_case(3, 19, 23, 1e-5f, RMSNORM_WASM_BFLOAT16, RMSNORM_WASM_FLOAT16,
                       RMSNORM_WASM_CAST_LLAMA, 1.0f, 1, SEPARATE);
  strided_rmsnorm_case(2, 257, 600, 1e-6f, RMSNORM_WASM_FLOAT32, RMSNORM_WASM_FLOAT32,
                       RMSNORM_WASM_CAST_LLAMA, 0.0f, 1, IN_PLACE);
  strided_layernorm_case(3, 50, 117, 1e-5f);
  strided_backward_case(0, 3, 45, 100, 1e-6f);
  strided_backward_case(1, 2, 260, 523, 1e-5f);
  qk_norm_case(5, 4, 2, 32, 1e-6f, RMSNORM_WASM_FLOAT32);
  qk_norm_case(3, 8, 2, 64, 1e-6f, RMSNORM_WASM_BFLOAT16);
  prepared_loop_case();
  q8_case(3, 64, 64, RMSNORM_WASM_FLOAT32, RMSNORM_WASM_FLOAT32, RMSNORM_WASM_CAST_LLAMA, 0.0f, 0,
          RMSNORM_WASM_Q8_0);
  q8_case(2, 96, 101, RMSNORM_WASM_BFLOAT16, RMSNORM_WASM_BFLOAT16, RMSNORM_WASM_CAST_LLAMA, 0.0f,
          1, RMSNORM_WASM_Q8_1);
  q8_case(3, 512, 600, RMSNORM_WASM_FLOAT16, RMSNORM_WASM_FLOAT32, RMSNORM_WASM_CAST_GEMMA, 1.0f, 0,
          RMSNORM_WASM_Q8_K);
  q8_case(2, 256, 256, RMSNORM_WASM_FLOAT32, RMSNORM_WASM_BFLOAT16, RMSNORM_WASM_CAST_GEMMA, 1.0f,
          1, RMSNORM_WASM_Q8_K);
  q8_error_cases();
  strided_overlap_cases();
  one_row_cases();
  error_cases();
  top_of_memory_cases();
  printf("]\n");
  return 0;
}
