// The JS reference LayerNorm: plain loops with Math.fround after every
// float32 operation, following the contract in src/kernels/f32-layernorm/layernorm_f32.h
// step by step (the step numbers below are that contract's), bit-identical to
// the wasm kernels. Why Math.fround per operation is exact float32: see
// ./rmsnorm.js.

import { abs, Float32Array, fround, List, sqrt } from '../loader/intrinsics.js';
import { layerNorm as LAYERNORM } from '../ops/descriptions.js';
import { FLT_MAX } from '../ops/options.js';
import { blockedSum } from './blocked-sum.js';
import { referenceFunction } from './calls.js';
import { rescueScale, TINY_SUM } from './rmsnorm.js';

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
  const rstd = fround(1 / fround(sqrt(fround(variance + eps))));
  // rstd is 0 exactly when var + eps overflowed.
  const plainOk = abs(sum) <= FLT_MAX && sumE2 >= TINY_SUM && sumE2 <= FLT_MAX && rstd !== 0;
  return { z, meanHi, meanLo, rstd, plainOk };
}

/**
 * LayerNorm in plain JavaScript, bit-identical to the wasm kernels.
 * Same signature, options and errors as `layerNorm` from 'rmsnorm-wasm'.
 */
export const layerNorm = referenceFunction(LAYERNORM, (call, { x, weight, bias }) => {
  const { y, mean, rstd } = layerNormRows(call, x, weight, bias, call.given('mean') !== null, call.given('rstd') !== null);
  return { out: y, mean, rstd };
});

/** Steps 1-7 on x (read in): y, and the statistics asked for (else null).
 * The backward pass recomputes its statistics here too. */
export function layerNormRows(call, xs, w, b, wantMean, wantRstd) {
  const { rows, dim, eps } = call;
  const y = new Float32Array(rows * dim);
  const mean = wantMean ? new Float32Array(rows) : null;
  const rstd = wantRstd ? new Float32Array(rows) : null;
  for (let r = 0; r < rows; r++) {
    const row = new List(dim);
    for (let i = 0; i < dim; i++) row[i] = xs[r * dim + i];
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
