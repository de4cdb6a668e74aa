// Every public function, described once. The wasm API's functions (on
// every kind of instance), the reference's argument handling, the staging
// and the loader's list of required exports all come from these.
//
// A description gives the function's positional parameters, its options
// with their defaults, its arrays and its kernel call:
// - arrays, in the order outputs are written: `per` ROW (dim values a row),
//   STAT (one a row) or ONCE (dim for the whole call); `dir` IN, OUT, INOUT
//   or NONE (measured for its size, never read: the bias of
//   layerNormBackward); `dtype` 'storage' (the call's dtype, float32 unless
//   the function has options.dtype), 'weight' or 'float32'; `over`, the
//   input an output may sit exactly over; `result`, made by the call when
//   not given (`made`: only beside that parameter); `scratch`, a statistic
//   that is the kernel's working space when not given (recomputed);
//   `blocks`, an output options.outDtype may make ggml blocks (a row of
//   blocks, BLOCKS in ./resolve.js), with `c.outFormatCode` not 0 then.
// - elementwise: a function of each value alone (the converters): its
//   arrays are rows of one value, no dim, eps or row stride. blockwise: a
//   function of each ggml block alone (the quantizer): its rows are blocks
//   of the format options.dtype names.
// - formatOption: the option that names a block output's format,
//   'outDtype' unless given (the quantizer's is 'dtype'): checks and their
//   messages name it.
// - kernel(exports, call, pointers, rows): pointers by slot name, 0 for an
//   array not given (the kernels' "absent"; no array is ever at address 0);
//   `call.kernelStride` is the stride in values of the `rows` rows it is
//   given (src/abi/exports.c): the row stride, or with options.heads the
//   head stride, one kernel call a token (src/api/run.js, runKernel).

import { DTYPE } from '../loader/abi.js';
import { define, IN, INOUT, NONE, ONCE, OUT, ROW, STAT } from './resolve.js';

const F32 = DTYPE.float32.code;

const rmsNormArrays = (fused) => ({
  x: { param: 0, per: ROW, dir: IN },
  weight: { param: fused ? 2 : 1, per: ONCE, dir: IN, dtype: 'weight', nullable: true },
  ...(fused ? { residual: { param: 1, per: ROW, dir: INOUT } } : {}),
  out: { per: ROW, dir: OUT, over: 'x', result: true, blocks: true },
  rstd: { per: STAT, dir: OUT, dtype: 'float32' },
});
const RMSNORM_OPTIONS = {
  eps: 1e-6, dim: undefined, out: undefined, dtype: 'float32', weightDtype: undefined, castMode: 'llama',
  weightOffset: 0, shape: undefined, axis: -1, rowStride: undefined, heads: undefined, headStride: undefined, rstd: undefined, outDtype: undefined,
};
// rmsNorm has no residual slot: its pointers have no `residual` to read
// (one read there would find Object.prototype's). A blocked out
// (options.outDtype a block format) is rmsnorm_q8's, which quantizes each
// row as it is normalized.
const rmsNormKernel = (fused) => (e, c, p, n) => {
  if (c.outFormatCode === 0) {
    e.rmsnorm(p.x, fused ? p.residual : 0, p.weight, p.out, p.rstd, n,
      c.dim, c.kernelStride, c.eps, c.dtypeCode, c.weightDtypeCode, c.castModeCode, c.weightOffset);
  } else {
    e.rmsnorm_q8(p.x, fused ? p.residual : 0, p.weight, p.out, p.rstd, n,
      c.dim, c.kernelStride, c.eps, c.dtypeCode, c.weightDtypeCode, c.castModeCode, c.weightOffset, c.outFormatCode);
  }
};

export const rmsNorm = define('rmsNorm', {
  params: ['x', 'weight'], options: RMSNORM_OPTIONS, arrays: rmsNormArrays(false), returns: 'out',
  exports: ['rmsnorm', 'rmsnorm_q8'], kernel: rmsNormKernel(false),
});

export const addRmsNorm = define('addRmsNorm', {
  params: ['x', 'residual', 'weight'], options: RMSNORM_OPTIONS, arrays: rmsNormArrays(true), returns: 'out',
  exports: ['rmsnorm', 'rmsnorm_q8'], kernel: rmsNormKernel(true),
});

export const layerNorm = define('layerNorm', {
  params: ['x', 'weight', 'bias'],
  options: {
    eps: 1e-5, dim: undefined, shape: undefined, axis: -1, rowStride: undefined, heads: undefined, headStride: undefined,
    out: undefined, mean: undefined, rstd: undefined,
  },
  arrays: {
    x: { param: 0, per: ROW, dir: IN },
    weight: { param: 1, per: ONCE, dir: IN, nullable: true },
    bias: { param: 2, per: ONCE, dir: IN, nullable: true },
    out: { per: ROW, dir: OUT, over: 'x', result: true },
    mean: { per: STAT, dir: OUT },
    rstd: { per: STAT, dir: OUT },
  },
  returns: 'out',
  exports: ['layernorm_f32'],
  kernel: (e, c, p, n) => e.layernorm_f32(p.x, p.weight, p.bias, p.out, p.mean, p.rstd, n, c.dim, c.kernelStride, c.eps),
});

// The backward passes: statistics not given are recomputed chunk by chunk
// by the forward kernels themselves, so they are the forward's to the bit.
// dweight and dbias are running sums over the rows, from +0.
const backwardArrays = (layer) => ({
  dy: { param: 0, per: ROW, dir: IN },
  x: { param: 1, per: ROW, dir: IN },
  weight: { param: 2, per: ONCE, dir: IN, nullable: true },
  ...(layer ? { bias: { param: 3, per: ONCE, dir: NONE, nullable: true } } : {}),
  dx: { per: ROW, dir: OUT, over: 'dy', result: true },
  dweight: { per: ONCE, dir: INOUT, result: true, made: 'weight' },
  ...(layer ? { dbias: { per: ONCE, dir: INOUT, result: true, made: 'bias' } } : {}),
  ...(layer ? { mean: { per: STAT, dir: IN, scratch: true } } : {}),
  rstd: { per: STAT, dir: IN, scratch: true },
});

export const rmsNormBackward = define('rmsNormBackward', {
  params: ['dy', 'x', 'weight'],
  options: { eps: 1e-6, dim: undefined, shape: undefined, axis: -1, rowStride: undefined, rstd: undefined, dx: undefined },
  arrays: backwardArrays(false),
  returns: ['dx', 'dweight'],
  exports: ['rmsnorm', 'rmsnorm_backward_f32'],
  kernel(e, c, p, n) {
    if (c.given('rstd') === null) e.rmsnorm(p.x, 0, 0, 0, p.rstd, n, c.dim, c.kernelStride, c.eps, F32, F32, 0, 0);
    e.rmsnorm_backward_f32(p.dy, p.x, p.weight, p.rstd, p.dx, p.dweight, n, c.dim, c.kernelStride);
  },
});

export const layerNormBackward = define('layerNormBackward', {
  params: ['dy', 'x', 'weight', 'bias'],
  options: {
    eps: 1e-5, dim: undefined, shape: undefined, axis: -1, rowStride: undefined, mean: undefined, rstd: undefined, dx: undefined,
  },
  arrays: backwardArrays(true),
  together: ['mean', 'rstd'],
  returns: ['dx', 'dweight', 'dbias'],
  exports: ['layernorm_f32', 'layernorm_backward_f32'],
  kernel(e, c, p, n) {
    if (c.given('rstd') === null) e.layernorm_f32(p.x, 0, 0, 0, p.mean, p.rstd, n, c.dim, c.kernelStride, c.eps);
    e.layernorm_backward_f32(p.dy, p.x, p.weight, p.mean, p.rstd, p.dx, p.dweight, p.dbias, n, c.dim, c.kernelStride);
  },
});

// The converters: float32 to and from a 16-bit dtype, the contract's
// conversions (src/kernels/float16.h), a value at a time. Their dtype is
// the 16-bit one, required except for a Float16Array's float16.
const CONVERT_OPTIONS = { dtype: undefined, out: undefined };

export const toFloat32 = define('toFloat32', {
  params: ['x'], options: CONVERT_OPTIONS, elementwise: true,
  arrays: { x: { param: 0, per: ROW, dir: IN }, out: { per: ROW, dir: OUT, dtype: 'float32', result: true } },
  returns: 'out', exports: ['convert_to_f32'], kernel: (e, c, p, n) => e.convert_to_f32(p.x, p.out, n, c.dtypeCode),
});

export const fromFloat32 = define('fromFloat32', {
  params: ['x'], options: CONVERT_OPTIONS, elementwise: true,
  arrays: { x: { param: 0, per: ROW, dir: IN, dtype: 'float32' }, out: { per: ROW, dir: OUT, result: true } },
  returns: 'out', exports: ['convert_from_f32'], kernel: (e, c, p, n) => e.convert_from_f32(p.x, p.out, n, c.dtypeCode),
});

// The quantizer alone: float32 values to ggml blocks of options.dtype
// (required), by the rule the norms' block outputs follow
// (src/kernels/q8_blocks.h). Blockwise: its rows are blocks, of the
// format's block size, and x.length must be a whole number of them.
export const quantize = define('quantize', {
  params: ['x'], options: { dtype: undefined, out: undefined }, blockwise: true, formatOption: 'dtype',
  arrays: { x: { param: 0, per: ROW, dir: IN, dtype: 'float32' }, out: { per: ROW, dir: OUT, result: true, blocks: true } },
  returns: 'out', exports: ['quantize_q8'], kernel: (e, c, p, n) => e.quantize_q8(p.x, p.out, n, c.outFormatCode),
});

/** Every description, by public name. */
export const OPS = Object.freeze({
  __proto__: null, rmsNorm, addRmsNorm, layerNorm, rmsNormBackward, layerNormBackward, toFloat32, fromFloat32, quantize,
});
export const OP_NAMES = Object.freeze(Object.keys(OPS));

/** The kernel exports the descriptions call, in first-use order: what a module must export (src/abi/exports.c). */
export const KERNEL_EXPORTS = Object.freeze(OP_NAMES.flatMap((name) => OPS[name].exports).filter((e, i, all) => all.indexOf(e) === i));
