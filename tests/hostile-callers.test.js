// Hostile callers: objects that lie about themselves (getters, subclasses,
// proxies, own properties), change under the call (detaching, resizing,
// growing buffers), pollute Object.prototype, or alias one another (overlaps,
// shared buffers, views of wasm memory outside every live tensor). By class, on every
// implementation (tests/helpers/implementations.js). Each attack either gets
// the right result, or a TypeError/RangeError naming the argument with
// nothing written: inputs, outputs and an unrelated live tensor (the canary)
// keep their bytes, and the instance keeps working. Each wrong argument's
// own error and message: tests/argument-errors.test.js.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import vm from 'node:vm';
import { Worker } from 'node:worker_threads';
import { bindMemory, createKernels, init } from '../src/index.js';
import * as reference from '../src/reference/index.js';
import { assertSameBits } from './helpers/bits.js';
import { implementations, WASM_BACKENDS, wasmImplementations } from './helpers/implementations.js';
import { normalArray, prng, uniformArray } from './helpers/random.js';

const IMPLEMENTATIONS = await implementations();
const instances = Object.fromEntries((await wasmImplementations()).map((impl) => [impl.name, impl]));

/** A live tensor in each instance, with a pattern: no attack may touch it. */
const canaries = Object.fromEntries(Object.entries(instances).map(([name, k]) => {
  const t = k.alloc(4096);
  t.array.set(normalArray(prng(1), 4096, 1));
  return [name, { tensor: t, bytes: new Uint8Array(t.array.buffer, t.byteOffset, 4 * 4096).slice() }];
}));
function checkCanaries(what) {
  for (const [name, { tensor, bytes }] of Object.entries(canaries)) {
    const now = new Uint8Array(tensor.array.buffer, tensor.byteOffset, 4 * 4096);
    assert.deepEqual(now, bytes, `${what}: the ${name} instance's unrelated live tensor was overwritten`);
  }
}

const rand = prng(7);
const X = normalArray(rand, 3 * 16, 2);
const W = uniformArray(rand, 16, 0.5, 1.5);
const EXPECTED = reference.rmsNorm(X, W, { eps: 1e-5 });

/** Runs `attack(impl, name)` on every implementation. */
function onEach(attack) {
  for (const impl of IMPLEMENTATIONS) attack(impl, impl.name);
}

/** Asserts fn throws `type` with a message starting with `fnName:` and matching `pattern`. */
function assertRejected(call, type, fnName, pattern, what) {
  assert.throws(call, (err) => {
    assert.ok(err instanceof type, `${what}: expected ${type.name}, got ${err?.name}: ${err?.message}`);
    assert.match(err.message, new RegExp(`^${fnName}: `), what);
    assert.match(err.message, pattern, what);
    assert.doesNotMatch(err.message, /undefined undefined/, what);
    return true;
  }, what);
}

// ---- 1. Reads that change between check and use ----------------------------------

test('class 1: every option of every function is read once, a getter at most once', () => {
  const counted = (values, counter) => {
    const options = {};
    for (const [key, value] of Object.entries(values)) {
      Object.defineProperty(options, key, { enumerable: true, get() { counter[key] = (counter[key] ?? 0) + 1; return value; } });
    }
    return options;
  };
  onEach((impl, name) => {
    const rstd = new Float32Array(3);
    const counter = {};
    const out = new Float32Array(X.length);
    const y = impl.rmsNorm(X, W, counted({
      eps: 1e-5, dim: 16, out, dtype: 'float32', weightDtype: 'float32', castMode: 'llama', weightOffset: 0, rstd,
    }, counter));
    assert.equal(y, out);
    assertSameBits(out, EXPECTED, `${name}: rmsNorm with getters`);
    for (const [key, n] of Object.entries(counter)) assert.equal(n, 1, `${name}: rmsNorm read options.${key} ${n} times`);
    const shaped = {};
    impl.rmsNorm(X, W, counted({ shape: [3, 16], axis: -1, eps: 1e-5 }, shaped));
    for (const [key, n] of Object.entries(shaped)) assert.equal(n, 1, `${name}: options.${key} read ${n} times`);
    const ln = {};
    impl.layerNorm(X, W, null, counted({ eps: 1e-5, out: new Float32Array(X.length), mean: new Float32Array(3), rstd: new Float32Array(3) }, ln));
    for (const [key, n] of Object.entries(ln)) assert.equal(n, 1, `${name}: layerNorm read options.${key} ${n} times`);
    for (const layer of [false, true]) {
      const back = {};
      const dx = new Float32Array(X.length);
      const grads = layer
        ? impl.layerNormBackward(X, X, W, null, counted({ eps: 1e-5, dx, dim: 16 }, back))
        : impl.rmsNormBackward(X, X, W, counted({ eps: 1e-5, dx, dim: 16 }, back));
      assert.equal(grads.dx, dx, `${name}: the dx returned is the one read`);
      for (const [key, n] of Object.entries(back)) assert.equal(n, 1, `${name}: backward read options.${key} ${n} times`);
    }
  });
  checkCanaries('getters');
});

test('class 1: a getter answering differently each time is believed once', () => {
  onEach((impl, name) => {
    const real = new Float32Array(X.length);
    const decoy = new Float32Array(X.length);
    let reads = 0;
    const options = { get out() { reads++; return reads === 1 ? real : decoy; }, eps: 1e-5 };
    assert.equal(impl.rmsNorm(X, W, options), real, `${name}: returns the out it wrote`);
    assertSameBits(real, EXPECTED, `${name}: out`);
    assert.ok(decoy.every((v) => v === 0), `${name}: the second answer was never written`);
    // dx of the backward passes likewise.
    let dxReads = 0;
    const dxReal = new Float32Array(X.length);
    const grads = impl.rmsNormBackward(X, X, W, { get dx() { dxReads++; return dxReads === 1 ? dxReal : decoy; } });
    assert.equal(grads.dx, dxReal, `${name}: backward returns the dx it wrote`);
    assert.ok(decoy.every((v) => v === 0), `${name}: the second dx was never written`);
    // shape: an element answering 4, 4, then 3 is read once.
    let dimReads = 0;
    const shape = [2];
    Object.defineProperty(shape, 1, { enumerable: true, get() { dimReads++; return dimReads === 1 ? 24 : 3; } });
    const y = impl.rmsNorm(X, null, { shape });
    assert.equal(dimReads, 1, `${name}: shape[1] read ${dimReads} times`);
    assertSameBits(y, reference.rmsNorm(X, null, { dim: 24 }), `${name}: the shape read once`);
    // A hole is not a 1.
    assertRejected(() => impl.rmsNorm(X, null, { shape: [2, , 24] }), TypeError, 'rmsNorm', /options\.shape has a hole at index 1/, `${name}: sparse shape`); // eslint-disable-line no-sparse-arrays
  });
});

const realBuffer = (a) => Object.getOwnPropertyDescriptor(Object.getPrototypeOf(Uint8Array.prototype), 'buffer').get.call(a);

test('class 1: a typed array is measured through the intrinsics, whatever its own properties, methods or class say', () => {
  class Liar extends Float32Array {
    get length() { return 1 << 20; }
    get byteOffset() { return 1 << 20; }
    get buffer() { return new ArrayBuffer(8); }
    subarray() { throw new Error('subarray called'); }
    set() { throw new Error('set called'); }
    slice() { throw new Error('slice called'); }
    static get [Symbol.species]() { throw new Error('species read'); }
  }
  const ownProps = (a) => Object.defineProperties(a, {
    length: { value: 1 << 20 }, byteOffset: { value: 12 }, buffer: { value: new ArrayBuffer(4) },
    subarray: { value: () => { throw new Error('own subarray called'); } },
    constructor: { get() { throw new Error('constructor read'); } },
  });
  onEach((impl, name) => {
    const liar = (v) => {
      const l = new Liar(v.length);
      Float32Array.prototype.set.call(l, v);
      return l;
    };
    for (const [label, make] of [['subclass', liar], ['own properties', (v) => ownProps(Float32Array.from(v))]]) {
      const x = make(X);
      const w = make(W);
      const out = make(new Float32Array(X.length));
      assert.equal(impl.rmsNorm(x, w, { eps: 1e-5, out }), out);
      assertSameBits(new Float32Array(realBuffer(out), 0, X.length), EXPECTED, `${name} ${label}: rmsNorm`);
      const y = impl.rmsNorm(x, w, { eps: 1e-5 });
      assertSameBits(y, EXPECTED, `${name} ${label}: a new result`);
      const residual = make(X);
      impl.addRmsNorm(make(X), residual, w, { eps: 1e-5 });
      assertSameBits(new Float32Array(realBuffer(residual), 0, X.length), X.map((v) => Math.fround(2 * v)), `${name} ${label}: residual updated at its true length`);
    }
  });
  checkCanaries('lying typed arrays');
});

test('class 1: a resizable buffer shrunk or grown by an option getter is measured after the getter', () => {
  onEach((impl, name) => {
    const buffer = new ArrayBuffer(4 * X.length, { maxByteLength: 8 * X.length });
    const x = new Float32Array(buffer); // length-tracking
    x.set(X);
    const shrink = { get eps() { buffer.resize(4 * 16); return 1e-5; } };
    const y = impl.rmsNorm(x, W, shrink);
    assertSameBits(y, EXPECTED.subarray(0, 16), `${name}: x shrunk to one row by the getter`);
    buffer.resize(4 * X.length);
    x.set(X);
    const out = new Float32Array(X.length).fill(7);
    assertRejected(() => impl.rmsNorm(x, W, { out, get eps() { buffer.resize(4 * 32); return 1e-5; } }),
      RangeError, 'rmsNorm', /options\.out\.length \(48\) must equal x\.length \(32\)/, `${name}: out no longer fits`);
    assert.ok(out.every((v) => v === 7), `${name}: nothing written`);
    const grow = { get eps() { buffer.resize(8 * X.length); x.set(X, X.length); return 1e-5; } };
    buffer.resize(4 * X.length);
    x.set(X);
    const grown = impl.rmsNorm(x, W, grow);
    assertSameBits(grown, Float32Array.from([...EXPECTED, ...EXPECTED]), `${name}: x grown by the getter`);
  });
  checkCanaries('resizable buffers');
});

test('class 1: a length-tracking view of a growable SharedArrayBuffer grown by another thread never spills', async () => {
  const dim = 16;
  const sab = new SharedArrayBuffer(4 * dim * 4, { maxByteLength: 4 * dim * 4096 });
  const x = new Float32Array(sab); // length-tracking
  x.set(normalArray(prng(9), x.length, 1));
  const worker = new Worker(`
    const { workerData: { sab, dim } } = require('node:worker_threads');
    const step = 4 * dim * 8;
    const deadline = Date.now() + 3000;
    while (sab.byteLength + step <= sab.maxByteLength && Date.now() < deadline) {
      sab.grow(sab.byteLength + step);
      const t = Date.now(); while (Date.now() - t < 1) {}
    }`, { eval: true, workerData: { sab, dim } });
  const finished = new Promise((resolve, reject) => { worker.on('exit', resolve); worker.on('error', reject); });
  let calls = 0;
  let stop = false;
  finished.then(() => { stop = true; });
  while (!stop && calls < 4000) {
    for (const { name, rmsNorm } of IMPLEMENTATIONS) {
      const y = rmsNorm(x, null, { dim });
      assert.equal(y.length % dim, 0, `${name}: whole rows`);
      // The first rows were written before the worker started: their result is fixed.
      assertSameBits(y.subarray(0, 4 * dim), reference.rmsNorm(new Float32Array(sab, 0, 4 * dim), null, { dim }), `${name}: call ${calls}`);
    }
    calls++;
    await new Promise((resolve) => setImmediate(resolve));
  }
  await finished;
  assert.ok(calls > 10, `only ${calls} calls overlapped the growth`);
  checkCanaries('growable SharedArrayBuffer');
});

// An option getter runs user code in the middle of validation; if it
// detaches a buffer, that must still be a clear error, not an empty or NaN
// result (options are read once, before any array is measured).
const transfer = (view) => structuredClone(view.buffer, { transfer: [view.buffer] });

test('class 1: an option getter that detaches an argument is caught by name, and nothing is written', () => {
  const cases = [
    ['the eps getter detaches x', (xs, ws, out) => ({ out, get eps() { transfer(xs); return 1e-6; } }), /x is a view of a detached/],
    ['the out getter detaches x', (xs, ws, out) => ({ get out() { transfer(xs); return out; } }), /x is a view of a detached/],
    ['the dim getter detaches weight', (xs, ws, out) => ({ out, get dim() { transfer(ws); return W.length; } }), /weight is a view of a detached/],
  ];
  onEach((impl, name) => {
    for (const [what, makeOptions, message] of cases) {
      const xs = X.slice();
      const ws = W.slice();
      const out = new Float32Array(X.length).fill(7);
      assertRejected(() => impl.rmsNorm(xs, ws, makeOptions(xs, ws, out)), TypeError, 'rmsNorm', message, `${name}: ${what}`);
      assert.ok(out.every((v) => v === 7), `${name}: ${what}: the output was written to`);
    }
  });
  checkCanaries('detaching getters');
});

test('class 1: arrays from another realm, and subclasses that do not lie, are used as they are', () => {
  const foreign = vm.runInNewContext('[new Float32Array([2, -4, 6, -8]), new Float32Array([1.5, 0.5, 1, 2])]');
  assert.ok(!(foreign[0] instanceof Float32Array), 'the vm context has its own Float32Array');
  class Activations extends Float32Array {}
  const local = [new Float32Array([2, -4, 6, -8]), new Float32Array([1.5, 0.5, 1, 2])];
  const expected = reference.rmsNorm(...local);
  onEach((impl, name) => {
    assertSameBits(impl.rmsNorm(foreign[0], foreign[1]), expected, `${name}: another realm`);
    assertSameBits(impl.rmsNorm(Activations.from(local[0]), Activations.from(local[1])), expected, `${name}: a subclass`);
  });
});

test('class 1: a getter that calls the API while options are read leaves the call its own options', () => {
  const innerExpected = reference.rmsNorm(X, W, { eps: 0.5 });
  onEach((impl, name) => {
    const inner = new Float32Array(X.length);
    const out = new Float32Array(X.length);
    const options = {
      out,
      get eps() {
        impl.rmsNorm(X, W, { eps: 0.5, out: inner, dim: 16 });
        return 1e-5;
      },
    };
    // The first call, then the same call again (remembered where an implementation remembers).
    for (let i = 0; i < 3; i++) {
      out.fill(0);
      assert.equal(impl.rmsNorm(X, W, options), out);
      assertSameBits(out, EXPECTED, `${name}: call ${i}`);
      assertSameBits(inner, innerExpected, `${name}: the getter's own call, ${i}`);
    }
  });
  checkCanaries('a getter that calls the API');
});

// ---- 2. Inherited options ------------------------------------------------------------

test('class 2: a property the options object only inherits never steers a call', async () => {
  const sink = new Float32Array(X.length).fill(3);
  const sinkStats = new Float32Array(3).fill(3);
  const pollution = {
    out: sink, dx: sink, rstd: sinkStats, mean: sinkStats, eps: 0.5, dim: 8, castMode: 'gemma', dtype: 'bfloat16',
    weightDtype: 'bfloat16', weightOffset: 1, shape: [6, 8], axis: 0, backend: 'scalar', module: 42,
    scratch: { byteOffset: 0, byteLength: 1 << 20 },
  };
  const clean = {
    rms: reference.rmsNorm(X, W), add: reference.addRmsNorm(X, X.slice(), W),
    ln: reference.layerNorm(X, W, null), back: reference.rmsNormBackward(X, X, W).dx,
  };
  try {
    for (const [key, value] of Object.entries(pollution)) Object.prototype[key] = value;
    for (const options of [undefined, {}]) {
      onEach((impl, name) => {
        const what = `${name}, options ${options === undefined ? 'omitted' : '{}'}`;
        assertSameBits(impl.rmsNorm(X, W, options), clean.rms, `${what}: rmsNorm`);
        assertSameBits(impl.addRmsNorm(X, X.slice(), W, options), clean.add, `${what}: addRmsNorm`);
        assertSameBits(impl.layerNorm(X, W, null, options), clean.ln, `${what}: layerNorm`);
        assertSameBits(impl.rmsNormBackward(X, X, W, options).dx, clean.back, `${what}: rmsNormBackward`);
      });
    }
    const { backend } = await init();
    assert.notEqual(backend, undefined);
    const k = await createKernels();
    assert.equal(k.backend, backend, 'createKernels ignored the inherited backend');
    const memory = new WebAssembly.Memory({ initial: 2 });
    const bound = await bindMemory(memory, { scratch: { byteOffset: 65536, byteLength: 8192 } });
    assert.equal(bound.backend, backend);
  } finally {
    for (const key of Object.keys(pollution)) delete Object.prototype[key];
  }
  assert.ok(sink.every((v) => v === 3) && sinkStats.every((v) => v === 3), 'the inherited sinks were written');
  checkCanaries('inherited options');
});

test('class 2: a pointer name on Object.prototype never reaches a kernel', () => {
  // Every array name of every function, inherited by every object, as the
  // address of the instance's canary: a kernel call that reads one writes there.
  const names = ['x', 'residual', 'weight', 'bias', 'out', 'mean', 'rstd', 'dy', 'dx', 'dweight', 'dbias'];
  for (const [name, k] of Object.entries(instances)) {
    const x = k.alloc(X.length);
    const w = k.alloc(W.length);
    const out = k.alloc(X.length);
    x.array.set(X);
    w.array.set(W);
    try {
      for (const key of names) Object.prototype[key] = canaries[name].tensor.byteOffset;
      k.rmsNorm(x, w, { eps: 1e-5, out });
      k.rmsNorm(X, W, { eps: 1e-5 });
      k.layerNorm(X, W, null);
      k.rmsNormBackward(X, X, W);
    } finally {
      for (const key of names) delete Object.prototype[key];
    }
    assertSameBits(out.array, EXPECTED, `${name}: rmsNorm on tensors`);
    for (const t of [x, w, out]) t.free();
  }
  checkCanaries('pointer names on Object.prototype');
});

test('class 2: options with a null prototype, or a proxy, are read like any object', () => {
  onEach((impl, name) => {
    const out = new Float32Array(X.length);
    const bare = Object.assign(Object.create(null), { eps: 1e-5, out });
    assert.equal(impl.rmsNorm(X, W, bare), out);
    assertSameBits(out, EXPECTED, `${name}: null-prototype options`);
    const gets = [];
    const proxy = new Proxy({ eps: 1e-5 }, { get(target, key, receiver) { gets.push(key); return Reflect.get(target, key, receiver); } });
    assertSameBits(impl.rmsNorm(X, W, proxy), EXPECTED, `${name}: a proxy`);
    assert.deepEqual(gets, ['eps'], `${name}: the proxy was asked for its own option once`);
    assertRejected(() => impl.rmsNorm(new Proxy(X, {}), W), TypeError, 'rmsNorm', /x must be a Float32Array, got/, `${name}: a proxy is not a typed array`);
  });
});

// ---- 3. Overlaps ----------------------------------------------------------------------

test('class 3: an output that is another argument, or overlaps one, is refused before any write', () => {
  onEach((impl, name) => {
    const x = X.slice();
    const w = W.slice();
    const cases = [
      ['rmsNorm', () => impl.rmsNorm(x, null, { dim: 1, rstd: x }), /options\.rstd must not overlap x/],
      ['rmsNorm', () => { const s = new Float32Array(X.length); return impl.rmsNorm(x, w, { out: s, rstd: s.subarray(0, 3) }); }, /options\.rstd must not overlap options\.out/],
      ['addRmsNorm', () => { const r = X.slice(); return impl.addRmsNorm(x, r, w, { rstd: r.subarray(0, 3) }); }, /options\.rstd must not overlap residual/],
      ['rmsNorm', () => impl.rmsNorm(x, w, { rstd: w.subarray(0, 3) }), /options\.rstd must not overlap weight/],
      ['layerNorm', () => impl.layerNorm(x.subarray(0, 16), w, null, { out: w }), /options\.out must not overlap weight/],
      ['layerNorm', () => { const s = new Float32Array(3); return impl.layerNorm(x, w, null, { mean: s, rstd: s }); }, /options\.rstd must not overlap options\.mean/],
      ['rmsNormBackward', () => { const s = new Float32Array(X.length); return impl.rmsNormBackward(X, x, w, { dx: s, rstd: s.subarray(0, 3) }); }, /options\.dx must not overlap options\.rstd/],
      ['layerNormBackward', () => { const s = new Float32Array(X.length + 2); return impl.layerNormBackward(X, x, w, null, { dx: s.subarray(2), mean: s.subarray(0, 3), rstd: new Float32Array(3) }); }, /options\.dx must not overlap options\.mean/],
      ['rmsNormBackward', () => impl.rmsNormBackward(X, x, w, { dx: x }), /options\.dx must not overlap x/],
      ['rmsNormBackward', () => { const s = new Float32Array(X.length + 1); return impl.rmsNormBackward(s.subarray(0, X.length), X, w, { dx: s.subarray(1) }); }, /options\.dx must be dy itself or not overlap dy/],
    ];
    for (const [fn, call, pattern] of cases) {
      const before = [x.slice(), w.slice()];
      assertRejected(call, RangeError, fn, pattern, `${name}: ${pattern}`);
      assertSameBits(x, before[0], `${name}: x written by a refused call`);
      assertSameBits(w, before[1], `${name}: weight written by a refused call`);
    }
  });
  checkCanaries('overlaps');
});

/** A SharedArrayBuffer copy of values, and a second SharedArrayBuffer object over the same memory. */
function sharedTwice(values, extra = 0) {
  const sab = new SharedArrayBuffer(4 * (values.length + extra));
  new Float32Array(sab).set(values);
  return [sab, structuredClone(sab)];
}

test('class 3: arrays on two SharedArrayBuffer objects over one memory are read in before anything is written', () => {
  onEach((impl, name) => {
    const [a, b] = sharedTwice(X, 8);
    const x = new Float32Array(a, 0, X.length);
    const out = new Float32Array(b, 16, X.length); // 4 values further on: overlaps x, through another object
    assert.notEqual(a, b);
    impl.rmsNorm(x, W, { out, eps: 1e-5 });
    assertSameBits(out, EXPECTED, `${name}: out over a clone overlapping x`);
    // The fused add: the residual over a clone overlapping x.
    const [c, d] = sharedTwice([...X, ...X]);
    const xs = new Float32Array(c, 0, X.length);
    const residual = new Float32Array(d, 8, X.length);
    const expectedResidual = Float32Array.from(X, (v, i) => Math.fround(v + [...X, ...X][2 + i]));
    const y = impl.addRmsNorm(xs, residual, W, { eps: 1e-5 });
    assertSameBits(residual, expectedResidual, `${name}: the residual, x read in first`);
    assertSameBits(y, reference.rmsNorm(expectedResidual, W, { eps: 1e-5 }), `${name}: the fused result`);
    // The backward pass: dx over a clone overlapping dy.
    const [e, f] = sharedTwice(X, 4);
    const dy = new Float32Array(e, 0, X.length);
    const dx = new Float32Array(f, 16, X.length);
    const expectedDx = reference.rmsNormBackward(X, X, W).dx;
    impl.rmsNormBackward(dy, X, W, { dx });
    assertSameBits(dx, expectedDx, `${name}: dx over a clone overlapping dy`);
  });
  checkCanaries('shared clones');
});

/** A Float32Array copy of values at `offsetFloats` into a SharedArrayBuffer (a new one, or `sab`). */
function sharedCopy(values, offsetFloats, sab = new SharedArrayBuffer((values.length + offsetFloats) * 4)) {
  const a = new Float32Array(sab, offsetFloats * 4, values.length);
  a.set(values);
  return a;
}

// What threaded inference engines hand over: arrays on a SharedArrayBuffer,
// side by side in one of them.
test('class 3: x, weight and out on SharedArrayBuffers work, in place and side by side; a partial overlap is refused', () => {
  const dim = 37;
  const rows = 3;
  const xs = normalArray(prng(72), rows * dim, 3);
  const ws = uniformArray(prng(73), dim, 0.5, 1.5);
  const expected = reference.rmsNorm(xs, ws);
  onEach((impl, name) => {
    const what = `${name} rows=${rows} dim=${dim} seed=72`;
    assertSameBits(impl.rmsNorm(sharedCopy(xs, 0), sharedCopy(ws, 1)), expected, `${what}: shared x and weight`);
    const out = sharedCopy(new Float32Array(xs.length), 2);
    assert.equal(impl.rmsNorm(sharedCopy(xs, 3), sharedCopy(ws, 0), { out }), out);
    assertSameBits(out, expected, `${what}: into a shared out`);
    const inPlace = sharedCopy(xs, 1);
    impl.rmsNorm(inPlace, sharedCopy(ws, 0), { out: inPlace });
    assertSameBits(inPlace, expected, `${what}: in place`);
    const sab = new SharedArrayBuffer((2 * xs.length + dim) * 4);
    const sx = sharedCopy(xs, 0, sab);
    const sw = sharedCopy(ws, xs.length, sab);
    const so = new Float32Array(sab, (xs.length + dim) * 4, xs.length);
    impl.rmsNorm(sx, sw, { out: so });
    assertSameBits(so, expected, `${what}: one buffer for all three`);
    assertRejected(() => impl.rmsNorm(sx, sw, { out: new Float32Array(sab, 4, xs.length) }), RangeError, 'rmsNorm',
      /options\.out must be x itself or not overlap x/, `${what}: out one value into x`);
  });
  checkCanaries('shared buffers');
});

// ---- 4. Calls that fail half-way -------------------------------------------------------

test('class 4: a call whose staging grows the memory completes, with every view of the memory in it', async () => {
  for (const backend of WASM_BACKENDS) {
    const k = await createKernels({ backend });
    const dim = 1 << 18; // a 1 MiB plain weight to stage: the memory must grow
    const rows = 2;
    const xT = k.alloc(rows * dim);
    const rT = k.alloc(rows * dim);
    const outT = k.alloc(rows * dim);
    const rstdT = k.alloc(rows);
    const xs = normalArray(prng(11), rows * dim, 1);
    const rs = normalArray(prng(12), rows * dim, 1);
    xT.array.set(xs);
    rT.array.set(rs);
    const weight = uniformArray(prng(13), dim, 0.5, 1.5);
    const memory = xT.array.buffer;
    const outView = outT.array;
    const y = k.addRmsNorm(xT.array, rT.array, weight, { rstd: rstdT.array, out: outView });
    assert.equal(y, outView, `${backend}: returns the out it was given`);
    assert.notEqual(xT.array.buffer, memory, `${backend}: the memory grew during the call (so the views given are detached now)`);
    const residual = Float32Array.from(xs, (v, i) => Math.fround(v + rs[i]));
    const rstd = new Float32Array(rows);
    const expected = reference.rmsNorm(residual, weight, { rstd });
    assertSameBits(rT.array, residual, `${backend}: the residual, added once`);
    assertSameBits(outT.array, expected, `${backend}: out`);
    assertSameBits(rstdT.array, rstd, `${backend}: rstd`);
    // In place with rstd, on views of the memory.
    const inPlace = k.alloc(dim);
    inPlace.array.set(xs.subarray(0, dim));
    const r1 = k.alloc(1);
    k.rmsNorm(inPlace.array, weight, { rstd: r1.array, out: inPlace.array });
    const r1Expected = new Float32Array(1);
    assertSameBits(inPlace.array, reference.rmsNorm(xs.subarray(0, dim), weight, { rstd: r1Expected }), `${backend}: in place`);
    assertSameBits(r1.array, r1Expected, `${backend}: its rstd`);
  }
});

test('class 4: a view of an instance\'s memory outside its live tensors is refused by every implementation, nothing written', async () => {
  for (const backend of WASM_BACKENDS) {
    const k = await createKernels({ backend });
    const other = await createKernels({ backend });
    k.rmsNorm(X, W); // the scratch block exists
    const keep = k.alloc(4);
    const t = k.alloc(X.length);
    const next = k.alloc(4);
    const memory = () => keep.array.buffer;
    const stale = t.array; // kept past free(): its bytes are the allocator's now
    t.free();
    const scratchAt = (() => { // the staging of the next copying call takes the block just freed
      const u = k.alloc(X.length);
      const at = u.byteOffset;
      u.free();
      return at;
    })();
    const strays = {
      'a freed tensor\'s array': () => stale,
      'the module\'s own bytes (below every tensor)': () => new Float32Array(memory(), 16, X.length),
      'the allocator\'s header of a live tensor': () => new Float32Array(memory(), next.byteOffset - 16, X.length),
      'a view running past the end of a live tensor': () => new Float32Array(memory(), keep.byteOffset, X.length),
      'the block the staging reuses': () => new Float32Array(memory(), scratchAt, X.length),
    };
    const snapshot = () => new Uint8Array(memory()).slice();
    for (const [what, view] of Object.entries(strays)) {
      // As an output, an input and a statistic; of this instance, of another, and to the reference.
      const calls = {
        out: (impl) => impl.rmsNorm(X, W, { out: view() }),
        x: (impl) => impl.rmsNorm(view(), W),
        rstd: (impl) => impl.rmsNorm(X, W, { rstd: view().subarray(X.length - 3) }), // its last bytes
      };
      for (const [slot, call] of Object.entries(calls)) {
        for (const [who, impl] of [['this instance', k], ['another instance', other], ['the reference', reference]]) {
          const before = snapshot();
          const name = slot === 'out' || slot === 'rstd' ? `options.${slot}` : slot;
          const pattern = new RegExp(`^rmsNorm: ${name.replace('.', '\\.')} is a view of wasm memory outside every live tensor`);
          assertRejected(() => call(impl), RangeError, 'rmsNorm', pattern, `${backend}, ${what}, as ${slot}, by ${who}`);
          assert.deepEqual(snapshot(), before, `${backend}, ${what}, as ${slot}, by ${who}: memory written`);
        }
      }
    }
    // The allocator is intact, and views inside live tensors work as before.
    const many = Array.from({ length: 64 }, (_, i) => k.alloc(16 + i));
    for (const u of many) u.free();
    const inside = k.alloc(X.length + 8);
    inside.array.subarray(4, 4 + X.length).set(X);
    const view = inside.array.subarray(4, 4 + X.length);
    assertSameBits(k.rmsNorm(view, W, { eps: 1e-5, out: view }), EXPECTED, `${backend}: a view inside a live tensor, in place`);
    view.set(X);
    assertSameBits(other.rmsNorm(view, W, { eps: 1e-5 }), EXPECTED, `${backend}: a view of another instance's live tensor, copied`);
    checkCanaries(`${backend}: stray views`);
  }
});

test('class 4: a repeated call on a view of a tensor freed since is refused, not run on the freed block', async () => {
  for (const backend of WASM_BACKENDS) {
    const k = await createKernels({ backend });
    const t = k.alloc(X.length);
    const out = t.array;
    for (let i = 0; i < 3; i++) assertSameBits(k.rmsNorm(X, W, { eps: 1e-5, out }), EXPECTED, `${backend}: repeat ${i}`);
    t.free();
    const before = new Uint8Array(out.buffer).slice();
    assertRejected(() => k.rmsNorm(X, W, { eps: 1e-5, out }), RangeError, 'rmsNorm', /options\.out is a view of wasm memory outside every live tensor/, `${backend}: after free`);
    assert.deepEqual(new Uint8Array(out.buffer), before, `${backend}: the freed block was written`);
  }
});


// ---- 5. Prepared calls: what changes between prepare() and run() --------------------

test('class 5: a prepared call runs on what was checked: later changes to the options object steer nothing', () => {
  onEach((impl, name) => {
    const out = new Float32Array(X.length);
    const other = new Float32Array(X.length).fill(7);
    const options = { eps: 1e-5, out };
    const prepared = impl.rmsNorm.prepare(X, W, options);
    options.eps = 0.5;
    options.out = other;
    Object.defineProperty(options, 'dim', { get() { throw new Error('read'); }, enumerable: true });
    assertSameBits(prepared.run(), EXPECTED, `${name}: the prepared eps and out`);
    assert.ok(other.every((v) => v === 7), `${name}: the out swapped in later was written`);
  });
});

test('class 5: an array shrunk, detached or freed between runs is refused by name, saying which, nothing written; one grown still runs', async () => {
  onEach((impl, name) => {
    // A length-tracking view of a resizable buffer, grown and then shrunk.
    const buffer = new ArrayBuffer(4 * X.length, { maxByteLength: 8 * X.length });
    const x = new Float32Array(buffer);
    x.set(X);
    const out = new Float32Array(X.length).fill(7);
    const prepared = impl.rmsNorm.prepare(x, W, { eps: 1e-5, out });
    assertSameBits(prepared.run(), EXPECTED, `${name}: before`);
    out.fill(7);
    buffer.resize(8 * X.length); // grown: the call reads the values it measured
    assertSameBits(prepared.run(), EXPECTED, `${name}: grown`);
    out.fill(7);
    buffer.resize(4 * 16);
    assertRejected(() => prepared.run(), TypeError, 'rmsNorm', /^rmsNorm: x was shrunk since the call was prepared/, `${name}: shrunk`);
    assert.ok(out.every((v) => v === 7), `${name}: shrunk: written`);
    // The output detached.
    const y = new Float32Array(X.length);
    const intoY = impl.rmsNorm.prepare(X, W, { out: y });
    transfer(y);
    assertRejected(() => intoY.run(), TypeError, 'rmsNorm', /^rmsNorm: options\.out was detached since the call was prepared/, `${name}: out detached`);
  });
  for (const backend of WASM_BACKENDS) {
    const k = instances[backend];
    // A freed tensor whose block a new tensor took: the record is the freed one's.
    const t = k.alloc(X.length);
    t.array.set(X);
    const out = k.alloc(X.length);
    const prepared = k.rmsNorm.prepare(t, W, { eps: 1e-5, out });
    assertSameBits(prepared.run().array, EXPECTED, `${backend}: before`);
    t.free();
    const taker = k.alloc(X.length);
    taker.array.fill(3);
    const before = out.array.slice();
    assertRejected(() => prepared.run(), TypeError, 'rmsNorm', /^rmsNorm: x was freed since the call was prepared \(a tensor freed\)/, `${backend}: freed and reallocated`);
    assert.deepEqual(out.array, before, `${backend}: written after the tensor was freed`);
    // A view of a tensor, the tensor freed: the view's block is no longer a live tensor's.
    const held = k.alloc(X.length);
    const view = held.array;
    const viaView = k.rmsNorm.prepare(X, W, { eps: 1e-5, out: view });
    viaView.run();
    held.free();
    const bytes = new Uint8Array(view.buffer).slice();
    assertRejected(() => viaView.run(), TypeError, 'rmsNorm', /^rmsNorm: options\.out was freed since the call was prepared \(a view of a tensor freed\)/, `${backend}: a view of a freed tensor`);
    assert.deepEqual(new Uint8Array(view.buffer), bytes, `${backend}: the freed block was written`);
    for (const tensor of [out, taker]) tensor.free();
  }
  checkCanaries('prepared calls');
});
