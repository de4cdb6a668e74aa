/*
 * libFuzzer target for every kernel (RMSNorm and the fused add, each with
 * and without y and rstd, and to ggml blocks; LayerNorm, both backward
 * passes), built natively with ASan + UBSan
 * (`make fuzz`). Any input bytes decode to a valid call (the kernels'
 * preconditions are the JS validation's job), which checked_kernels.h runs
 * on both implementations, with and without aliasing.
 *
 * Input layout (short inputs read as zero-padded, values cycle over the rest):
 *   byte 0     operation (% 8): rmsNorm, addRmsNorm, rmsNorm's rstd alone,
 *              layerNorm, rmsNormBackward, layerNormBackward, rmsNorm and
 *              addRmsNorm to ggml blocks (format 1 + (byte 1 bits 1-3) % 3;
 *              dim made a multiple of the block size: 32 to 256, or 256 to
 *              768 for q8_K)
 *   byte 1     which optional arguments are given: bit 0 weight, 1 bias,
 *              2 layerNorm's y, 3 mean, 4 rstd, 5 db; bits 6-7 the RMSNorm
 *              weight's dtype when byte 2 bit 4 is clear (% 3; any with any
 *              storage dtype)
 *   byte 2     bits 0-1 rows (0..3), bits 2-3 storage dtype (% 3), bit 4
 *              weight in the storage dtype (else as byte 1 says), bit 5 cast
 *              mode gemma (else llama: zero is the default, as in every API),
 *              bits 6-7 weight offset kind (RMSNorm)
 *   bytes 3-4  dim: bit 15 set: 1 + (low 15 bits % 4200) (up to 17 blocks
 *              of 256), else 1 + (value % 48) (the lane and tail edges)
 *   byte 5     bits 0-2 eps kind (see decode_eps), bytes 6-9 its raw bits;
 *              bits 3-7 the row stride (see decode_stride): every call
 *              also runs packed, and must give the same bits
 *   byte 10    exponent offset (int8) for ordinary values of x: rows scaled
 *              far up or down take the rescue paths
 *   bytes 11-14  raw bits of the weight offset (kind 3)
 *   bytes 15-16  alignment: 2 bits per argument, in elements
 *   bytes 17-  values, 4 bytes each (see decode_value), for the arguments in
 *              order; 16-bit storage narrows each (raw values keep 16 bits)
 */
#include <float.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "checked_kernels.h"

#define HEADER_BYTES 17

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

/* The stride of the strided runs: dim (g == 0), dim + 1..15 (gaps that
 * leave every row at another alignment), or 2..5 rows' worth plus 0..3
 * (room for the per-row arrays interleaved in one buffer). */
static size_t decode_stride(size_t dim, unsigned g) {
  if (g < 16) return dim + g;
  return (2 + (g & 3)) * dim + ((g >> 2) & 3);
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
      ((uint16_t*) out)[i] = keep_raw                ? (uint16_t) (raw >> 16)
                             : dtype == RMSNORM_BF16 ? f32_to_bf16(v)
                                                     : f32_to_f16(v);
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

/* Input arrays decoded from the value stream, one after another. */
struct decoder {
  const uint8_t* data;
  size_t size;
  size_t next; /* value index */
  int offset;  /* exponent offset of ordinary values */
  void* owned[MAX_ARGS];
  size_t nowned;
};

static void* values(struct decoder* d, size_t n, int dtype, bool scaled) {
  void* p = malloc(n * dtype_size(dtype) + 1);
  if (p == NULL) abort();
  decode_values(d->data, d->size, p, n, d->next, scaled ? d->offset : 0, dtype);
  d->next += n;
  d->owned[d->nowned++] = p;
  return p;
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const unsigned op = byte_at(data, size, 0) % 8;
  const uint8_t given = byte_at(data, size, 1);
  const uint8_t mode = byte_at(data, size, 2);
  const uint32_t dim_bits = byte_at(data, size, 3) | (uint32_t) byte_at(data, size, 4) << 8;
  const size_t rows = mode & 3;
  const size_t dim = dim_bits & 0x8000 ? 1 + (dim_bits & 0x7FFF) % 4200 : 1 + dim_bits % 48;
  const float eps = decode_eps(byte_at(data, size, 5), u32_at(data, size, 6));
  const size_t stride = decode_stride(dim, byte_at(data, size, 5) >> 3);
  const unsigned misalign = byte_at(data, size, 15) | (unsigned) byte_at(data, size, 16) << 8;
  const size_t n = rows * dim;
  struct decoder d = {data, size, 0, (int8_t) byte_at(data, size, 10), {NULL}, 0};
  const bool weighted = given & 1;

  struct outputs simd = {{NULL}}, scalar = {{NULL}};
  if (op >= 6) {
    const int format = 1 + ((given >> 1) & 7) % 3;
    const size_t q8_dim =
        q8_block_values(format) * (1 + (dim - 1) % (format == RMSNORM_Q8_K ? 3 : 8));
    const int dtype = (mode >> 2 & 3) % 3;
    const void* x = values(&d, rows * q8_dim, dtype, true);
    const int weight_dtype = (mode >> 4 & 1) ? dtype : (given >> 6) % 3;
    const void* w = weighted ? values(&d, q8_dim, weight_dtype, false) : NULL;
    const void* residual = op == 7 ? values(&d, rows * q8_dim, dtype, false) : NULL;
    run_rmsnorm_q8_checked(
        x, residual, w, rows, q8_dim, decode_stride(q8_dim, byte_at(data, size, 5) >> 3), eps,
        dtype, weight_dtype, (mode >> 5 & 1) ? RMSNORM_CAST_GEMMA : RMSNORM_CAST_LLAMA,
        decode_weight_offset(mode >> 6, u32_at(data, size, 11)), format, misalign);
  } else if (op <= 2) {
    /* The 16-bit storage types apply to RMSNorm only. */
    const int dtype = (mode >> 2 & 3) % 3;
    const void* x = values(&d, n, dtype, true);
    if (op == 2) {
      const struct call c = rmsnorm_call(x, NULL, NULL, false, true, rows, dim, stride, eps, dtype,
                                         RMSNORM_F32, RMSNORM_CAST_LLAMA, 0.0f);
      run_both_checked(&c, misalign, &simd, &scalar);
    } else {
      const int weight_dtype = (mode >> 4 & 1) ? dtype : (given >> 6) % 3;
      const void* w = weighted ? values(&d, dim, weight_dtype, false) : NULL;
      const void* residual = op == 1 ? values(&d, n, dtype, false) : NULL;
      run_rmsnorm_checked(x, residual, w, rows, dim, stride, eps, dtype, weight_dtype,
                          (mode >> 5 & 1) ? RMSNORM_CAST_GEMMA : RMSNORM_CAST_LLAMA,
                          decode_weight_offset(mode >> 6, u32_at(data, size, 11)), misalign, &simd,
                          &scalar);
    }
  } else if (op == 3) {
    const float* x = values(&d, n, RMSNORM_F32, true);
    const float* w = weighted ? values(&d, dim, RMSNORM_F32, false) : NULL;
    const float* b = (given & 2) ? values(&d, dim, RMSNORM_F32, false) : NULL;
    const struct call c =
        layernorm_call(x, w, b, given & 4, given & 8, given & 16, rows, dim, stride, eps);
    run_both_checked(&c, misalign, &simd, &scalar);
  } else {
    const bool layernorm = op == 5;
    const float* dy = values(&d, n, RMSNORM_F32, false);
    const float* x = values(&d, n, RMSNORM_F32, true);
    const float* w = weighted ? values(&d, dim, RMSNORM_F32, false) : NULL;
    const float* mean = layernorm ? values(&d, rows, RMSNORM_F32, false) : NULL;
    const float* rstd = values(&d, rows, RMSNORM_F32, false);
    const float* dw = weighted ? values(&d, dim, RMSNORM_F32, false) : NULL;
    const float* db = layernorm && (given & 32) ? values(&d, dim, RMSNORM_F32, false) : NULL;
    const struct call c = backward_call(layernorm, dy, x, w, mean, rstd, dw, db, rows, dim, stride);
    run_both_checked(&c, misalign, &simd, &scalar);
  }
  free_outputs(&simd);
  free_outputs(&scalar);
  for (size_t i = 0; i < d.nowned; i++) free(d.owned[i]);
  return 0;
}
