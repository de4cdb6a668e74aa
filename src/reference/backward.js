// The JS reference backward passes: plain loops with Math.fround after every
// float32 operation, following the contract in
// src/kernels/norm_backward_f32.h step by step, bit-identical to the wasm
// kernels. Missing statistics come from the reference forward passes.

import { resolveLayerNormBackwardArgs, resolveRmsNormBackwardArgs } from '../api/validate.js';
import { blockedSum } from './blocked-sum.js';
import { layerNorm } from './layernorm.js';
import { rmsNorm } from './rmsnorm.js';

const fround = Math.fround;

// One row of either pass: centred (LayerNorm) subtracts the mean and the
// mean of g; dweight and dbias get this row's terms added (row order).
function backwardRow(dy, x, weight, offset, dim, mean, rstd, centred, dx, dweight, dbias) {
  const xhat = centred
    ? (i) => fround(fround(x[offset + i] - mean) * rstd)
    : (i) => fround(x[offset + i] * rstd);
  const g = weight === null ? (i) => dy[offset + i] : (i) => fround(dy[offset + i] * weight[i]);
  const a = centred ? fround(blockedSum(dim, g) / fround(dim)) : 0;
  const c = fround(blockedSum(dim, (i) => fround(g(i) * xhat(i))) / fround(dim));
  const dyRow = dy.slice(offset, offset + dim); // dx may be dy itself
  for (let i = 0; i < dim; i++) {
    const gi = centred ? fround(g(i) - a) : g(i);
    const h = xhat(i);
    dx[offset + i] = fround(fround(gi - fround(h * c)) * rstd);
    if (dweight !== null) dweight[i] = fround(dweight[i] + fround(dyRow[i] * h));
    if (dbias !== null) dbias[i] = fround(dbias[i] + dyRow[i]);
  }
}

/**
 * The gradients of rmsNorm in plain JavaScript, bit-identical to the wasm
 * kernels; same signature, options and errors as `rmsNormBackward`.
 * @returns {{dx: Float32Array, dweight: Float32Array|null}}
 */
export function rmsNormBackward(dy, x, weight, options) {
  const fn = 'rmsNormBackward';
  const { rows, dim, eps, rstd: given, dx: dxOut } = resolveRmsNormBackwardArgs(fn, dy, x, weight, options);
  let rstd = given;
  if (rstd === undefined) {
    rstd = new Float32Array(rows);
    rmsNorm(x, null, { dim, eps, rstd });
  }
  const dx = dxOut ?? new Float32Array(x.length);
  const dweight = weight === null ? null : new Float32Array(dim);
  for (let r = 0; r < rows; r++) {
    backwardRow(dy, x, weight, r * dim, dim, 0, rstd[r], false, dx, dweight, null);
  }
  return { dx, dweight };
}

/**
 * The gradients of layerNorm in plain JavaScript, bit-identical to the wasm
 * kernels; same signature, options and errors as `layerNormBackward`.
 * @returns {{dx: Float32Array, dweight: Float32Array|null, dbias: Float32Array|null}}
 */
export function layerNormBackward(dy, x, weight, bias, options) {
  const fn = 'layerNormBackward';
  const resolved = resolveLayerNormBackwardArgs(fn, dy, x, weight, bias, options);
  const { rows, dim, eps, dx: dxOut } = resolved;
  let { mean, rstd } = resolved;
  if (rstd === undefined) {
    mean = new Float32Array(rows);
    rstd = new Float32Array(rows);
    layerNorm(x, null, null, { dim, eps, mean, rstd });
  }
  const dx = dxOut ?? new Float32Array(x.length);
  const dweight = weight === null ? null : new Float32Array(dim);
  const dbias = bias === null ? null : new Float32Array(dim);
  for (let r = 0; r < rows; r++) {
    backwardRow(dy, x, weight, r * dim, dim, mean[r], rstd[r], true, dx, dweight, dbias);
  }
  return { dx, dweight, dbias };
}
