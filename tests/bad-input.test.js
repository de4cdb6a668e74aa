// Bad input: a TypeError or RangeError that names the argument, thrown before
// anything is written, by the wasm API and the JS reference alike.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { init, rmsNorm } from '../src/index.js';
import { rmsNorm as referenceRmsNorm } from '../src/reference/index.js';

test('calling a kernel before init() throws a clear Error', () => {
  assert.throws(() => rmsNorm(new Float32Array(4), null, { dim: 4 }), {
    name: 'Error', message: /call `await init\(\)`/,
  });
});

const SENTINEL = 12345.5;
const dim = 4;
const x = () => new Float32Array([1, 2, 3, 4, 5, 6, 7, 8]);
const w = () => new Float32Array([1, 1, 1, 1]);
const out = () => new Float32Array(8).fill(SENTINEL);

// [what, args (x, weight, options), error class, message pattern]
function cases() {
  const shared = new Float32Array(12);
  return [
    ['x is a plain Array', [[1, 2, 3, 4], w()], TypeError, /x must be a Float32Array, got Array\(4\)/],
    ['x is a Float64Array', [new Float64Array(4), w()], TypeError, /x must be a Float32Array, got Float64Array/],
    ['x is a Uint16Array', [new Uint16Array(4), w()], TypeError, /x must be a Float32Array/],
    ['x is null', [null, w()], TypeError, /x must be a Float32Array, got null/],
    ['x is undefined', [undefined, w()], TypeError, /x must be a Float32Array, got undefined/],
    ['x is a string', ['1,2,3,4', w()], TypeError, /x must be a Float32Array, got string/],
    ['x is a DataView', [new DataView(new ArrayBuffer(16)), w()], TypeError, /x must be a Float32Array/],
    ['weight is undefined', [x(), undefined], TypeError, /weight must be a Float32Array or null/],
    ['weight is a plain Array', [x(), [1, 1, 1, 1]], TypeError, /weight must be a Float32Array, got Array/],
    ['weight is a Float64Array', [x(), new Float64Array(4)], TypeError, /weight must be a Float32Array/],
    ['weight is empty', [x(), new Float32Array(0)], RangeError, /weight must not be empty/],
    ['no weight and no dim', [x(), null], TypeError, /options\.dim is required when weight is null/],
    ['weight.length !== dim', [x(), w(), { dim: 2 }], RangeError, /weight\.length \(4\) must equal options\.dim \(2\)/],
    ['x.length not a multiple of dim', [new Float32Array(6), w()], RangeError, /x\.length \(6\) must be a multiple of dim \(4\)/],
    ['dim = 0', [x(), null, { dim: 0 }], RangeError, /options\.dim must be a positive integer, got 0/],
    ['dim = -4', [x(), null, { dim: -4 }], RangeError, /options\.dim must be a positive integer/],
    ['dim = 2.5', [x(), null, { dim: 2.5 }], RangeError, /options\.dim must be a positive integer, got 2\.5/],
    ['dim = NaN', [x(), null, { dim: NaN }], RangeError, /options\.dim must be a positive integer/],
    ['dim is a string', [x(), null, { dim: '4' }], TypeError, /options\.dim must be a number, got string/],
    ['eps < 0', [x(), w(), { eps: -1e-6 }], RangeError, /options\.eps must be a finite float32 >= 0, got -0\.000001/],
    ['eps = NaN', [x(), w(), { eps: NaN }], RangeError, /options\.eps must be a finite float32 >= 0, got NaN/],
    ['eps = Infinity', [x(), w(), { eps: Infinity }], RangeError, /options\.eps must be a finite/],
    ['eps beyond float32', [x(), w(), { eps: 1e39 }], RangeError, /options\.eps must be a finite float32/],
    ['eps is a string', [x(), w(), { eps: '1e-6' }], TypeError, /options\.eps must be a number/],
    ['eps is a BigInt', [x(), w(), { eps: 1n }], TypeError, /options\.eps must be a number, got bigint/],
    ['unknown option', [x(), w(), { epsilon: 1e-5 }], TypeError, /unknown option 'epsilon' \(allowed: eps, dim, out, dtype, weightDtype, castMode, weightOffset, shape, axis, rstd\)/],
    ['options is a number', [x(), w(), 1e-5], TypeError, /options must be an object, got number/],
    ['options is null', [x(), w(), null], TypeError, /options must be an object, got null/],
    ['out is a Float64Array', [x(), w(), { out: new Float64Array(8) }], TypeError, /options\.out must be a Float32Array/],
    ['out is too short', [x(), w(), { out: new Float32Array(4) }], RangeError, /options\.out\.length \(4\) must equal x\.length \(8\)/],
    ['out overlaps x partially', [shared.subarray(0, 8), w(), { out: shared.subarray(4, 12) }], RangeError, /options\.out must be x itself or not overlap x/],
    ['out overlaps weight', [x(), shared.subarray(0, 4), { out: shared.subarray(2, 10) }], RangeError, /options\.out must not overlap weight/],
  ];
}

for (const [name, impl] of [['wasm', rmsNorm], ['reference', referenceRmsNorm]]) {
  test(`${name}: every bad argument is rejected by name, and nothing is written`, async () => {
    await init();
    const rows = cases();
    assert.ok(rows.length >= 30);
    for (const [what, args, errorClass, pattern] of rows) {
      const target = out();
      const options = args[2];
      // Where the case has no out of its own, pass a sentinel-filled one.
      const isPlainObject = options !== null && typeof options === 'object';
      const withOut = options === undefined ? { out: target }
        : isPlainObject && !('out' in options) ? { ...options, out: target } : options;
      const bytes = (a) => new Uint8Array(a.buffer, a.byteOffset, a.byteLength).slice();
      const before = args.map((a) => (ArrayBuffer.isView(a) ? bytes(a) : a));
      assert.throws(() => impl(args[0], args[1], withOut), (err) => {
        assert.ok(err instanceof errorClass, `${what}: expected ${errorClass.name}, got ${err.name}: ${err.message}`);
        assert.match(err.message, /^rmsNorm: /, what);
        assert.match(err.message, pattern, what);
        return true;
      }, what);
      assert.ok(target.every((v) => v === SENTINEL), `${what}: the output was written to`);
      args.forEach((a, i) => {
        if (ArrayBuffer.isView(a)) assert.deepEqual(bytes(a), before[i], `${what}: argument ${i} was modified`);
      });
    }
    // The state is intact: a good call still gives the reference's answer.
    assert.deepEqual(impl(x(), w()), referenceRmsNorm(x(), w()));
  });
}

test('zero rows return an empty array', async () => {
  await init();
  for (const impl of [rmsNorm, referenceRmsNorm]) {
    const y = impl(new Float32Array(0), w());
    assert.ok(y instanceof Float32Array && y.length === 0);
    const given = new Float32Array(0);
    assert.equal(impl(new Float32Array(0), null, { dim: 3, out: given }), given);
  }
});

test('init() rejects bad options', async () => {
  await assert.rejects(init({ backend: 'gpu' }), { name: 'TypeError', message: /options\.backend must be 'auto', 'simd' or 'scalar', got string "gpu"/ });
  await assert.rejects(init({ backend: 'simd', threads: 2 }), { name: 'TypeError', message: /unknown option 'threads'/ });
  await assert.rejects(init('simd'), { name: 'TypeError', message: /init: options must be an object/ });
});
