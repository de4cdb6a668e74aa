// The JS reference backward passes: plain loops with Math.fround after every
// float32 operation, following the contract in
// src/kernels/f32-norm-backward/norm_backward_f32.h step by step, bit-identical to the wasm
// kernels. Missing statistics come from the reference forward passes.

import { Float32Array, fround } from '../loader/intrinsics.js';
import { layerNormBackward as LAYERNORM_BACKWARD, rmsNormBackward as RMSNORM_BACKWARD } from '../ops/descriptions.js';
import { blockedSum } from './blocked-sum.js';
import { referenceFunction } from './calls.js';
import { layerNormRows } from './layernorm.js';
import { rstdOfRows } from './rmsnorm.js';

// One row of either pass: centred (LayerNorm) subtracts the mean and the
// mean of g; dweight and dbias get this row's terms added (row order).
function backwardRow(dy, x, weight, offset, dim, mean, rstd, centred, dx, dweight, dbias) {
  const xhat = centred
    ? (i) => fround(fround(x[offset + i] - mean) * rstd)
    : (i) => fround(x[offset + i] * rstd);
  const g = weight === null ? (i) => dy[offset + i] : (i) => fround(dy[offset + i] * weight[i]);
  const a = centred ? fround(blockedSum(dim, g) / fround(dim)) : 0;
  const c = fround(blockedSum(dim, (i) => fround(g(i) * xhat(i))) / fround(dim));
  for (let i = 0; i < dim; i++) {
    const gi = centred ? fround(g(i) - a) : g(i);
    const h = xhat(i);
    dx[offset + i] = fround(fround(gi - fround(h * c)) * rstd);
    if (dweight !== null) dweight[i] = fround(dweight[i] + fround(dy[offset + i] * h));
    if (dbias !== null) dbias[i] = fround(dbias[i] + dy[offset + i]);
  }
}

/** Both passes on a resolved call and its inputs: statistics recomputed by
 * the reference forward passes when not given. */
function backward(call, inputs, centred) {
  const { dy, x, weight, rstd: givenRstd } = inputs;
  const { rows, dim, eps } = call;
  let mean = centred ? inputs.mean : null;
  let rstd = givenRstd;
  if (rstd === null) {
    if (centred) {
      ({ mean, rstd } = layerNormRows(call, x, null, null, true, true));
    } else {
      rstd = rstdOfRows(x, rows, dim, eps);
    }
  }
  const dx = new Float32Array(rows * dim);
  const dweight = weight === null ? null : new Float32Array(dim);
  const dbias = centred && call.given('bias') !== null ? new Float32Array(dim) : null;
  for (let r = 0; r < rows; r++) {
    backwardRow(dy, x, weight, r * dim, dim, centred ? mean[r] : 0, rstd[r], centred, dx, dweight, dbias);
  }
  return { dx, dweight, dbias };
}

/**
 * The gradients of rmsNorm in plain JavaScript, bit-identical to the wasm
 * kernels; same signature, options and errors as `rmsNormBackward`.
 */
export const rmsNormBackward = referenceFunction(RMSNORM_BACKWARD, (call, inputs) => backward(call, inputs, false));

/**
 * The gradients of layerNorm in plain JavaScript, bit-identical to the wasm
 * kernels; same signature, options and errors as `layerNormBackward`.
 */
export const layerNormBackward = referenceFunction(LAYERNORM_BACKWARD, (call, inputs) => backward(call, inputs, true));
