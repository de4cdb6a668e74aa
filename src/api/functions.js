// The public functions on one instance of the wasm kernels: resolved
// arguments (./args.js) placed in its memory (src/loader/kernels.js) and the
// kernel called. init()'s top-level functions, createKernels() and
// bindMemory() all hand out functions made here.

import {
  CAST_CODE, DTYPE_CODE, IN, INOUT, ONCE, OUT, PER_ROW, PER_STAT, SCRATCH,
} from '../loader/kernels.js';
import { DTYPES, Tensor } from '../loader/tensor.js';
import {
  describe, isPlainTensorCall, newOutput, readRmsNormOptions, resolveBackward, resolveLayerNorm, resolveRmsNorm,
  RMSNORM_DEFAULT_EPS,
} from './args.js';

const slot = (arg, per, dir, dtype = 'float32', inPlaceOf = -1) => ({ arg, per, dir, dtype, inPlaceOf });

function rmsNormOn(kernels, call) {
  const { fn, rows, dim, eps, dtype, weightDtype, castMode, weightOffset, residual, rstd } = call;
  const y = call.out ?? newOutput('options.out', dtype, call.x.length);
  const { rmsnorm, rmsnorm_rstd: statistic } = kernels.exports;
  const code = DTYPE_CODE[dtype];
  const weightCode = DTYPE_CODE[weightDtype ?? 'float32'];
  const cast = CAST_CODE[castMode];
  kernels.runRows(fn, rows, dim, [
    slot(call.weight, ONCE, IN, weightDtype ?? 'float32'),
    slot(call.x, PER_ROW, IN, dtype),
    slot(residual, PER_ROW, INOUT, dtype),
    slot(y, PER_ROW, OUT, dtype, 1),
    slot(rstd, PER_STAT, OUT),
  ], call.mayAlias, ([w, x, r, out, s], n) => {
    // options.rstd is step 5 of the contract for the row normalized: x,
    // before y (which may be x) is written, or the updated residual after.
    if (rstd !== undefined && residual === undefined) statistic(x, s, n, dim, eps, code);
    rmsnorm(x, r, w, out, n, dim, eps, code, weightCode, cast, weightOffset);
    if (rstd !== undefined && residual !== undefined) statistic(r, s, n, dim, eps, code);
  });
  return y.value;
}

function layerNormOn(kernels, call) {
  const { fn, rows, dim, eps } = call;
  const y = call.out ?? newOutput('options.out', 'float32', call.x.length);
  const forward = kernels.exports.layernorm_f32;
  kernels.runRows(fn, rows, dim, [
    slot(call.weight, ONCE, IN),
    slot(call.bias, ONCE, IN),
    slot(call.x, PER_ROW, IN),
    slot(y, PER_ROW, OUT, 'float32', 2),
    slot(call.mean, PER_STAT, OUT),
    slot(call.rstd, PER_STAT, OUT),
  ], call.mayAlias, ([w, b, x, out, mean, rstd], n) => forward(x, w, b, out, mean, rstd, n, dim, eps));
  return y.value;
}

/** A parameter gradient: running sums over the rows, from +0. */
const gradientOf = (parameter, name, dim) => (parameter === null ? null : newOutput(name, 'float32', dim));

function backwardOn(kernels, call, layer) {
  const { fn, rows, dim, eps, mean, rstd } = call;
  const dx = call.dx ?? newOutput('options.dx', 'float32', call.x.length);
  const dweight = gradientOf(call.weight, 'dweight', dim);
  const dbias = layer ? gradientOf(call.bias, 'dbias', dim) : null;
  const statistic = (given) => (given === undefined ? slot(undefined, PER_STAT, SCRATCH) : slot(given, PER_STAT, IN));
  const e = kernels.exports;
  kernels.runRows(fn, rows, dim, [
    slot(call.weight, ONCE, IN),
    slot(dweight, ONCE, INOUT),
    slot(dbias, ONCE, INOUT),
    slot(call.x, PER_ROW, IN),
    slot(call.dy, PER_ROW, IN),
    slot(dx, PER_ROW, OUT, 'float32', 4),
    statistic(mean),
    statistic(rstd),
  ], call.mayAlias, ([w, dw, db, x, dy, dxAt, meanAt, rstdAt], n) => {
    // Statistics not given are recomputed chunk by chunk by the forward
    // kernels themselves, so they are the forward's to the bit.
    if (layer) {
      if (rstd === undefined) e.layernorm_f32(x, 0, 0, 0, meanAt, rstdAt, n, dim, eps);
      e.layernorm_backward_f32(dy, x, w, meanAt, rstdAt, dxAt, dw, db, n, dim);
    } else {
      if (rstd === undefined) e.rmsnorm_rstd(x, rstdAt, n, dim, eps, DTYPE_CODE.float32);
      e.rmsnorm_backward_f32(dy, x, w, rstdAt, dxAt, dw, n, dim);
    }
  });
  const grads = { dx: dx.value, dweight: dweight === null ? null : dweight.value };
  if (layer) grads.dbias = dbias === null ? null : dbias.value;
  return grads;
}

/**
 * The kernel functions of an instance. `kernelsFor(fn)` gives the
 * WasmKernels a call runs on (the default instance looks it up on every call,
 * since init() may switch it; the others return their own).
 */
export function kernelFunctions(kernelsFor) {
  return {
    /**
     * RMSNorm over the last dimension: y = x / sqrt(mean(x²) + eps) · weight.
     * @returns {Float32Array|Uint16Array|Tensor} options.out, or a new array
     */
    rmsNorm(x, weight, options) {
      const kernels = kernelsFor('rmsNorm');
      const opts = readRmsNormOptions('rmsNorm', options);
      if (isPlainTensorCall(kernels, x, weight, opts)) {
        const dim = Tensor.lengthOf(weight);
        kernels.exports.rmsnorm(Tensor.byteOffsetOf(x), 0, Tensor.byteOffsetOf(weight), Tensor.byteOffsetOf(opts.out),
          Tensor.lengthOf(x) / dim, dim, Math.fround(opts.eps ?? RMSNORM_DEFAULT_EPS),
          DTYPE_CODE.float32, DTYPE_CODE.float32, CAST_CODE.llama, 0);
        return opts.out;
      }
      return rmsNormOn(kernels, resolveRmsNorm('rmsNorm', x, undefined, weight, opts));
    },

    /**
     * Fused residual add + RMSNorm: residual ← round(x + residual) in place,
     * then y = rmsNorm(residual). Bit-identical to the two steps done apart.
     */
    addRmsNorm(x, residual, weight, options) {
      const kernels = kernelsFor('addRmsNorm');
      const opts = readRmsNormOptions('addRmsNorm', options);
      if (residual === undefined) throw new TypeError(`addRmsNorm: residual must be an array of x's dtype, got undefined`);
      return rmsNormOn(kernels, resolveRmsNorm('addRmsNorm', x, residual, weight, opts));
    },

    /** LayerNorm over the last dimension, with the biased variance (as PyTorch's nn.LayerNorm). */
    layerNorm(x, weight, bias, options) {
      const kernels = kernelsFor('layerNorm');
      return layerNormOn(kernels, resolveLayerNorm('layerNorm', x, weight, bias, options));
    },

    /** Gradients of rmsNorm(x, weight, { eps }) given dy = ∂loss/∂y. */
    rmsNormBackward(dy, x, weight, options) {
      const kernels = kernelsFor('rmsNormBackward');
      return backwardOn(kernels, resolveBackward('rmsNormBackward', dy, x, weight, undefined, options, false), false);
    },

    /** Gradients of layerNorm(x, weight, bias, { eps }) given dy = ∂loss/∂y. */
    layerNormBackward(dy, x, weight, bias, options) {
      const kernels = kernelsFor('layerNormBackward');
      return backwardOn(kernels, resolveBackward('layerNormBackward', dy, x, weight, bias, options, true), true);
    },

    /**
     * A tensor of `length` values of `dtype` in the instance's memory: pass
     * it to any kernel and nothing is copied. Free it with `.free()`.
     */
    alloc(length, dtype = 'float32') {
      const kernels = kernelsFor('alloc');
      if (typeof length !== 'number') throw new TypeError(`alloc: length must be a number, got ${describe(length)}`);
      if (!Number.isSafeInteger(length) || length < 0) {
        throw new RangeError(`alloc: length must be a non-negative integer, got ${length}`);
      }
      if (!DTYPES.includes(dtype)) {
        throw new TypeError(`alloc: dtype must be ${DTYPES.map((d) => `'${d}'`).join(' or ')}, got ${describe(dtype)}`);
      }
      return kernels.alloc('alloc', length, dtype);
    },
  };
}
