/*
 * bfloat16 and float16 storage <-> float32 compute, one value at a time.
 * Used by the scalar kernel, by the rescue path of every kernel and by the
 * SIMD kernel's tails; float16_wasmsimd.h does the same four lanes at a time
 * and must agree bit for bit.
 *
 * Widening is exact. Narrowing rounds to nearest, ties to even, exactly as
 * PyTorch's .to(torch.bfloat16) / .to(torch.float16):
 *   bfloat16: overflow rounds to +-Inf; any NaN becomes 0x7FC0.
 *   float16:  overflow (|v| >= 65520) rounds to +-Inf; subnormals are kept;
 *             any NaN becomes 0x7E00.
 * One NaN pattern per format, whatever the NaN's sign and payload: float32
 * arithmetic leaves those to the engine (x86 makes -NaN, ARM +NaN), and a
 * fixed pattern keeps 16-bit outputs bit-identical across engines, builds
 * and the JS reference.
 */
#ifndef RMSNORM_FLOAT16_H
#define RMSNORM_FLOAT16_H

#include <stdint.h>
#include <string.h>

/* Storage types, as the C ABI numbers them. */
enum rmsnorm_dtype { RMSNORM_F32 = 0, RMSNORM_BF16 = 1, RMSNORM_F16 = 2 };

static inline uint32_t f32_bits(float v) {
  uint32_t u;
  memcpy(&u, &v, sizeof u);
  return u;
}

static inline float f32_from_bits(uint32_t u) {
  float v;
  memcpy(&v, &u, sizeof v);
  return v;
}

static inline float bf16_to_f32(uint16_t h) {
  return f32_from_bits((uint32_t) h << 16);
}

static inline uint16_t f32_to_bf16(float v) {
  const uint32_t u = f32_bits(v);
  if ((u & UINT32_C(0x7FFFFFFF)) > UINT32_C(0x7F800000)) {
    return 0x7FC0;
  }
  /* Adding 0x7FFF, plus one more when the kept part is odd, carries into the
   * kept part exactly when the dropped half is above a tie, or a tie with an
   * odd kept part; a carry out of the largest finite value gives Inf. */
  return (uint16_t) ((u + UINT32_C(0x7FFF) + ((u >> 16) & 1)) >> 16);
}

static inline float f16_to_f32(uint16_t h) {
  const uint32_t sign = (uint32_t) (h & 0x8000) << 16;
  const uint32_t magnitude = h & 0x7FFF;
  uint32_t bits;
  if (magnitude < 0x0400) {
    /* zero or subnormal: m * 2^-24, exact in float32 */
    bits = f32_bits((float) magnitude * 0x1p-24f);
  } else if (magnitude < 0x7C00) {
    /* normal: move the fields and rebias the exponent by 127 - 15 */
    bits = (magnitude << 13) + (UINT32_C(112) << 23);
  } else {
    /* Inf or NaN: exponent 31 -> 255, payload kept */
    bits = (magnitude << 13) + (UINT32_C(224) << 23);
  }
  return f32_from_bits(bits | sign);
}

static inline uint16_t f32_to_f16(float v) {
  const uint32_t u = f32_bits(v);
  const uint16_t sign = (uint16_t) ((u >> 16) & 0x8000);
  const uint32_t a = u & UINT32_C(0x7FFFFFFF);
  if (a > UINT32_C(0x7F800000)) {
    return 0x7E00;
  }
  if (a < UINT32_C(0x38800000)) {
    /* |v| < 2^-14: a float16 subnormal m * 2^-24 with m = |v| * 2^24 rounded
     * to an integer; adding 2^23 makes float32 do that rounding (its spacing
     * there is 1), and m = 1024 is correctly the smallest normal. */
    const float q = f32_from_bits(a) * 0x1p24f + 0x1p23f;
    return sign | (uint16_t) (f32_bits(q) - f32_bits(0x1p23f));
  }
  /* Normal: rebias, then round off 13 bits as in f32_to_bf16. Everything from
   * 65520 up, Inf included, lands at or above 0x7C00 and is clamped to Inf. */
  uint32_t r = a - (UINT32_C(112) << 23);
  r = (r + UINT32_C(0xFFF) + ((r >> 13) & 1)) >> 13;
  return sign | (uint16_t) (r < 0x7C00 ? r : 0x7C00);
}

/* Element i of an array of `dtype`, widened to float32. */
static inline float load_f32(const void* p, size_t i, int dtype) {
  switch (dtype) {
    case RMSNORM_BF16: return bf16_to_f32(((const uint16_t*) p)[i]);
    case RMSNORM_F16: return f16_to_f32(((const uint16_t*) p)[i]);
    default: return ((const float*) p)[i];
  }
}

/* v rounded to `dtype` (identity for float32). */
static inline float round_to(float v, int dtype) {
  switch (dtype) {
    case RMSNORM_BF16: return bf16_to_f32(f32_to_bf16(v));
    case RMSNORM_F16: return f16_to_f32(f32_to_f16(v));
    default: return v;
  }
}

/* Stores v, rounded to `dtype`, as element i. */
static inline void store_f32(void* p, size_t i, float v, int dtype) {
  switch (dtype) {
    case RMSNORM_BF16: ((uint16_t*) p)[i] = f32_to_bf16(v); break;
    case RMSNORM_F16: ((uint16_t*) p)[i] = f32_to_f16(v); break;
    default: ((float*) p)[i] = v; break;
  }
}

static inline size_t dtype_size(int dtype) {
  return dtype == RMSNORM_F32 ? sizeof(float) : sizeof(uint16_t);
}

#endif
