/*
 * The C test programs' inputs: xorshift32, so that every platform makes
 * the same ones, from the RANDOM_SEED the including program defines.
 * Included by example.c (emcc, and natively through SIMDe) and by
 * freestanding64.c (clang-19, no libc): this header needs only stdint.h.
 */
#ifndef RANDOM_INPUTS_H
#define RANDOM_INPUTS_H

#include <stdint.h>

static uint32_t random_state = RANDOM_SEED;

static uint32_t next_random(void) {
  random_state ^= random_state << 13;
  random_state ^= random_state >> 17;
  random_state ^= random_state << 5;
  return random_state;
}

/* A float32 in [-2, 2), exactly representable. */
static float random_value(void) {
  return (float) (next_random() >> 8) * 0x1p-22f - 2.0f;
}

#endif
