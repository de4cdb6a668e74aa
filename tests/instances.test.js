// createKernels(): independent instances side by side in one thread, and the
// bound kernels of bindMemory() at parity with the package's functions.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { alloc, bindMemory, createKernels, init, rmsNorm } from '../src/index.js';
import * as reference from '../src/reference/index.js';
import { assertSameBits } from './helpers/bits.js';
import { WASM_BACKENDS } from './helpers/implementations.js';
import { normalArray, prng, uniformArray } from './helpers/random.js';

const rows = 5;
const dim = 67;
const x = normalArray(prng(51), rows * dim, 2);
const dy = normalArray(prng(52), rows * dim, 1);
const w = uniformArray(prng(53), dim, 0.5, 1.5);
const b = normalArray(prng(54), dim, 0.1);

test('two instances of different backends work side by side, whatever init() does', async () => {
  const simd = await createKernels({ backend: 'simd' });
  const scalar = await createKernels({ backend: 'scalar' });
  assert.equal(simd.backend, 'simd');
  assert.equal(scalar.backend, 'scalar');
  const expected = reference.rmsNorm(x, w);
  const ts = simd.alloc(x.length);
  const tc = scalar.alloc(x.length);
  ts.array.set(x);
  tc.array.set(x);
  for (let round = 0; round < 4; round++) {
    // Another library switching the default backend under them changes nothing.
    await init({ backend: round % 2 ? 'simd' : 'scalar' });
    assertSameBits(simd.rmsNorm(ts, w), expected, `simd instance, round ${round}`);
    assertSameBits(scalar.rmsNorm(tc, w), expected, `scalar instance, round ${round}`);
    assertSameBits(rmsNorm(x, w), expected, `the default instance, round ${round}`);
  }
  assert.throws(() => simd.rmsNorm(tc, w), { name: 'TypeError', message: /^rmsNorm: x is a tensor of another instance's memory/ });
  assert.throws(() => scalar.rmsNorm(x, w, { out: ts }), { name: 'TypeError', message: /^rmsNorm: options\.out is a tensor of another instance's memory/ });
  const mine = alloc(4);
  assert.throws(() => simd.layerNorm(mine, null, null, { dim: 4 }), { name: 'TypeError', message: /another instance/ });
  mine.free();
  // Every function is there.
  assertSameBits(scalar.layerNorm(x, w, b), reference.layerNorm(x, w, b), 'layerNorm on an instance');
  assertSameBits(simd.rmsNormBackward(dy, x, w).dx, reference.rmsNormBackward(dy, x, w).dx, 'rmsNormBackward on an instance');
  assertSameBits(simd.layerNormBackward(dy, x, w, b).dbias, reference.layerNormBackward(dy, x, w, b).dbias, 'layerNormBackward on an instance');
  ts.free();
  tc.free();
});

test('bound kernels: layerNorm, both backward passes, rstd and new results, on views of the bound memory', async () => {
  for (const backend of WASM_BACKENDS) {
    const memory = new WebAssembly.Memory({ initial: 4 });
    const heap = (at, values) => new Float32Array(memory.buffer, at, values.length ?? values).fill(0);
    const put = (at, values) => { const v = heap(at, values.length); v.set(values); return v; };
    const scratch = { byteOffset: 3 * 65536, byteLength: 65536 };
    const bound = await bindMemory(memory, { scratch, backend });
    const xs = put(0x1000, x);
    const dys = put(0x4000, dy);
    const ws = put(0x7000, w);
    const bs = put(0x7400, b);
    const what = `${backend} rows=${rows} dim=${dim} seed=51`;

    const rstd = heap(0x7800, rows);
    const expectedRstd = new Float32Array(rows);
    const y = bound.rmsNorm(xs, ws, { rstd, out: heap(0x8000, x.length) });
    assertSameBits(y, reference.rmsNorm(x, w, { rstd: expectedRstd }), `${what}: rmsNorm`);
    assertSameBits(rstd, expectedRstd, `${what}: rstd`);
    assertSameBits(bound.rmsNorm(xs, ws), reference.rmsNorm(x, w), `${what}: a new result, staged through the scratch region`);

    const mean = heap(0x7900, rows);
    const lnRstd = heap(0x7a00, rows);
    const expectedMean = new Float32Array(rows);
    const expectedLnRstd = new Float32Array(rows);
    const ln = bound.layerNorm(xs, ws, bs, { out: heap(0xb000, x.length), mean, rstd: lnRstd });
    assertSameBits(ln, reference.layerNorm(x, w, b, { mean: expectedMean, rstd: expectedLnRstd }), `${what}: layerNorm`);
    assertSameBits(mean, expectedMean, `${what}: layerNorm's mean`);

    const grads = bound.rmsNormBackward(dys, xs, ws, { rstd, dx: heap(0xe000, x.length) });
    const expected = reference.rmsNormBackward(dy, x, w, { rstd: expectedRstd });
    assertSameBits(grads.dx, expected.dx, `${what}: rmsNormBackward dx`);
    assertSameBits(grads.dweight, expected.dweight, `${what}: rmsNormBackward dweight`);
    const lnGrads = bound.layerNormBackward(dys, xs, ws, bs);
    const lnExpected = reference.layerNormBackward(dy, x, w, b);
    for (const key of ['dx', 'dweight', 'dbias']) assertSameBits(lnGrads[key], lnExpected[key], `${what}: layerNormBackward ${key}, statistics recomputed`);
    assert.equal(bound.alloc, undefined, 'a bound memory has no allocator');
  }
});
