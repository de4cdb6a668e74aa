// The JS reference LayerNorm: plain loops with Math.fround after every
// float32 operation, following the contract in src/kernels/f32-layernorm/layernorm_f32.h
// step by step (the step numbers below are that contract's), bit-identical to
// the wasm kernels. Why Math.fround per operation is exact float32: see
// ./rmsnorm.js.

import { bitsOf, copyInto, newOutput, readIn, resolveLayerNorm } from '../api/args.js';
import { blockedSum } from './blocked-sum.js';
import { FLT_MAX, rescueScale, TINY_SUM } from './rmsnorm.js';

const fround = Math.fround;

// Steps 1-5 on z_i = x_i * scale (scale 1: z_i = x_i, no multiply).
function rowStatistics(row, eps, scale) {
  const dim = row.length;
  const z = scale === 1 ? (i) => row[i] : (i) => fround(row[i] * scale);
  const sum = blockedSum(dim, z);
  const meanHi = fround(sum / fround(dim));
  const deviation = (i) => fround(z(i) - meanHi);
  const sumE = blockedSum(dim, deviation);
  const sumE2 = blockedSum(dim, (i) => fround(deviation(i) * deviation(i)));
  const meanLo = fround(sumE / fround(dim));
  let variance = fround(fround(sumE2 / fround(dim)) - fround(meanLo * meanLo));
  if (variance < 0) variance = 0;
  const rstd = fround(1 / fround(Math.sqrt(fround(variance + eps))));
  // rstd is 0 exactly when var + eps overflowed.
  const plainOk = Math.abs(sum) <= FLT_MAX && sumE2 >= TINY_SUM && sumE2 <= FLT_MAX && rstd !== 0;
  return { z, meanHi, meanLo, rstd, plainOk };
}

/**
 * LayerNorm in plain JavaScript, bit-identical to the wasm kernels.
 * Same signature, options and errors as `layerNorm` from 'rmsnorm-wasm'.
 * @param {Float32Array} x rows × dim values, row-major
 * @param {Float32Array|null} weight dim values, or null
 * @param {Float32Array|null} bias dim values, or null
 * @param {{eps?: number, dim?: number, out?: Float32Array, mean?: Float32Array,
 *   rstd?: Float32Array}} [options]
 * @returns {Float32Array}
 */
export function layerNorm(x, weight, bias, options) {
  const call = resolveLayerNorm('layerNorm', x, weight, bias, options);
  const { y, mean, rstd } = layerNormRows(call, readIn(call.x), call.mean !== undefined, call.rstd !== undefined);
  if (mean !== null) copyInto(bitsOf(call.mean), mean, 0);
  if (rstd !== null) copyInto(bitsOf(call.rstd), rstd, 0);
  const out = call.out ?? newOutput('options.out', 'float32', y.length);
  copyInto(bitsOf(out), y, 0);
  return out.value;
}

/** Steps 1-7 on x (read in): y, and the statistics asked for (else null).
 * The backward pass recomputes its statistics here too. */
export function layerNormRows(call, xs, wantMean, wantRstd) {
  const { rows, dim, eps } = call;
  const w = call.weight === null ? null : readIn(call.weight);
  const b = call.bias === null ? null : readIn(call.bias);
  const y = new Float32Array(xs.length);
  const mean = wantMean ? new Float32Array(rows) : null;
  const rstd = wantRstd ? new Float32Array(rows) : null;
  for (let r = 0; r < rows; r++) {
    const row = xs.subarray(r * dim, (r + 1) * dim);
    let scale = 1;
    let st = rowStatistics(row, eps, 1);
    if (!st.plainOk) {
      // Rescue path: as RMSNorm's, with the same power of two.
      const rescue = rescueScale(row);
      const epsScaled = rescue === null ? Infinity : fround(fround(eps * rescue) * rescue);
      if (epsScaled <= FLT_MAX) {
        scale = rescue;
        st = rowStatistics(row, epsScaled, scale);
      }
    }
    // Step 6.
    for (let i = 0; i < dim; i++) {
      let v = fround(fround(fround(st.z(i) - st.meanHi) - st.meanLo) * st.rstd);
      if (w !== null) v = fround(v * w[i]);
      y[r * dim + i] = b === null ? v : fround(v + b[i]);
    }
    // Step 7.
    if (mean !== null) mean[r] = fround(fround(st.meanHi + st.meanLo) / scale);
    if (rstd !== null) rstd[r] = fround(st.rstd * scale);
  }
  return { y, mean, rstd };
}
