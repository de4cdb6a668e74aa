/*
 * ggml's own reference quantizers as a filter: float32 rows on stdin, their
 * ggml blocks on stdout, made by ggml-base natively built from the pinned
 * llama.cpp source (models.mk). The check of the package's block outputs
 * against ggml (tests/ggml-reference.test.js) and the wide model's Q4_K
 * tensors (models.js) both go through it, so that neither trusts a
 * quantizer of the project's.
 *
 *   ggml-quantize TYPE ROW_LENGTH < rows.f32 > blocks
 *
 * TYPE is q8_0, q8_1, q8_K (the activations' formats: quantize_row_q8_0_ref,
 * quantize_row_q8_1_ref, quantize_row_q8_K_ref) or q4_K (quantize_row_q4_K_ref,
 * what ggml_quantize_chunk runs for Q4_K without an importance matrix, as
 * llama-quantize does with none). Each row is quantized on its own, its
 * output zeroed first: on an all-zero block quantize_row_q8_K_ref writes d
 * and qs but leaves bsums as they were, and the package writes zeros there.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ggml-quants.h"

typedef void (*quantize_row_fn)(const float* x, void* y, int64_t k);

struct format {
  const char* name;
  enum ggml_type type;
  quantize_row_fn quantize;
};

static const struct format FORMATS[] = {
    {"q8_0", GGML_TYPE_Q8_0, (quantize_row_fn) quantize_row_q8_0_ref},
    {"q8_1", GGML_TYPE_Q8_1, (quantize_row_fn) quantize_row_q8_1_ref},
    {"q8_K", GGML_TYPE_Q8_K, (quantize_row_fn) quantize_row_q8_K_ref},
    {"q4_K", GGML_TYPE_Q4_K, (quantize_row_fn) quantize_row_q4_K_ref},
};

/* Rows read, quantized and written per step. */
#define ROWS_PER_STEP 256

static int usage(const char* why) {
  fprintf(stderr,
          "ggml-quantize: %s\n"
          "usage: ggml-quantize TYPE ROW_LENGTH < float32 rows > blocks\n"
          "  TYPE: q8_0, q8_1, q8_K or q4_K; ROW_LENGTH: values per row, a multiple of the "
          "type's block (32, or 256 for q8_K and q4_K)\n",
          why);
  return 2;
}

int main(int argc, char** argv) {
  if (argc != 3) {
    return usage("expected two arguments");
  }
  const struct format* format = NULL;
  for (size_t i = 0; i < sizeof FORMATS / sizeof FORMATS[0]; i++) {
    if (strcmp(argv[1], FORMATS[i].name) == 0) {
      format = &FORMATS[i];
    }
  }
  if (format == NULL) {
    return usage("unknown TYPE");
  }
  char* end = NULL;
  const long long n = strtoll(argv[2], &end, 10);
  const int64_t block = ggml_blck_size(format->type);
  if (*argv[2] == '\0' || *end != '\0' || n <= 0 || n > (1LL << 30) || n % block != 0) {
    return usage("ROW_LENGTH must be a positive multiple of the type's block");
  }
  const size_t row_bytes = ggml_row_size(format->type, n);
  float* rows = malloc(ROWS_PER_STEP * (size_t) n * sizeof(float));
  uint8_t* blocks = malloc(ROWS_PER_STEP * row_bytes);
  if (rows == NULL || blocks == NULL) {
    fprintf(stderr,
            "ggml-quantize: out of memory for %d rows of %lld values: use a shorter ROW_LENGTH\n",
            ROWS_PER_STEP, n);
    return 3;
  }
  for (;;) {
    const size_t values = fread(rows, sizeof(float), ROWS_PER_STEP * (size_t) n, stdin);
    if (values % (size_t) n != 0) {
      fprintf(stderr,
              "ggml-quantize: the input ends inside a row (%zu values past the last whole row): "
              "write whole rows of ROW_LENGTH float32 values\n",
              values % (size_t) n);
      return 4;
    }
    const size_t count = values / (size_t) n;
    memset(blocks, 0, count * row_bytes);
    for (size_t r = 0; r < count; r++) {
      format->quantize(rows + r * (size_t) n, blocks + r * row_bytes, n);
    }
    if (fwrite(blocks, row_bytes, count, stdout) != count) {
      fprintf(stderr, "ggml-quantize: cannot write the blocks to stdout\n");
      return 5;
    }
    if (count < ROWS_PER_STEP) {
      break;
    }
  }
  if (ferror(stdin)) {
    fprintf(stderr, "ggml-quantize: cannot read stdin\n");
    return 5;
  }
  free(rows);
  free(blocks);
  return 0;
}
