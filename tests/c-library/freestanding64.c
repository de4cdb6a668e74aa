/*
 * A freestanding wasm64 C program (clang-19 --target=wasm64 -nostdlib, no
 * libc) linked with the C library's wasm64 build (c/librmsnorm_wasm_*64.a):
 * strided and prepared calls of every operation, the converters, the
 * quantizer and the dequantizer, a call on arrays above 4 GiB, and the
 * statuses of wrong arguments near the top of the 64-bit address space. run() writes one JSON array
 * into `text` (every value as a hexadecimal bit pattern, the rows packed), which
 * tests/c-library.test.js reads out of a browser and replays through the JS
 * API: the bits must be the same.
 */
#include <stddef.h>
#include <stdint.h>

#include "rmsnorm_wasm.h"

/* ---- output, without printf ---------------------------------------------- */

static char text[1 << 22];
static size_t text_length;

static void put(const char* s) {
  while (*s != 0) text[text_length++] = *s++;
}

static void put_unsigned(uint64_t v) {
  char digits[24];
  int n = 0;
  do {
    digits[n++] = (char) ('0' + v % 10);
    v /= 10;
  } while (v != 0);
  while (n > 0) text[text_length++] = digits[--n];
}

static void put_hex(uint32_t v, int digits) {
  static const char hex[] = "0123456789abcdef";
  text[text_length++] = '"';
  for (int i = digits - 1; i >= 0; i--) text[text_length++] = hex[(v >> (4 * i)) & 15];
  text[text_length++] = '"';
}

static uint32_t bits_of(float v) {
  uint32_t u;
  __builtin_memcpy(&u, &v, sizeof u);
  return u;
}

static int first_case = 1;

static void begin(const char* op) {
  put(first_case ? "{\"op\":\"" : ",\n{\"op\":\"");
  first_case = 0;
  put(op);
  put("\"");
}

static void number(const char* name, uint64_t v) {
  put(",\"");
  put(name);
  put("\":");
  put_unsigned(v);
}

static void float_bits(const char* name, float v) {
  put(",\"");
  put(name);
  put("\":");
  put_hex(bits_of(v), 8);
}

/* n values of `dtype`, row r of `rows` at element r * stride (packed when
 * stride == n / rows). */
static void array(const char* name, const void* p, size_t rows, size_t dim, size_t stride,
                  rmsnorm_wasm_dtype dtype) {
  put(",\"");
  put(name);
  put("\":[");
  for (size_t r = 0; r < rows; r++) {
    for (size_t i = 0; i < dim; i++) {
      if (r + i > 0) put(",");
      const size_t k = r * stride + i;
      if (dtype == RMSNORM_WASM_FLOAT32) {
        put_hex(bits_of(((const float*) p)[k]), 8);
      } else {
        put_hex(((const uint16_t*) p)[k], 4);
      }
    }
  }
  put("]");
}

/* n bytes as one string of hexadecimal digits. */
static void byte_string(const char* name, const unsigned char* p, size_t n) {
  static const char hex[] = "0123456789abcdef";
  put(",\"");
  put(name);
  put("\":\"");
  for (size_t i = 0; i < n; i++) {
    text[text_length++] = hex[p[i] >> 4];
    text[text_length++] = hex[p[i] & 15];
  }
  put("\"");
}

static void end(rmsnorm_wasm_status status) {
  number("status", (uint64_t) status);
  put("}");
}

/* ---- inputs ---------------------------------------------------------------- */

#define RANDOM_SEED 0x9E3779B9u
#include "random_inputs.h"

/* n values of dtype at p, 16-bit ones truncated from the float32 (any
 * pattern will do as an input). Elements r * stride + i for i < dim. */
static void fill(void* p, size_t rows, size_t dim, size_t stride, rmsnorm_wasm_dtype dtype) {
  for (size_t r = 0; r < rows; r++) {
    for (size_t i = 0; i < dim; i++) {
      const float v = random_value();
      const size_t k = r * stride + i;
      if (dtype == RMSNORM_WASM_FLOAT32) {
        ((float*) p)[k] = v;
      } else if (dtype == RMSNORM_WASM_BFLOAT16) {
        ((uint16_t*) p)[k] = (uint16_t) (bits_of(v) >> 16);
      } else {
        const uint32_t a = bits_of(v) & 0x7FFFFFFFu;
        const uint16_t sign = (uint16_t) ((bits_of(v) >> 16) & 0x8000u);
        ((uint16_t*) p)[k] =
            a < 0x38800000u ? sign : (uint16_t) (sign | ((a - (112u << 23)) >> 13));
      }
    }
  }
}

static size_t size_of(rmsnorm_wasm_dtype dtype) {
  return dtype == RMSNORM_WASM_FLOAT32 ? 4 : 2;
}

/* The arrays of the cases, one arena of 1 MiB; the gaps keep 0xA5 bytes
 * that gaps_kept checks. */
static unsigned char arena[1 << 20];
static size_t arena_used;

static void* take(size_t bytes) {
  void* p = arena + arena_used;
  for (size_t i = 0; i < bytes; i++) arena[arena_used + i] = 0xA5;
  arena_used += (bytes + 63) / 64 * 64;
  return p;
}

/* Whether every element of a rows x stride buffer outside the values of
 * the arrays at element offsets `offsets` (dim values a row) is still
 * 0xA5 bytes. */
static int gaps_kept(const void* buffer, size_t rows, size_t dim, size_t stride, size_t size,
                     const size_t* offsets, int count) {
  const unsigned char* bytes = buffer;
  for (size_t e = 0; e < (rows - 1) * stride + offsets[count - 1] + dim; e++) {
    int value = 0;
    for (int j = 0; j < count; j++) {
      const size_t col = (e - offsets[j]) % stride, row = (e - offsets[j]) / stride;
      value |= e >= offsets[j] && col < dim && row < rows;
    }
    for (size_t b = 0; b < size && !value; b++) {
      if (bytes[e * size + b] != 0xA5) return 0;
    }
  }
  return 1;
}

/* ---- cases ------------------------------------------------------------------ */

/* RMSNorm to ggml blocks, prepared, x's (and the residual's) rows stride
 * apart, the blocks packed: printed as one string of bytes. */
static void q8_case(size_t rows, size_t dim, size_t stride, rmsnorm_wasm_dtype dtype,
                    rmsnorm_wasm_dtype weight_dtype, int add, rmsnorm_wasm_block_format format) {
  const size_t size = size_of(dtype);
  unsigned char* buffer = take(((rows - 1) * stride + 2 * dim) * size);
  void* x = buffer;
  void* residual = add ? buffer + dim * size : NULL;
  void* w = take(dim * size_of(weight_dtype));
  const size_t bytes = rows * rmsnorm_wasm_block_row_bytes(format, dim);
  unsigned char* out = take(bytes);
  float* rstd = take(rows * 4);
  fill(x, rows, dim, stride, dtype);
  if (add) fill(residual, rows, dim, stride, dtype);
  fill(w, 1, dim, dim, weight_dtype);
  begin("rmsNormQ8");
  number("format", format);
  number("add", add);
  number("dim", dim);
  number("rowStride", stride);
  number("dtype", dtype);
  number("weightDtype", weight_dtype);
  array("x", x, rows, dim, stride, dtype);
  if (add) array("residual", residual, rows, dim, stride, dtype);
  array("weight", w, 1, dim, dim, weight_dtype);
  rmsnorm_wasm_call call;
  const rmsnorm_wasm_status status =
      rmsnorm_wasm_prepare_rmsnorm_q8(&call, x, residual, w, out, rstd, rows, dim, stride, 1e-6f,
                                      dtype, weight_dtype, RMSNORM_WASM_CAST_LLAMA, 0.0f, format);
  rmsnorm_wasm_run(&call);
  if (add) array("residualOut", residual, rows, dim, stride, dtype);
  byte_string("blocks", out, bytes);
  size_t offsets[2] = {0, dim};
  number("gapsUntouched", gaps_kept(buffer, rows, dim, stride, size, offsets, add ? 2 : 1));
  end(status);
}

/* The quantizer and the dequantizer alone, prepared, float32 rows stride
 * apart (x, then y in its gaps), the blocks packed. */
static void quantize_case(size_t rows, size_t dim, size_t stride,
                          rmsnorm_wasm_block_format format) {
  float* buffer = take(((rows - 1) * stride + 2 * dim) * 4);
  float* x = buffer;
  float* y = buffer + dim;
  const size_t bytes = rows * rmsnorm_wasm_block_row_bytes(format, dim);
  unsigned char* blocks = take(bytes);
  fill(x, rows, dim, stride, RMSNORM_WASM_FLOAT32);
  rmsnorm_wasm_call quantize, dequantize;
  rmsnorm_wasm_status status =
      rmsnorm_wasm_prepare_quantize(&quantize, x, blocks, rows, dim, stride, format);
  if (status == RMSNORM_WASM_OK) {
    status = rmsnorm_wasm_prepare_dequantize(&dequantize, blocks, y, rows, dim, stride, format);
  }
  rmsnorm_wasm_run(&quantize);
  rmsnorm_wasm_run(&dequantize);
  begin("quantize");
  number("format", format);
  number("dim", dim);
  array("x", x, rows, dim, stride, RMSNORM_WASM_FLOAT32);
  byte_string("blocks", blocks, bytes);
  array("y", y, rows, dim, stride, RMSNORM_WASM_FLOAT32);
  size_t offsets[2] = {0, dim};
  number("gapsUntouched", gaps_kept(buffer, rows, dim, stride, 4, offsets, 2));
  end(status);
}

/* RMSNorm, prepared, rows row_stride apart: y in the gaps of x (and the
 * residual, for the fused add, in the gaps too), or y == x. */
static void rmsnorm_case(size_t rows, size_t dim, size_t stride, float eps,
                         rmsnorm_wasm_dtype dtype, rmsnorm_wasm_dtype weight_dtype,
                         rmsnorm_wasm_cast_mode cast_mode, float weight_offset, int add,
                         int in_place) {
  const size_t size = size_of(dtype);
  unsigned char* buffer = take(((rows - 1) * stride + 3 * dim) * size);
  void* x = buffer;
  void* y = in_place ? x : buffer + dim * size;
  void* residual = add ? buffer + 2 * dim * size : NULL;
  void* w = take(dim * size_of(weight_dtype));
  float* rstd = take(rows * 4);
  fill(x, rows, dim, stride, dtype);
  if (add) fill(residual, rows, dim, stride, dtype);
  fill(w, 1, dim, dim, weight_dtype);
  begin(add ? "addRmsNorm" : "rmsNorm");
  number("dim", dim);
  number("rowStride", stride);
  float_bits("epsBits", eps);
  number("dtype", dtype);
  number("weightDtype", weight_dtype);
  number("castMode", cast_mode);
  float_bits("weightOffsetBits", weight_offset);
  array("x", x, rows, dim, stride, dtype);
  if (add) array("residual", residual, rows, dim, stride, dtype);
  array("weight", w, 1, dim, dim, weight_dtype);
  rmsnorm_wasm_call call;
  const rmsnorm_wasm_status status =
      rmsnorm_wasm_prepare_rmsnorm(&call, x, residual, w, y, rstd, rows, dim, stride, eps, dtype,
                                   weight_dtype, cast_mode, weight_offset);
  rmsnorm_wasm_run(&call);
  if (add) array("residualOut", residual, rows, dim, stride, dtype);
  array("y", y, rows, dim, stride, dtype);
  array("rstd", rstd, 1, rows, rows, RMSNORM_WASM_FLOAT32);
  size_t offsets[3] = {0};
  int count = 1;
  if (!in_place) offsets[count++] = dim;
  if (add) offsets[count++] = 2 * dim;
  number("gapsUntouched", gaps_kept(buffer, rows, dim, stride, size, offsets, count));
  end(status);
}

static void layernorm_case(size_t rows, size_t dim, size_t stride, float eps) {
  float* buffer = take(((rows - 1) * stride + 2 * dim) * 4);
  float* w = take(dim * 4);
  float* b = take(dim * 4);
  float* mean = take(rows * 4);
  float* rstd = take(rows * 4);
  fill(buffer, rows, dim, stride, RMSNORM_WASM_FLOAT32);
  fill(w, 1, dim, dim, RMSNORM_WASM_FLOAT32);
  fill(b, 1, dim, dim, RMSNORM_WASM_FLOAT32);
  begin("layerNorm");
  number("dim", dim);
  number("rowStride", stride);
  float_bits("epsBits", eps);
  array("x", buffer, rows, dim, stride, RMSNORM_WASM_FLOAT32);
  array("weight", w, 1, dim, dim, RMSNORM_WASM_FLOAT32);
  array("bias", b, 1, dim, dim, RMSNORM_WASM_FLOAT32);
  rmsnorm_wasm_call call;
  const rmsnorm_wasm_status status = rmsnorm_wasm_prepare_layernorm_f32(
      &call, buffer, w, b, buffer + dim, mean, rstd, rows, dim, stride, eps);
  rmsnorm_wasm_run(&call);
  array("y", buffer + dim, rows, dim, stride, RMSNORM_WASM_FLOAT32);
  array("mean", mean, 1, rows, rows, RMSNORM_WASM_FLOAT32);
  array("rstd", rstd, 1, rows, rows, RMSNORM_WASM_FLOAT32);
  const size_t offsets[] = {0, dim};
  number("gapsUntouched", gaps_kept(buffer, rows, dim, stride, 4, offsets, 2));
  end(status);
}

/* A backward pass from the forward's statistics, dy and x interleaved, dx
 * over dy; dweight and dbias from zeros. */
static void backward_case(int layernorm, size_t rows, size_t dim, size_t stride, float eps) {
  float* buffer = take(((rows - 1) * stride + 2 * dim) * 4);
  float* dy = buffer;
  float* x = buffer + dim;
  float* w = take(dim * 4);
  float* mean = take(rows * 4);
  float* rstd = take(rows * 4);
  float* dw = take(dim * 4);
  float* db = take(dim * 4);
  for (size_t i = 0; i < dim; i++) dw[i] = db[i] = 0.0f;
  fill(dy, rows, dim, stride, RMSNORM_WASM_FLOAT32);
  fill(x, rows, dim, stride, RMSNORM_WASM_FLOAT32);
  fill(w, 1, dim, dim, RMSNORM_WASM_FLOAT32);
  begin(layernorm ? "layerNormBackward" : "rmsNormBackward");
  number("dim", dim);
  number("rowStride", stride);
  float_bits("epsBits", eps);
  array("dy", dy, rows, dim, stride, RMSNORM_WASM_FLOAT32);
  array("x", x, rows, dim, stride, RMSNORM_WASM_FLOAT32);
  array("weight", w, 1, dim, dim, RMSNORM_WASM_FLOAT32);
  rmsnorm_wasm_call forward, backward;
  rmsnorm_wasm_status status =
      layernorm ? rmsnorm_wasm_prepare_layernorm_f32(&forward, x, NULL, NULL, NULL, mean, rstd,
                                                     rows, dim, stride, eps)
                : rmsnorm_wasm_prepare_rmsnorm_rstd(&forward, x, rstd, rows, dim, stride, eps,
                                                    RMSNORM_WASM_FLOAT32);
  rmsnorm_wasm_run(&forward);
  status |= layernorm ? rmsnorm_wasm_prepare_layernorm_backward_f32(&backward, dy, x, w, mean, rstd,
                                                                    dy, dw, db, rows, dim, stride)
                      : rmsnorm_wasm_prepare_rmsnorm_backward_f32(&backward, dy, x, w, rstd, dy, dw,
                                                                  rows, dim, stride);
  rmsnorm_wasm_run(&backward);
  array("dx", dy, rows, dim, stride, RMSNORM_WASM_FLOAT32);
  array("dweight", dw, 1, dim, dim, RMSNORM_WASM_FLOAT32);
  if (layernorm) array("dbias", db, 1, dim, dim, RMSNORM_WASM_FLOAT32);
  const size_t offsets[] = {0, dim};
  number("gapsUntouched", gaps_kept(buffer, rows, dim, stride, 4, offsets, 2));
  end(status);
}

/* Every 16-bit pattern widened, float32 values of every class narrowed. */
static void conversion_case(void) {
  static uint16_t patterns[0x10000];
  static float widened[0x10000];
  static float floats[2048];
  static uint16_t narrowed[2048];
  static const uint32_t specials[] = {0x00000000, 0x80000000, 0x00000001, 0x807FFFFF, 0x33000000,
                                      0x33000001, 0x387FF000, 0x3F808000, 0x3F818000, 0x477FEFFF,
                                      0x477FF000, 0x7F7F8000, 0x7F7FFFFF, 0x7F800000, 0xFF800000,
                                      0x7FC00000, 0xFFC00000, 0x7F800001, 0xFFBFFFFF, 0x3F800000};
  const size_t specials_count = sizeof specials / sizeof *specials;
  for (size_t h = 0; h < 0x10000; h++) patterns[h] = (uint16_t) h;
  for (size_t i = 0; i < 2048; i++) {
    const uint32_t bits = i < specials_count ? specials[i] : next_random();
    __builtin_memcpy(&floats[i], &bits, sizeof bits);
  }
  begin("convert");
  array("floats", floats, 1, 2048, 2048, RMSNORM_WASM_FLOAT32);
  rmsnorm_wasm_status status = RMSNORM_WASM_OK;
  status |= rmsnorm_wasm_to_f32(patterns, widened, 0x10000, RMSNORM_WASM_BFLOAT16);
  array("widenedBfloat16", widened, 1, 0x10000, 0x10000, RMSNORM_WASM_FLOAT32);
  status |= rmsnorm_wasm_to_f32(patterns, widened, 0x10000, RMSNORM_WASM_FLOAT16);
  array("widenedFloat16", widened, 1, 0x10000, 0x10000, RMSNORM_WASM_FLOAT32);
  status |= rmsnorm_wasm_from_f32(floats, narrowed, 2048, RMSNORM_WASM_BFLOAT16);
  array("narrowedBfloat16", narrowed, 1, 2048, 2048, RMSNORM_WASM_BFLOAT16);
  status |= rmsnorm_wasm_from_f32(floats, narrowed, 2048, RMSNORM_WASM_FLOAT16);
  array("narrowedFloat16", narrowed, 1, 2048, 2048, RMSNORM_WASM_FLOAT16);
  end(status);
}

/* RMSNorm on rows above 4 GiB: the memory grown to 5 GiB, x, the weight and
 * y at 4.5 GiB, rstd in the last bytes of the memory. */
static void above_four_gib_case(void) {
  const size_t rows = 2, dim = 896, page = 65536;
  const size_t pages = (size_t) __builtin_wasm_memory_size(0);
  const size_t want = (size_t) 5 << 14; /* 5 GiB */
  const int grew = pages >= want || __builtin_wasm_memory_grow(0, want - pages) != (size_t) -1;
  begin("rmsNorm");
  number("above4GiB", grew);
  if (!grew) {
    end(RMSNORM_WASM_OK);
    return;
  }
  float* x = (float*) (uintptr_t) (((size_t) 9 << 29)); /* 4.5 GiB */
  float* w = x + rows * dim;
  float* y = w + dim;
  float* rstd = (float*) (uintptr_t) (want * page - 64);
  fill(x, rows, dim, dim, RMSNORM_WASM_FLOAT32);
  fill(w, 1, dim, dim, RMSNORM_WASM_FLOAT32);
  number("address", (uint64_t) (uintptr_t) x);
  number("dim", dim);
  number("rowStride", dim);
  float_bits("epsBits", 1e-6f);
  number("dtype", 0);
  number("weightDtype", 0);
  number("castMode", 0);
  float_bits("weightOffsetBits", 0.0f);
  array("x", x, rows, dim, dim, RMSNORM_WASM_FLOAT32);
  array("weight", w, 1, dim, dim, RMSNORM_WASM_FLOAT32);
  const rmsnorm_wasm_status status =
      rmsnorm_wasm_rmsnorm(x, NULL, w, y, rstd, rows, dim, 1e-6f, RMSNORM_WASM_FLOAT32,
                           RMSNORM_WASM_FLOAT32, RMSNORM_WASM_CAST_LLAMA, 0.0f);
  array("y", y, rows, dim, dim, RMSNORM_WASM_FLOAT32);
  array("rstd", rstd, 1, rows, rows, RMSNORM_WASM_FLOAT32);
  number("gapsUntouched", 1);
  end(status);
}

/* An address `below` bytes under the top of the 64-bit address space:
 * refused calls touch nothing, so nothing need be there. */
static void* near_top(uintptr_t below) {
  return (void*) (UINTPTR_MAX - (below - 1));
}

static void error_cases(void) {
  float* rows8 = take(32 * 4);
  float* y = take(8 * 4);
  for (int i = 0; i < 8; i++) y[i] = 42.0f;
  rmsnorm_wasm_call c;
  const rmsnorm_wasm_status statuses[] = {
      rmsnorm_wasm_prepare_rmsnorm(&c, rows8, NULL, NULL, y, NULL, 2, 4, 3, 1e-6f,
                                   RMSNORM_WASM_FLOAT32, RMSNORM_WASM_FLOAT32,
                                   RMSNORM_WASM_CAST_LLAMA, 0.0f),
      rmsnorm_wasm_prepare_rmsnorm(&c, rows8, NULL, NULL, rows8 + 6, NULL, 2, 4, 8, 1e-6f,
                                   RMSNORM_WASM_FLOAT32, RMSNORM_WASM_FLOAT32,
                                   RMSNORM_WASM_CAST_LLAMA, 0.0f),
      rmsnorm_wasm_prepare_rmsnorm(&c, rows8, NULL, NULL, rows8 + 4, NULL, 2, 4, 8, 1e-6f,
                                   RMSNORM_WASM_FLOAT32, RMSNORM_WASM_FLOAT32,
                                   RMSNORM_WASM_CAST_LLAMA, 0.0f),
      rmsnorm_wasm_prepare_rmsnorm(&c, rows8, NULL, NULL, y, NULL, 3, 4, SIZE_MAX / 8, 1e-6f,
                                   RMSNORM_WASM_FLOAT32, RMSNORM_WASM_FLOAT32,
                                   RMSNORM_WASM_CAST_LLAMA, 0.0f),
      rmsnorm_wasm_prepare_rmsnorm(&c, rows8, NULL, NULL, near_top(100), NULL, 2, 4, 24, 1e-6f,
                                   RMSNORM_WASM_FLOAT32, RMSNORM_WASM_FLOAT32,
                                   RMSNORM_WASM_CAST_LLAMA, 0.0f),
      rmsnorm_wasm_from_f32(y, (uint16_t*) (y + 3), 4, RMSNORM_WASM_FLOAT16),
      rmsnorm_wasm_f32(rows8, NULL, y, 2, 0, 1e-6f),
  };
  int kept = 1;
  for (int i = 0; i < 8; i++) kept &= y[i] == 42.0f;
  begin("errors");
  put(",\"statuses\":[");
  for (size_t i = 0; i < sizeof statuses / sizeof *statuses; i++) {
    if (i > 0) put(",");
    put_unsigned((uint64_t) statuses[i]);
  }
  put("]");
  number("untouched", kept);
  end(RMSNORM_WASM_OK);
}

__attribute__((export_name("run"))) const char* run(void) {
  text_length = 0;
  put("[");
  rmsnorm_case(3, 37, 37, 1e-6f, RMSNORM_WASM_FLOAT32, RMSNORM_WASM_FLOAT32,
               RMSNORM_WASM_CAST_LLAMA, 0.0f, 0, 1);
  rmsnorm_case(3, 40, 100, 1e-6f, RMSNORM_WASM_BFLOAT16, RMSNORM_WASM_BFLOAT16,
               RMSNORM_WASM_CAST_GEMMA, 1.0f, 0, 0);
  rmsnorm_case(2, 64, 200, 1e-5f, RMSNORM_WASM_FLOAT16, RMSNORM_WASM_FLOAT32,
               RMSNORM_WASM_CAST_LLAMA, 0.0f, 1, 0);
  rmsnorm_case(3, 257, 800, 1e-6f, RMSNORM_WASM_FLOAT32, RMSNORM_WASM_FLOAT16,
               RMSNORM_WASM_CAST_LLAMA, 1.0f, 1, 1);
  layernorm_case(3, 50, 117, 1e-5f);
  backward_case(0, 3, 45, 100, 1e-6f);
  backward_case(1, 2, 260, 523, 1e-5f);
  q8_case(3, 64, 100, RMSNORM_WASM_FLOAT32, RMSNORM_WASM_FLOAT32, 0, RMSNORM_WASM_Q8_0);
  q8_case(2, 96, 200, RMSNORM_WASM_BFLOAT16, RMSNORM_WASM_FLOAT32, 1, RMSNORM_WASM_Q8_1);
  q8_case(2, 512, 1100, RMSNORM_WASM_FLOAT16, RMSNORM_WASM_FLOAT16, 1, RMSNORM_WASM_Q8_K);
  quantize_case(3, 64, 150, RMSNORM_WASM_Q8_0);
  quantize_case(2, 96, 200, RMSNORM_WASM_Q8_1);
  quantize_case(2, 512, 1100, RMSNORM_WASM_Q8_K);
  conversion_case();
  above_four_gib_case();
  error_cases();
  put("]");
  text[text_length] = 0;
  return text;
}

__attribute__((export_name("run_length"))) size_t run_length(void) {
  return text_length;
}
