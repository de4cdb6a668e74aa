// bfloat16 and float16 conversions for the JS reference, written from the
// formats' definitions (sign, exponent, significand; round half to even) —
// deliberately not the bit tricks of src/kernels/float16.h, so that the two
// check each other. The rounding rules they must agree on are stated there.

import { abs, Float32Array, floor, log2, Uint32Array } from '../loader/intrinsics.js';

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

function float32Bits(v) {
  f32[0] = v;
  return u32[0];
}

function roundHalfEven(q) {
  const below = floor(q);
  const fraction = q - below;
  if (fraction > 0.5) return below + 1;
  if (fraction < 0.5) return below;
  return below % 2 === 0 ? below : below + 1;
}

/** The value of a bfloat16 bit pattern. */
export function bfloat16ToNumber(bits) {
  u32[0] = bits << 16;
  return f32[0];
}

/** The value of a float16 bit pattern. */
export function float16ToNumber(bits) {
  const sign = bits & 0x8000 ? -1 : 1;
  const exponent = (bits >> 10) & 0x1f;
  const significand = bits & 0x3ff;
  if (exponent === 0) return sign * significand * 2 ** -24;
  if (exponent === 31) return significand === 0 ? sign * Infinity : NaN;
  return sign * (1024 + significand) * 2 ** (exponent - 25);
}

/** A float32 value rounded to the nearest bfloat16 (ties to even); NaN → 0x7FC0. */
export function numberToBfloat16(v) {
  if (v !== v) return 0x7fc0;
  const bits = float32Bits(v);
  const toward0 = bits >>> 16; // the bfloat16 just below |v| (same sign)
  const away = toward0 + 1;
  // Magnitudes of the two candidates; one step past the largest finite value
  // is Inf, which rounds as 2^128 would (IEEE overflow).
  const magnitude = (b) => ((b & 0x7fff) === 0x7f80 ? 2 ** 128 : abs(bfloat16ToNumber(b)));
  const below = abs(v) - magnitude(toward0);
  const above = magnitude(away) - abs(v);
  if (below === 0 || (toward0 & 0x7fff) === 0x7f80) return toward0; // exact, or Inf itself
  if (below < above) return toward0;
  if (above < below) return away;
  return toward0 % 2 === 0 ? toward0 : away;
}

/** A float32 value rounded to the nearest float16 (ties to even), keeping
 * subnormals; |v| >= 65520 → Inf; any NaN → 0x7E00 (one fixed pattern, as
 * bfloat16's 0x7FC0: src/kernels/float16.h). */
export function numberToFloat16(v) {
  if (v !== v) return 0x7e00;
  const sign = float32Bits(v) >>> 31 ? 0x8000 : 0;
  const a = abs(v);
  if (a >= 65520) return sign | 0x7c00;
  if (a < 2 ** -14) return sign | roundHalfEven(a * 2 ** 24); // 1024 is the smallest normal
  let exponent = floor(log2(a));
  if (2 ** exponent > a) exponent -= 1;
  if (2 ** (exponent + 1) <= a) exponent += 1;
  let significand = roundHalfEven(a / 2 ** (exponent - 10)); // in [1024, 2048]
  if (significand === 2048) {
    significand = 1024;
    exponent += 1;
  }
  return sign | ((exponent + 15) << 10) | (significand - 1024);
}

/** Reads element i of a `dtype` array as a number (a float32 value). */
export function widen(array, i, dtype) {
  if (dtype === 'bfloat16') return bfloat16ToNumber(array[i]);
  if (dtype === 'float16') return float16ToNumber(array[i]);
  return array[i];
}

/** The storage value of a float32 number: bits for 16-bit dtypes. */
export function narrow(v, dtype) {
  if (dtype === 'bfloat16') return numberToBfloat16(v);
  if (dtype === 'float16') return numberToFloat16(v);
  return v;
}

/** v rounded to `dtype` and read back (identity for float32). */
export function roundTo(v, dtype) {
  return widen([narrow(v, dtype)], 0, dtype);
}
