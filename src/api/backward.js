// The backward passes of rmsNorm and layerNorm on the wasm kernels, through
// the copying path (src/loader/staging.js). Without the forward's statistics
// they are recomputed chunk by chunk by the forward kernels themselves, so
// they are the forward's to the bit.

import { runRowsStaged } from '../loader/staging.js';
import { activeKernels } from './runtime.js';
import { resolveLayerNormBackwardArgs, resolveRmsNormBackwardArgs } from './validate.js';

/**
 * Gradients of rmsNorm(x, weight, { eps }) given dy = ∂loss/∂y.
 * @param {Float32Array} dy rows × dim values
 * @param {Float32Array} x the forward input, rows × dim values
 * @param {Float32Array|null} weight dim values, or null
 * @param {{eps?: number, dim?: number, rstd?: Float32Array, dx?: Float32Array}} [options]
 *   eps as in the forward call (default 1e-6); rstd: the forward's per-row
 *   statistic (rmsNorm's `rstd` option), else recomputed; dx receives dx and
 *   may be dy itself.
 * @returns {{dx: Float32Array, dweight: Float32Array|null}}
 */
export function rmsNormBackward(dy, x, weight, options) {
  const fn = 'rmsNormBackward';
  const kernels = activeKernels(fn);
  const { rows, dim, eps, rstd, dx: dxOut } = resolveRmsNormBackwardArgs(fn, dy, x, weight, options);
  const dx = dxOut ?? new Float32Array(x.length);
  const dweight = weight === null ? null : new Float32Array(dim);
  const { rmsnorm_rstd_f32: stats, rmsnorm_backward_f32: backward } = kernels.exports;
  runRowsStaged(kernels, fn, rows, dim, [
    { per: 'once', from: weight },
    { per: 'once', from: dweight, to: dweight }, // running sums, from +0
    { per: 'row', from: x },
    { per: 'row', from: dy, to: dx }, // dx computed in place of dy
    { per: 'stat', from: rstd, scratch: true },
  ], ([wPtr, dwPtr, xPtr, dyPtr, rstdPtr], n) => {
    if (rstd === undefined) stats(xPtr, rstdPtr, n, dim, eps);
    backward(dyPtr, xPtr, wPtr, rstdPtr, dyPtr, dwPtr, n, dim);
  });
  return { dx, dweight };
}

/**
 * Gradients of layerNorm(x, weight, bias, { eps }) given dy = ∂loss/∂y.
 * @param {Float32Array} dy rows × dim values
 * @param {Float32Array} x the forward input, rows × dim values
 * @param {Float32Array|null} weight dim values, or null
 * @param {Float32Array|null} bias dim values, or null
 * @param {{eps?: number, dim?: number, mean?: Float32Array, rstd?: Float32Array,
 *   dx?: Float32Array}} [options] eps as in the forward call (default 1e-5);
 *   mean and rstd: the forward's per-row statistics (both or neither), else
 *   recomputed; dx receives dx and may be dy itself.
 * @returns {{dx: Float32Array, dweight: Float32Array|null, dbias: Float32Array|null}}
 */
export function layerNormBackward(dy, x, weight, bias, options) {
  const fn = 'layerNormBackward';
  const kernels = activeKernels(fn);
  const { rows, dim, eps, mean, rstd, dx: dxOut } =
    resolveLayerNormBackwardArgs(fn, dy, x, weight, bias, options);
  const dx = dxOut ?? new Float32Array(x.length);
  const dweight = weight === null ? null : new Float32Array(dim);
  const dbias = bias === null ? null : new Float32Array(dim);
  const { layernorm_f32: forward, layernorm_backward_f32: backward } = kernels.exports;
  runRowsStaged(kernels, fn, rows, dim, [
    { per: 'once', from: weight },
    { per: 'once', from: dweight, to: dweight }, // running sums, from +0
    { per: 'once', from: dbias, to: dbias },
    { per: 'row', from: x },
    { per: 'row', from: dy, to: dx }, // dx computed in place of dy
    { per: 'stat', from: mean, scratch: true },
    { per: 'stat', from: rstd, scratch: true },
  ], ([wPtr, dwPtr, dbPtr, xPtr, dyPtr, meanPtr, rstdPtr], n) => {
    // y = NULL: the forward kernel computes only the statistics.
    if (rstd === undefined) forward(xPtr, 0, 0, 0, meanPtr, rstdPtr, n, dim, eps);
    backward(dyPtr, xPtr, wPtr, meanPtr, rstdPtr, dyPtr, dwPtr, dbPtr, n, dim);
  });
  return { dx, dweight, dbias };
}
