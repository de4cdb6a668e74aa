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

#endif
