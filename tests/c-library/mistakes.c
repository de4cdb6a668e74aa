/*
 * Mistakes an engine author makes with the C library and its block
 * outputs, one a line: each call's status and rmsnorm_wasm_status_string,
 * printed as JSON for tests/c-library.test.js, which holds every message
 * to naming its fix (issue 46's measure: of 10 mistakes, >= 9 so).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>

#include "rmsnorm_wasm.h"

static float x[2 * 64], w[64], y[2 * 64];
static uint8_t blocks[2 * 2 * 36];

static int first = 1;
static void report(const char* mistake, rmsnorm_wasm_status status) {
  printf("%s{\"mistake\":\"%s\",\"status\":%d,\"message\":\"%s\"}", first ? "" : ",\n", mistake,
         (int) status, rmsnorm_wasm_status_string(status));
  first = 0;
}

#define LLAMA_F32 RMSNORM_WASM_FLOAT32, RMSNORM_WASM_FLOAT32, RMSNORM_WASM_CAST_LLAMA

int main(void) {
  rmsnorm_wasm_call call;
  printf("[");
  report("q8_0 blocks of a row of 48",
         rmsnorm_wasm_rmsnorm_q8(x, NULL, w, blocks, NULL, 1, 48, 1e-6f, LLAMA_F32, 0.0f,
                                 RMSNORM_WASM_Q8_0));
  report("q8_K blocks of rows of 64", rmsnorm_wasm_quantize(x, blocks, 2, 64, RMSNORM_WASM_Q8_K));
  report("the format left 0",
         rmsnorm_wasm_quantize(x, blocks, 2, 64, (rmsnorm_wasm_block_format) 0));
  report("ggml's type number for q8_0 (8) as the format",
         rmsnorm_wasm_prepare_rmsnorm_q8(&call, x, NULL, w, blocks, NULL, 2, 64, 64, 1e-6f,
                                         LLAMA_F32, 0.0f, (rmsnorm_wasm_block_format) 8));
  report("blocks written over x", rmsnorm_wasm_rmsnorm_q8(x, NULL, w, x, NULL, 2, 64, 1e-6f,
                                                          LLAMA_F32, 0.0f, RMSNORM_WASM_Q8_0));
  report("dtype 7", rmsnorm_wasm_rmsnorm(x, NULL, w, y, NULL, 2, 64, 1e-6f, (rmsnorm_wasm_dtype) 7,
                                         RMSNORM_WASM_FLOAT32, RMSNORM_WASM_CAST_LLAMA, 0.0f));
  report("a cast mode of 2",
         rmsnorm_wasm_rmsnorm(x, NULL, w, y, NULL, 2, 64, 1e-6f, RMSNORM_WASM_FLOAT32,
                              RMSNORM_WASM_FLOAT32, (rmsnorm_wasm_cast_mode) 2, 0.0f));
  report("weight_offset NaN",
         rmsnorm_wasm_rmsnorm(x, NULL, w, y, NULL, 2, 64, 1e-6f, LLAMA_F32, NAN));
  report("eps -1", rmsnorm_wasm_f32(x, w, y, 2, 64, -1.0f));
  report("rows -1 (a negative count)",
         rmsnorm_wasm_quantize(x, blocks, (size_t) -1, 64, RMSNORM_WASM_Q8_0));
  report("row_stride below dim",
         rmsnorm_wasm_prepare_quantize(&call, x, blocks, 2, 64, 32, RMSNORM_WASM_Q8_0));
  report("dequantize into NULL", rmsnorm_wasm_dequantize(blocks, NULL, 2, 64, RMSNORM_WASM_Q8_0));
  report("dim 0", rmsnorm_wasm_f32(x, w, y, 2, 0, 1e-6f));
  report("a float32 converter call",
         rmsnorm_wasm_from_f32(x, (uint16_t*) (void*) y, 64, RMSNORM_WASM_FLOAT32));
  printf("]\n");
  return 0;
}
