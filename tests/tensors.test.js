// Zero-copy tensors (alloc) and kernels on an engine's own memory (bindMemory).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { addRmsNorm, alloc, bindMemory, createKernels, init, rmsNorm } from '../src/index.js';
import { activeKernels } from '../src/api/runtime.js';
import { assertSameBitsAs } from './helpers/bits.js';
import { WASM_BACKENDS, wasmImplementations } from './helpers/implementations.js';
import { normal16, uniform16 } from './helpers/float16-data.js';
import { normalArray, prng, uniformArray } from './helpers/random.js';

test('alloc before init throws a clear Error', () => {
  assert.throws(() => alloc(4), { name: 'Error', message: /alloc: call `await init\(\)`/ });
});

function data(dtype, rand, n, sigma) {
  return dtype === 'float32' ? normalArray(rand, n, sigma) : normal16(rand, n, dtype, sigma);
}
function weights(dtype, rand, n) {
  return dtype === 'float32' ? uniformArray(rand, n, 0.5, 1.5) : uniform16(rand, n, dtype, 0.5, 1.5);
}
function tensorOf(values, dtype) {
  const t = alloc(values.length, dtype);
  t.array.set(values);
  return t;
}

/** Counts the calls that ask the default instance's memory for staging space while fn runs. */
function countStaging(fn) {
  const kernels = activeKernels('test');
  const original = kernels.staging;
  assert.equal(typeof original, 'function', 'the memory stages through staging()'); // else nothing is watched
  let calls = 0;
  kernels.staging = (...args) => { calls++; return original.apply(kernels, args); };
  try { fn(); } finally { delete kernels.staging; }
  return calls;
}

// The default instance's staging is watched: each test sets it up with init().
for (const backend of WASM_BACKENDS) {
  test(`${backend}: the zero-copy path writes exactly what the copying path writes, and stages nothing`, async () => {
    await init({ backend });
    for (const dtype of ['float32', 'bfloat16', 'float16']) {
      const rows = 5;
      const dim = 300;
      const rand = prng(dtype.length);
      const x = data(dtype, rand, rows * dim, 3);
      const r0 = data(dtype, rand, rows * dim, 2);
      const w = weights(dtype, rand, dim);
      const what = `${backend} ${dtype} rows=${rows} dim=${dim}`;

      const copied = rmsNorm(x, w, { dtype });
      const [tx, tw, ty] = [tensorOf(x, dtype), tensorOf(w, dtype), alloc(x.length, dtype)];
      const staged = countStaging(() => assert.equal(rmsNorm(tx, tw, { dtype, out: ty }), ty));
      assert.equal(staged, 0, `${what}: tensors must not be staged`);
      assertSameBitsAs(dtype, ty.array, copied, `${what}: tensors vs copies`);
      // Views of the module's memory are zero-copy too.
      const viewOut = alloc(x.length, dtype);
      assert.equal(countStaging(() => rmsNorm(tx.array, tw.array, { dtype, out: viewOut.array })), 0);
      assertSameBitsAs(dtype, viewOut.array, copied, `${what}: views vs copies`);
      // Mixed: a tensor x with a plain weight and a plain result.
      assertSameBitsAs(dtype, rmsNorm(tx, w, { dtype }), copied, `${what}: mixed`);

      const rCopy = r0.slice();
      const fusedCopied = addRmsNorm(x, rCopy, w, { dtype });
      const tr = tensorOf(r0, dtype);
      const fusedOut = alloc(x.length, dtype);
      assert.equal(countStaging(() => addRmsNorm(tx, tr, tw, { dtype, out: fusedOut })), 0);
      assertSameBitsAs(dtype, fusedOut.array, fusedCopied, `${what}: addRmsNorm y`);
      assertSameBitsAs(dtype, tr.array, rCopy, `${what}: addRmsNorm residual`);
      for (const t of [tx, tw, ty, viewOut, tr, fusedOut]) t.free();
    }
  });

  test(`${backend}: tensor views stay valid when the memory grows between two uses`, async () => {
    const { alloc, rmsNorm } = await createKernels({ backend });
    const tensorOf = (values) => { const t = alloc(values.length); t.array.set(values); return t; };
    const dim = 64;
    const rand = prng(3);
    const x = tensorOf(normalArray(rand, 4 * dim, 2));
    const w = tensorOf(uniformArray(rand, dim, 0.5, 1.5));
    const y = alloc(4 * dim);
    rmsNorm(x, w, { out: y });
    const first = y.array.slice();
    const oldView = y.array;
    const before = oldView.buffer.byteLength;
    const big = alloc(16 * 2 ** 20); // 64 MiB: the memory must grow
    assert.ok(y.array.buffer.byteLength > before, 'memory grew');
    assert.equal(oldView.length, 0, 'the old view was detached by the growth');
    y.array.fill(0);
    rmsNorm(x, w, { out: y });
    assertSameBitsAs('float32', y.array, first, 'after growth');
    for (const t of [x, w, y, big]) t.free();
  });

  test(`${backend}: freed and foreign tensors are rejected by name, and nothing is written`, async () => {
    const { alloc, rmsNorm } = await createKernels({ backend });
    const x = alloc(4);
    x.array.set([1, 2, 3, 4]);
    const out = alloc(4);
    out.array.fill(7);
    x.free();
    x.free(); // idempotent
    assert.ok(x.freed);
    assert.throws(() => rmsNorm(x, null, { dim: 4, out }), { name: 'TypeError', message: /rmsNorm: x is a freed tensor/ });
    assert.throws(() => x.array, { name: 'TypeError', message: /freed/ });
    assert.deepEqual(Array.from(out.array), [7, 7, 7, 7]);
    const other = await createKernels({ backend: backend === 'simd' ? 'scalar' : 'simd' });
    assert.throws(() => other.rmsNorm(new Float32Array(4), null, { dim: 4, out }), {
      name: 'TypeError', message: /rmsNorm: options\.out is a tensor of another instance's memory/,
    });
    assert.deepEqual(Array.from(out.array), [7, 7, 7, 7]);
    out.free();
  });
}

// An engine's own memory: a WebAssembly.Memory the test creates, holding
// activations at addresses the "engine" chose.
for (const { name: backend, rmsNorm, addRmsNorm } of await wasmImplementations()) {
  test(`${backend}: bindMemory runs the kernels on a foreign memory, touching only outputs and the lent scratch`, async () => {
    const memory = new WebAssembly.Memory({ initial: 16 }); // 1 MiB, no maximum
    const bytes = new Uint8Array(memory.buffer);
    for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 131 + 7) & 0xff; // a pattern to detect stray writes
    const scratch = { byteOffset: 0x1000, byteLength: 0x2000 };
    const bound = await bindMemory(memory, { scratch, backend });
    assert.equal(bound.backend, backend);
    assert.ok(bytes.every((b, i) => b === ((i * 131 + 7) & 0xff)), 'binding wrote nothing');

    for (const dtype of ['float32', 'bfloat16', 'float16']) {
      const size = dtype === 'float32' ? 4 : 2;
      const Type = dtype === 'float32' ? Float32Array : Uint16Array;
      const rows = 3;
      const dim = 257;
      const rand = prng(size + 40);
      const xs = data(dtype, rand, rows * dim, 3);
      const rs = data(dtype, rand, rows * dim, 2);
      const ws = weights(dtype, rand, dim);
      // The engine's layout: x and y not 16-byte aligned.
      const at = { x: 0x10004, w: 0x30000, r: 0x40000, y: 0x50008 };
      const view = (byteOffset, n) => new Type(memory.buffer, byteOffset, n);
      view(at.x, xs.length).set(xs);
      view(at.w, dim).set(ws);
      view(at.r, rs.length).set(rs);
      const snapshot = bytes.slice();

      const y = view(at.y, xs.length);
      assert.equal(bound.rmsNorm(view(at.x, xs.length), view(at.w, dim), { dtype, out: y }), y);
      assertSameBitsAs(dtype, y, rmsNorm(xs, ws, { dtype }), `${backend} ${dtype} bound rmsNorm`);
      const yBytes = [at.y, at.y + xs.length * size];
      for (let i = 0; i < bytes.length; i++) {
        const inY = i >= yBytes[0] && i < yBytes[1];
        const inScratch = i >= scratch.byteOffset && i < scratch.byteOffset + scratch.byteLength;
        if (!inY && !inScratch && bytes[i] !== snapshot[i]) assert.fail(`${dtype}: byte ${i} outside the output changed`);
      }

      const residual = view(at.r, rs.length);
      bound.addRmsNorm(view(at.x, xs.length), residual, view(at.w, dim), { dtype, out: y });
      const rCopy = rs.slice();
      assertSameBitsAs(dtype, y, addRmsNorm(xs, rCopy, ws, { dtype }), `${backend} ${dtype} bound addRmsNorm`);
      assertSameBitsAs(dtype, residual, rCopy, `${backend} ${dtype} bound residual`);
    }
    // The engine grows its memory: the binding keeps working on the new buffer.
    memory.grow(1);
    const x = new Float32Array(memory.buffer, 0x10000, 4);
    x.set([2, -4, 6, -8]);
    const out = new Float32Array(memory.buffer, 0x10010, 4);
    bound.rmsNorm(x, null, { dim: 4, out });
    assert.deepEqual(Array.from(out, (v) => v.toFixed(2)), ['0.37', '-0.73', '1.10', '-1.46']);
  });
}

test('a new tensor holds zeros, also where a freed one held values', async () => {
  for (const kernels of await wasmImplementations()) {
    for (const [dtype, length] of [['float32', 896], ['bfloat16', 7], ['float16', 1]]) {
      for (let i = 0; i < 4; i++) {
        const t = kernels.alloc(length, dtype);
        assert.ok(t.array.every((v) => v === 0), `${kernels.name} ${dtype}(${length}), allocation ${i}: zeros`);
        t.array.fill(dtype === 'float32' ? 7 : 0x4000);
        t.free();
      }
    }
  }
});
