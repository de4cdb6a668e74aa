/*
 * libFuzzer target for the RMSNorm kernels, built natively with ASan + UBSan
 * (`make fuzz`). Any input bytes decode to a valid call (the kernels'
 * preconditions are the JS validation's job), which checked_kernels.h runs
 * on both kernels, in and out of place.
 *
 * Input layout (short inputs read as zero-padded, values cycle over the rest):
 *   byte 0     flags: bit 0 weight, bit 1 residual (addRmsNorm), bits 2-7
 *              alignment of x, w, y
 *   byte 1     bits 0-1 rows (0..3), bits 2-3 storage dtype (% 3), bit 4
 *              weight in the storage dtype (else float32), bit 5 cast mode
 *              llama (else gemma), bits 6-7 weight offset kind
 *   bytes 2-3  dim: bit 15 set: 1 + (low 15 bits % 4200) (up to 17 blocks
 *              of 256), else 1 + (value % 48) (the lane and tail edges)
 *   byte 4     eps kind (see decode_eps), bytes 5-8 its raw bits
 *   byte 9     exponent offset (int8) for ordinary values of x: rows scaled
 *              far up or down take the rescue path
 *   bytes 10-13  raw bits of the weight offset (kind 3)
 *   bytes 14-  values, 4 bytes each (see decode_value): x, w, then residual;
 *              16-bit storage narrows each (or, for raw values, keeps 16 bits)
 */
#include <float.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "checked_kernels.h"

#define HEADER_BYTES 14

static float from_bits(uint32_t bits) {
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

static uint8_t byte_at(const uint8_t* data, size_t size, size_t i) {
  return i < size ? data[i] : 0;
}

static uint32_t u32_at(const uint8_t* data, size_t size, size_t i) {
  return (uint32_t) byte_at(data, size, i) | (uint32_t) byte_at(data, size, i + 1) << 8 |
         (uint32_t) byte_at(data, size, i + 2) << 16 | (uint32_t) byte_at(data, size, i + 3) << 24;
}

/* Any finite eps >= 0 (the kernels' precondition), favouring the usual ones. */
static float decode_eps(uint8_t kind, uint32_t raw) {
  switch (kind % 8) {
    case 0: return 0.0f;
    case 1: return -0.0f; /* passes the JS check (-0 >= 0) */
    case 2: return 1e-6f;
    case 3: return 1e-5f;
    case 4: return FLT_MAX;
    case 5: return 0x1p-149f;
    default: {
      uint32_t bits = raw & UINT32_C(0x7FFFFFFF);
      if (bits >= UINT32_C(0x7F800000)) bits &= UINT32_C(0x3FFFFFFF); /* no Inf or NaN */
      return from_bits(bits);
    }
  }
}

static const uint32_t special_bits[] = {
    0x00000000, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00001,
    0x7F7FFFFF, 0xFF7FFFFF, 0x00000001, 0x807FFFFF, 0x00800000, 0x3F800000,
};
#define SPECIAL_COUNT (sizeof special_bits / sizeof *special_bits)

/* One value from 4 bytes: a special value, an ordinary one near 2^offset,
 * one at any exponent, or any bits at all. `salt` varies the mantissa when
 * the value bytes cycle. */
static float decode_value(uint32_t v, int offset, uint32_t salt) {
  const uint8_t kind = v & 0xFF;
  const uint32_t sign = (v >> 8 & 1) << 31;
  const uint32_t mantissa = ((v >> 9) ^ salt) & UINT32_C(0x7FFFFF);
  switch (kind % 8) {
    case 0: return from_bits(special_bits[(kind >> 3) % SPECIAL_COUNT]);
    case 1:
    case 2:
    case 3:
    case 4: {
      int exponent = 127 + (kind >> 3) % 16 - 8 + offset;
      if (exponent < 0) exponent = 0; /* subnormal */
      if (exponent > 254) exponent = 254;
      return from_bits(sign | (uint32_t) exponent << 23 | mantissa);
    }
    case 5: return from_bits(sign | (uint32_t) (v >> 24) % 255 << 23 | mantissa);
    default: return from_bits(v ^ salt);
  }
}

/* n values of `dtype` into out, from value index `first` on. */
static void decode_values(const uint8_t* data, size_t size, void* out, size_t n, size_t first,
                          int offset, int dtype) {
  const size_t stream = size > HEADER_BYTES ? (size - HEADER_BYTES) / 4 : 0;
  for (size_t i = 0; i < n; i++) {
    const size_t k = first + i;
    uint32_t raw;
    float v;
    if (stream == 0) {
      raw = (uint32_t) k * UINT32_C(0x9E3779B1);
      v = decode_value(raw, offset, 0);
    } else {
      const uint32_t salt = (uint32_t) (k / stream) * UINT32_C(0x9E3779B1);
      raw = u32_at(data, size, HEADER_BYTES + 4 * (k % stream));
      v = decode_value(raw, offset, salt);
    }
    if (dtype == RMSNORM_F32) {
      ((float*) out)[i] = v;
    } else {
      /* Raw values keep 16 bits as they are; the others are narrowed. */
      const bool keep_raw = (raw & 0xFF) % 8 >= 6;
      ((uint16_t*) out)[i] = keep_raw ? (uint16_t) (raw >> 16)
          : dtype == RMSNORM_BF16 ? f32_to_bf16(v) : f32_to_f16(v);
    }
  }
}

static float decode_weight_offset(unsigned kind, uint32_t raw) {
  switch (kind) {
    case 0: return 0.0f;
    case 1: return 1.0f; /* Gemma */
    case 2: return -0.0f;
    default: {
      uint32_t bits = raw;
      if ((bits & UINT32_C(0x7F800000)) == UINT32_C(0x7F800000)) bits &= UINT32_C(0xBFFFFFFF);
      return from_bits(bits); /* any finite float32, as the JS check allows */
    }
  }
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const uint8_t flags = byte_at(data, size, 0);
  const uint8_t mode = byte_at(data, size, 1);
  const uint32_t dim_bits = byte_at(data, size, 2) | (uint32_t) byte_at(data, size, 3) << 8;
  const int dtype = (mode >> 2 & 3) % 3;
  struct rmsnorm_call c = {
      .rows = mode & 3,
      .dim = dim_bits & 0x8000 ? 1 + (dim_bits & 0x7FFF) % 4200 : 1 + dim_bits % 48,
      .eps = decode_eps(byte_at(data, size, 4), u32_at(data, size, 5)),
      .dtype = dtype,
      .weight_dtype = (mode >> 4 & 1) ? dtype : RMSNORM_F32,
      .cast_mode = (mode >> 5 & 1) ? RMSNORM_CAST_LLAMA : RMSNORM_CAST_GEMMA,
      .weight_offset = decode_weight_offset(mode >> 6, u32_at(data, size, 10)),
  };
  const int offset = (int8_t) byte_at(data, size, 9);
  const size_t n = c.rows * c.dim;

  void* x = malloc(n * elem_size(dtype) + 1);
  void* w = (flags & 1) ? malloc(c.dim * elem_size(c.weight_dtype)) : NULL;
  void* residual = (flags & 2) ? malloc(n * elem_size(dtype) + 1) : NULL;
  if (x == NULL || ((flags & 1) && w == NULL) || ((flags & 2) && residual == NULL)) abort();
  decode_values(data, size, x, n, 0, offset, dtype);
  if (w != NULL) decode_values(data, size, w, c.dim, n, 0, c.weight_dtype);
  if (residual != NULL) decode_values(data, size, residual, n, n + c.dim, 0, dtype);
  c.x = x;
  c.w = w;
  c.residual = residual;

  struct kernel_result simd, scalar;
  run_both_checked(&c, flags >> 2, &simd, &scalar);
  free_result(&simd);
  free_result(&scalar);
  free(x);
  free(w);
  free(residual);
  return 0;
}
