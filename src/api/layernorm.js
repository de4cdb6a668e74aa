// layerNorm on the wasm kernels: arguments in wasm memory are used where
// they are, others staged (src/loader/staging.js).

import { runRowsStaged } from '../loader/staging.js';
import { activeKernels } from './runtime.js';
import { outValue, resolveLayerNormArgs } from './validate.js';

/**
 * LayerNorm over the last dimension: y = (x − mean) / sqrt(var + eps) · weight + bias,
 * with the biased variance (divide by dim), as PyTorch's nn.LayerNorm.
 * See the README for the options (eps, dim, shape, axis, out, mean, rstd).
 * @param {Float32Array|import('./tensor.js').Tensor} x rows × dim values, row-major
 * @param {Float32Array|import('./tensor.js').Tensor|null} weight dim values, or null
 * @param {Float32Array|import('./tensor.js').Tensor|null} bias dim values, or null
 * @param {object} [options] eps defaults to 1e-5; dim to weight.length (else
 *   bias.length); out may be x itself; mean and rstd (rows values each)
 *   receive the per-row statistics that layerNormBackward accepts.
 * @returns {Float32Array|import('./tensor.js').Tensor} options.out, or a new array
 */
export function layerNorm(x, weight, bias, options) {
  const fn = 'layerNorm';
  const kernels = activeKernels(fn);
  const args = resolveLayerNormArgs(fn, x, weight, bias, options);
  const y = args.out ?? { array: new Float32Array(args.x.array.length) };
  const { dim, eps } = args;
  const run = kernels.exports.layernorm_f32;
  runRowsStaged(kernels, fn, args.rows, dim, [
    { name: 'weight', per: 'once', arg: args.weight, dir: 'in' },
    { name: 'bias', per: 'once', arg: args.bias, dir: 'in' },
    { name: 'x', per: 'row', arg: args.x, dir: 'in' },
    { name: 'options.out', per: 'row', arg: y, dir: 'out' },
    { name: 'options.mean', per: 'stat', arg: args.mean, dir: 'out' },
    { name: 'options.rstd', per: 'stat', arg: args.rstd, dir: 'out' },
  ], ([wPtr, bPtr, xPtr, yPtr, meanPtr, rstdPtr], n) =>
    run(xPtr, wPtr, bPtr, yPtr, meanPtr, rstdPtr, n, dim, eps));
  return args.out === undefined ? y.array : outValue(args.out);
}
