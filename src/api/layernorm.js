// layerNorm on the wasm kernels, through the copying path
// (src/loader/staging.js).

import { runRowsStaged } from '../loader/staging.js';
import { activeKernels } from './runtime.js';
import { resolveLayerNormArgs } from './validate.js';

/**
 * LayerNorm over the last dimension: y = (x − mean) / sqrt(var + eps) · weight + bias,
 * with the biased variance (divide by dim), as PyTorch's nn.LayerNorm.
 * @param {Float32Array} x rows × dim values, row-major, any byteOffset
 * @param {Float32Array|null} weight dim values, or null for no weight
 * @param {Float32Array|null} bias dim values, or null for no bias
 * @param {{eps?: number, dim?: number, out?: Float32Array, mean?: Float32Array,
 *   rstd?: Float32Array}} [options] eps defaults to 1e-5; dim to weight.length
 *   (else bias.length); out may be x itself; mean and rstd (rows values each)
 *   receive the per-row statistics that layerNormBackward accepts.
 * @returns {Float32Array} out, or a new array
 */
export function layerNorm(x, weight, bias, options) {
  const kernels = activeKernels('layerNorm');
  const { rows, dim, eps, out, mean, rstd } = resolveLayerNormArgs('layerNorm', x, weight, bias, options);
  const y = out ?? new Float32Array(x.length);
  const run = kernels.exports.layernorm_f32;
  runRowsStaged(kernels, 'layerNorm', rows, dim, [
    { per: 'once', from: weight },
    { per: 'once', from: bias },
    { per: 'row', from: x, to: y }, // normalized in place in scratch
    { per: 'stat', to: mean },
    { per: 'stat', to: rstd },
  ], ([wPtr, bPtr, xPtr, meanPtr, rstdPtr], n) =>
    run(xPtr, wPtr, bPtr, xPtr, meanPtr, rstdPtr, n, dim, eps));
  return y;
}
