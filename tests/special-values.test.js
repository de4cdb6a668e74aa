// Zeros, NaN, infinities, and rows at the edges of float32's range.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { allAgree, assertAllAgree, implementations, onEvery } from './helpers/implementations.js';
import { assertSameBits, bitsOf } from './helpers/bits.js';
import { narrow, widen } from '../src/reference/float16.js';
import { rmsNorm64, ulpErrors } from './helpers/oracle.js';
import { normalArray, prng } from './helpers/random.js';

test('an all-zero row gives zeros: eps sits inside the root', async () => {
  for (const dim of [1, 4, 17, 300]) {
    const y = await allAgree(({ rmsNorm }) => rmsNorm(new Float32Array(2 * dim), null, { dim }), `dim=${dim}`);
    assert.ok(y.every((v) => bitsOf(v) === 0), `dim=${dim}: expected +0 everywhere, got ${y}`);
  }
});

test('with eps = 0 an all-zero row gives NaN, as the formula says', async () => {
  const y = await allAgree(({ rmsNorm }) => rmsNorm(new Float32Array(20), null, { dim: 20, eps: 0 }), 'eps=0');
  assert.ok(y.every(Number.isNaN));
});

// All-zero rows (padding) take the vector writer when eps > 0: between
// ordinary rows, with signed weights, in every dtype and cast mode; with
// eps = 0 they stay on the scalar path and come out NaN.
test('all-zero and -0 rows among ordinary rows, every dtype and cast mode', async () => {
  const dim = 300; // a vector loop, a 4-wide step and a scalar tail
  const rows = 4; // zero rows first, in the middle and last
  const random = prng(11);
  for (const dtype of ['float32', 'bfloat16', 'float16']) {
    const Array16 = dtype === 'float32' ? Float32Array : Uint16Array;
    const x = new Array16(rows * dim);
    const w = new Array16(dim);
    const values = normalArray(random, rows * dim, 3);
    for (let i = 0; i < dim; i++) {
      x[dim + i] = narrow(values[dim + i], dtype); // row 1 ordinary, row 2 all -0
      x[2 * dim + i] = narrow(-0, dtype);
      w[i] = narrow(i % 3 === 0 ? -1.5 : 0.75, dtype);
    }
    for (const castMode of ['llama', 'gemma']) {
      for (const eps of [1e-6, 0]) {
        const what = `${dtype} ${castMode} eps=${eps}`;
        const y = await allAgree(({ rmsNorm }) => rmsNorm(x, w, { dtype, castMode, eps }), what);
        for (const r of [0, 2, 3]) {
          const row = Array.from(y.subarray(r * dim, (r + 1) * dim));
          if (eps === 0) {
            assert.ok(row.every((v) => (dtype === 'float32' ? Number.isNaN(v) : (v & 0x7fff) > (dtype === 'bfloat16' ? 0x7f80 : 0x7c00))), `${what}: row ${r} NaN`);
          } else {
            // +-0 * w: the sign is the product of the signs, the magnitude 0
            row.forEach((v, i) => {
              const negative = (r === 2) !== (i % 3 === 0);
              const bits = dtype === 'float32' ? bitsOf(v) : v;
              const expected = !negative ? 0 : dtype === 'float32' ? 0x80000000 : 0x8000;
              assert.equal(bits, expected, `${what}: row ${r} index ${i}`);
            });
          }
        }
      }
    }
  }
});

test('-0 inputs keep their sign', async () => {
  const x = new Float32Array([-0, 1, -0, -1]);
  const y = await allAgree(({ rmsNorm }) => rmsNorm(x, null, { dim: 4 }), '-0');
  assert.ok(Object.is(y[0], -0) && Object.is(y[2], -0));
});

test('a NaN or an infinity spoils only its own row', async () => {
  const dim = 37;
  const rows = 5;
  const x = normalArray(prng(5), rows * dim, 2);
  x[1 * dim + 3] = NaN;
  x[3 * dim + 30] = Infinity;
  const w = new Float32Array(dim).fill(1.25);
  const y = await allAgree(({ rmsNorm }) => rmsNorm(x, w), 'NaN/Inf rows');
  const clean = await allAgree(({ rmsNorm }) => rmsNorm(x.subarray(0, dim), w), 'row 0 alone');
  assertSameBits(y.subarray(0, dim), clean, 'row 0 next to a NaN row');
  assert.ok(y.subarray(dim, 2 * dim).every(Number.isNaN), 'a NaN makes its row NaN');
  // sum of squares = +Inf, so 1/rms = 0: the infinity becomes Inf*0 = NaN and
  // every finite value x*0 = +-0, exactly as the formula (and PyTorch) gives.
  const infRow = y.subarray(3 * dim, 4 * dim);
  assert.ok(Number.isNaN(infRow[30]));
  for (let i = 0; i < dim; i++) {
    if (i !== 30) assert.ok(infRow[i] === 0 && Object.is(infRow[i], x[3 * dim + i] < 0 ? -0 : 0), `index ${i}`);
  }
  for (const r of [2, 4]) {
    const alone = await allAgree(({ rmsNorm }) => rmsNorm(x.subarray(r * dim, (r + 1) * dim), w), `row ${r}`);
    assertSameBits(y.subarray(r * dim, (r + 1) * dim), alone, `row ${r} next to spoiled rows`);
  }
});

// PyTorch 1.13 float32 maps [3e19, -4e19, 1e19, 2e19] to all zeros (the sum of
// squares overflows); the contract's rescue path gives the true answer.
test('rows whose squares overflow or underflow still come out with RMS 1', async () => {
  const cases = [
    { name: 'PyTorch overflow example', x: [3e19, -4e19, 1e19, 2e19], eps: 1e-6 },
    { name: 'near FLT_MAX', x: [3.4e38, -3.0e38, 1e38, -3.4028234e38, 2e37], eps: 1e-6 },
    { name: 'near 1e-30, eps = 0', x: [1e-30, -3e-30, 2e-30, 5e-31], eps: 0 },
    { name: 'subnormals, eps = 0', x: [1e-45, -3e-45, 1e-40, 7e-42, -2e-39], eps: 0 },
    { name: 'tiny and eps dominates', x: [1e-30, -3e-30, 2e-30, 5e-31], eps: 1e-6 },
    { name: 'tiny with a tinier eps', x: [1e-25, -3e-25, 2e-25, 5e-26], eps: 1e-45 },
  ];
  for (const { name, x, eps } of cases) {
    const x32 = new Float32Array(x);
    const dim = x32.length;
    const y = await allAgree(({ rmsNorm }) => rmsNorm(x32, null, { dim, eps }), name);
    const exact = rmsNorm64(x32, null, dim, Math.fround(eps));
    const { max } = ulpErrors(y, exact);
    assert.ok(max <= 4, `${name}: ${Array.from(y)} vs exact ${Array.from(exact)} (${max} ulp)`);
  }
});

test('scaling x by a power of two does not change the output (eps = 0)', async () => {
  const dim = 300;
  const x = normalArray(prng(77), dim, 1);
  const base = await allAgree(({ rmsNorm }) => rmsNorm(x, null, { dim, eps: 0 }), 'base');
  for (const k of [-100, -60, -20, 20, 60, 100, 120]) {
    const scaled = x.map((v) => v * 2 ** k);
    assert.ok(scaled.every((v, i) => v / 2 ** k === x[i]), `x * 2^${k} must be exact`);
    const y = await allAgree(({ rmsNorm }) => rmsNorm(scaled, null, { dim, eps: 0 }), `2^${k}`);
    assertSameBits(y, base, `x * 2^${k}`);
  }
});

test('mean(x²) + eps overflowing float32 still gives the right rstd (no overflow anywhere)', async () => {
  const expected = 1.8e19 / Math.sqrt(Math.fround(1.8e19) ** 2 + Math.fround(3e38));
  for (const { name, rmsNorm, layerNorm } of await implementations()) {
    const y = rmsNorm(new Float32Array([1.8e19]), null, { dim: 1, eps: 3e38 });
    assert.ok(Math.abs(y[0] - expected) < 1e-6, `${name}: ${y[0]} instead of ${expected}`);
    const ln = layerNorm(new Float32Array([1.8e19, -1.8e19]), null, null, { dim: 2, eps: 3e38 });
    assert.ok(Math.abs(ln[0] - expected) < 1e-6, `${name}: layerNorm ${ln[0]} instead of ${expected}`);
  }
  await allAgree(({ rmsNorm }) => rmsNorm(new Float32Array([1.8e19, 3, -2e19]), null, { dim: 3, eps: 3e38 }), 'dim=3 eps=3e38');
});

test('weightOffset + weight overflowing float32 is defined: the applied weight is ±Infinity', async () => {
  const x = new Float32Array([1, -2, 0, 3]);
  const w = new Float32Array([3e38, 3e38, 3e38, -3e38]);
  const results = await onEvery(({ rmsNorm }) => rmsNorm(x, w, { weightOffset: 3e38 }));
  for (const [name, y] of Object.entries(results)) {
    assert.equal(y[0], Infinity, `${name}: x > 0 times +Infinity`);
    assert.equal(y[1], -Infinity, `${name}: x < 0 times +Infinity`);
    assert.ok(Number.isNaN(y[2]), `${name}: 0 times Infinity is NaN`);
    assert.equal(y[3], 0, `${name}: a weight that does not overflow (here 0) applies as usual`);
  }
  assertAllAgree(results, 'dim=4 weightOffset=3e38');
});

// Every call checks its weight for an Inf or a NaN (rows.inc's all_finite):
// a weight that has one goes to the scalar writer, as the SIMD writers'
// short float16 widening would make it finite. The check reads vectors and
// a last one that may overlap: a special value at every position of short
// rows and of a row's tail, in every weight dtype and storage it serves,
// and in block outputs.
test('a weight with an Inf or a NaN anywhere is seen: every position, weight dtype and storage', async () => {
  const cases = [
    ['float32', 'float16'], ['bfloat16', 'float32'], ['bfloat16', 'bfloat16'], ['bfloat16', 'float16'],
    ['float16', 'float32'], ['float16', 'float16'],
  ];
  const arrayFor = (dtype, n) => (dtype === 'float32' ? new Float32Array(n) : new Uint16Array(n));
  for (const [dtype, weightDtype] of cases) {
    for (const dim of [1, 3, 4, 5, 7, 8, 9, 15, 16, 17, 64]) {
      const values = normalArray(prng(dim), dim, 2);
      const x = arrayFor(dtype, dim);
      values.forEach((v, i) => { x[i] = narrow(v, dtype); });
      const positions = dim <= 17 ? [...Array(dim).keys()] : [0, 31, ...Array.from({ length: 9 }, (_, k) => dim - 9 + k)];
      for (const position of positions) {
        for (const special of [Infinity, NaN]) {
          const w = arrayFor(weightDtype, dim);
          for (let i = 0; i < dim; i++) w[i] = narrow(i === position ? special : 0.75, weightDtype);
          const options = { dtype, weightDtype, dim };
          const what = `${dtype} rows, ${weightDtype} weight, dim ${dim}, w[${position}] = ${special}`;
          const y = await allAgree(({ rmsNorm }) => rmsNorm(x, w, options), what);
          assert.ok(!Number.isFinite(widen(y, position, dtype)), `${what}: y[${position}] is ${y[position]}, not Inf or NaN`);
          if (dim % 32 === 0) await allAgree(({ rmsNorm }) => rmsNorm(x, w, { ...options, outDtype: 'q8_0' }), `${what}, q8_0`);
        }
      }
    }
  }
});
