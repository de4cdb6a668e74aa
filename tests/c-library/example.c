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

static uint32_t state = 0x2545F491u;

/* xorshift32: the same inputs on every platform. */
static uint32_t next_random(void) {
  state ^= state << 13;
  state ^= state >> 17;
  state ^= state << 5;
  return state;
}

/* A float32 in [-2, 2), exactly representable. */
static float random_value(void) {
  return (float) (next_random() >> 8) * 0x1p-22f - 2.0f;
}

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
  error_cases();
  top_of_memory_cases();
  printf("]\n");
  return 0;
}
