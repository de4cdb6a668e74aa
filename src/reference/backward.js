// The JS reference backward passes: plain loops with Math.fround after every
// float32 operation, following the contract in
// src/kernels/f32-norm-backward/norm_backward_f32.h step by step, bit-identical to the wasm
// kernels. Missing statistics come from the reference forward passes.

import { bitsOf, copyInto, newOutput, readIn, resolveBackward } from '../api/args.js';
import { blockedSum } from './blocked-sum.js';
import { layerNormRows } from './layernorm.js';
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
  for (let i = 0; i < dim; i++) {
    const gi = centred ? fround(g(i) - a) : g(i);
    const h = xhat(i);
    dx[offset + i] = fround(fround(gi - fround(h * c)) * rstd);
    if (dweight !== null) dweight[i] = fround(dweight[i] + fround(dy[offset + i] * h));
    if (dbias !== null) dbias[i] = fround(dbias[i] + dy[offset + i]);
  }
}

/** Both passes on a resolved call: inputs read in, statistics recomputed
 * by the reference forward passes when not given, outputs written last. */
function backward(call, centred) {
  const { rows, dim, eps } = call;
  const dys = readIn(call.dy);
  const xs = readIn(call.x);
  const w = call.weight === null ? null : readIn(call.weight);
  let mean = call.mean === undefined ? null : readIn(call.mean);
  let rstd = call.rstd === undefined ? null : readIn(call.rstd);
  if (rstd === null) {
    if (centred) {
      ({ mean, rstd } = layerNormRows({ rows, dim, eps, weight: null, bias: null }, xs, true, true));
    } else {
      rstd = new Float32Array(rows);
      if (rows > 0) rmsNorm(xs, null, { dim, eps, rstd });
    }
  }
  const dx = new Float32Array(xs.length);
  const dweight = w === null ? null : new Float32Array(dim);
  const dbias = centred && call.bias !== null ? new Float32Array(dim) : null;
  for (let r = 0; r < rows; r++) {
    backwardRow(dys, xs, w, r * dim, dim, centred ? mean[r] : 0, rstd[r], centred, dx, dweight, dbias);
  }
  const out = call.dx ?? newOutput('options.dx', 'float32', dx.length);
  copyInto(bitsOf(out), dx, 0);
  const grads = { dx: out.value, dweight };
  if (centred) grads.dbias = dbias;
  return grads;
}

/**
 * The gradients of rmsNorm in plain JavaScript, bit-identical to the wasm
 * kernels; same signature, options and errors as `rmsNormBackward`.
 * @returns {{dx: Float32Array, dweight: Float32Array|null}}
 */
export function rmsNormBackward(dy, x, weight, options) {
  return backward(resolveBackward('rmsNormBackward', dy, x, weight, undefined, options, false), false);
}

/**
 * The gradients of layerNorm in plain JavaScript, bit-identical to the wasm
 * kernels; same signature, options and errors as `layerNormBackward`.
 * @returns {{dx: Float32Array, dweight: Float32Array|null, dbias: Float32Array|null}}
 */
export function layerNormBackward(dy, x, weight, bias, options) {
  return backward(resolveBackward('layerNormBackward', dy, x, weight, bias, options, true), true);
}
