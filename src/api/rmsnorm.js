// rmsNorm and addRmsNorm on the wasm kernels. Arguments already in wasm
// memory (tensors from alloc(), or views of the module's memory) are used in
// place; other arrays are copied in and the result copied out
// (WasmKernels.rmsNorm in src/loader/kernels.js).

import { DTYPE_CODE } from '../loader/kernels.js';
import { runRowsStaged } from '../loader/staging.js';
import { activeKernels } from './runtime.js';
import { ARRAY_TYPE_OF } from './tensor.js';
import {
  RMSNORM_DEFAULT_EPS, isPlainTensorCall, outValue, readRmsNormOptions, resolveAddRmsNormArgs,
  resolveReadRmsNormArgs,
} from './validate.js';

function run(kernels, fn, args) {
  const y = args.out ?? { array: new ARRAY_TYPE_OF[args.dtype](args.x.array.length), tensor: undefined };
  // options.rstd: step 5 of the contract for the row normalized, by its own
  // pass over x before y is written (out may be x), or over the updated
  // residual afterwards.
  if (args.rstd !== undefined && args.residual === undefined) rowRstd(kernels, fn, args, args.x);
  if (args.rows > 0) kernels.rmsNorm(fn, args, y);
  if (args.rstd !== undefined && args.residual !== undefined) rowRstd(kernels, fn, args, args.residual);
  return args.out === undefined ? y.array : outValue(args.out);
}

function rowRstd(kernels, fn, { rows, dim, eps, dtype, rstd }, source) {
  runRowsStaged(kernels, fn, rows, dim,
    [{ name: 'x', per: 'row', arg: source, dir: 'in', dtype }, { name: 'options.rstd', per: 'stat', arg: rstd, dir: 'out' }],
    ([xPtr, rstdPtr], n) => kernels.exports.rmsnorm_rstd(xPtr, rstdPtr, n, dim, eps, DTYPE_CODE[dtype]));
}

/**
 * RMSNorm over the last dimension: y = x / sqrt(mean(x²) + eps) · weight.
 * See the README for the options (eps, dim, out, dtype, weightDtype,
 * castMode, weightOffset, shape, axis, rstd) and the errors.
 * @returns {Float32Array|Uint16Array|import('./tensor.js').Tensor} options.out, or a new array
 */
export function rmsNorm(x, weight, options) {
  const kernels = activeKernels('rmsNorm');
  const opts = readRmsNormOptions('rmsNorm', options);
  if (isPlainTensorCall(kernels, x, weight, opts)) {
    const dim = weight.length;
    kernels.rmsNormTensors(x, weight, opts.out, x.length / dim, dim,
      Math.fround(opts.eps ?? RMSNORM_DEFAULT_EPS));
    return opts.out;
  }
  return run(kernels, 'rmsNorm', resolveReadRmsNormArgs('rmsNorm', x, weight, opts));
}

/**
 * Fused residual add + RMSNorm: residual ← round(x + residual) in place,
 * then y = rmsNorm(residual). Bit-identical to the two steps done apart.
 * @returns {Float32Array|Uint16Array|import('./tensor.js').Tensor} options.out, or a new array
 */
export function addRmsNorm(x, residual, weight, options) {
  const kernels = activeKernels('addRmsNorm');
  return run(kernels, 'addRmsNorm', resolveAddRmsNormArgs('addRmsNorm', x, residual, weight, options));
}
