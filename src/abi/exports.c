/*
 * The C ABI the JS layer calls: one symbol per operation, the same name in
 * every build. Each WebAssembly module links exactly one kernel per
 * operation (ukernels.h): the SIMD128 build the wasmsimd kernel, the
 * baseline build the scalar one. Arguments are checked in JS (src/ops/)
 * before any call reaches this file; C engines call the checked entry
 * points of rmsnorm_wasm.h instead.
 *
 * Two address sizes. The wasm32 modules are built by Emscripten; the
 * memory64 ones (bindMemory on a memory64 memory) by plain clang for
 * wasm64 with no libc, exporting the names the Makefile lists. In those,
 * every address and count is an f64 (an exact integer below 2^53): JS
 * passes plain Numbers to both builds, and no BigInt is made per call.
 */
#include <stdint.h>

#include "ukernels.h"

#if defined(__EMSCRIPTEN__)
#include <emscripten/emscripten.h>
#else
#define EMSCRIPTEN_KEEPALIVE
#endif

#if defined(__wasm64__)
typedef double address;
typedef double count;
#else
typedef uintptr_t address;
typedef uint32_t count;
#endif
/* The pointer an address stands for. */
#define AT(type, a) ((type*) (uintptr_t) (a))

/* Every kernel takes `stride` after `dim`: the per-row arrays (x,
 * residual, y; dy, x, dx) have their rows `stride` elements apart (>= dim),
 * and only each row's dim values are touched; the statistics and the
 * once-arrays (weight, bias, dweight, dbias) are packed. */

/* RMSNorm, or with `residual` (non-NULL) the fused residual add + RMSNorm.
 * dtype / weight_dtype: 0 float32, 1 bfloat16, 2 float16, in any
 * combination; cast_mode: 0 llama, 1 gemma (rmsnorm_f32.h). rstd (NULL or
 * rows floats) receives step 5 of each row normalized; y may be NULL for
 * rstd alone. Addresses are byte addresses in this module's memory. */
EMSCRIPTEN_KEEPALIVE
void rmsnorm(address x, address residual, address w, address y, address rstd, count rows, count dim,
             count stride, float eps, int32_t dtype, int32_t weight_dtype, int32_t cast_mode,
             float weight_offset) {
  UKERNEL(rmsnorm)
  (AT(const void, x), AT(void, residual), AT(const void, w), AT(void, y), AT(float, rstd),
   (size_t) rows, (size_t) dim, (size_t) stride, eps, dtype, weight_dtype, cast_mode,
   weight_offset);
}

/* rmsnorm with y receiving each row as ggml blocks of `format` (enum
 * rmsnorm_q8_format; rmsnorm_f32.h, ../kernels/q8_blocks.h): rows packed,
 * (dim / block values) blocks each, whatever the stride. */
EMSCRIPTEN_KEEPALIVE
void rmsnorm_q8(address x, address residual, address w, address y, address rstd, count rows,
                count dim, count stride, float eps, int32_t dtype, int32_t weight_dtype,
                int32_t cast_mode, float weight_offset, int32_t format) {
  UKERNEL(rmsnorm_q8)
  (AT(const void, x), AT(void, residual), AT(const void, w), AT(void, y), AT(float, rstd),
   (size_t) rows, (size_t) dim, (size_t) stride, eps, dtype, weight_dtype, cast_mode, weight_offset,
   format);
}

EMSCRIPTEN_KEEPALIVE
void layernorm_f32(address x, address w, address b, address y, address mean, address rstd,
                   count rows, count dim, count stride, float eps) {
  UKERNEL(layernorm)
  (AT(const float, x), AT(const float, w), AT(const float, b), AT(float, y), AT(float, mean),
   AT(float, rstd), (size_t) rows, (size_t) dim, (size_t) stride, eps);
}

EMSCRIPTEN_KEEPALIVE
void rmsnorm_backward_f32(address dy, address x, address w, address rstd, address dx, address dw,
                          count rows, count dim, count stride) {
  UKERNEL(rmsnorm_backward)
  (AT(const float, dy), AT(const float, x), AT(const float, w), AT(const float, rstd),
   AT(float, dx), AT(float, dw), (size_t) rows, (size_t) dim, (size_t) stride);
}

EMSCRIPTEN_KEEPALIVE
void layernorm_backward_f32(address dy, address x, address w, address mean, address rstd,
                            address dx, address dw, address db, count rows, count dim,
                            count stride) {
  UKERNEL(layernorm_backward)
  (AT(const float, dy), AT(const float, x), AT(const float, w), AT(const float, mean),
   AT(const float, rstd), AT(float, dx), AT(float, dw), AT(float, db), (size_t) rows, (size_t) dim,
   (size_t) stride);
}

/* The contract's 16-bit conversions over arrays (convert_f32.h): n values of
 * dtype 1 (bfloat16) or 2 (float16) widened to float32, or n float32 values
 * narrowed to them. src and dst do not overlap. */
EMSCRIPTEN_KEEPALIVE
void convert_to_f32(address src, address dst, count n, int32_t dtype) {
  UKERNEL(widen)(AT(const uint16_t, src), AT(float, dst), (size_t) n, dtype);
}

EMSCRIPTEN_KEEPALIVE
void convert_from_f32(address src, address dst, count n, int32_t dtype) {
  UKERNEL(narrow)(AT(const float, src), AT(uint16_t, dst), (size_t) n, dtype);
}

/* The quantizer alone: `blocks` ggml blocks of `format` from float32 src to dst
 * (enum rmsnorm_q8_format, ../kernels/q8_blocks.h), packed. */
EMSCRIPTEN_KEEPALIVE
void quantize_q8(address src, address dst, count blocks, int32_t format) {
  UKERNEL(quantize_q8)(AT(const float, src), AT(void, dst), (size_t) blocks, format);
}

#if !defined(__EMSCRIPTEN__)
/* The kernels' stack pointer, which the loader sets to the top of the region
 * an engine lends (src/api/bind.js), as Emscripten's builds export it: the
 * stack grows down from there. An f64, as every address of the memory64
 * build (the bench's clang-built wasm32 control has the same). */
#if defined(__wasm64__)
#define SET_STACK_POINTER \
  ".globaltype __stack_pointer, i64\nlocal.get %0\ni64.trunc_f64_u\nglobal.set __stack_pointer"
#else
#define SET_STACK_POINTER \
  ".globaltype __stack_pointer, i32\nlocal.get %0\ni32.trunc_f64_u\nglobal.set __stack_pointer"
#endif
void stackRestore(double top) {
  __asm__ volatile(SET_STACK_POINTER ::"r"(top));
}
#endif
