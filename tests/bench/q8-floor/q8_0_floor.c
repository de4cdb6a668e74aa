// A floor under any fused RMSNorm -> q8_0 kernel in SIMD128, for the ggml
// block benchmark (tests/bench/rows/q8.js): it does less than ggml's rule
// asks, so no exact kernel can be faster. Each block's 32 values of y stay
// in registers; then the block's amax, one division (127 / amax, where the
// rule has two), the multiply, a rounding to nearest-even in two
// instructions (the rule's roundf, halves away from zero, takes four more),
// the narrowing and the stores, and d's float16 by truncation (the rule
// rounds). Its blocks are not ggml's bytes: the bench checks them only
// within the quantization's error. The sum of squares is one sequential
// four-lane loop (the package's is the contract's blocked sum).
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <wasm_simd128.h>

#define MAGIC 0x1.8p23f

static float sum_of_squares(const float* x, size_t dim) {
  v128_t acc[4] = {wasm_f32x4_splat(0), wasm_f32x4_splat(0), wasm_f32x4_splat(0),
                   wasm_f32x4_splat(0)};
  for (size_t i = 0; i < dim; i += 16) {
    for (size_t k = 0; k < 4; k++) {
      const v128_t v = wasm_v128_load(x + i + 4 * k);
      acc[k] = wasm_f32x4_add(acc[k], wasm_f32x4_mul(v, v));
    }
  }
  const v128_t s = wasm_f32x4_add(wasm_f32x4_add(acc[0], acc[1]), wasm_f32x4_add(acc[2], acc[3]));
  return wasm_f32x4_extract_lane(s, 0) + wasm_f32x4_extract_lane(s, 1) +
         wasm_f32x4_extract_lane(s, 2) + wasm_f32x4_extract_lane(s, 3);
}

// rows rows of dim (a multiple of 32) float32 values, packed, to rows of q8_0 blocks.
void q8_0_floor(const float* x, const float* w, uint8_t* out, size_t rows, size_t dim, float eps) {
  const v128_t magic = wasm_f32x4_splat(MAGIC);
  for (size_t r = 0; r < rows; r++, x += dim) {
    const float inv = 1.0f / __builtin_sqrtf(sum_of_squares(x, dim) / (float) dim + eps);
    const v128_t vinv = wasm_f32x4_splat(inv);
    for (size_t i = 0; i < dim; i += 32, out += 34) {
      v128_t y[8];
      v128_t bits = wasm_i32x4_splat(0);
      for (size_t k = 0; k < 8; k++) {
        y[k] = wasm_f32x4_mul(wasm_f32x4_mul(wasm_v128_load(x + i + 4 * k), vinv),
                              wasm_v128_load(w + i + 4 * k));
        bits = wasm_u32x4_max(bits, wasm_v128_and(y[k], wasm_i32x4_splat(0x7FFFFFFF)));
      }
      bits = wasm_u32x4_max(bits, wasm_i32x4_shuffle(bits, bits, 2, 3, 0, 1));
      bits = wasm_u32x4_max(bits, wasm_i32x4_shuffle(bits, bits, 1, 0, 3, 2));
      const float amax = wasm_f32x4_extract_lane(bits, 0);
      const v128_t vid = wasm_f32x4_splat(amax != 0.0f ? 127.0f / amax : 0.0f);
      v128_t q[8];
      for (size_t k = 0; k < 8; k++) {
        q[k] = wasm_i32x4_sub(wasm_f32x4_add(wasm_f32x4_mul(y[k], vid), magic), magic);
      }
      for (size_t h = 0; h < 2; h++) {
        const v128_t lo = wasm_i16x8_narrow_i32x4(q[4 * h], q[4 * h + 1]);
        const v128_t hi = wasm_i16x8_narrow_i32x4(q[4 * h + 2], q[4 * h + 3]);
        wasm_v128_store(out + 2 + 16 * h, wasm_i8x16_narrow_i16x8(lo, hi));
      }
      // d = amax / 127 as float16, its float32 bits truncated (normal d only: a floor, not a
      // format).
      uint32_t d_bits;
      const float d = amax * (1.0f / 127.0f);
      memcpy(&d_bits, &d, sizeof d_bits);
      const uint16_t h = d == 0.0f ? 0 : (uint16_t) ((d_bits >> 13) - (UINT32_C(112) << 10));
      memcpy(out, &h, sizeof h);
    }
  }
}
