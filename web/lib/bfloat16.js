// The bfloat16 the page simulates, written once: panel 5's and panel 8's
// "bfloat16 throughout", and panel 8's residual stream stored in bfloat16.
// It rounds with the reference's conversions (src/reference/float16.js), so
// a simulated bfloat16 value is the one the package would store, a NaN of
// any payload included (0x7FC0).

import { bfloat16ToNumber, numberToBfloat16 } from '../../src/reference/float16.js';

/** `v` rounded to the nearest bfloat16 (ties to even), as a number. */
export function roundBfloat16(v) {
  return bfloat16ToNumber(numberToBfloat16(v));
}

/** Writes the bfloat16 bit patterns of `values` into `bits` (a Uint16Array as long); returns `bits`. */
export function narrowInto(bits, values) {
  for (let i = 0; i < values.length; i++) bits[i] = numberToBfloat16(values[i]);
  return bits;
}

/** Writes the values of the bfloat16 bit patterns `bits` into `values` (a Float32Array as long); returns `values`. */
export function widenInto(values, bits) {
  for (let i = 0; i < bits.length; i++) values[i] = bfloat16ToNumber(bits[i]);
  return values;
}

/**
 * One row through RMSNorm with every operation rounded to bfloat16, as
 * PyTorch runs it on bfloat16 tensors without the float32 upcast: x and γ
 * as bfloat16, each square, the mean (summed wider, then rounded), + ε, the
 * inverse root, x · inv, and · γ. `x`, `w`, `y`: arrays of numbers, `y`
 * written with bfloat16 values.
 */
export function bfloat16RmsNorm(x, w, y, eps) {
  const bf = roundBfloat16;
  let sum = 0;
  for (let i = 0; i < x.length; i++) sum += bf(bf(x[i]) ** 2);
  const inv = bf(1 / Math.sqrt(bf(bf(sum / x.length) + eps)));
  for (let i = 0; i < x.length; i++) y[i] = bf(bf(bf(x[i]) * inv) * bf(w[i]));
}
