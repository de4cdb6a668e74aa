// rmsNorm on the wasm kernels, through the copying path: the caller's arrays
// are staged in wasm memory (src/loader/kernels.js) and the result copied out.

import { runRowsStaged } from '../loader/staging.js';
import { activeKernels } from './runtime.js';
import { resolveRmsNormArgs } from './validate.js';

/**
 * RMSNorm over the last dimension: y = x / sqrt(mean(x²) + eps) · weight.
 * @param {Float32Array} x rows × dim values, row-major, any byteOffset
 * @param {Float32Array|null} weight dim values, or null for no weight
 * @param {{eps?: number, dim?: number, out?: Float32Array, rstd?: Float32Array}} [options]
 *   eps defaults to 1e-6; dim to weight.length; out may be x itself; rstd
 *   (rows values) receives the per-row 1/rms that rmsNormBackward accepts.
 * @returns {Float32Array} out, or a new array
 */
export function rmsNorm(x, weight, options) {
  const kernels = activeKernels('rmsNorm');
  const { rows, dim, eps, out, rstd } = resolveRmsNormArgs('rmsNorm', x, weight, options);
  const y = out ?? new Float32Array(x.length);
  if (rstd !== undefined) {
    // A pass of its own over x, before y is written (out may be x itself).
    runRowsStaged(kernels, 'rmsNorm', rows, dim, [{ per: 'row', from: x }, { per: 'stat', to: rstd }],
      ([xPtr, rstdPtr], n) => kernels.exports.rmsnorm_rstd_f32(xPtr, rstdPtr, n, dim, eps));
  }
  if (rows > 0) {
    const run = kernels.exports.rmsnorm_f32;
    kernels.runRowsCopying('rmsNorm', x, weight, y, rows, dim,
      (xPtr, wPtr, yPtr, n, d) => run(xPtr, wPtr, yPtr, n, d, eps));
  }
  return y;
}
