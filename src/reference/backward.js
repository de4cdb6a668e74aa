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
  const args = resolveRmsNormBackwardArgs('rmsNormBackward', dy, x, weight, options);
  const { rows, dim, eps } = args;
  const [dys, xs, w] = [args.dy.array, args.x.array, args.weight.array];
  let rstd = args.rstd?.array;
  if (rstd === undefined) {
    rstd = new Float32Array(rows);
    rmsNorm(xs, null, { dim, eps, rstd });
  }
  const dx = args.dx?.array ?? new Float32Array(xs.length);
  const dweight = w === null ? null : new Float32Array(dim);
  for (let r = 0; r < rows; r++) {
    backwardRow(dys, xs, w, r * dim, dim, 0, rstd[r], false, dx, dweight, null);
  }
  return { dx: options?.dx ?? dx, dweight };
}

/**
 * The gradients of layerNorm in plain JavaScript, bit-identical to the wasm
 * kernels; same signature, options and errors as `layerNormBackward`.
 * @returns {{dx: Float32Array, dweight: Float32Array|null, dbias: Float32Array|null}}
 */
export function layerNormBackward(dy, x, weight, bias, options) {
  const args = resolveLayerNormBackwardArgs('layerNormBackward', dy, x, weight, bias, options);
  const { rows, dim, eps } = args;
  const [dys, xs, w] = [args.dy.array, args.x.array, args.weight.array];
  let [mean, rstd] = [args.mean?.array, args.rstd?.array];
  if (rstd === undefined) {
    mean = new Float32Array(rows);
    rstd = new Float32Array(rows);
    layerNorm(xs, null, null, { dim, eps, mean, rstd });
  }
  const dx = args.dx?.array ?? new Float32Array(xs.length);
  const dweight = w === null ? null : new Float32Array(dim);
  const dbias = args.bias.array === null ? null : new Float32Array(dim);
  for (let r = 0; r < rows; r++) {
    backwardRow(dys, xs, w, r * dim, dim, mean[r], rstd[r], true, dx, dweight, dbias);
  }
  return { dx: options?.dx ?? dx, dweight, dbias };
}
