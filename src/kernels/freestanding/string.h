/*
 * <string.h> for the freestanding wasm64 builds (no libc): memcpy and memset, as
 * compiler builtins. With -mbulk-memory a copy or a fill (a zeroed local
 * array) that is not inlined is one memory.copy / memory.fill instruction,
 * so nothing calls a libc function: the link would fail if one did.
 */
#ifndef RMSNORM_FREESTANDING_STRING_H
#define RMSNORM_FREESTANDING_STRING_H

#include <stddef.h>

#define memcpy __builtin_memcpy
#define memset __builtin_memset

#endif
