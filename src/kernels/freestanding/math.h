/*
 * The freestanding wasm64 builds have no libc (clang --target=wasm64
 * -nostdlib, see the Makefile): the little of <math.h> the kernels use,
 * as compiler builtins, each one wasm instruction (f32.sqrt, f32.abs,
 * f32.trunc, f32.nearest, f32.copysign) or a constant.
 */
#ifndef RMSNORM_FREESTANDING_MATH_H
#define RMSNORM_FREESTANDING_MATH_H

#define INFINITY (__builtin_inff())
#define sqrtf __builtin_sqrtf
#define fabsf __builtin_fabsf
#define truncf __builtin_truncf
#define rintf __builtin_rintf
#define copysignf __builtin_copysignf

#endif
