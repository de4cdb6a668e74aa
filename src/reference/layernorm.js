// The JS reference LayerNorm: plain loops with Math.fround after every
// float32 operation, following the contract in src/kernels/layernorm_f32.h
// step by step (the step numbers below are that contract's), bit-identical to
// the wasm kernels. Why Math.fround per operation is exact float32: see
// ./rmsnorm.js.

import { resolveLayerNormArgs } from '../api/validate.js';
import { blockedSum } from './blocked-sum.js';
import { rescueScale, TINY_SUM } from './rmsnorm.js';

const fround = Math.fround;
const FLT_MAX = 3.4028234663852886e38;

// Steps 1-5 on z_i = x_i * scale (scale 1: z_i = x_i, no multiply).
function rowStatistics(x, offset, dim, eps, scale) {
  const z = scale === 1 ? (i) => x[offset + i] : (i) => fround(x[offset + i] * scale);
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
  const { rows, dim, eps, out, mean, rstd } = resolveLayerNormArgs('layerNorm', x, weight, bias, options);
  const y = out ?? new Float32Array(x.length);
  for (let r = 0; r < rows; r++) {
    const offset = r * dim;
    let scale = 1;
    let st = rowStatistics(x, offset, dim, eps, 1);
    if (!st.plainOk) {
      // Rescue path: as RMSNorm's, with the same power of two.
      const rescue = rescueScale(x, offset, dim);
      const epsScaled = rescue === null ? Infinity : fround(fround(eps * rescue) * rescue);
      if (epsScaled <= FLT_MAX) {
        scale = rescue;
        st = rowStatistics(x, offset, dim, epsScaled, scale);
      }
    }
    // Step 6. All of the row is read (above) before any of it is written.
    for (let i = 0; i < dim; i++) {
      let v = fround(fround(fround(st.z(i) - st.meanHi) - st.meanLo) * st.rstd);
      if (weight !== null) v = fround(v * weight[i]);
      y[offset + i] = bias === null ? v : fround(v + bias[i]);
    }
    // Step 7.
    if (mean !== undefined) mean[r] = fround(fround(st.meanHi + st.meanLo) / scale);
    if (rstd !== undefined) rstd[r] = fround(st.rstd * scale);
  }
  return y;
}
