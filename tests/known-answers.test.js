// The seeds' known answers, checked on every implementation.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { onEvery } from './helpers/implementations.js';
import { layerNorm64, rmsNorm64, ulpErrors } from './helpers/oracle.js';
import { normalArray, prng } from './helpers/random.js';

test("the blog's worked example: x=(2,-4,6,-8), w=(1.5,0.5,1,2) gives (0.55,-0.37,1.10,-2.92)", async () => {
  const x = new Float32Array([2, -4, 6, -8]);
  const w = new Float32Array([1.5, 0.5, 1, 2]);
  const results = await onEvery(({ rmsNorm }) => rmsNorm(x, w));
  const exact = rmsNorm64(x, w, 4, Math.fround(1e-6));
  for (const [name, y] of Object.entries(results)) {
    assert.deepEqual(Array.from(y, (v) => v.toFixed(2)), ['0.55', '-0.37', '1.10', '-2.92'], name);
    // RMS(x) = sqrt(30); the float32 result is within 2 ulp of the exact one.
    assert.ok(ulpErrors(y, exact).max <= 2, `${name}: ${y} vs ${exact}`);
  }
});

test('with an all-ones weight every output row has RMS 1', async () => {
  const dim = 8;
  const rand = prng(0);
  const x = new Float32Array(2 * dim);
  x.set(normalArray(rand, dim, 10)); // the blog's demo: rows on different scales
  x.set(normalArray(rand, dim, 0.01), dim);
  const ones = new Float32Array(dim).fill(1);
  const results = await onEvery(({ rmsNorm }) => rmsNorm(x, ones, { eps: 0 }));
  for (const [name, y] of Object.entries(results)) {
    for (let r = 0; r < 2; r++) {
      const row = y.subarray(r * dim, (r + 1) * dim);
      const rms = Math.sqrt(row.reduce((s, v) => s + v * v, 0) / dim);
      assert.ok(Math.abs(rms - 1) < 1e-6, `${name} row ${r}: RMS ${rms}`);
    }
  }
});

test('on zero-mean rows RMSNorm equals LayerNorm without bias', async () => {
  const dim = 64;
  const rows = 5;
  const rand = prng(11);
  const x = normalArray(rand, rows * dim, 4);
  // Make each row zero-mean exactly: mirror its first half into the second.
  for (let r = 0; r < rows; r++) {
    for (let i = 0; i < dim / 2; i++) x[r * dim + dim / 2 + i] = -x[r * dim + i];
  }
  const w = normalArray(rand, dim, 1);
  const eps = Math.fround(1e-6);
  const layer = layerNorm64(x, w, dim, eps);
  const results = await onEvery(({ rmsNorm }) => rmsNorm(x, w, { eps }));
  for (const [name, y] of Object.entries(results)) {
    assert.ok(ulpErrors(y, layer).max <= 4, `${name}: RMSNorm differs from LayerNorm on zero-mean rows`);
  }
});
