// The public functions on one instance of the wasm kernels: resolved
// arguments (./args.js) placed in its memory (src/loader/kernels.js) and the
// kernel called. init()'s top-level functions, createKernels() and
// bindMemory() all hand out functions made here.

import { lengthOf } from '../loader/intrinsics.js';
import { CAST_CODE, DTYPE_CODE } from '../loader/kernels.js';
import { DTYPES, Tensor } from '../loader/tensor.js';
import {
  BACKWARD_ARRAYS, BACKWARD_ARRAYS_RECOMPUTED, describe, isPlainCopyingCall, isPlainTensorCall, LAYERNORM_ARRAYS, newOutput,
  readRmsNormOptions, resolveBackward, resolveLayerNorm, resolveRmsNorm, RMSNORM_ARRAYS, RMSNORM_DEFAULT_EPS,
} from './args.js';

// Each kernel on one chunk of n rows, pointers in the order of its arrays
// (src/api/args.js: RMSNORM_ARRAYS, LAYERNORM_ARRAYS, BACKWARD_ARRAYS).

function rmsNormChunk(e, call, p, n) {
  const { dim, eps } = call;
  const code = DTYPE_CODE[call.dtype];
  e.rmsnorm(p[0], p[2], p[1], p[3], p[4], n, dim, eps, code, DTYPE_CODE[call.weightDtype ?? 'float32'],
    CAST_CODE[call.castMode], call.weightOffset);
}

function layerNormChunk(e, { dim, eps }, [x, w, b, y, mean, rstd], n) {
  e.layernorm_f32(x, w, b, y, mean, rstd, n, dim, eps);
}

// Statistics not given are recomputed chunk by chunk by the forward kernels
// themselves, so they are the forward's to the bit.
function rmsNormBackwardChunk(e, { dim, eps, rstd: given }, [dy, x, w, dw, , dx, , rstd], n) {
  if (given === undefined) e.rmsnorm(x, 0, 0, 0, rstd, n, dim, eps, DTYPE_CODE.float32, 0, 0, 0);
  e.rmsnorm_backward_f32(dy, x, w, rstd, dx, dw, n, dim);
}

function layerNormBackwardChunk(e, { dim, eps, rstd: given }, [dy, x, w, dw, db, dx, mean, rstd], n) {
  if (given === undefined) e.layernorm_f32(x, 0, 0, 0, mean, rstd, n, dim, eps);
  e.layernorm_backward_f32(dy, x, w, mean, rstd, dx, dw, db, n, dim);
}

function rmsNormOn(kernels, call) {
  const out = call.out ?? newOutput('options.out', call.dtype, call.x.length);
  call.arrays[3] = out;
  kernels.runRows(call.fn, call.rows, call.dim, RMSNORM_ARRAYS, call.arrays, call.mayAlias, rmsNormChunk, call);
  return out.value;
}

function layerNormOn(kernels, call) {
  const out = call.out ?? newOutput('options.out', 'float32', call.x.length);
  call.arrays[3] = out;
  kernels.runRows(call.fn, call.rows, call.dim, LAYERNORM_ARRAYS, call.arrays, call.mayAlias, layerNormChunk, call);
  return out.value;
}

/** A parameter gradient: running sums over the rows, from +0. */
const gradientOf = (parameter, name, dim) => (parameter === null ? null : newOutput(name, 'float32', dim));

function backwardOn(kernels, call, layer) {
  const { arrays, dim } = call;
  const dx = call.dx ?? newOutput('options.dx', 'float32', call.x.length);
  const dweight = gradientOf(call.weight, 'dweight', dim);
  const dbias = layer ? gradientOf(call.bias, 'dbias', dim) : null;
  arrays[3] = dweight;
  arrays[4] = dbias;
  arrays[5] = dx;
  kernels.runRows(call.fn, call.rows, dim, call.rstd === undefined ? BACKWARD_ARRAYS_RECOMPUTED : BACKWARD_ARRAYS,
    arrays, call.mayAlias, layer ? layerNormBackwardChunk : rmsNormBackwardChunk, call);
  const grads = { dx: dx.value, dweight: dweight === null ? null : dweight.value };
  if (layer) grads.dbias = dbias === null ? null : dbias.value;
  return grads;
}

/** The zero-copy call on tensors (src/api/args.js, isPlainTensorCall), at once. */
function tensorCall(kernels, x, residual, weight, opts) {
  const dim = Tensor.lengthOf(weight);
  kernels.exports.rmsnorm(Tensor.byteOffsetOf(x), residual === undefined ? 0 : Tensor.byteOffsetOf(residual),
    Tensor.byteOffsetOf(weight), Tensor.byteOffsetOf(opts.out), 0, Tensor.lengthOf(x) / dim, dim,
    Math.fround(opts.eps ?? RMSNORM_DEFAULT_EPS), DTYPE_CODE[Tensor.dtypeOf(x)], DTYPE_CODE[Tensor.dtypeOf(weight)],
    CAST_CODE[opts.castMode ?? 'llama'], Math.fround(opts.weightOffset ?? 0));
  return opts.out;
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
      if (isPlainTensorCall(kernels, x, undefined, weight, opts)) return tensorCall(kernels, x, undefined, weight, opts);
      if (isPlainCopyingCall(kernels, x, weight, opts)) {
        const dim = lengthOf(weight);
        return kernels.rmsNormCopying('rmsNorm', x, weight, opts.out, lengthOf(x) / dim, dim,
          Math.fround(opts.eps ?? RMSNORM_DEFAULT_EPS));
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
      if (isPlainTensorCall(kernels, x, residual, weight, opts)) return tensorCall(kernels, x, residual, weight, opts);
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
