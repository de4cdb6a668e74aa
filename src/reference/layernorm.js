// The JS reference LayerNorm: plain loops with Math.fround after every
// float32 operation, following the contract in src/kernels/layernorm_f32.h
// step by step (the step numbers below are that contract's), bit-identical to
// the wasm kernels. Why Math.fround per operation is exact float32: see
// ./rmsnorm.js.

import { outValue, resolveLayerNormArgs } from '../api/validate.js';
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
  const plainOk = Math.abs(sum) <= FLT_MAX && sumE2 >= TINY_SUM && sumE2 <= FLT_MAX;
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
  const args = resolveLayerNormArgs('layerNorm', x, weight, bias, options);
  const { rows, dim, eps } = args;
  const [xs, w, b, mean, rstd] = [args.x, args.weight, args.bias, args.mean, args.rstd].map((a) => a?.array ?? null);
  const y = args.out?.array ?? new Float32Array(xs.length);
  for (let r = 0; r < rows; r++) {
    const row = xs.slice(r * dim, (r + 1) * dim); // read before y (maybe x) is written
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
  return args.out === undefined ? y : outValue(args.out);
}
