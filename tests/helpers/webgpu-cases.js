// The WebGPU suite's calls and their expected bits, made in Node by the JS
// reference (the oracle; never by the code under test). A call is sent to
// the page as JSON (tests/helpers/webgpu-page.js runs it); `expected` holds
// the reference's out, residual and rstd for it.
import * as reference from '../../src/reference/index.js';
import { narrow } from '../../src/reference/float16.js';
import { prng, uniformArray } from '../../web/lib/random.js';
import { bitExactCases, portableNormal } from './bit-exact-suite.js';
import { STRIDED_LAYOUTS } from './strided-layouts.js';

const b64 = (v) => Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('base64');
const kindOf = (v) => (v instanceof Float32Array ? 'float32' : 'uint16');
const copy = (v) => v.slice();
/** Rows of `length` values whose rows start `stride` apart and hold `dim` (at least 1). */
const rowsOf = (length, dim, stride = dim) => (length === 0 ? 0 : Math.ceil(length / stride));

/** A call of `fn` ('rmsNorm' or 'addRmsNorm') as sent to the page, with the reference's results. */
export function makeCall(what, fn, x, residual, weight, options = {}) {
  const dtype = options.dtype ?? 'float32';
  const dim = options.dim ?? weight?.length ?? x.length;
  // (With heads, a statistic holds a value for every head of every token.)
  const rows = rowsOf(x.length, dim, options.rowStride) * (options.heads ?? 1);
  const inPlace = options.out === x;
  const sent = { ...options, out: inPlace ? 'x' : undefined, rstd: rows };
  const rstd = new Float32Array(rows);
  // In place, the values between strided rows stay x's.
  const input = copy(x);
  const refOptions = { ...options, out: inPlace ? input : undefined, rstd };
  const r = residual && copy(residual);
  const out = fn === 'addRmsNorm'
    ? reference.addRmsNorm(input, r, weight, refOptions)
    : reference.rmsNorm(input, weight, refOptions);
  return {
    what,
    dtype,
    outKind: options.outDtype !== undefined && options.outDtype !== dtype ? 'bytes' : dtype, // ggml's blocks: compared byte for byte
    rows,
    dim,
    call: {
      fn, x: b64(x), residual: residual && b64(residual), weight: weight && b64(weight),
      kinds: { x: kindOf(x), weight: weight && kindOf(weight) }, options: sent,
    },
    expected: { out, residual: r, rstd },
  };
}

/** Invocations a row a call can fix (createGpuKernels' invocationsPerRow). */
export const TEAMS = [1, 4, 16, 64];

/** `c` made with `team` invocations a row. */
const withTeam = (c, team) => ({ ...c, what: `${c.what} team=${team}`, call: { ...c.call, team } });

/** A layerNorm call as sent to the page, with the reference's out, mean and rstd. */
export function makeLayerNormCall(what, x, weight, bias, options = {}) {
  const rows = rowsOf(x.length, options.dim ?? weight?.length ?? bias?.length, options.rowStride);
  const inPlace = options.out === x;
  const mean = new Float32Array(rows);
  const rstd = new Float32Array(rows);
  const input = copy(x);
  const out = reference.layerNorm(input, weight, bias, { ...options, out: inPlace ? input : undefined, mean, rstd });
  return {
    what,
    dtype: 'float32',
    call: {
      fn: 'layerNorm', x: b64(x), weight: weight && b64(weight), bias: bias && b64(bias),
      kinds: { x: 'float32', weight: 'float32' }, options: { ...options, out: inPlace ? 'x' : undefined, mean: rows, rstd: rows },
    },
    expected: { out, mean, rstd },
  };
}

/** The portable bit-exactness suite's calls (tests/helpers/bit-exact-suite.js):
 * rmsNorm, addRmsNorm and layerNorm, each as it is made there. The
 * functions the GPU backend does not have (the backward passes, the
 * converters, prepared calls) are the reference's, not recorded. */
export function portableCalls() {
  const calls = [];
  for (const c of bitExactCases()) {
    let n = 0;
    const recorder = {
      rmsNorm(x, weight, options) {
        const before = copy(x); // in place stays in place on the copy
        const opts = options?.out === x ? { ...options, out: before } : options;
        calls.push(makeCall(`${c.what} #${n++}`, 'rmsNorm', before, undefined, weight, opts));
        return reference.rmsNorm(x, weight, options);
      },
      layerNorm(x, weight, bias, options) {
        const before = copy(x);
        const opts = options?.out === x ? { ...options, out: before } : options;
        calls.push(makeLayerNormCall(`${c.what} #${n++}`, before, weight, bias, opts));
        return reference.layerNorm(x, weight, bias, options);
      },
      addRmsNorm(x, residual, weight, options) {
        calls.push(makeCall(`${c.what} #${n++}`, 'addRmsNorm', copy(x), copy(residual), weight, options));
        return reference.addRmsNorm(x, residual, weight, options);
      },
      rmsNormBackward: reference.rmsNormBackward,
      layerNormBackward: reference.layerNormBackward,
      toFloat32: reference.toFloat32,
      fromFloat32: reference.fromFloat32,
    };
    recorder.rmsNorm.prepare = reference.rmsNorm.prepare;
    c.run(recorder);
  }
  return calls;
}

const to16 = (values, dtype) => Uint16Array.from(values, (v) => narrow(Math.fround(v), dtype));
const DTYPES = ['float32', 'bfloat16', 'float16'];

/** Data of `dtype` (float32 values or 16-bit patterns). */
function data(rand, n, dtype, sigma) {
  const v = portableNormal(rand, n, sigma);
  return dtype === 'float32' ? v : to16(v, dtype);
}

/** The GPU-specific calls: odd and long rows, many rows (a 2-D dispatch),
 * every dtype and weight dtype, cast modes, offsets, in place, addRmsNorm,
 * all-zero, rescued and special rows, 16-bit subnormals. */
export function gpuCalls() {
  const calls = [];
  let seed = 1;
  for (const dtype of DTYPES) {
    for (const [rows, dim] of [[1, 1], [5, 3], [3, 17], [2, 4097], [1, 16385], [1, 20000], [70001, 1], [300, 33]]) {
      const rand = prng(seed++);
      const x = data(rand, rows * dim, dtype, 2);
      const weightDtype = DTYPES[(seed + dim) % 3];
      const w = data(rand, dim, weightDtype, 1);
      const castMode = seed % 2 ? 'llama' : 'gemma';
      const weightOffset = seed % 3 === 0 ? 1 : undefined;
      const options = { dtype, weightDtype, castMode, weightOffset, dim, eps: 1e-6 };
      const tag = `${dtype} rows=${rows} dim=${dim} weight=${weightDtype} ${castMode} offset=${weightOffset}`;
      calls.push(makeCall(tag, 'rmsNorm', x, undefined, w, options));
      if (rows * dim <= 20000) {
        const r = data(rand, rows * dim, dtype, 3);
        calls.push(makeCall(`addRmsNorm ${tag}`, 'addRmsNorm', x, r, w, options));
        const y = copy(x);
        calls.push(makeCall(`in place ${tag}`, 'rmsNorm', y, undefined, w, { ...options, out: y }));
        calls.push(makeCall(`no weight ${tag}`, 'rmsNorm', x, undefined, null, { dtype, dim }));
      }
    }
    // Rows that take the rescue path or keep the plain result: huge, tiny,
    // subnormal, all zero (eps = 0 gives NaN), NaN and Inf, eps near FLT_MAX.
    const dim = 37;
    const rowValues = [
      (i) => (i % 3 - 1) * 3e38, (i) => (i % 5) * 1e-30, (i) => (i % 7 - 3) * 1e-42, () => 0, () => -0,
      (i) => (i === 5 ? NaN : i), (i) => (i === 9 ? -Infinity : 1 / (i + 1)), (i) => (i % 2 ? 6e-8 : -3e-5),
    ];
    const x32 = new Float32Array(rowValues.length * dim).map((_, k) => rowValues[Math.floor(k / dim)](k % dim));
    const x = dtype === 'float32' ? x32 : to16(x32, dtype);
    const w = uniformArray(prng(seed++), dim, -2, 2);
    for (const eps of [0, 1e-6, 3e38]) {
      for (const castMode of ['llama', 'gemma']) {
        calls.push(makeCall(`${dtype} special rows eps=${eps} ${castMode}`, 'rmsNorm', x, undefined, w, { dtype, eps, castMode }));
      }
    }
    // Rows of several blocks off the common path, whose softfloat sum adds
    // block sums pairwise: huge (rescued), tiny (rescued), one huge value
    // among normal ones, subnormals among normal ones. Few rows and many
    // (a row an invocation on SwiftShader, and the 17 rows on lavapipe too).
    for (const [rows, dim] of [[4, 1500], [17, 777]]) {
      const rand = prng(seed++);
      const kinds = [
        (v) => v * 1e37, (v) => v * 1e-25,
        (v, i) => (i === dim - 3 ? 1e30 : v), (v, i) => (i % 11 === 0 ? v * 1e-40 : v),
      ];
      const x32 = Float32Array.from(portableNormal(rand, rows * dim, 1), (v, k) => kinds[Math.floor(k / dim) % kinds.length](v, k % dim));
      const w = uniformArray(rand, dim, -2, 2);
      calls.push(makeCall(`${dtype} rows=${rows} dim=${dim} off the common path, several blocks`, 'rmsNorm',
        dtype === 'float32' ? x32 : to16(x32, dtype), undefined, w, { dtype, dim, eps: 1e-6 }));
    }
    // Weights in the common path's range but a few (huge, tiny, zero,
    // subnormal, NaN, Inf): those groups of four in softfloat, the others
    // on the common path; in place and with a residual too (each group
    // read before it is written). A row a team, and on a CPU adapter a
    // row an invocation.
    for (const [rows, dim] of [[3, 301], [20, 64]]) {
      const rand = prng(seed++);
      const x = data(rand, rows * dim, dtype, 2);
      const r = data(rand, rows * dim, dtype, 1);
      const w = Float32Array.from(portableNormal(rand, dim, 1));
      const odd = [1e20, 2 ** -41, 0, -1e-42, NaN, -Infinity, 2 ** 40, -(2 ** -40)];
      odd.forEach((v, k) => { w[(k * 37 + 5) % dim] = v; });
      const options = { dtype, weightDtype: 'float32', dim, eps: 1e-6 };
      const tag = `${dtype} rows=${rows} dim=${dim} a few weights out of range`;
      calls.push(makeCall(tag, 'rmsNorm', x, undefined, w, options));
      calls.push(makeCall(`addRmsNorm ${tag}`, 'addRmsNorm', x, r, w, options));
      const y = copy(x);
      calls.push(makeCall(`in place ${tag}`, 'rmsNorm', y, undefined, w, { ...options, out: y }));
    }
    // The short rows above again with 1, 4, 16 or 64 invocations a row
    // fixed (invocationsPerRow): the layout's own choice for them differs
    // between the adapters.
    const short = calls.filter((c) => c.dtype === dtype && c.rows < 16 && c.dim <= 301);
    short.forEach((c, k) => calls.push(withTeam(c, TEAMS[k % TEAMS.length])));
    // Every 16-bit pattern (subnormals, NaNs, infinities) through addRmsNorm.
    if (dtype !== 'float32') {
      const all = new Uint16Array(65536).map((_, i) => i);
      const shifted = all.map((v) => (v * 40503) & 0xffff);
      calls.push(makeCall(`${dtype} addRmsNorm all patterns dim=4099`, 'addRmsNorm', all.subarray(0, 4099 * 15), shifted.subarray(0, 4099 * 15), null, { dtype, dim: 4099, eps: 0 }));
    }
  }
  // Every strided layout the docs allow (tests/helpers/strided-layouts.js),
  // one row with a tail among them: made, into a copy of x in place, 16-bit.
  for (const { rows, dim, stride, length } of STRIDED_LAYOUTS) {
    const rand = prng(seed++);
    for (const dtype of ['float32', 'bfloat16']) {
      const x = data(rand, length, dtype, 2);
      const r = data(rand, length, dtype, 1);
      const w = data(rand, dim, dtype, 1);
      const options = { dtype, dim, rowStride: stride, eps: 1e-6 };
      const tag = `${dtype} rows=${rows} dim=${dim} rowStride=${stride} x.length=${length}`;
      calls.push(makeCall(`strided ${tag}`, 'rmsNorm', x, undefined, w, options));
      calls.push(makeCall(`strided addRmsNorm ${tag}`, 'addRmsNorm', x, r, w, options));
      const y = copy(x);
      calls.push(makeCall(`strided in place ${tag}`, 'rmsNorm', y, undefined, w, { ...options, out: y }));
    }
    const x = portableNormal(rand, length, 2);
    calls.push(makeLayerNormCall(`strided layerNorm rows=${rows} dim=${dim} rowStride=${stride} x.length=${length}`, x, portableNormal(rand, dim, 1), null,
      { dim, rowStride: stride }));
  }
  // Every head of every token in one call (QK-norm in a fused QKV buffer):
  // q's heads packed within a token, k's with gaps between heads, 16-bit
  // too, in place; the reference computes the calls per head.
  for (const dtype of ['float32', 'bfloat16']) {
    const [tokens, heads, kvHeads, headDim] = [3, 4, 2, 32];
    const width = (heads + 2 * kvHeads) * headDim;
    const rand = prng(seed++);
    const qkv = data(rand, tokens * width, dtype, 2);
    const w = data(rand, headDim, dtype, 1);
    const q = qkv.subarray(0, (tokens - 1) * width + heads * headDim);
    const options = { dtype, dim: headDim, rowStride: width, heads, headStride: headDim, eps: 1e-6 };
    calls.push(makeCall(`${dtype} heads: q of ${tokens} tokens × ${heads} heads`, 'rmsNorm', q, undefined, w, options));
    const k = qkv.slice(heads * headDim, heads * headDim + (tokens - 1) * width + (kvHeads - 1) * 2 * headDim + headDim);
    calls.push(makeCall(`${dtype} heads: ${kvHeads} heads ${2 * headDim} apart, in place`, 'rmsNorm', k, undefined, w,
      { ...options, heads: kvHeads, headStride: 2 * headDim, out: k }));
    calls.push(makeCall(`${dtype} heads: addRmsNorm`, 'addRmsNorm', q, data(rand, q.length, dtype, 1), w, options));
  }
  // LayerNorm: long and many rows, in place, a large common offset,
  // constant rows (E2 = 0: the rescue path), huge, tiny and special rows.
  for (const [rows, dim] of [[1, 1], [3, 17], [2, 4097], [1, 16385], [70001, 1], [65, 300]]) {
    const rand = prng(seed++);
    const x = portableNormal(rand, rows * dim, 2).map((v, i) => (i % 3 === 0 ? v + 1e4 : v));
    const w = portableNormal(rand, dim, 1);
    const b = portableNormal(rand, dim, 0.5);
    calls.push(makeLayerNormCall(`layerNorm rows=${rows} dim=${dim}`, x, w, b, { dim }));
    if (rows * dim <= 20000) {
      const y = copy(x);
      calls.push(makeLayerNormCall(`layerNorm in place rows=${rows} dim=${dim}`, y, null, b, { dim, out: y, eps: 0 }));
    }
  }
  for (const dim of [37, 300]) { // an invocation a row, a workgroup a row
    const rowValues = [
      () => 5, () => -0, (i) => (i % 3 - 1) * 3e38, (i) => 3e38 + i * 1e31, (i) => (i % 5) * 1e-30, (i) => (i % 7 - 3) * 1e-42,
      (i) => (i === 5 ? NaN : i), (i) => (i === 9 ? Infinity : 1 / (i + 1)), (i) => 1e4 + (i % 2) * 2 ** -10,
    ];
    const special = new Float32Array(rowValues.length * dim).map((_, k) => rowValues[Math.floor(k / dim)](k % dim));
    const w = uniformArray(prng(seed++), dim, -2, 2);
    for (const eps of [0, 1e-5, 3e38]) {
      calls.push(makeLayerNormCall(`layerNorm special rows dim=${dim} eps=${eps}`, special, w, w, { eps }));
    }
  }
  // No rows, whatever the dim: empty results, as from the wasm functions and the reference (no GPU work).
  for (const dim of [2 ** 32, 2 ** 53 - 32]) {
    const none = new Float32Array(0);
    calls.push(makeCall(`no rows, dim=${dim}`, 'rmsNorm', none, undefined, null, { dim }));
    calls.push(makeCall(`no rows, dim=${dim}, q8_0 blocks`, 'rmsNorm', none, undefined, null, { dim, outDtype: 'q8_0' }));
    calls.push(makeCall(`addRmsNorm no rows, dim=${dim}`, 'addRmsNorm', none, new Float32Array(0), null, { dim }));
    calls.push(makeLayerNormCall(`layerNorm no rows, dim=${dim}`, none, null, null, { dim }));
  }
  return calls;
}
