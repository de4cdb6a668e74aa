// The JS reference: the same RMSNorm as the wasm kernels, written
// independently in plain loops, with Math.fround after every float32
// operation. It follows the numerics contract in
// src/kernels/rmsnorm_f32.h step by step (the step numbers below are that
// contract's), and must agree with both wasm modules bit for bit.
//
// Why Math.fround after each operation is exact float32: a sum, product,
// quotient or square root of two float32 values computed in float64 and then
// rounded to float32 equals the float32 operation itself (float64 carries more
// than 2*24+2 bits), so there is no double rounding.

import { resolveRmsNormArgs } from '../api/validate.js';
import { blockedSum } from './blocked-sum.js';

const fround = Math.fround;
export const TINY_SUM = 2 ** -64;
const FLT_MAX = 3.4028234663852886e38;

// Step 1: the blocked sum (./blocked-sum.js) of the squares, of x_i or of
// the rescue path's x_i * scale.
function rowSumOfSquares(x, offset, dim, scale) {
  return blockedSum(dim, (i) => {
    const v = scale === 1 ? x[offset + i] : fround(x[offset + i] * scale);
    return fround(v * v);
  });
}

// Steps 2 and 3.
function inverseRms(sumOfSquares, dim, eps) {
  const meanSquare = fround(sumOfSquares / fround(dim));
  return fround(1 / fround(Math.sqrt(fround(meanSquare + eps))));
}

// Step 4, with the optional exact power-of-two pre-scale of the rescue path.
function writeRow(x, weight, y, offset, dim, scale, inv) {
  for (let i = 0; i < dim; i++) {
    const xi = scale === 1 ? x[offset + i] : fround(x[offset + i] * scale);
    const v = fround(xi * inv);
    y[offset + i] = weight === null ? v : fround(v * weight[i]);
  }
}

// The power of two 2^k that brings max|x| into [1, 2), k clamped to
// [-126, 126]; null when the row holds a NaN or an infinity, or is all zeros.
export function rescueScale(x, offset, dim) {
  let maxAbs = 0;
  for (let i = 0; i < dim; i++) {
    const a = Math.abs(x[offset + i]);
    if (!(a <= FLT_MAX)) return null; // NaN or infinite
    if (a > maxAbs) maxAbs = a;
  }
  if (maxAbs === 0) return null;
  // max|x| in [2^e, 2^(e+1)); subnormals all share the exponent field 0,
  // i.e. e = -127 for the purpose of the clamp below.
  let e = Math.floor(Math.log2(maxAbs));
  if (2 ** e > maxAbs) e -= 1; // log2 rounding near powers of two
  if (2 ** (e + 1) <= maxAbs) e += 1;
  const k = Math.max(-126, Math.min(126, -Math.max(e, -127)));
  return 2 ** k;
}

// Returns the row's rstd (contract step 5).
function normalizeRow(x, weight, y, offset, dim, eps) {
  const sumOfSquares = rowSumOfSquares(x, offset, dim, 1);
  if (sumOfSquares >= TINY_SUM && sumOfSquares <= FLT_MAX) {
    const inv = inverseRms(sumOfSquares, dim, eps);
    writeRow(x, weight, y, offset, dim, 1, inv);
    return inv;
  }
  // Rescue path: the sum overflowed, underflowed towards zero, or is NaN.
  const scale = rescueScale(x, offset, dim);
  if (scale !== null) {
    const epsScaled = fround(fround(eps * scale) * scale);
    if (epsScaled <= FLT_MAX) {
      const scaledSum = rowSumOfSquares(x, offset, dim, scale);
      const inv = inverseRms(scaledSum, dim, epsScaled);
      writeRow(x, weight, y, offset, dim, scale, inv);
      return fround(inv * scale);
    }
  }
  const inv = inverseRms(sumOfSquares, dim, eps);
  writeRow(x, weight, y, offset, dim, 1, inv);
  return inv;
}

/**
 * RMSNorm in plain JavaScript, bit-identical to the wasm kernels.
 * Same signature, options and errors as `rmsNorm` from 'rmsnorm-wasm'.
 * @param {Float32Array} x rows × dim values, row-major
 * @param {Float32Array|null} weight dim values, or null for none
 * @param {{eps?: number, dim?: number, out?: Float32Array, rstd?: Float32Array}} [options]
 * @returns {Float32Array}
 */
export function rmsNorm(x, weight, options) {
  const { rows, dim, eps, out, rstd } = resolveRmsNormArgs('rmsNorm', x, weight, options);
  const y = out ?? new Float32Array(x.length);
  for (let r = 0; r < rows; r++) {
    const rowRstd = normalizeRow(x, weight, y, r * dim, dim, eps);
    if (rstd !== undefined) rstd[r] = rowRstd;
  }
  return y;
}
