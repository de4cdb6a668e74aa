/*
 * The SIMD128 intrinsics: the real <wasm_simd128.h> when compiling for
 * WebAssembly with -msimd128, SIMDe's portable implementation of the same
 * wasm_* API otherwise, so that the very same kernel source also builds for
 * the host (native benchmark, sanitizers, fuzzing).
 */
#ifndef RMSNORM_SIMD128_H
#define RMSNORM_SIMD128_H

#if defined(__wasm_simd128__)
#include <wasm_simd128.h>
#else
#define SIMDE_ENABLE_NATIVE_ALIASES
#include <simde/wasm/simd128.h>
#endif

/* The four f32x4 accumulators of a 16-lane sum, stored as lanes 0..15, for
 * the scalar tail and the fold (fold_lanes in common.h). */
static inline void f32x4x4_store(float lanes[16], const v128_t vacc[4]) {
  for (int j = 0; j < 4; j++) {
    wasm_v128_store(lanes + 4 * j, vacc[j]);
  }
}

#endif
