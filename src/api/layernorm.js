// layerNorm on the wasm kernels, through the copying path
// (src/loader/staging.js).

import { runRowsStaged, staged } from '../loader/staging.js';
import { activeKernels } from './runtime.js';
import { resolveLayerNormArgs } from './validate.js';

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
  const y = staged(args.out) ?? new Float32Array(args.x.array.length);
  const { dim, eps } = args;
  const run = kernels.exports.layernorm_f32;
  runRowsStaged(kernels, fn, args.rows, dim, [
    { per: 'once', from: staged(args.weight) },
    { per: 'once', from: staged(args.bias) },
    { per: 'row', from: staged(args.x), to: y }, // normalized in place in scratch
    { per: 'stat', to: staged(args.mean) },
    { per: 'stat', to: staged(args.rstd) },
  ], ([wPtr, bPtr, xPtr, meanPtr, rstdPtr], n) =>
    run(xPtr, wPtr, bPtr, xPtr, meanPtr, rstdPtr, n, dim, eps));
  return y;
}
