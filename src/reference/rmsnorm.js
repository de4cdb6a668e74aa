// The JS reference: the same RMSNorm as the wasm kernels, written
// independently in plain loops, with Math.fround after every float32
// operation. It follows the numerics contract in
// src/kernels/f32-rmsnorm/rmsnorm_f32.h step by step (the step numbers below are that
// contract's), and must agree with both wasm modules bit for bit.
//
// Why Math.fround after each operation is exact float32: a sum, product,
// quotient or square root of two float32 values computed in float64 and then
// rounded to float32 equals the float32 operation itself (float64 carries more
// than 2*24+2 bits), so there is no double rounding.

import { abs, Float32Array, floor, fround, hasOwn, List, log2, max, min, sqrt, Uint16Array } from '../loader/intrinsics.js';
import { addRmsNorm as ADD_RMSNORM, rmsNorm as RMSNORM } from '../ops/descriptions.js';
import { FLT_MAX } from '../ops/options.js';
import { blockedSum } from './blocked-sum.js';
import { referenceFunction } from './calls.js';
import { narrow, roundTo, widen } from './float16.js';
import { quantizeValues } from './q8.js';

export const TINY_SUM = 2 ** -64;
export { FLT_MAX };

// Step 1: the blocked sum (./blocked-sum.js) of the squares, of x_i or of
// the rescue path's x_i * scale.
function rowSumOfSquares(row, scale) {
  return blockedSum(row.length, (i) => {
    const v = scale === 1 ? row[i] : fround(row[i] * scale);
    return fround(v * v);
  });
}

// Steps 2 and 3.
function inverseRms(sumOfSquares, dim, eps) {
  const meanSquare = fround(sumOfSquares / fround(dim));
  return fround(1 / fround(sqrt(fround(meanSquare + eps))));
}

// The power of two 2^k that brings max|x| into [1, 2), k clamped to
// [-126, 126]; null when the row holds a NaN or an infinity, or is all zeros.
export function rescueScale(row) {
  let maxAbs = 0;
  for (let i = 0; i < row.length; i++) {
    const a = abs(row[i]);
    if (!(a <= FLT_MAX)) return null; // NaN or infinite
    if (a > maxAbs) maxAbs = a;
  }
  if (maxAbs === 0) return null;
  // max|x| in [2^e, 2^(e+1)); subnormals all share the exponent field 0,
  // i.e. e = -127 for the purpose of the clamp below.
  let e = floor(log2(maxAbs));
  if (2 ** e > maxAbs) e -= 1; // log2 rounding near powers of two
  if (2 ** (e + 1) <= maxAbs) e += 1;
  return 2 ** max(-126, min(126, -max(e, -127)));
}

/** inv for a row, and the exact power-of-two pre-scale of the rescue path. */
function rowScaling(row, eps) {
  const sumOfSquares = rowSumOfSquares(row, 1);
  const plainInv = inverseRms(sumOfSquares, row.length, eps);
  // inv is 0 exactly when mean + eps overflowed.
  if (sumOfSquares >= TINY_SUM && sumOfSquares <= FLT_MAX && plainInv !== 0) {
    return { scale: 1, inv: plainInv };
  }
  // Rescue path: the sum overflowed, underflowed towards zero, or is NaN, or
  // mean + eps overflowed.
  const scale = rescueScale(row);
  if (scale !== null) {
    const epsScaled = fround(fround(eps * scale) * scale);
    if (epsScaled <= FLT_MAX) {
      return { scale, inv: inverseRms(rowSumOfSquares(row, scale), row.length, epsScaled) };
    }
  }
  return { scale: 1, inv: plainInv };
}

// Step 4 for one row: the weight (with its offset), the cast mode, rounding
// to the storage dtype.
function writeRow(row, weights, y, offset, { scale, inv }, dtype, castMode) {
  for (let i = 0; i < row.length; i++) {
    const xi = scale === 1 ? row[i] : fround(row[i] * scale);
    let v = fround(xi * inv);
    if (weights !== null) {
      if (castMode === 'llama') v = roundTo(v, dtype);
      v = fround(v * weights[i]);
    }
    y[offset + i] = narrow(v, dtype);
  }
}

/** The weight as applied (step 4): widened, plus the offset unless it is ±0. */
function appliedWeights(call, w) {
  if (w === null) return null;
  const weights = new List(call.dim);
  for (let i = 0; i < call.dim; i++) {
    const wi = widen(w, i, call.weightDtype);
    weights[i] = call.weightOffset === 0 ? wi : fround(call.weightOffset + wi);
  }
  return weights;
}

function normalizeRows(call, source, w, y, rstd) {
  const { rows, dim, eps, dtype, castMode } = call;
  const weights = appliedWeights(call, w);
  const row = new List(dim);
  for (let r = 0; r < rows; r++) {
    for (let i = 0; i < dim; i++) row[i] = widen(source, r * dim + i, dtype);
    const scaling = rowScaling(row, eps);
    writeRow(row, weights, y, r * dim, scaling, dtype, castMode);
    if (rstd !== null) rstd[r] = stepFive(scaling);
  }
}

// Step 5: the row's 1/rms as the statistic reports it.
const stepFive = ({ scale, inv }) => fround(inv * scale);

/** Step 5 of each of `rows` packed float32 rows of x: the statistic
 * rmsNormBackward recomputes when not given, from a call already checked
 * (no public call, so a run checks nothing its prepare did not). */
export function rstdOfRows(x, rows, dim, eps) {
  const rstd = new Float32Array(rows);
  const row = new List(dim);
  for (let r = 0; r < rows; r++) {
    for (let i = 0; i < dim; i++) row[i] = x[r * dim + i];
    rstd[r] = stepFive(rowScaling(row, eps));
  }
  return rstd;
}

/** rmsNorm or, with a residual, addRmsNorm on a resolved call and its inputs. */
function compute(call, inputs) {
  const { x, weight } = inputs;
  const residual = hasOwn(inputs, 'residual') ? inputs.residual : null; // addRmsNorm's only
  let source = x;
  if (residual !== null) {
    // Step 0: residual <- round(x + residual).
    for (let i = 0; i < call.rows * call.dim; i++) {
      residual[i] = narrow(fround(widen(x, i, call.dtype) + widen(residual, i, call.dtype)), call.dtype);
    }
    source = residual;
  }
  const out = call.dtype === 'float32' ? new Float32Array(call.rows * call.dim) : new Uint16Array(call.rows * call.dim);
  const rstd = call.given('rstd') === null ? null : new Float32Array(call.rows);
  normalizeRows(call, source, weight, out, rstd);
  if (call.outDtype === null) return { residual, out, rstd };
  // A block format: the values the call with a storage-dtype out stores,
  // widened, quantized (docs/numerics.md, "ggml block outputs").
  const values = new Float32Array(out.length);
  for (let i = 0; i < out.length; i++) values[i] = widen(out, i, call.dtype);
  return { residual, out: quantizeValues(values, call.outDtype), rstd };
}

/**
 * RMSNorm in plain JavaScript, bit-identical to the wasm kernels.
 * Same signature, options and errors as `rmsNorm` from 'rmsnorm-wasm'.
 */
export const rmsNorm = referenceFunction(RMSNORM, compute);

/**
 * addRmsNorm in plain JavaScript: residual <- round(x + residual), then
 * RMSNorm of the updated residual (step 0 of the contract).
 */
export const addRmsNorm = referenceFunction(ADD_RMSNORM, compute);
