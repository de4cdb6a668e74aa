// Argument errors: every public function, every kind of wrong argument, in
// one matrix. Each row must throw its exact error class (TypeError for a
// wrong type, RangeError for a wrong size or value) with a message that
// starts with the function's name, names the argument and says what came,
// before anything is written: the output buffer and every argument keep
// their bytes. After every bad call a good call still returns the
// reference's bits (no corrupted state). Callers whose objects lie, change
// under the call or alias each other: tests/hostile-callers.test.js.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  addRmsNorm, bindMemory, dequantize, init, layerNorm, layerNormBackward, rmsNorm, rmsNormBackward, Tensor,
} from '../src/index.js';
import * as reference from '../src/reference/index.js';
import { addRmsNorm as referenceAddRmsNorm, rmsNorm as referenceRmsNorm } from '../src/reference/index.js';
import { numberToBfloat16 } from '../src/reference/float16.js';
import { assertSameBits, assertSameBitsAs } from './helpers/bits.js';
import { WASM_BACKENDS, wasmImplementations } from './helpers/implementations.js';
import { normalArray, prng, uniformArray } from './helpers/random.js';

// (alloc before init: tests/tensors.test.js)
test('calling a kernel before init() throws a clear Error', () => {
  assert.throws(() => rmsNorm(new Float32Array(4), null, { dim: 4 }), {
    name: 'Error', message: /^rmsNorm: call `await init\(\)`/,
  });
  assert.throws(() => addRmsNorm(new Float32Array(4), new Float32Array(4), null, { dim: 4 }), {
    name: 'Error', message: /^addRmsNorm: call `await init\(\)`/,
  });
  for (const call of [() => layerNorm(f32(4), f32(4), null), () => rmsNormBackward(f32(4), f32(4), f32(4)),
    () => layerNormBackward(f32(4), f32(4), null, f32(4))]) {
    assert.throws(call, { name: 'Error', message: /^(layerNorm|rmsNormBackward|layerNormBackward): call `await init\(\)`/ });
  }
});

const SENTINEL = 12345.5;
const SENTINEL16 = 0x4a5a;
const x = () => new Float32Array([1, 2, 3, 4, 5, 6, 7, 8]);
const f32 = (n) => new Float32Array(n).fill(1);
const f32s = (n) => new Float32Array(n).fill(SENTINEL); // an output that must stay untouched
const w = () => new Float32Array([1, 1, 1, 1]);
const x16 = () => new Uint16Array([0x3f80, 0x4000, 0x4040, 0x4080, 0x40a0, 0x40c0, 0x40e0, 0x4100]);
const w16 = () => new Uint16Array([0x3c00, 0x3c00, 0x3c00, 0x3c00]);
const detached16 = (n) => {
  const view = new Uint16Array(n);
  structuredClone(view.buffer, { transfer: [view.buffer] });
  return view;
};
/** A Float32Array of n values whose ArrayBuffer has been transferred away. */
function detached(n) {
  const view = new Float32Array(n);
  structuredClone(view.buffer, { transfer: [view.buffer] });
  return view;
}
/** A Float32Array of n values left out of bounds by shrinking its resizable ArrayBuffer. */
function outOfBounds(n) {
  const buffer = new ArrayBuffer(4 * n, { maxByteLength: 4 * n });
  const view = new Float32Array(buffer, 0, n);
  buffer.resize(0);
  return view;
}
/** n bytes that must stay untouched (an output of blocks, or blocks to read). */
const bytesOut = (n) => new Uint8Array(n).fill(0x5a);
/** The same n bytes, their ArrayBuffer transferred away. */
function detachedBytes(n) {
  const view = bytesOut(n);
  structuredClone(view.buffer, { transfer: [view.buffer] });
  return view;
}
/** The same n bytes, left out of bounds by shrinking their resizable ArrayBuffer. */
function outOfBoundsBytes(n) {
  const buffer = new ArrayBuffer(n, { maxByteLength: n });
  const view = new Uint8Array(buffer);
  view.fill(0x5a);
  const fixed = new Uint8Array(buffer, 0, n);
  buffer.resize(0);
  return fixed;
}

// Each row: [function, what, () => args, error class, message pattern, only?]
// `only` limits a row to some implementations (e.g. wasm32's address limit
// does not bind the JS reference). rmsNorm rows run on the wasm API and the
// reference; where a row's options have no out, a sentinel-filled one is
// added, so "nothing is written" is checked on every row.
const ROWS = [
  // x: wrong kinds
  ['rmsNorm', 'x is a plain Array', () => [[1, 2, 3, 4], w()], TypeError, /x must be a Float32Array, got Array\(4\) \(copy it into one: Float32Array\.from\(x\)\)$/],
  ['rmsNorm', 'x is a Float64Array', () => [new Float64Array(4), w()], TypeError, /x must be a Float32Array, got Float64Array\(4\) \(copy it into one: Float32Array\.from\(x\)\)$/],
  ['rmsNorm', 'x is a Float32Array for bfloat16', () => [x(), w(), { dtype: 'bfloat16' }], TypeError, /x must be a Uint16Array \(bfloat16 bit patterns\) for dtype 'bfloat16', got Float32Array\(8\) \(16-bit values travel as their bits: fromFloat32\(x, \{ dtype: 'bfloat16' \}\) makes them\)$/],
  ['rmsNorm', 'x is a plain Array for float16', () => [[1, 2, 3, 4], w(), { dtype: 'float16' }], TypeError, /x must be a Uint16Array \(float16 bit patterns\).*, got Array\(4\) \(16-bit values travel as their bits: fromFloat32\(Float32Array\.from\(x\), \{ dtype: 'float16' \}\) makes them\)$/],
  ['rmsNorm', 'x is a bfloat16 tensor, no dtype given', (ctx) => [ctx.tensor(8, 'bfloat16'), w()], TypeError, /x must be a Float32Array, got bfloat16 Tensor\(8\) \(pass options\.dtype: 'bfloat16' for a bfloat16 tensor\)$/],
  ['rmsNorm', 'x is a float16 tensor, dtype bfloat16', (ctx) => [ctx.tensor(8, 'float16'), w(), { dtype: 'bfloat16' }], TypeError, /x must be a Uint16Array \(bfloat16 bit patterns\) for dtype 'bfloat16', got float16 Tensor\(8\) \(options\.dtype is 'bfloat16'\)$/],
  ['rmsNorm', 'a weight tensor of another dtype than weightDtype', (ctx) => [x(), ctx.tensor(4, 'float16'), { weightDtype: 'bfloat16' }], TypeError, /weight must be a Uint16Array \(bfloat16 bit patterns\) for weightDtype 'bfloat16', got float16 Tensor\(4\) \(options\.weightDtype is 'bfloat16'\)$/],
  ['rmsNorm', 'x is a Uint16Array', () => [new Uint16Array(4), w()], TypeError, /x must be a Float32Array/],
  ['rmsNorm', 'x is a BigInt64Array', () => [new BigInt64Array(4), w()], TypeError, /x must be a Float32Array, got BigInt64Array\(4\)/],
  ['rmsNorm', 'x is null', () => [null, w()], TypeError, /x must be a Float32Array, got null/],
  ['rmsNorm', 'x is undefined', () => [undefined, w()], TypeError, /x must be a Float32Array, got undefined/],
  ['rmsNorm', 'x is a string', () => ['1,2,3,4', w()], TypeError, /x must be a Float32Array, got string/],
  ['rmsNorm', 'x is a BigInt', () => [4n, w()], TypeError, /x must be a Float32Array, got bigint 4n/],
  ['rmsNorm', 'x is an array-like object', () => [{ length: 4, 0: 1, 1: 2, 2: 3, 3: 4 }, w()], TypeError, /x must be a Float32Array, got Object/],
  ['rmsNorm', 'x is a DataView', () => [new DataView(new ArrayBuffer(16)), w()], TypeError, /x must be a Float32Array/],
  ['rmsNorm', 'x is an ArrayBuffer', () => [new ArrayBuffer(16), w()], TypeError, /x must be a Float32Array, got ArrayBuffer/],
  ['rmsNorm', 'x is detached', () => [detached(8), w()], TypeError, /x is a view of a detached ArrayBuffer/],
  ['rmsNorm', 'x is out of bounds of a shrunk resizable buffer', () => [outOfBounds(8), w()], TypeError, /x is a view of a detached ArrayBuffer \(or out of bounds of a shrunk resizable one\)/],
  // weight
  ['rmsNorm', 'weight is undefined', () => [x(), undefined], TypeError, /weight must be a Float32Array, a Uint16Array of 16-bit values, a tensor, or null \(for no weight\), got undefined/],
  ['rmsNorm', 'weight is a plain Array', () => [x(), [1, 1, 1, 1]], TypeError, /weight must be a Float32Array, a Uint16Array of 16-bit values, a tensor, or null \(for no weight\), got Array\(4\) \(copy it into one: Float32Array\.from\(weight\)\)$/],
  ['rmsNorm', 'weight is a Float64Array', () => [x(), new Float64Array(4)], TypeError, /weight must be a Float32Array/],
  ['rmsNorm', 'weight is a BigInt', () => [x(), 1n], TypeError, /weight must be a Float32Array, a Uint16Array of 16-bit values, a tensor, or null \(for no weight\), got bigint 1n/],
  ['rmsNorm', 'weight is an object', () => [x(), { dim: 4 }], TypeError, /weight must be a Float32Array, a Uint16Array of 16-bit values, a tensor, or null \(for no weight\), got Object \(rmsNorm takes \(x, weight, options\?\): was an argument left out\?\)$/],
  ['rmsNorm', 'weight is a number', () => [x(), 4], TypeError, /weight must be a Float32Array, a Uint16Array of 16-bit values, a tensor, or null \(for no weight\), got number 4/],
  ['rmsNorm', 'weight is detached', () => [x(), detached(4)], TypeError, /weight is a view of a detached ArrayBuffer/],
  ['rmsNorm', 'weight is empty', () => [x(), new Float32Array(0)], RangeError, /weight must not be empty/],
  // dim and shapes
  ['rmsNorm', 'no weight and no dim', () => [x(), null], TypeError, /options\.dim is required when weight is null/],
  ['rmsNorm', 'weight.length !== dim', () => [x(), w(), { dim: 2 }], RangeError, /weight\.length \(4\) must equal options\.dim \(2\)/],
  ['rmsNorm', 'x.length not a multiple of the weight\'s', () => [new Float32Array(6), w()], RangeError, /weight\.length \(4\) does not divide x\.length \(6\): weight holds one value per feature, so x must be rows of weight\.length values \(is it this layer's weight\? give options\.dim for another row length\)/],
  ['rmsNorm', 'x.length not a multiple of options.dim', () => [new Float32Array(6), null, { dim: 4 }], RangeError, /x\.length \(6\) must be a multiple of dim \(4\)/],
  ['rmsNorm', 'dim = 0', () => [x(), null, { dim: 0 }], RangeError, /options\.dim must be a positive integer, got 0/],
  ['rmsNorm', 'dim = -4', () => [x(), null, { dim: -4 }], RangeError, /options\.dim must be a positive integer/],
  ['rmsNorm', 'dim = 2.5', () => [x(), null, { dim: 2.5 }], RangeError, /options\.dim must be a positive integer, got 2\.5/],
  ['rmsNorm', 'dim = NaN', () => [x(), null, { dim: NaN }], RangeError, /options\.dim must be a positive integer/],
  ['rmsNorm', 'dim = Infinity', () => [x(), null, { dim: Infinity }], RangeError, /options\.dim must be a positive integer, got Infinity/],
  ['rmsNorm', 'dim = 2^53', () => [x(), null, { dim: 2 ** 53 }], RangeError, /options\.dim must be a positive integer, got 9007199254740992/],
  ['rmsNorm', 'dim is a string', () => [x(), null, { dim: '4' }], TypeError, /options\.dim must be a number, got string/],
  ['rmsNorm', 'dim is a BigInt', () => [x(), null, { dim: 4n }], TypeError, /options\.dim must be a number, got bigint 4n/],
  ['rmsNorm', 'a row beyond what wasm32 can address', () => [new Float32Array(2 ** 30), null, { dim: 2 ** 30 }],
    RangeError, /needs \d+ bytes of wasm memory, more than wasm32 can address/, ['wasm']],
  // eps
  ['rmsNorm', 'eps < 0', () => [x(), w(), { eps: -1e-6 }], RangeError, /options\.eps must be a finite float32 >= 0, got -0\.000001/],
  ['rmsNorm', 'eps = NaN', () => [x(), w(), { eps: NaN }], RangeError, /options\.eps must be a finite float32 >= 0, got NaN/],
  ['rmsNorm', 'eps = Infinity', () => [x(), w(), { eps: Infinity }], RangeError, /options\.eps must be a finite/],
  ['rmsNorm', 'eps = -Infinity', () => [x(), w(), { eps: -Infinity }], RangeError, /options\.eps must be a finite float32 >= 0, got -Infinity/],
  ['rmsNorm', 'eps beyond float32', () => [x(), w(), { eps: 1e39 }], RangeError, /options\.eps must be a finite float32/],
  ['rmsNorm', 'eps is a string', () => [x(), w(), { eps: '1e-6' }], TypeError, /options\.eps must be a number/],
  ['rmsNorm', 'eps is a BigInt', () => [x(), w(), { eps: 1n }], TypeError, /options\.eps must be a number, got bigint/],
  ['rmsNorm', 'eps is null', () => [x(), w(), { eps: null }], TypeError, /options\.eps must be a number, got null/],
  // options
  ['rmsNorm', 'unknown option', () => [x(), w(), { epsilon: 1e-5 }], TypeError, /unknown option 'epsilon' \(allowed: eps, dim, out, dtype, weightDtype, castMode, weightOffset, shape, axis, rowStride, heads, headStride, rstd, outDtype\)/],
  // rowStride
  ['rmsNorm', 'rowStride below dim', () => [x(), w(), { rowStride: 2 }], RangeError, /options\.rowStride must be an integer >= dim \(4\), the values from one row's start to the next's; got 2/],
  ['rmsNorm', 'rowStride fractional', () => [x(), w(), { rowStride: 4.5 }], RangeError, /options\.rowStride must be an integer >= dim \(4\)/],
  ['rmsNorm', 'rowStride beyond safe integers', () => [x(), w(), { rowStride: 2 ** 53 }], RangeError, /options\.rowStride must be an integer >= dim \(4\).*got 9007199254740992/],
  ['rmsNorm', 'rowStride a string', () => [x(), w(), { rowStride: '8' }], TypeError, /options\.rowStride must be a number, got string "8"/],
  ['rmsNorm', 'rowStride with shape', () => [x(), null, { shape: [2, 4], rowStride: 4 }], TypeError, /give options\.rowStride or options\.shape, not both/],
  ['rmsNorm', 'x ends inside a strided row', () => [f32(9), w(), { rowStride: 6 }], RangeError, /x\.length \(9\) ends inside a row: rows start every 6 values \(options\.rowStride\) and hold 4 \(dim\)/],
  ['rmsNorm', 'x shorter than one strided row', () => [f32(3), w(), { rowStride: 6 }], RangeError, /x\.length \(3\) ends inside a row/],
  // heads and headStride (tests/heads.test.js: every case, the overlap rule on them)
  ['rmsNorm', 'heads zero', () => [x(), w(), { heads: 0 }], RangeError, /options\.heads must be a positive integer, the rows each token holds; got 0/],
  ['rmsNorm', 'heads a string', () => [x(), w(), { heads: '2' }], TypeError, /options\.heads must be a number, got string "2"/],
  ['rmsNorm', 'headStride below dim', () => [x(), w(), { heads: 2, headStride: 3 }], RangeError, /options\.headStride must be an integer >= dim \(4\)/],
  ['addRmsNorm', 'headStride without heads', () => [x(), x(), w(), { headStride: 4 }], TypeError, /options\.headStride needs options\.heads/],
  ['rmsNorm', 'misspelled option', () => [x(), w(), { Eps: 1e-5 }], TypeError, /unknown option 'Eps'/],
  ['rmsNorm', 'options is a number', () => [x(), w(), 1e-5], TypeError, /options must be an object, got number/],
  ['rmsNorm', 'options is null', () => [x(), w(), null], TypeError, /options must be an object, got null/],
  ['rmsNorm', 'options is an Array', () => [x(), w(), [1e-5]], TypeError, /options must be an object, got Array\(1\)/],
  ['rmsNorm', 'options is a string', () => [x(), w(), 'eps=1e-5'], TypeError, /options must be an object, got string/],
  // out
  ['rmsNorm', 'out is a Float64Array', () => [x(), w(), { out: new Float64Array(8) }], TypeError, /options\.out must be a Float32Array/],
  ['rmsNorm', 'out is a plain Array', () => [x(), w(), { out: new Array(8).fill(0) }], TypeError, /options\.out must be a Float32Array, got Array\(8\)/],
  ['rmsNorm', 'out is null', () => [x(), w(), { out: null }], TypeError, /options\.out must be a Float32Array, got null/],
  ['rmsNorm', 'out is detached', () => [x(), w(), { out: detached(8) }], TypeError, /options\.out is a view of a detached ArrayBuffer/],
  ['rmsNorm', 'out is out of bounds of a shrunk resizable buffer', () => [x(), w(), { out: outOfBounds(8) }], TypeError, /options\.out is a view of a detached/],
  ['rmsNorm', 'out is too short', () => [x(), w(), { out: new Float32Array(4) }], RangeError, /options\.out\.length \(4\) must equal x\.length \(8\)/],
  ...(() => {
    const shared = () => new Float32Array(16);
    return [
      ['rmsNorm', 'out overlaps x partially', () => { const s = shared(); return [s.subarray(0, 8), w(), { out: s.subarray(4, 12) }]; },
        RangeError, /options\.out must be x itself or not overlap x/],
      ['rmsNorm', 'out overlaps weight', () => { const s = shared(); return [x(), s.subarray(0, 4), { out: s.subarray(2, 10) }]; },
        RangeError, /options\.out must not overlap weight/],
      ['rmsNorm', 'out overlaps the last float of weight', () => { const s = shared(); return [x(), s.subarray(0, 4), { out: s.subarray(3, 11) }]; },
        RangeError, /options\.out must not overlap weight/],
      ['rmsNorm', 'out is the weight', () => { const s = w(); return [new Float32Array([1, 2, 3, 4]), s, { out: s }]; },
        RangeError, /options\.out must not overlap weight/],
      ['rmsNorm', 'in place while x is the weight', () => { const s = w(); return [s, s, { out: s }]; },
        RangeError, /options\.out must not overlap weight/],
    ];
  })(),
  // 16-bit storage, cast modes, weight offset, multi-axis shapes
  ['rmsNorm', 'dtype is unknown', () => [x(), w(), { dtype: 'float64' }], TypeError, /options\.dtype must be 'float32' or 'bfloat16' or 'float16', got string "float64"/],
  ['rmsNorm', 'dtype is a BigInt', () => [x(), w(), { dtype: 16n }], TypeError, /options\.dtype must be .*, got bigint 16n/],
  ['rmsNorm', 'bfloat16 x given as a Float32Array', () => [x(), w(), { dtype: 'bfloat16' }], TypeError, /x must be a Uint16Array \(bfloat16 bit patterns\) for dtype 'bfloat16', got Float32Array\(8\)/],
  ['rmsNorm', 'float16 out given as a Float32Array', () => [x16(), w16(), { dtype: 'float16', out: new Float32Array(8) }], TypeError, /options\.out must be a Uint16Array \(float16 bit patterns\)/],
  ['rmsNorm', '16-bit x for float32', () => [x16(), w()], TypeError, /x must be a Float32Array, got Uint16Array\(8\)/],
  ['rmsNorm', '16-bit weight for float32', () => [x(), w16()], TypeError, /weight is a Uint16Array and x float32: say which 16-bit format it holds in options\.weightDtype/],
  ['rmsNorm', 'Float64Array weight for bfloat16', () => [x16(), new Float64Array(4), { dtype: 'bfloat16' }], TypeError, /weight must be a Float32Array, a Uint16Array of 16-bit values, a tensor, or null \(for no weight\), got Float64Array/],
  ['rmsNorm', 'weightDtype not matching the array', () => [x16(), w(), { dtype: 'bfloat16', weightDtype: 'bfloat16' }], TypeError, /weight must be a Uint16Array \(bfloat16 bit patterns\) for weightDtype 'bfloat16', got Float32Array/],
  ['rmsNorm', 'float16 x is detached', () => [detached16(8), w(), { dtype: 'float16' }], TypeError, /x is a view of a detached ArrayBuffer/],
  ['rmsNorm', 'weightDtype without a weight', () => [x(), null, { dim: 4, weightDtype: 'float32' }], TypeError, /options\.weightDtype needs a weight, but weight is null/],
  ['rmsNorm', 'castMode is unknown', () => [x(), w(), { castMode: 'mistral' }], TypeError, /options\.castMode must be 'llama' or 'gemma', got string "mistral"/],
  ['rmsNorm', 'weightOffset = NaN', () => [x(), w(), { weightOffset: NaN }], RangeError, /options\.weightOffset must be a finite float32, got NaN/],
  ['rmsNorm', 'weightOffset = -Infinity', () => [x(), w(), { weightOffset: -Infinity }], RangeError, /options\.weightOffset must be a finite float32, got -Infinity/],
  ['rmsNorm', 'weightOffset beyond float32', () => [x(), w(), { weightOffset: 1e39 }], RangeError, /options\.weightOffset must be a finite float32/],
  ['rmsNorm', 'weightOffset is a string', () => [x(), w(), { weightOffset: '1' }], TypeError, /options\.weightOffset must be a number, got string/],
  ['rmsNorm', 'weightOffset without a weight', () => [x(), null, { dim: 4, weightOffset: 1 }], TypeError, /options\.weightOffset needs a weight, but weight is null/],
  ['rmsNorm', 'shape and dim together', () => [x(), w(), { shape: [2, 4], dim: 4 }], TypeError, /give options\.dim or options\.shape, not both/],
  ['rmsNorm', 'shape with a negative dim', () => [x(), w(), { shape: [2, -4] }], RangeError, /options\.shape\[1\] must be a non-negative integer, got -4$/],
  ['rmsNorm', 'shape with a fractional dim', () => [x(), w(), { shape: [2, 4.5] }], RangeError, /options\.shape\[1\] must be a non-negative integer, got 4\.5$/],
  ['rmsNorm', 'shape with a dim of 2^53', () => [x(), w(), { shape: [2, 2 ** 53] }], RangeError, /options\.shape\[1\] must be a non-negative integer, got 9007199254740992$/],
  ['rmsNorm', 'shape with a dim that is no number', () => [x(), w(), { shape: [2, '4'] }], TypeError, /options\.shape\[1\] must be a number, got string "4"$/],
  ['rmsNorm', 'shape is a string', () => [x(), w(), { shape: '2,4' }], TypeError, /options\.shape must be .*, got string "2,4"/],
  ['rmsNorm', 'shape is empty', () => [x(), w(), { shape: [] }], RangeError, /options\.shape must hold at least one dim, got \[\]$/],
  ['rmsNorm', 'shape does not hold x', () => [x(), w(), { shape: [3, 4] }], RangeError, /options\.shape \[3,4\] holds 12 values, but x\.length is 8/],
  ['rmsNorm', 'axis out of range', () => [x(), w(), { shape: [2, 4], axis: 2 }], RangeError, /options\.axis must be an integer in \[-2, 1\] for a shape of rank 2, got number 2/],
  ['rmsNorm', 'axis is fractional', () => [x(), w(), { shape: [2, 4], axis: 0.5 }], RangeError, /options\.axis must be an integer/],
  ['rmsNorm', 'axis without shape', () => [x(), w(), { axis: -1 }], TypeError, /options\.axis needs options\.shape/],
  ['rmsNorm', 'weight does not match the normalized dims', () => [x(), w(), { shape: [8], axis: 0 }], RangeError, /weight\.length \(4\) must equal the product of the normalized dims of options\.shape \(8\)/],
  // tensors: freed, of another instance, of the wrong dtype
  ['rmsNorm', 'x is a freed tensor', (ctx) => [ctx.freed(8), w()], TypeError, /x is a freed tensor/],
  ['rmsNorm', 'weight is a freed tensor', (ctx) => [x(), ctx.freed(4)], TypeError, /weight is a freed tensor/],
  ['rmsNorm', 'out is a freed tensor', (ctx) => [x(), w(), { out: ctx.freed(8) }], TypeError, /options\.out is a freed tensor/],
  ['rmsNorm', 'x is a bfloat16 tensor', (ctx) => [ctx.tensor(8, 'bfloat16'), w()], TypeError, /x must be a Float32Array, got bfloat16 Tensor\(8\)/],
  ['rmsNorm', 'x is a bfloat16 tensor for dtype float16', (ctx) => [ctx.tensor(8, 'bfloat16'), null, { dim: 4, dtype: 'float16' }], TypeError, /x must be a Uint16Array \(float16 bit patterns\) for dtype 'float16', got bfloat16 Tensor\(8\)/],
  ['rmsNorm', "x is another instance's tensor", (ctx) => [ctx.foreign.x, w()], TypeError, /x is a tensor of another instance's memory/, ['wasm']],
  ['rmsNorm', "out is another instance's tensor", (ctx) => [x(), w(), { out: ctx.foreign.out }], TypeError, /options\.out is a tensor of another instance's memory/, ['wasm']],
  ['rmsNorm', 'out overlaps x inside one tensor', (ctx) => { const t = ctx.tensor(16); return [t.array.subarray(0, 8), w(), { out: t.array.subarray(2, 10) }]; },
    RangeError, /options\.out must be x itself or not overlap x/],
  // addRmsNorm: the residual is written too, so it must keep its bytes on every bad call
  ['addRmsNorm', 'residual is undefined', () => [x(), undefined, w()], TypeError, /residual must be an array of x's dtype, got undefined/],
  ['addRmsNorm', 'the residual left out: the options in the weight\'s place', () => [x(), w(), { eps: 1e-5 }], TypeError, /weight must be a Float32Array, a Uint16Array of 16-bit values, a tensor, or null \(for no weight\), got Object \(addRmsNorm takes \(x, residual, weight, options\?\): was an argument left out\?\)$/],
  ['addRmsNorm', 'the residual left out: no weight', () => [x(), w()], TypeError, /weight must be .*, got undefined \(addRmsNorm takes \(x, residual, weight, options\?\): was an argument left out\?\)$/],
  ['addRmsNorm', 'residual is a Float64Array', () => [x(), new Float64Array(8), w()], TypeError, /residual must be a Float32Array, got Float64Array\(8\)/],
  ['addRmsNorm', 'residual is null', () => [x(), null, w()], TypeError, /residual must be a Float32Array, got null/],
  ['addRmsNorm', 'residual is detached', () => [x(), detached(8), w()], TypeError, /residual is a view of a detached ArrayBuffer/],
  ['addRmsNorm', 'residual is too short', () => [x(), new Float32Array(4), w()], RangeError, /residual\.length \(4\) must equal x\.length \(8\)/],
  ['addRmsNorm', 'residual is x', () => { const s = x(); return [s, s, w()]; }, RangeError, /residual must not overlap (x|weight)/],
  ['addRmsNorm', 'residual overlaps weight', () => { const s = new Float32Array(12); return [x(), s.subarray(0, 8), s.subarray(6, 10)]; }, RangeError, /residual must not overlap (x|weight)/],
  ['addRmsNorm', 'residual overlaps x partially', () => { const t = new Uint16Array(16); return [t.subarray(0, 8), t.subarray(4, 12), w16(), { dtype: 'bfloat16' }]; },
    RangeError, /residual must not overlap (x|weight)/],
  ['addRmsNorm', 'out overlaps the residual partially', () => { const t = new Uint16Array(16); return [x16(), t.subarray(0, 8), w16(), { dtype: 'bfloat16', out: t.subarray(4, 12) }]; },
    RangeError, /options\.out must not overlap residual/],
  ['addRmsNorm', 'out is the residual', () => { const r = new Float32Array(8); return [x(), r, w(), { out: r }]; }, RangeError, /options\.out must not overlap residual/],
  ['addRmsNorm', 'residual of another dtype', () => [x16(), new Float32Array(8), w(), { dtype: 'bfloat16' }], TypeError, /residual must be a Uint16Array \(bfloat16 bit patterns\)/],
  ['addRmsNorm', 'eps = NaN', () => [x(), new Float32Array(8), w(), { eps: NaN }], RangeError, /options\.eps must be a finite float32 >= 0, got NaN/],
  ['addRmsNorm', 'residual is a freed tensor', (ctx) => [x(), ctx.freed(8), w()], TypeError, /residual is a freed tensor/],
  ['addRmsNorm', "residual is another instance's tensor", (ctx) => [x(), ctx.foreign.out, w()], TypeError, /residual is a tensor of another instance's memory/, ['wasm']],
  // layerNorm (its statistics outputs mean and rstd, given as sentinel-filled arrays, must stay untouched)
  ['layerNorm', 'x is an Array', () => [[1, 2], null, null, { dim: 2 }], TypeError, /x must be a Float32Array, got Array\(2\)/],
  ['layerNorm', 'x is detached', () => [detached(8), w(), null], TypeError, /x is a view of a detached ArrayBuffer/],
  ['layerNorm', 'x is a BigInt', () => [8n, w(), null], TypeError, /x must be a Float32Array, got bigint 8n/],
  ['layerNorm', 'weight undefined', () => [x(), undefined, null], TypeError, /weight must be a Float32Array or null \(for no weight\), got undefined/],
  ['layerNorm', 'bias undefined', () => [x(), w(), undefined], TypeError, /bias must be a Float32Array or null/],
  ['layerNorm', 'bias a Float64Array', () => [x(), w(), new Float64Array(4)], TypeError, /bias must be a Float32Array, got Float64Array/],
  ['layerNorm', 'bias is detached', () => [x(), w(), detached(4)], TypeError, /bias is a view of a detached ArrayBuffer/],
  ['layerNorm', 'no weight, bias nor dim', () => [x(), null, null], TypeError, /options\.dim is required when weight and bias are null/],
  ['layerNorm', 'bias length', () => [x(), w(), f32(3)], RangeError, /bias\.length \(3\) must equal weight\.length \(4\)/],
  ['layerNorm', 'dim from bias', () => [f32(6), null, f32(4)], RangeError, /bias\.length \(4\) does not divide x\.length \(6\)/],
  ['layerNorm', 'shape vs bias', () => [f32(24), null, f32(5), { shape: [2, 3, 4], axis: 1 }], RangeError, /bias\.length \(5\) must equal the product of the normalized dims of options\.shape \(12\)/],
  ['layerNorm', 'axis without shape', () => [x(), w(), null, { axis: 0 }], TypeError, /options\.axis needs options\.shape/],
  ['layerNorm', 'weight is a freed tensor', (ctx) => [x(), ctx.freed(4), null], TypeError, /weight is a freed tensor/],
  ['layerNorm', "x is another instance's tensor", (ctx) => [ctx.foreign.x, w(), null], TypeError, /x is a tensor of another instance's memory/, ['wasm']],
  ['layerNorm', 'eps negative', () => [x(), w(), null, { eps: -1 }], RangeError, /options\.eps must be a finite float32 >= 0/],
  ['layerNorm', 'unknown option', () => [x(), w(), null, { epsilon: 1 }], TypeError, /unknown option 'epsilon' \(allowed: eps, dim, shape, axis, rowStride, heads, headStride, out, mean, rstd\)/],
  ['layerNorm', 'rstd too short', () => [x(), w(), null, { mean: f32s(2), rstd: f32(1) }], RangeError, /options\.rstd\.length \(1\) must equal the number of rows \(2\)/],
  ['layerNorm', 'mean a Float64Array', () => [x(), w(), null, { mean: new Float64Array(2) }], TypeError, /options\.mean must be a Float32Array/],
  ['layerNorm', 'mean is detached', () => [x(), w(), null, { mean: detached(2), rstd: f32s(2) }], TypeError, /options\.mean is a view of a detached ArrayBuffer/],
  ['layerNorm', 'mean overlaps x', () => { const s = f32(16); return [s.subarray(0, 8), w(), null, { mean: s.subarray(7, 9) }]; }, RangeError, /options\.mean must not overlap x/],
  ['layerNorm', 'out overlaps bias', () => { const s = f32(16); return [s.subarray(8, 16), null, s.subarray(0, 8), { out: s.subarray(4, 12), mean: f32s(1) }]; }, RangeError, /options\.out must (be x itself or )?not overlap/],
  ['layerNorm', 'rstd overlaps mean', () => { const s = f32(16); return [x(), w(), null, { mean: s.subarray(0, 2), rstd: s.subarray(1, 3) }]; }, RangeError, /options\.rstd must not overlap options\.mean/],
  ['layerNorm', 'a row beyond what wasm32 can address', () => [new Float32Array(2 ** 30), null, null, { dim: 2 ** 30 }],
    RangeError, /needs \d+ bytes of wasm memory, more than wasm32 can address/, ['wasm']],
  // rmsNorm's rstd output
  ['rmsNorm', 'rstd wrong length', () => [x(), w(), { rstd: f32(3) }], RangeError, /options\.rstd\.length \(3\) must equal the number of rows \(2\)/],
  ['rmsNorm', 'rstd overlaps out', () => { const s = f32(16); return [x(), w(), { out: s.subarray(0, 8), rstd: s.subarray(6, 8) }]; }, RangeError, /options\.rstd must not overlap options\.out/],
  ['rmsNorm', 'rstd is detached', () => [x(), w(), { rstd: detached(2) }], TypeError, /options\.rstd is a view of a detached ArrayBuffer/],
  ['rmsNorm', 'rstd on a bound memory', (ctx) => [ctx.view(0x8000, 8), null, { dim: 4, out: ctx.view(0x9000, 8), rstd: f32s(2) }], TypeError, /options\.rstd must be a view of the bound memory's buffer/, ['bound']],
  // rmsNormBackward (its output option is dx)
  ['rmsNormBackward', 'dy missing', () => [undefined, x(), w()], TypeError, /dy must be a Float32Array, got undefined/],
  ['rmsNormBackward', 'dy is a BigInt', () => [1n, x(), w()], TypeError, /dy must be a Float32Array, got bigint 1n/],
  ['rmsNormBackward', 'dy is detached', () => [detached(8), x(), w()], TypeError, /dy is a view of a detached ArrayBuffer/],
  ['rmsNormBackward', 'dy length', () => [f32(4), x(), w()], RangeError, /dy\.length \(4\) must equal x\.length \(8\)/],
  ['rmsNormBackward', 'x not a multiple', () => [f32(6), f32(6), w()], RangeError, /weight\.length \(4\) does not divide x\.length \(6\)/],
  ['rmsNormBackward', 'weight undefined', () => [x(), x(), undefined], TypeError, /weight must be a Float32Array or null \(for no weight\), got undefined/],
  ['rmsNormBackward', 'rstd length', () => [x(), x(), w(), { rstd: f32(3) }], RangeError, /options\.rstd\.length \(3\) must equal the number of rows \(2\)/],
  ['rmsNormBackward', 'rstd an Array', () => [x(), x(), w(), { rstd: [1, 1] }], TypeError, /options\.rstd must be a Float32Array, got Array\(2\)/],
  ['rmsNormBackward', 'dx overlaps x', () => { const s = f32(16); return [x(), s.subarray(0, 8), w(), { dx: s.subarray(4, 12) }]; }, RangeError, /options\.dx must not overlap x/],
  ['rmsNormBackward', 'dx length', () => [x(), x(), w(), { dx: f32(4) }], RangeError, /options\.dx\.length \(4\) must equal x\.length \(8\)/],
  ['rmsNormBackward', 'dx is a freed tensor', (ctx) => [x(), x(), w(), { dx: ctx.freed(8) }], TypeError, /options\.dx is a freed tensor/],
  ['rmsNormBackward', "dx is another instance's tensor", (ctx) => [x(), x(), w(), { dx: ctx.foreign.out }], TypeError, /options\.dx is a tensor of another instance's memory/, ['wasm']],
  ['rmsNormBackward', 'unknown option', () => [x(), x(), w(), { mean: f32(2) }], TypeError, /unknown option 'mean' \(allowed: eps, dim, shape, axis, rowStride, rstd, dx\)/],
  ['rmsNormBackward', 'rows beyond what wasm32 can address', () => [new Float32Array(2 ** 30), new Float32Array(2 ** 30), null, { dim: 2 ** 30 }],
    RangeError, /needs \d+ bytes of wasm memory, more than wasm32 can address/, ['wasm']],
  // layerNormBackward
  ['layerNormBackward', 'mean without rstd', () => [x(), x(), w(), null, { mean: f32(2) }], TypeError, /options\.mean and options\.rstd must be given together/],
  ['layerNormBackward', 'bias length', () => [x(), x(), w(), f32(2)], RangeError, /bias\.length \(2\) must equal weight\.length \(4\)/],
  ['layerNormBackward', 'eps a string', () => [x(), x(), w(), null, { eps: '1' }], TypeError, /options\.eps must be a number/],
  ['layerNormBackward', 'options null', () => [x(), x(), w(), null, null], TypeError, /options must be an object, got null/],
  ['layerNormBackward', 'dx overlaps weight', () => { const s = f32(16); return [x(), x(), s.subarray(0, 4), null, { dx: s.subarray(2, 10) }]; }, RangeError, /options\.dx must not overlap weight/],
  ['layerNormBackward', 'x is detached', () => [x(), detached(8), w(), null], TypeError, /x is a view of a detached ArrayBuffer/],
  ['layerNormBackward', 'rstd is detached', () => [x(), x(), w(), null, { mean: f32(2), rstd: detached(2) }], TypeError, /options\.rstd is a view of a detached ArrayBuffer/],
  ['layerNormBackward', 'mean is a freed tensor', (ctx) => [x(), x(), w(), null, { mean: ctx.freed(2), rstd: f32(2) }], TypeError, /options\.mean is a freed tensor/],
  // alloc
  ['alloc', 'length is missing', () => [], TypeError, /^alloc: length must be a number, got undefined$/],
  ['alloc', 'length is a string', () => ['8'], TypeError, /length must be a number, got string "8"/],
  ['alloc', 'length is a BigInt', () => [8n], TypeError, /length must be a number, got bigint 8n/],
  ['alloc', 'length is negative', () => [-1], RangeError, /length must be a non-negative integer, got -1/],
  ['alloc', 'length is fractional', () => [2.5], RangeError, /length must be a non-negative integer, got 2\.5/],
  ['alloc', 'length is NaN', () => [NaN], RangeError, /length must be a non-negative integer, got NaN/],
  ['alloc', 'dtype is unknown', () => [8, 'float64'], TypeError, /dtype must be 'float32' or 'bfloat16' or 'float16' or 'q8_0' or 'q8_1' or 'q8_K', got string "float64"/],
  ['alloc', 'a block format\'s length is no whole number of blocks', () => [35, 'q8_0'], RangeError, /length \(35\) must be a whole number of q8_0 blocks, a multiple of 34 bytes/],
  ['alloc', 'q8_K beyond what wasm32 can address', () => [292 * 2 ** 24, 'q8_K'], RangeError, /needs 4898947072 bytes of wasm memory, more than wasm32 can address/],
  ['alloc', 'dtype is null', () => [8, null], TypeError, /dtype must be .*, got null/],
  ['alloc', 'beyond what wasm32 can address', () => [2 ** 31], RangeError, /needs 8589934592 bytes of wasm memory, more than wasm32 can address/],
  ['alloc', 'bfloat16 beyond what wasm32 can address', () => [2 ** 32, 'bfloat16'], RangeError, /needs 8589934592 bytes of wasm memory, more than wasm32 can address/],
  // the kernels bound to an engine's memory (bindMemory): views of it only,
  // out required, and nothing inside the scratch region lent as their stack
  ['rmsNorm', 'x outside the bound memory', (ctx) => [x(), null, { dim: 4, out: ctx.view(0x9000, 8) }], TypeError, /x must be a view of the bound memory's buffer/, ['bound']],
  ['rmsNorm', 'weight outside the bound memory', (ctx) => [ctx.view(0x8000, 8), w(), { out: ctx.view(0x9000, 8) }], TypeError, /weight must be a view of the bound memory's buffer/, ['bound']],
  ['rmsNorm', 'out outside the bound memory', (ctx) => [ctx.view(0x8000, 8), null, { dim: 4, out: new Float32Array(8) }], TypeError, /options\.out must be a view of the bound memory's buffer/, ['bound']],
  ['rmsNorm', 'no out on a bound memory whose scratch holds only the stack', (ctx) => [ctx.view(0x8000, 8), null, { dim: 4, out: undefined }], RangeError, /needs 32 bytes of staging in options\.scratch besides the kernels' 4096-byte stack; lend a larger region/, ['bound']],
  ['rmsNorm', 'x inside the lent scratch', (ctx) => [ctx.view(ctx.scratch.byteOffset + 64, 8), null, { dim: 4, out: ctx.view(0x9000, 8) }], RangeError, /x overlaps the kernels' scratch region \[4096, 8192\) of wasm memory/, ['bound']],
  ['rmsNorm', 'out reaching into the lent scratch', (ctx) => [ctx.view(0x8000, 8), null, { dim: 4, out: ctx.view(ctx.scratch.byteOffset - 16, 8) }], RangeError, /options\.out overlaps the kernels' scratch region \[4096, 8192\)/, ['bound']],
  ['rmsNorm', 'weight inside the lent scratch', (ctx) => [ctx.view(0x8000, 8), ctx.view(ctx.scratch.byteOffset + ctx.scratch.byteLength - 4, 4), { out: ctx.view(0x9000, 8) }], RangeError, /weight overlaps the kernels' scratch region \[4096, 8192\)/, ['bound']],
  ['addRmsNorm', 'residual inside the lent scratch', (ctx) => [ctx.view(0x8000, 8), ctx.view(ctx.scratch.byteOffset, 8), null, { dim: 4, out: ctx.view(0x9000, 8) }], RangeError, /residual overlaps the kernels' scratch region \[4096, 8192\)/, ['bound']],
  // the converters
  ['toFloat32', 'no dtype', () => [new Uint16Array(4), { out: f32s(4) }], TypeError, /options\.dtype is required: 'bfloat16' or 'float16', the 16-bit format of the bits/],
  ['toFloat32', 'dtype float32', () => [new Uint16Array(4), { dtype: 'float32', out: f32s(4) }], TypeError, /options\.dtype must be 'bfloat16' or 'float16', got string "float32"/],
  ['toFloat32', 'x is a Float32Array', () => [f32(4), { dtype: 'bfloat16', out: f32s(4) }], TypeError, /x must be a Uint16Array \(bfloat16 bit patterns\) for dtype 'bfloat16', got Float32Array\(4\)/],
  ['toFloat32', 'out is a Uint16Array', () => [new Uint16Array(4), { dtype: 'bfloat16', out: new Uint16Array(4).fill(SENTINEL16) }], TypeError, /options\.out must be a Float32Array, got Uint16Array\(4\)$/],
  ['toFloat32', 'out too short', () => [new Uint16Array(4), { dtype: 'float16', out: f32s(3) }], RangeError, /options\.out\.length \(3\) must equal x\.length \(4\)/],
  ['toFloat32', 'an option it does not take', () => [new Uint16Array(4), { dtype: 'float16', eps: 1e-6, out: f32s(4) }], TypeError, /unknown option 'eps' \(allowed: dtype, out\)/],
  ['fromFloat32', 'no dtype', () => [f32(4), { out: new Uint16Array(4).fill(SENTINEL16) }], TypeError, /options\.dtype is required/],
  ['fromFloat32', 'out is a Float32Array', () => [f32(4), { dtype: 'bfloat16', out: f32s(4) }], TypeError, /options\.out must be a Uint16Array \(bfloat16 bit patterns\) for dtype 'bfloat16', got Float32Array\(4\)$/],
  ['fromFloat32', 'out overlaps x', () => { const b = new ArrayBuffer(64); return [new Float32Array(b, 0, 8), { dtype: 'float16', out: new Uint16Array(b, 8, 8) }]; }, RangeError, /options\.out must not overlap x/],
  ['fromFloat32', 'x is a plain Array', () => [[1, 2], { dtype: 'bfloat16', out: new Uint16Array(2).fill(SENTINEL16) }], TypeError, /x must be a Float32Array, got Array\(2\) \(copy it into one: Float32Array\.from\(x\)\)/],
  // the quantizer and its inverse: every array argument's kinds, a detached or shrunk one too
  ['quantize', 'x is a plain Array', () => [[...x(), ...x(), ...x(), ...x()], { dtype: 'q8_0', out: bytesOut(34) }], TypeError, /x must be a Float32Array, got Array\(32\) \(copy it into one: Float32Array\.from\(x\)\)$/],
  ['quantize', 'x is detached', () => [detached(32), { dtype: 'q8_0', out: bytesOut(34) }], TypeError, /x is a view of a detached ArrayBuffer/],
  ['quantize', 'x is out of bounds of a shrunk resizable buffer', () => [outOfBounds(32), { dtype: 'q8_0', out: bytesOut(34) }], TypeError, /x is a view of a detached ArrayBuffer \(or out of bounds of a shrunk resizable one\)/],
  ['quantize', 'x is not whole blocks', () => [f32(33), { dtype: 'q8_0' }], RangeError, /x\.length \(33\) must be a multiple of 32, the q8_0 block size/],
  ['quantize', 'no dtype', () => [f32(32), { out: bytesOut(34) }], TypeError, /options\.dtype is required: 'q8_0', 'q8_1' or 'q8_K', the block format/],
  ['quantize', 'dtype float32', () => [f32(32), { dtype: 'float32', out: bytesOut(34) }], TypeError, /options\.dtype must be 'q8_0' or 'q8_1' or 'q8_K', got string "float32"/],
  ['quantize', 'out is an Int8Array', () => [f32(32), { dtype: 'q8_0', out: new Int8Array(34) }], TypeError, /options\.out must be a Uint8Array \(the bytes of ggml q8_0 blocks\) for dtype 'q8_0', got Int8Array\(34\)/],
  ['quantize', 'out is a tensor of another format', (ctx) => [f32(32), { dtype: 'q8_0', out: ctx.tensor(292, 'q8_K') }], TypeError, /options\.out must be a Uint8Array \(the bytes of ggml q8_0 blocks\) for dtype 'q8_0', got q8_K Tensor\(292\) \(options\.dtype is 'q8_0'\)$/, ['wasm']],
  ['quantize', 'out is detached', () => [f32(32), { dtype: 'q8_0', out: detachedBytes(34) }], TypeError, /options\.out is a view of a detached ArrayBuffer/],
  ['quantize', 'out is out of bounds of a shrunk resizable buffer', () => [f32(32), { dtype: 'q8_0', out: outOfBoundsBytes(34) }], TypeError, /options\.out is a view of a detached ArrayBuffer \(or out of bounds/],
  ['quantize', 'out one byte short', () => [f32(32), { dtype: 'q8_0', out: bytesOut(33) }], RangeError, /options\.out\.length \(33\) must equal the bytes of 1 q8_0 blocks of 34 \(34\)/],
  ['dequantize', 'bytes is an Int8Array', () => [new Int8Array(34), { dtype: 'q8_0' }], TypeError, /bytes must be a Uint8Array of ggml q8_0 blocks \(or a q8_0 tensor\), got Int8Array\(34\)/],
  ['dequantize', 'bytes is a plain Array', () => [[0, 0], { dtype: 'q8_0' }], TypeError, /bytes must be a Uint8Array of ggml q8_0 blocks \(or a q8_0 tensor\), got Array\(2\)/],
  ['dequantize', 'bytes is detached', () => [detachedBytes(34), { dtype: 'q8_0' }], TypeError, /bytes is a view of a detached ArrayBuffer/],
  ['dequantize', 'bytes is out of bounds of a shrunk resizable buffer', () => [outOfBoundsBytes(34), { dtype: 'q8_0' }], TypeError, /bytes is a view of a detached ArrayBuffer \(or out of bounds of a shrunk resizable one\)/],
  ['dequantize', 'bytes is not whole blocks', () => [bytesOut(35), { dtype: 'q8_0' }], RangeError, /bytes\.length \(35\) must be a multiple of 34, the bytes of a q8_0 block/],
  ['dequantize', 'no dtype', () => [bytesOut(34)], TypeError, /options\.dtype is required/],
  ['dequantize', 'dtype bfloat16', () => [bytesOut(34), { dtype: 'bfloat16' }], TypeError, /options\.dtype must be 'q8_0' or 'q8_1' or 'q8_K', got string "bfloat16"/],
  // bindMemory
  ['bindMemory', 'memory is a plain object', () => [{}, { scratch: { byteOffset: 0, byteLength: 4096 } }], TypeError, /memory must be a WebAssembly\.Memory, got Object/],
  ['bindMemory', 'memory is an ArrayBuffer', () => [new ArrayBuffer(65536), { scratch: { byteOffset: 0, byteLength: 4096 } }], TypeError, /memory must be a WebAssembly\.Memory, got ArrayBuffer/],
  ['bindMemory', 'memory is null', () => [null, { scratch: { byteOffset: 0, byteLength: 4096 } }], TypeError, /memory must be a WebAssembly\.Memory, got null/],
  ['bindMemory', 'no options', () => [new WebAssembly.Memory({ initial: 1 })], TypeError, /options with a scratch region are required: bindMemory\(memory, \{ scratch: \{ byteOffset, byteLength \} \}\)/],
  ['bindMemory', 'options is a string', () => [new WebAssembly.Memory({ initial: 1 }), 'scratch'], TypeError, /options must be an object, got string/],
  ['bindMemory', 'scratch is null', () => [new WebAssembly.Memory({ initial: 1 }), { scratch: null }], TypeError, /options\.scratch must be \{ byteOffset, byteLength \}, got null/],
  ['bindMemory', 'scratch not 16-byte aligned', () => [new WebAssembly.Memory({ initial: 1 }), { scratch: { byteOffset: 8, byteLength: 4096 } }], RangeError, /options\.scratch\.byteOffset must be a positive multiple of 16 \(address 0 is the null pointer\), got 8/],
  ['bindMemory', 'scratch at address 0', () => [new WebAssembly.Memory({ initial: 1 }), { scratch: { byteOffset: 0, byteLength: 4096 } }], RangeError, /options\.scratch\.byteOffset must be a positive multiple of 16 \(address 0 is the null pointer\), got 0/],
  ['bindMemory', 'scratch too small', () => [new WebAssembly.Memory({ initial: 1 }), { scratch: { byteOffset: 16, byteLength: 100 } }], RangeError, /options\.scratch\.byteLength must be an integer of at least 4096, got 100/],
  ['bindMemory', 'scratch outside the memory', () => [new WebAssembly.Memory({ initial: 1 }), { scratch: { byteOffset: 65536 - 4096, byteLength: 8192 } }], RangeError, /options\.scratch \[61440, 69632\) lies outside the memory \(65536 bytes\)/],
  ['bindMemory', 'unknown option', () => [new WebAssembly.Memory({ initial: 1 }), { scratch: { byteOffset: 0, byteLength: 4096 }, threads: 2 }], TypeError, /unknown option 'threads' \(allowed: scratch, backend, recover\)/],
  ['bindMemory', 'backend is unknown', () => [new WebAssembly.Memory({ initial: 1 }), { scratch: { byteOffset: 0, byteLength: 4096 }, backend: 'gpu' }], TypeError, /options\.backend must be 'auto', 'simd' or 'scalar', got string "gpu"/],
  // init
  ['init', 'backend is unknown', () => [{ backend: 'gpu' }], TypeError, /options\.backend must be 'auto', 'simd' or 'scalar', got string "gpu"/],
  ['init', 'backend is misspelled', () => [{ backend: 'SIMD' }], TypeError, /options\.backend must be .*, got string "SIMD"/],
  ['init', 'backend is a BigInt', () => [{ backend: 1n }], TypeError, /options\.backend must be .*, got bigint 1n/],
  ['init', 'backend is null', () => [{ backend: null }], TypeError, /options\.backend must be .*, got null/],
  ['init', 'unknown option', () => [{ backend: 'simd', threads: 2 }], TypeError, /unknown option 'threads' \(allowed: backend, module\)/],
  ['init', 'module is a plain object', () => [{ module: {} }], TypeError, /options\.module must be a WebAssembly\.Module, got Object/],
  ['init', 'module is its bytes', () => [{ module: new ArrayBuffer(8) }], TypeError, /options\.module must be a WebAssembly\.Module, got ArrayBuffer/],
  ['init', 'misspelled option', () => [{ backends: 'simd' }], TypeError, /unknown option 'backends'/],
  ['init', 'options is a string', () => ['simd'], TypeError, /options must be an object, got string "simd"/],
  ['init', 'options is null', () => [null], TypeError, /options must be an object, got null/],
  ['init', 'options is an Array', () => [['simd']], TypeError, /options must be an object, got Array\(1\)/],
  ['init', 'options is a BigInt', () => [1n], TypeError, /options must be an object, got bigint 1n/],
];

// Each function's implementations: the backend's instance (ctx.kernels, from
// createKernels), the reference, and the kernels bound to an engine's memory
// (ctx.bound, from bindMemory).
const IMPLEMENTATIONS = {
  rmsNorm: [['wasm', (ctx) => ctx.kernels.rmsNorm], ['reference', () => referenceRmsNorm], ['bound', (ctx) => ctx.bound.rmsNorm]],
  addRmsNorm: [['wasm', (ctx) => ctx.kernels.addRmsNorm], ['reference', () => referenceAddRmsNorm], ['bound', (ctx) => ctx.bound.addRmsNorm]],
  layerNorm: [['wasm', (ctx) => ctx.kernels.layerNorm], ['reference', () => reference.layerNorm]],
  rmsNormBackward: [['wasm', (ctx) => ctx.kernels.rmsNormBackward], ['reference', () => reference.rmsNormBackward]],
  layerNormBackward: [['wasm', (ctx) => ctx.kernels.layerNormBackward], ['reference', () => reference.layerNormBackward]],
  toFloat32: [['wasm', (ctx) => ctx.kernels.toFloat32], ['reference', () => reference.toFloat32], ['bound', (ctx) => ctx.bound.toFloat32]],
  fromFloat32: [['wasm', (ctx) => ctx.kernels.fromFloat32], ['reference', () => reference.fromFloat32], ['bound', (ctx) => ctx.bound.fromFloat32]],
  quantize: [['wasm', (ctx) => ctx.kernels.quantize], ['reference', () => reference.quantize], ['bound', (ctx) => ctx.bound.quantize]],
  dequantize: [['package', () => dequantize], ['reference', () => reference.dequantize]],
  alloc: [['wasm', (ctx) => ctx.kernels.alloc]],
  bindMemory: [['wasm', () => bindMemory]],
  init: [['wasm', () => init]],
};
const ASYNC = new Set(['init', 'bindMemory']);
// Where each function takes its options, and the option its output goes to
// (for the sentinel output).
const OPTIONS_AT = { rmsNorm: 2, addRmsNorm: 3, layerNorm: 3, rmsNormBackward: 3, layerNormBackward: 4, toFloat32: 1, fromFloat32: 1, quantize: 1, dequantize: 1 };
const OUTPUT_OPTION = { rmsNorm: 'out', addRmsNorm: 'out', layerNorm: 'out', rmsNormBackward: 'dx', layerNormBackward: 'dx', toFloat32: 'out', fromFloat32: 'out' };

// Views of up to this many bytes are snapshot and given a sentinel out; the
// 4 GiB row is left alone (its zero pages are never touched).
const SNAPSHOT_BYTES = 2 ** 20;
const bytes = (a) => (a.byteLength === 0 ? null : new Uint8Array(a.buffer, a.byteOffset, a.byteLength).slice());

/** Where the row's options have no out, a sentinel-filled one joins them. */
function withSentinelOut(fn, args) {
  const at = OPTIONS_AT[fn];
  // (The blocks' functions' rows give their own out, or have none: dequantize makes its result.)
  if (at === undefined || OUTPUT_OPTION[fn] === undefined) return { args, target: null };
  const xArg = args[0];
  const options = args[at];
  const isPlainObject = options !== null && typeof options === 'object' && !Array.isArray(options);
  const name = OUTPUT_OPTION[fn];
  if (!(options === undefined || (isPlainObject && !(name in options)))) return { args, target: null };
  if (ArrayBuffer.isView(xArg) && xArg.byteLength > SNAPSHOT_BYTES) return { args, target: null };
  const length = ArrayBuffer.isView(xArg) || xArg instanceof Tensor ? xArg.length : 8;
  const target = (xArg instanceof Uint16Array ? new Uint16Array(length).fill(SENTINEL16) : new Float32Array(length).fill(SENTINEL));
  const withOut = args.slice();
  while (withOut.length < at) withOut.push(undefined);
  withOut[at] = { ...options, [name]: target };
  return { args: withOut, target };
}

// The good call after each bad one: shapes that use the weight, a tail and
// several rows, against the reference's bits.
const goodX = normalArray(prng(70), 3 * 37, 2);
const goodW = uniformArray(prng(71), 37, 0.5, 1.5);
const goodExpected = referenceRmsNorm(goodX, goodW);
const goodX16 = Uint16Array.from(normalArray(prng(74), 3 * 37, 2), numberToBfloat16);
const goodResidual = Uint16Array.from(normalArray(prng(75), 3 * 37, 1), numberToBfloat16);
const goodResidualAfter = goodResidual.slice();
const goodExpected16 = referenceAddRmsNorm(goodX16, goodResidualAfter, goodW, { dtype: 'bfloat16', castMode: 'gemma' });

// The backend's instance, and tensors for the rows: fresh ones, freed ones,
// and ones of the other backend's instance ("foreign").
async function tensorContext(backend) {
  const instances = Object.fromEntries((await wasmImplementations()).map((impl) => [impl.name, impl]));
  const kernels = instances[backend];
  const other = instances[backend === 'simd' ? 'scalar' : 'simd'];
  const foreign = { x: other.alloc(8), out: other.alloc(8) };
  const probe = kernels.alloc(1); // its view follows the instance's memory
  // An engine's memory with the kernels bound to it, lending [4096, 8192).
  const memory = new WebAssembly.Memory({ initial: 4 });
  const scratch = { byteOffset: 0x1000, byteLength: 0x1000 };
  return {
    kernels,
    memoryBytes: () => probe.array.buffer.byteLength,
    foreign,
    tensor: (n, dtype) => kernels.alloc(n, dtype),
    freed: (n) => { const t = kernels.alloc(n); t.free(); return t; },
    bound: await bindMemory(memory, { scratch, backend }),
    scratch,
    view: (byteOffset, n) => new Float32Array(memory.buffer, byteOffset, n).fill(1.5),
  };
}

for (const backend of WASM_BACKENDS) {
  test(`${backend}: every row of the argument-error matrix is rejected by name, writes nothing, and leaves a working state`, async () => {
    assert.ok(ROWS.length >= 30);
    const ctx = await tensorContext(backend);
    for (const [fn, what, makeArgs, errorClass, pattern, only] of ROWS) {
      for (const [label, implOf] of IMPLEMENTATIONS[fn]) {
        if (only !== undefined ? !only.includes(label) : label === 'bound' && fn === 'bindMemory') continue;
        const impl = implOf(ctx);
        const { args, target } = withSentinelOut(fn, makeArgs(ctx));
        const options = args[OPTIONS_AT[fn]];
        const views = [...args, ...(options !== null && typeof options === 'object' ? Object.values(options) : [])]
          .map((a) => (a instanceof Tensor && !a.freed ? a.array : a))
          .filter((a) => ArrayBuffer.isView(a) && a.byteLength <= SNAPSHOT_BYTES);
        const before = views.map(bytes);
        const memoryBefore = ctx.memoryBytes();
        const where = `${fn} (${label}, ${backend}): ${what}`;
        const isExpected = (err) => {
          assert.ok(err instanceof errorClass, `${where}: expected ${errorClass.name}, got ${err.name}: ${err.message}`);
          assert.match(err.message, new RegExp(`^${fn}: `), where);
          assert.match(err.message, pattern, where);
          assert.doesNotMatch(err.message, /undefined undefined/, `${where}: a message with a hole in it`);
          return true;
        };
        if (ASYNC.has(fn)) await assert.rejects(impl(...args), isExpected, where);
        else assert.throws(() => impl(...args), isExpected, where);
        if (target !== null) assert.ok(target.every((v) => v === (target instanceof Uint16Array ? SENTINEL16 : SENTINEL)), `${where}: the output was written to`);
        views.forEach((a, i) => assert.deepEqual(bytes(a), before[i], `${where}: argument ${i} was modified`));
        assert.equal(ctx.memoryBytes(), memoryBefore, `${where}: wasm memory grew`);
        // No corrupted state: the same backend still gives the reference's bits.
        assertSameBits(ctx.kernels.rmsNorm(goodX, goodW), goodExpected, `${where}: the good call after it (rows=3 dim=37 seed=70)`);
        const residual = goodResidual.slice();
        assertSameBitsAs('bfloat16', ctx.kernels.addRmsNorm(goodX16, residual, goodW, { dtype: 'bfloat16', castMode: 'gemma' }), goodExpected16,
          `${where}: the good bfloat16 addRmsNorm after it (rows=3 dim=37 seed=74)`);
        assertSameBitsAs('bfloat16', residual, goodResidualAfter, `${where}: its residual`);
      }
    }
  });
}

