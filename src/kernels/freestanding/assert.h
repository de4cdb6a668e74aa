/*
 * <assert.h> for the freestanding wasm64 builds (no libc): they are built
 * with -DNDEBUG, as every module is, so an assert is nothing.
 */
#ifndef RMSNORM_FREESTANDING_ASSERT_H
#define RMSNORM_FREESTANDING_ASSERT_H

#ifndef NDEBUG
#error "the freestanding builds have no assert: build with -DNDEBUG"
#endif
#define assert(condition) ((void) 0)

#endif
