// The copying call: rmsNorm on Float32Arrays outside wasm memory, which the
// call copies in and out. On every implementation it gives the reference's
// bits for a new result, into out, in place, on views side by side in one
// buffer and over batches staged in several chunks, and leaves x as it was;
// a call with a mistake is refused by name and writes nothing; and the
// arrays it accepts besides (a SharedArrayBuffer, a view of wasm memory, no
// rows, no weight, rstd) work.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as reference from '../src/reference/index.js';
import { assertSameBits } from './helpers/bits.js';
import { allAgree, implementations, wasmImplementations } from './helpers/implementations.js';
import { normalArray, prng, uniformArray } from './helpers/random.js';

test('the copying call gives the reference\'s bits: new results, out, in place, views of one buffer, chunked rows', async () => {
  const rand = prng(91);
  for (const dim of [1, 3, 16, 17, 896, 4097, 70000]) {
    for (const rows of [1, 3]) {
      const xs = normalArray(rand, rows * dim, 3);
      const w = uniformArray(rand, dim, 0.5, 1.5);
      for (const options of [{}, { eps: 0 }, { eps: 1e-5, dim }, { eps: -0 }]) {
        const what = `rows=${rows} dim=${dim} ${JSON.stringify(options)} seed=91`;
        await allAgree(({ name, rmsNorm }) => {
          const fresh = rmsNorm(xs, w, options);
          const out = new Float32Array(xs.length);
          assert.equal(rmsNorm(xs, w, { ...options, out }), out, `${name} ${what}: returns out`);
          const inPlace = xs.slice();
          assert.equal(rmsNorm(inPlace, w, { ...options, out: inPlace }), inPlace, `${name} ${what}: returns x in place`);
          // x, weight and out as views side by side in one buffer, at odd offsets.
          const buffer = new ArrayBuffer(4 * (2 * xs.length + dim + 3));
          const x = new Float32Array(buffer, 4, xs.length);
          x.set(xs);
          const wv = new Float32Array(buffer, 4 * (xs.length + 1), dim);
          wv.set(w);
          const o = new Float32Array(buffer, 4 * (xs.length + dim + 2), xs.length);
          rmsNorm(x, wv, { ...options, out: o });
          assertSameBits(x, xs, `${name} ${what}: x untouched`);
          assertSameBits(wv, w, `${name} ${what}: weight untouched`);
          return { fresh, out, 'in place': inPlace, 'views of one buffer': o };
        }, what);
      }
    }
  }
});

test('a copying call with a mistake is refused by name, and writes nothing', async () => {
  const dim = 8;
  const x = normalArray(prng(92), 2 * dim, 1);
  const w = new Float32Array(dim).fill(1);
  const detached = new Float32Array(2 * dim);
  structuredClone(detached.buffer, { transfer: [detached.buffer] });
  for (const { name, rmsNorm } of await implementations()) {
    const y = new Float32Array(2 * dim).fill(7);
    const shared = new Float32Array(3 * dim).fill(7);
    const mistakes = [
      ['out is the weight', () => rmsNorm(x, w, { out: w }), RangeError, /^rmsNorm: options\.out/],
      ['eps < 0', () => rmsNorm(x, w, { out: y, eps: -1 }), RangeError, /^rmsNorm: options\.eps/],
      ['eps NaN', () => rmsNorm(x, w, { out: y, eps: NaN }), RangeError, /^rmsNorm: options\.eps/],
      ['eps a string', () => rmsNorm(x, w, { out: y, eps: '1e-6' }), TypeError, /^rmsNorm: options\.eps/],
      ['dim not the weight\'s', () => rmsNorm(x, w, { out: y, dim: 4 }), RangeError, /^rmsNorm: .*options\.dim/],
      ['out too short', () => rmsNorm(x, w, { out: new Float32Array(dim) }), RangeError, /^rmsNorm: options\.out\.length/],
      ['a Uint16Array out for float32', () => rmsNorm(x, w, { out: new Uint16Array(2 * dim) }), TypeError, /^rmsNorm: options\.out/],
      ['out over x, one value on', () => rmsNorm(x, w, { out: new Float32Array(x.buffer, 4, 2 * dim - 1) }), RangeError, /^rmsNorm: options\.out/],
      ['out over the weight, through one buffer', () => rmsNorm(x, shared.subarray(0, dim), { out: shared.subarray(4, 4 + 2 * dim) }),
        RangeError, /^rmsNorm: options\.out must not overlap weight/],
      ['x detached', () => rmsNorm(detached, w), TypeError, /^rmsNorm: x is a view of a detached ArrayBuffer/],
    ];
    const xBefore = x.slice();
    for (const [what, call, type, message] of mistakes) {
      assert.throws(call, (e) => e instanceof type && message.test(e.message), `${name}: ${what}`);
      assert.ok(y.every((v) => v === 7) && shared.every((v) => v === 7), `${name}: ${what}: an output was written`);
      assertSameBits(x, xBefore, `${name}: ${what}: x was written`);
      assert.ok(w.every((v) => v === 1), `${name}: ${what}: the weight was written`);
    }
  }
});

test('a repeated copying call whose arrays are detached or resized since is refused by name, and writes nothing', async () => {
  // A decode loop's call is checked once, then compared (src/ops/arrays.js, stillHolds): each array is
  // taken away after the call has run three times, so after its shadow view exists.
  const dim = 16;
  const x = normalArray(prng(93), 2 * dim, 1);
  const w = uniformArray(prng(94), dim, 0.5, 1.5);
  const expected = reference.rmsNorm(x, w);
  const transfer = (view) => structuredClone(view.buffer, { transfer: [view.buffer] });
  for (const { name, rmsNorm, rmsNormBackward } of await implementations()) {
    for (const target of ['x', 'weight', 'out', 'rstd']) {
      for (const how of ['between calls', 'by an option getter']) {
        const arrays = { x: x.slice(), weight: w.slice(), out: new Float32Array(2 * dim), rstd: new Float32Array(2) };
        const call = (options = {}) => rmsNorm(arrays.x, arrays.weight, { out: arrays.out, rstd: arrays.rstd, ...options });
        for (let i = 0; i < 3; i++) assertSameBits(call(), expected, `${name}: ${target}: call ${i}`);
        const others = Object.keys(arrays).filter((k) => k !== target && k !== 'x' && k !== 'weight');
        for (const k of others) arrays[k].fill(7);
        const what = `${name}: ${target} detached ${how}`;
        const message = new RegExp(`^rmsNorm: (options\\.)?${target} is a view of a detached ArrayBuffer`);
        if (how === 'between calls') {
          transfer(arrays[target]);
          assert.throws(() => call(), (e) => e instanceof TypeError && message.test(e.message), what);
        } else {
          assert.throws(() => call({ get eps() { transfer(arrays[target]); return 1e-6; } }),
            (e) => e instanceof TypeError && message.test(e.message), what);
        }
        for (const k of others) assert.ok(arrays[k].every((v) => v === 7), `${what}: ${k} was written to`);
      }
    }
    // A length-tracking view of a resizable buffer, shrunk after the call ran three times.
    const buffer = new ArrayBuffer(4 * 2 * dim, { maxByteLength: 4 * 4 * dim });
    const tracking = new Float32Array(buffer);
    tracking.set(x);
    const out = new Float32Array(2 * dim).fill(7);
    for (let i = 0; i < 3; i++) assertSameBits(rmsNorm(tracking, w, { out }), expected, `${name}: resizable, call ${i}`);
    out.fill(7);
    buffer.resize(4 * dim);
    assert.throws(() => rmsNorm(tracking, w, { out }), (e) => e instanceof RangeError && /^rmsNorm: options\.out\.length/.test(e.message),
      `${name}: a shrunk length-tracking x`);
    assert.ok(out.every((v) => v === 7), `${name}: shrunk x: out was written to`);
    // The backward pass (no weight, so nothing made: a call that can repeat), then its dy detached.
    const dy = x.slice();
    const dx = new Float32Array(2 * dim);
    for (let i = 0; i < 3; i++) rmsNormBackward(dy, x, null, { dx, dim });
    dx.fill(7);
    transfer(dy);
    assert.throws(() => rmsNormBackward(dy, x, null, { dx, dim }),
      (e) => e instanceof TypeError && /^rmsNormBackward: dy is a view of a detached/.test(e.message), `${name}: backward, dy detached`);
    assert.ok(dx.every((v) => v === 7), `${name}: backward: dx was written to`);
  }
});

test('copying calls on a SharedArrayBuffer, with no rows, no weight or rstd give the reference\'s bits', async () => {
  const dim = 8;
  const x = normalArray(prng(93), 2 * dim, 1);
  const w = uniformArray(prng(94), dim, 0.5, 1.5);
  const onShared = new Float32Array(new SharedArrayBuffer(4 * 2 * dim));
  onShared.set(x);
  await allAgree(({ rmsNorm }) => {
    const rstd = new Float32Array(2);
    return {
      'a SharedArrayBuffer x': rmsNorm(onShared, w),
      'no rows': rmsNorm(new Float32Array(0), w),
      'no weight': rmsNorm(x, null, { dim }),
      'with rstd': rmsNorm(x, w, { rstd }),
      rstd,
    };
  }, `rows=2 dim=${dim} seed=93`);
  assertSameBits(reference.rmsNorm(onShared, w), reference.rmsNorm(x, w), 'a SharedArrayBuffer x: the bits of a plain one');
});

test('a view of wasm memory given as a plain array gives the bits of a copy of it', async () => {
  const dim = 8;
  const x = normalArray(prng(95), 2 * dim, 1);
  const w = uniformArray(prng(96), dim, 0.5, 1.5);
  const expected = reference.rmsNorm(x, w);
  for (const { name, alloc, rmsNorm } of await wasmImplementations()) {
    const t = alloc(2 * dim);
    t.array.set(x);
    assertSameBits(rmsNorm(t.array, w), expected, `${name}: a view of wasm memory`);
    assertSameBits(t.array, x, `${name}: the view untouched`);
    t.free();
  }
});
