/*
 * The freestanding wasm64 builds have no libc (clang --target=wasm64
 * -nostdlib, see the Makefile): the little of <math.h> the kernels use,
 * as compiler builtins, each one wasm instruction (f32.sqrt, f32.abs) or a
 * constant.
 */
#ifndef RMSNORM_FREESTANDING_MATH_H
#define RMSNORM_FREESTANDING_MATH_H

#define INFINITY (__builtin_inff())
#define sqrtf __builtin_sqrtf
#define fabsf __builtin_fabsf

#endif
