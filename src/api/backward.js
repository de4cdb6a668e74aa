// The backward passes of rmsNorm and layerNorm on the wasm kernels:
// arguments in wasm memory are used where they are, others staged
// (src/loader/staging.js). Without the forward's statistics
// they are recomputed chunk by chunk by the forward kernels themselves, so
// they are the forward's to the bit.

import { DTYPE_CODE } from '../loader/kernels.js';
import { runRowsStaged } from '../loader/staging.js';
import { activeKernels } from './runtime.js';
import { resolveLayerNormBackwardArgs, resolveRmsNormBackwardArgs } from './validate.js';

/**
 * Gradients of rmsNorm(x, weight, { eps }) given dy = ∂loss/∂y (float32).
 * @param {Float32Array|import('./tensor.js').Tensor} dy rows × dim values
 * @param {Float32Array|import('./tensor.js').Tensor} x the forward input
 * @param {Float32Array|import('./tensor.js').Tensor|null} weight dim values, or null
 * @param {object} [options] eps as in the forward call (default 1e-6); dim,
 *   shape, axis as rmsNorm's; rstd: the forward's per-row statistic
 *   (rmsNorm's `rstd` option), else recomputed; dx receives dx and may be dy.
 * @returns {{dx: Float32Array|import('./tensor.js').Tensor, dweight: Float32Array|null}}
 */
export function rmsNormBackward(dy, x, weight, options) {
  const fn = 'rmsNormBackward';
  const kernels = activeKernels(fn);
  const args = resolveRmsNormBackwardArgs(fn, dy, x, weight, options);
  const { dim, eps, rstd } = args;
  const dx = args.dx ?? { array: new Float32Array(args.x.array.length) };
  const dweight = args.weight.array === null ? null : new Float32Array(dim);
  const { rmsnorm_rstd: statistics, rmsnorm_backward_f32: backward } = kernels.exports;
  runRowsStaged(kernels, fn, args.rows, dim, [
    { name: 'weight', per: 'once', arg: args.weight, dir: 'in' },
    { name: 'dweight', per: 'once', arg: dweight && { array: dweight }, dir: 'inout' }, // running sums, from +0
    { name: 'x', per: 'row', arg: args.x, dir: 'in' },
    { name: 'dy', per: 'row', arg: args.dy, dir: 'in' },
    { name: 'options.dx', per: 'row', arg: dx, dir: 'out' },
    rstd === undefined ? { name: 'rstd', per: 'stat', dir: 'scratch' }
      : { name: 'options.rstd', per: 'stat', arg: rstd, dir: 'in' },
  ], ([wPtr, dwPtr, xPtr, dyPtr, dxPtr, rstdPtr], n) => {
    if (rstd === undefined) statistics(xPtr, rstdPtr, n, dim, eps, DTYPE_CODE.float32);
    backward(dyPtr, xPtr, wPtr, rstdPtr, dxPtr, dwPtr, n, dim);
  });
  return { dx: options?.dx ?? dx.array, dweight };
}

/**
 * Gradients of layerNorm(x, weight, bias, { eps }) given dy = ∂loss/∂y.
 * @param {Float32Array|import('./tensor.js').Tensor} dy rows × dim values
 * @param {Float32Array|import('./tensor.js').Tensor} x the forward input
 * @param {Float32Array|import('./tensor.js').Tensor|null} weight dim values, or null
 * @param {Float32Array|import('./tensor.js').Tensor|null} bias dim values, or null
 * @param {object} [options] eps as in the forward call (default 1e-5); dim,
 *   shape, axis as layerNorm's; mean and rstd: the forward's per-row
 *   statistics (both or neither), else recomputed; dx receives dx and may be dy.
 * @returns {{dx: Float32Array|import('./tensor.js').Tensor, dweight: Float32Array|null,
 *   dbias: Float32Array|null}}
 */
export function layerNormBackward(dy, x, weight, bias, options) {
  const fn = 'layerNormBackward';
  const kernels = activeKernels(fn);
  const args = resolveLayerNormBackwardArgs(fn, dy, x, weight, bias, options);
  const { dim, eps, mean, rstd } = args;
  const dx = args.dx ?? { array: new Float32Array(args.x.array.length) };
  const dweight = args.weight.array === null ? null : new Float32Array(dim);
  const dbias = args.bias.array === null ? null : new Float32Array(dim);
  const statistic = (key, given) => (given === undefined ? { name: key, per: 'stat', dir: 'scratch' }
    : { name: `options.${key}`, per: 'stat', arg: given, dir: 'in' });
  const { layernorm_f32: forward, layernorm_backward_f32: backward } = kernels.exports;
  runRowsStaged(kernels, fn, args.rows, dim, [
    { name: 'weight', per: 'once', arg: args.weight, dir: 'in' },
    { name: 'dweight', per: 'once', arg: dweight && { array: dweight }, dir: 'inout' }, // running sums, from +0
    { name: 'dbias', per: 'once', arg: dbias && { array: dbias }, dir: 'inout' },
    { name: 'x', per: 'row', arg: args.x, dir: 'in' },
    { name: 'dy', per: 'row', arg: args.dy, dir: 'in' },
    { name: 'options.dx', per: 'row', arg: dx, dir: 'out' },
    statistic('mean', mean),
    statistic('rstd', rstd),
  ], ([wPtr, dwPtr, dbPtr, xPtr, dyPtr, dxPtr, meanPtr, rstdPtr], n) => {
    // y = NULL: the forward kernel computes only the statistics.
    if (rstd === undefined) forward(xPtr, 0, 0, 0, meanPtr, rstdPtr, n, dim, eps);
    backward(dyPtr, xPtr, wPtr, meanPtr, rstdPtr, dxPtr, dwPtr, dbPtr, n, dim);
  });
  return { dx: options?.dx ?? dx.array, dweight, dbias };
}
