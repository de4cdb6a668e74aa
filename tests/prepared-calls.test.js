// Prepared calls: fn.prepare(...args) checks a call once; run() runs it
// again and again, reading the arrays' current values, on every kind of
// instance (the default one, createKernels, bindMemory) and the reference.
// A run gives the bits of the call itself; a mistake is refused by prepare()
// exactly as by the call; views of wasm memory hold through its growth, as
// tensors do; an array freed, detached or shrunk since prepare() is refused
// at run(), saying which, with nothing written.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as api from '../src/index.js';
import * as reference from '../src/reference/index.js';
import { assertSameBits } from './helpers/bits.js';
import { normalArray, prng, uniformArray } from './helpers/random.js';

await api.init({ backend: 'simd' });
const dim = 96;
const rows = 5;
const rand = prng(31);
const fill = (a, sigma = 2) => a.set(normalArray(rand, a.length, sigma));

/** Every kind of instance, each with its function set and a maker of arrays it takes. */
async function instances() {
  const kernels = await api.createKernels({ backend: 'scalar' });
  const memory = new WebAssembly.Memory({ initial: 16 });
  const bound = await api.bindMemory(memory, { scratch: { byteOffset: 65536, byteLength: 65536 } });
  let next = 2 * 65536;
  const view = (n) => {
    const v = new Float32Array(memory.buffer, next, n);
    next += 4 * n + 64;
    return v;
  };
  return [
    ['default instance, copied arrays', api, (n) => new Float32Array(n)],
    ['default instance, tensors', api, (n) => api.alloc(n)],
    ['createKernels, tensors', kernels, (n) => kernels.alloc(n)],
    ['bindMemory, views', bound, view],
    ['reference', reference, (n) => new Float32Array(n)],
  ];
}

const valuesOf = (a) => (a instanceof api.Tensor ? a.array : a);

test('every function\'s prepared call gives the call\'s own bits, run after run, on the arrays\' current values', async () => {
  for (const [label, k, make] of await instances()) {
    const x = make(rows * dim);
    const dy = make(rows * dim);
    const residual = make(rows * dim);
    const w = make(dim);
    const b = make(dim);
    const out = make(rows * dim);
    const rstd = make(rows);
    const runs = [
      ['rmsNorm', k.rmsNorm.prepare(x, w, { eps: 1e-5, out, rstd }), () => reference.rmsNorm(valuesOf(x), valuesOf(w), { eps: 1e-5 })],
      ['layerNorm', k.layerNorm.prepare(x, w, b, { out }), () => reference.layerNorm(valuesOf(x), valuesOf(w), valuesOf(b))],
      ['rmsNormBackward', k.rmsNormBackward.prepare(dy, x, w, { dx: out }), () => reference.rmsNormBackward(valuesOf(dy), valuesOf(x), valuesOf(w)).dx],
      ['layerNormBackward', k.layerNormBackward.prepare(dy, x, w, b, { dx: out }), () => reference.layerNormBackward(valuesOf(dy), valuesOf(x), valuesOf(w), valuesOf(b)).dx],
    ];
    for (let round = 0; round < 3; round++) {
      for (const a of [x, dy, w, b]) fill(valuesOf(a));
      for (const [fn, prepared, expected] of runs) {
        const want = expected();
        const got = prepared.run();
        assertSameBits(valuesOf(fn.endsWith('Backward') ? got.dx : got), want, `${label}: ${fn}, run ${round}`);
        if (fn === 'rmsNorm') assert.equal(got, out, `${label}: the run returns out itself`);
      }
      // The fused add updates its residual at each run, as the call does.
      fill(valuesOf(residual), 1);
      const r = valuesOf(residual).slice();
      const fused = k.addRmsNorm.prepare(x, residual, w, { out });
      const want = reference.addRmsNorm(valuesOf(x), r, valuesOf(w));
      assertSameBits(valuesOf(fused.run()), want, `${label}: addRmsNorm, run ${round}`);
      assertSameBits(valuesOf(residual), r, `${label}: addRmsNorm's residual, run ${round}`);
    }
  }
});

test('a prepared call that makes its result makes a new one at each run; the gradients too', async () => {
  const x = normalArray(rand, rows * dim, 1);
  const w = uniformArray(rand, dim, 0.5, 1.5);
  for (const k of [api, reference]) {
    const prepared = k.rmsNorm.prepare(x, w);
    const first = prepared.run();
    const second = prepared.run();
    assert.notEqual(first, second);
    assertSameBits(first, second, 'two runs, the same bits');
    assertSameBits(first, reference.rmsNorm(x, w), 'the call\'s bits');
    const backward = k.rmsNormBackward.prepare(x, x, w);
    const g1 = backward.run();
    const g2 = backward.run();
    assert.notEqual(g1.dweight, g2.dweight);
    assertSameBits(g2.dweight, g1.dweight, 'dweight starts from zero at each run');
  }
});

test('prepare() refuses what the call refuses, with the same error, and writes nothing', async () => {
  for (const [label, k, make] of await instances()) {
    const x = make(8);
    const w = make(4);
    const out = make(8);
    valuesOf(out).fill(9);
    const mistakes = [
      [() => [x, make(3), { out }], /^rmsNorm: weight\.length \(3\) does not divide x\.length \(8\)/],
      [() => [x, w, { out, eps: -1 }], /^rmsNorm: options\.eps must be a finite float32 >= 0/],
      [() => [x, w, { out, rowStride: 2 }], /^rmsNorm: options\.rowStride must be an integer >= dim \(4\)/],
      [() => [x, w, { out, epsilon: 1 }], /^rmsNorm: unknown option 'epsilon'/],
    ];
    for (const [args, message] of mistakes) {
      const a = args();
      let direct;
      try {
        k.rmsNorm(...a);
      } catch (error) {
        direct = error;
      }
      assert.throws(() => k.rmsNorm.prepare(...a), (error) => error.constructor === direct.constructor && error.message === direct.message && message.test(error.message), label);
      assert.ok(valuesOf(out).every((v) => v === 9), `${label}: written`);
    }
  }
});

const FREED = (name, what) => new RegExp(`^rmsNorm: ${name} was freed since the call was prepared \\(${what} freed\\); prepare the call again$`);
const DETACHED = (name) => new RegExp(`^rmsNorm: ${name} was detached since the call was prepared \\(its ArrayBuffer was transferred\\); prepare the call again$`);
const SHRUNK = (name) => new RegExp(`^rmsNorm: ${name} was shrunk since the call was prepared \\(its resizable ArrayBuffer now ends before the view does\\); prepare the call again$`);

test('run() refuses an array freed, detached or shrunk since prepare(), saying which, and writes nothing', async () => {
  // A freed tensor, and a view of one.
  const x = api.alloc(rows * dim);
  fill(x.array);
  const out = api.alloc(rows * dim);
  const w = api.alloc(dim);
  w.array.fill(1);
  const prepared = api.rmsNorm.prepare(x, w, { out });
  prepared.run();
  const before = out.array.slice();
  w.free();
  assert.throws(() => prepared.run(), { name: 'TypeError', message: FREED('weight', 'a tensor') });
  assert.deepEqual(out.array, before);
  for (const impl of [api, reference]) {
    const held = api.alloc(dim);
    held.array.fill(1);
    const viaView = impl.rmsNorm.prepare(x.array, held.array.subarray(0, dim), { out: out.array });
    viaView.run();
    const kept = out.array.slice();
    held.free();
    assert.throws(() => viaView.run(), { name: 'TypeError', message: FREED('weight', 'a view of a tensor') });
    assert.deepEqual(out.array, kept, 'out written after a refused run');
  }
  // A detached view, and a view of a shrunk resizable buffer.
  for (const impl of [api, reference]) {
    const xs = normalArray(rand, rows * dim, 1);
    const ys = new Float32Array(rows * dim).fill(3);
    const wv = uniformArray(rand, dim, 0.5, 1.5);
    const p = impl.rmsNorm.prepare(xs, wv, { out: ys });
    structuredClone(xs.buffer, { transfer: [xs.buffer] });
    assert.throws(() => p.run(), { name: 'TypeError', message: DETACHED('x') });
    assert.ok(ys.every((v) => v === 3), 'out written after a refused run');
    const resizable = new ArrayBuffer(4 * rows * dim, { maxByteLength: 8 * rows * dim });
    const rx = new Float32Array(resizable); // length-tracking
    rx.set(normalArray(rand, rows * dim, 1));
    const q = impl.rmsNorm.prepare(rx, wv, { out: ys });
    const want = reference.rmsNorm(rx.slice(), wv);
    q.run();
    resizable.resize(8 * rows * dim); // grown: the call still reads the rows it measured
    ys.fill(3);
    assertSameBits(q.run(), want, 'after the resizable buffer grew');
    resizable.resize(4 * dim);
    const kept = ys.slice();
    assert.throws(() => q.run(), { name: 'TypeError', message: SHRUNK('x') });
    assert.deepEqual(ys, kept);
    resizable.resize(0); // shrunk to nothing is still not detached
    assert.throws(() => q.run(), { name: 'TypeError', message: SHRUNK('x') });
    const ry = new Float32Array(new ArrayBuffer(4 * rows * dim, { maxByteLength: 4 * rows * dim }));
    const r = impl.rmsNorm.prepare(normalArray(rand, rows * dim, 1), wv, { out: ry });
    structuredClone(ry.buffer, { transfer: [ry.buffer] }); // a resizable buffer detached
    assert.throws(() => r.run(), { name: 'TypeError', message: DETACHED('options.out') });
  }
  x.free();
  out.free();
});

test('a prepared call on views of wasm memory holds through 100 growths, with the reference\'s bits, as on tensors', async () => {
  const kernels = await api.createKernels({ backend: 'scalar' });
  const n = 2 * dim;
  for (const [label, k, impl] of [['default instance (SIMD)', api, api], ['createKernels (scalar)', kernels, kernels], ['the reference, on views of tensors', api, reference]]) {
    const xt = k.alloc(4 * n);
    const wt = k.alloc(2 * dim);
    const ot = k.alloc(4 * n);
    const sub = (t, from, length) => t.array.subarray(from, from + length);
    // Slices of tensors: the rows in the middle of x, the second half of w, out at an offset.
    const prepared = impl.rmsNorm.prepare(sub(xt, n, n), sub(wt, dim, dim), { eps: 1e-5, out: sub(ot, 2 * n, n) });
    const rstdT = k.alloc(8);
    const withRstd = impl.rmsNorm.prepare(sub(xt, n, n), null, { dim, rstd: sub(rstdT, 1, 2), out: sub(ot, 0, n) });
    const grown = [];
    for (let g = 0; g <= 100; g++) {
      fill(sub(xt, n, n));
      sub(wt, dim, dim).set(uniformArray(rand, dim, 0.5, 1.5));
      const want = reference.rmsNorm(sub(xt, n, n).slice(), sub(wt, dim, dim).slice(), { eps: 1e-5 });
      const got = prepared.run();
      assertSameBits(got, want, `${label}: after ${g} growths`);
      assert.equal(got.byteOffset, ot.byteOffset + 8 * n, `${label}: the run returns a view of out's bytes`);
      assertSameBits(sub(ot, 2 * n, n), want, `${label}: out's bytes after ${g} growths`);
      const rstd = new Float32Array(2);
      reference.rmsNorm(sub(xt, n, n).slice(), null, { dim, rstd });
      withRstd.run();
      assertSameBits(sub(rstdT, 1, 2), rstd, `${label}: rstd after ${g} growths`);
      const old = got;
      // Tensors until the memory grows (the allocator first fills what earlier tests freed).
      for (let i = 0; old.length !== 0; i++) {
        assert.ok(i < 1000, `${label}: growth ${g + 1}: the memory never grew`);
        grown.push(k.alloc(65536));
      }
    }
    for (const t of [xt, wt, ot, rstdT, ...grown]) t.free();
  }
  // A bound memory, not shared, grown by the engine.
  const memory = new WebAssembly.Memory({ initial: 4, maximum: 200 });
  const bound = await api.bindMemory(memory, { scratch: { byteOffset: 65536, byteLength: 65536 } });
  const at = { x: 2 * 65536, w: 2 * 65536 + 4 * n + 16, out: 3 * 65536 };
  const view = (name, length) => new Float32Array(memory.buffer, at[name], length);
  const boundCall = bound.rmsNorm.prepare(view('x', n), view('w', dim), { out: view('out', n) });
  for (let g = 0; g <= 100; g++) {
    fill(view('x', n));
    view('w', dim).set(uniformArray(rand, dim, 0.5, 1.5));
    const want = reference.rmsNorm(view('x', n).slice(), view('w', dim).slice());
    const got = boundCall.run();
    assertSameBits(got, want, `bindMemory: after ${g} growths`);
    assert.ok(got.buffer === memory.buffer && got.byteOffset === at.out, 'bindMemory: the run returns a view of out on the current buffer');
    memory.grow(1);
  }
});

test('a prepared call keeps running on its instance: after the memory grows, and after init() switches the default backend', async () => {
  await api.init({ backend: 'simd' });
  const x = api.alloc(rows * dim);
  fill(x.array);
  const w = new Float32Array(dim).fill(1.25);
  const out = api.alloc(rows * dim);
  const prepared = api.rmsNorm.prepare(x, w, { out });
  prepared.run();
  const expected = reference.rmsNorm(x.array, w);
  const big = api.alloc(2 ** 24); // grows the memory: every earlier view of it is detached
  assertSameBits(prepared.run().array, expected, 'after the memory grew');
  assertSameBits(out.array, expected, 'out, read again after growth');
  big.free();
  await api.init({ backend: 'scalar' });
  assertSameBits(prepared.run().array, expected, 'after init() switched the default instance');
  assert.throws(() => api.rmsNorm(x, w, { out }), { name: 'TypeError', message: /another instance's memory/ }, 'the default instance is another one now');
  await api.init({ backend: 'simd' });
  x.free();
  out.free();
});

test('a call whose staging cannot fit the lent region is refused at prepare(), not at its first run', async () => {
  const memory = new WebAssembly.Memory({ initial: 4 });
  const bound = await api.bindMemory(memory, { scratch: { byteOffset: 65536, byteLength: 4096 } }); // the stack alone
  const view = (at, n) => new Float32Array(memory.buffer, at, n).fill(0.5);
  const [dy, x, dx] = [view(2 * 65536, 4 * dim), view(2 * 65536 + 16 * dim, 4 * dim), view(3 * 65536, 4 * dim)];
  // No rstd given: the backward pass recomputes it in staging, which this region has no room for.
  assert.throws(() => bound.rmsNormBackward.prepare(dy, x, null, { dim, dx }), {
    name: 'RangeError', message: /^rmsNormBackward: needs \d+ bytes of staging in options\.scratch besides the kernels' 4096-byte stack/,
  });
});

test('run taken off its prepared call still runs it, on every kind of instance and the reference', async () => {
  const kernels = await api.createKernels({ backend: 'scalar' });
  const x = normalArray(prng(41), rows * dim, 2);
  const w = uniformArray(prng(42), dim, 0.5, 1.5);
  const expected = reference.rmsNorm(x, w);
  for (const [name, fns] of [['default', api], ['createKernels', kernels], ['reference', reference]]) {
    const out = new Float32Array(rows * dim);
    const { run } = fns.rmsNorm.prepare(x, w, { out });
    assert.equal(run(), out, `${name}: run() returns out`);
    assertSameBits(out, expected, `${name}: a detached run`);
    const made = fns.rmsNormBackward.prepare(x, x, w).run;
    assertSameBits(made.call(undefined).dx, reference.rmsNormBackward(x, x, w).dx, `${name}: a detached backward run`);
  }
});
