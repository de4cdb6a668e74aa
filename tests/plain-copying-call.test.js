// rmsNorm's shortcut for the plain copying call (isPlainCopyingCall in
// src/api/args.js): Float32Arrays outside wasm memory, options out / eps /
// dim only. It must give the general path's bits, write only what the
// general path writes, and leave every call it does not fully recognize,
// mistakes included, to the general path and its errors.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { alloc, init, rmsNorm } from '../src/index.js';
import { activeKernels } from '../src/api/runtime.js';
import { isPlainCopyingCall, readRmsNormOptions } from '../src/api/args.js';
import { assertSameBits } from './helpers/bits.js';
import { normalArray, prng, uniformArray } from './helpers/random.js';

const isPlain = (x, w, options) => isPlainCopyingCall(activeKernels('test'), x, w, readRmsNormOptions('test', options));

for (const backend of ['simd', 'scalar']) {
  test(`${backend}: the plain copying call gives the general path's bits: new results, out, in place, views, chunked rows`, async () => {
    await init({ backend });
    const rand = prng(91);
    for (const dim of [1, 3, 16, 17, 896, 4097, 70000]) {
      for (const rows of [1, 3]) {
        const xs = normalArray(rand, rows * dim, 3);
        const w = uniformArray(rand, dim, 0.5, 1.5);
        for (const options of [{}, { eps: 0 }, { eps: 1e-5, dim }, { eps: -0 }]) {
          const what = `dim=${dim} rows=${rows} ${JSON.stringify(options)} seed=91`;
          // castMode given: the same call, on the general path.
          const general = { ...options, castMode: 'llama' };
          assert.ok(!isPlain(xs, w, general));
          const expected = rmsNorm(xs, w, general);
          assert.ok(isPlain(xs, w, options), `${what}: plain`);
          assertSameBits(rmsNorm(xs, w, options), expected, `${what}: a new result`);
          const out = new Float32Array(xs.length);
          assert.ok(isPlain(xs, w, { ...options, out }));
          assert.equal(rmsNorm(xs, w, { ...options, out }), out);
          assertSameBits(out, expected, `${what}: into out`);
          const inPlace = xs.slice();
          assert.ok(isPlain(inPlace, w, { ...options, out: inPlace }));
          rmsNorm(inPlace, w, { ...options, out: inPlace });
          assertSameBits(inPlace, expected, `${what}: in place`);
          // x, weight and out as views side by side in one buffer, at odd offsets.
          const buffer = new ArrayBuffer(4 * (2 * xs.length + dim + 3));
          const x = new Float32Array(buffer, 4, xs.length);
          x.set(xs);
          const wv = new Float32Array(buffer, 4 * (xs.length + 1), dim);
          wv.set(w);
          const o = new Float32Array(buffer, 4 * (xs.length + dim + 2), xs.length);
          assert.ok(isPlain(x, wv, { ...options, out: o }));
          rmsNorm(x, wv, { ...options, out: o });
          assertSameBits(o, expected, `${what}: views of one buffer`);
          assertSameBits(x, xs, `${what}: x untouched`);
        }
      }
    }
  });
}

test('calls it does not fully recognize take the general path, which throws for mistakes', async () => {
  await init({ backend: 'simd' });
  const dim = 8;
  const x = normalArray(prng(92), 2 * dim, 1);
  const w = new Float32Array(dim).fill(1);
  const y = new Float32Array(2 * dim).fill(7);
  const mistakes = [
    [{ out: w }, RangeError, /options\.out/],
    [{ out: y, eps: -1 }, RangeError, /options\.eps/],
    [{ out: y, eps: NaN }, RangeError, /options\.eps/],
    [{ out: y, eps: '1e-6' }, TypeError, /options\.eps/],
    [{ out: y, dim: 4 }, RangeError, /options\.dim/],
    [{ out: new Float32Array(dim) }, RangeError, /options\.out\.length/],
    [{ out: new Uint16Array(2 * dim) }, TypeError, /options\.out/],
    [{ out: new Float32Array(x.buffer, 4, 2 * dim - 1) }, RangeError, /options\.out/],
  ];
  for (const [options, type, message] of mistakes) {
    assert.ok(!isPlain(x, w, options), `${JSON.stringify(Object.keys(options))}: not plain`);
    assert.throws(() => rmsNorm(x, w, options), (e) => e instanceof type && message.test(e.message));
  }
  assert.ok(y.every((v) => v === 7), 'nothing written by rejected calls');
  // out overlapping the weight through one buffer
  const shared = new Float32Array(3 * dim);
  assert.ok(!isPlain(x, shared.subarray(0, dim), { out: shared.subarray(4, 4 + 2 * dim) }));
  // what the shortcut leaves to the general path, which handles it
  const sab = new SharedArrayBuffer(4 * 2 * dim);
  const onShared = new Float32Array(sab);
  onShared.set(x);
  assert.ok(!isPlain(onShared, w, {}));
  assertSameBits(rmsNorm(onShared, w), rmsNorm(x, w), 'a SharedArrayBuffer x');
  const t = alloc(2 * dim);
  t.array.set(x);
  assert.ok(!isPlain(t.array, w, {}), 'a view of wasm memory is not copied');
  assertSameBits(rmsNorm(t.array, w), rmsNorm(x, w), 'a view of wasm memory');
  t.free();
  assert.ok(!isPlain(new Float32Array(0), w, {}));
  assert.equal(rmsNorm(new Float32Array(0), w).length, 0);
  assert.ok(!isPlain(x, null, { dim }));
  assert.ok(!isPlain(x, w, { rstd: new Float32Array(2) }));
  const detached = new Float32Array(2 * dim);
  structuredClone(detached.buffer, { transfer: [detached.buffer] });
  assert.ok(!isPlain(detached, w, {}));
  assert.throws(() => rmsNorm(detached, w), { name: 'TypeError', message: /x is a view of a detached ArrayBuffer/ });
});
