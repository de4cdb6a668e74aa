// rmsNormBackward and layerNormBackward: the SIMD module, the scalar module
// and the JS reference agree bit for bit; the gradients match the float64
// analytic gradient and central finite differences; and PyTorch's autograd
// (fixtures from tests/fixtures/torch_norm_grads.py).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import * as reference from '../src/reference/index.js';
import { assertSameBits } from './helpers/bits.js';
import { assertAllAgree, implementations, onEvery, wasmImplementations } from './helpers/implementations.js';
import { finiteDifferences64, gradients64, relativeMaxError } from './helpers/grad-oracle.js';
import { normalArray, prng, uniformArray } from './helpers/random.js';

// Runs the backward pass (LayerNorm's if `centred`) on every implementation,
// with the statistics recomputed and with the forward's passed in; asserts
// that all agree bit for bit and that the statistics change nothing, and
// returns the reference's gradients.
async function allAgree(centred, dy, x, w, b, options, what) {
  const dim = options.dim ?? w.length;
  const rows = x.length / dim;
  const results = await onEvery((impl) => {
    const call = (opts) => (centred ? impl.layerNormBackward(dy, x, w, b, opts) : impl.rmsNormBackward(dy, x, w, opts));
    const stats = { rstd: new Float32Array(rows) };
    if (centred) stats.mean = new Float32Array(rows);
    if (centred) impl.layerNorm(x, null, null, { dim, eps: options.eps, ...stats });
    else impl.rmsNorm(x, null, { dim, eps: options.eps, rstd: stats.rstd });
    const fresh = call(options);
    const given = call({ ...options, ...stats });
    for (const [key, value] of Object.entries(fresh)) {
      if (value === null) assert.equal(given[key], null, `${what}: ${impl.name} ${key} must be null`);
      else assertSameBits(given[key], value, `${what}: ${impl.name} ${key} with the forward's statistics vs without`);
    }
    return fresh;
  });
  return assertAllAgree(results, what);
}

test("rmsNorm's rstd option: the same bits everywhere, in place too, and 1/rms of each row", async () => {
  const dim = 300;
  const rows = 6;
  const seed = 4;
  const x = normalArray(prng(seed), rows * dim, 2);
  for (let i = 0; i < dim; i++) x[4 * dim + i] *= 1e-30; // rescue path, eps = 0 below
  const w = uniformArray(prng(seed + 1), dim, 0.5, 1.5);
  const expected = new Float32Array(rows);
  const y = reference.rmsNorm(x, w, { eps: 0, rstd: expected });
  for (let r = 0; r < rows; r++) {
    const row = x.subarray(r * dim, (r + 1) * dim);
    const rms64 = Math.sqrt(row.reduce((s, v) => s + v * v, 0) / dim);
    assert.ok(Math.abs(expected[r] * rms64 - 1) <= 2 ** -21, `row ${r}: rstd ${expected[r]} vs 1/${rms64}`);
  }
  for (const { name: backend, rmsNorm } of await wasmImplementations()) {
    const rstd = new Float32Array(rows);
    const inPlace = x.slice();
    rmsNorm(inPlace, w, { eps: 0, out: inPlace, rstd });
    assertSameBits(rstd, expected, `rows=${rows} dim=${dim} seed=${seed} ${backend} rstd`);
    assertSameBits(inPlace, y, `rows=${rows} dim=${dim} seed=${seed} ${backend} y in place`);
  }
});

const DIMS = [...Array.from({ length: 34 }, (_, i) => i + 1), 63, 64, 65, 255, 256, 257, 1000, 4096];

for (const centred of [false, true]) {
  const name = centred ? 'layerNormBackward' : 'rmsNormBackward';

  test(`${name}: simd = scalar = reference over dims, rows, weight and bias`, async () => {
    for (const dim of DIMS) {
      for (const rows of [0, 1, 3]) {
        for (const affine of [true, false]) {
          const seed = dim * 100 + rows * 10 + (affine ? 1 : 0);
          const rand = prng(seed);
          const x = normalArray(rand, rows * dim, 2);
          const dy = normalArray(rand, rows * dim, 1);
          const w = affine ? uniformArray(rand, dim, 0.5, 1.5) : null;
          const b = affine ? uniformArray(rand, dim, -0.5, 0.5) : null;
          await allAgree(centred, dy, x, w, b, { dim, eps: 1e-5 },
            `rows=${rows} dim=${dim} affine=${affine} seed=${seed}`);
        }
      }
    }
  });

  test(`${name}: rows at extreme scales (forward rescue path) still agree bit for bit`, async () => {
    for (const scale of [1e-30, 1e-10, 1e10, 1e30]) {
      const dim = 77;
      const seed = Math.round(Math.log10(scale)) + 50;
      const rand = prng(seed);
      const x = normalArray(rand, 4 * dim, scale);
      const dy = normalArray(rand, 4 * dim, 1);
      const w = uniformArray(rand, dim, 0.5, 1.5);
      await allAgree(centred, dy, x, w, centred ? w : null, { eps: 0 }, `rows=4 dim=${dim} scale=${scale} eps=0 seed=${seed}`);
    }
  });

  test(`${name}: a batch staged in several chunks gives the bits of the reference, dweight included`, async () => {
    const dim = 1000; // several rows per chunk, chunk edges inside the batch
    const rows = 300;
    const seed = 31;
    const rand = prng(seed);
    const x = normalArray(rand, rows * dim, 1);
    const dy = normalArray(rand, rows * dim, 1);
    const w = uniformArray(rand, dim, 0.5, 1.5);
    await allAgree(centred, dy, x, w, w, {}, `rows=${rows} dim=${dim} seed=${seed}`);
  });

  test(`${name}: dx in place of dy, and into a view at a byteOffset`, async () => {
    const dim = 33;
    const rows = 5;
    const seed = 8;
    const rand = prng(seed);
    const x = normalArray(rand, rows * dim, 1);
    const dy = normalArray(rand, rows * dim, 1);
    const w = uniformArray(rand, dim, 0.5, 1.5);
    const expected = centred ? reference.layerNormBackward(dy, x, w, w) : reference.rmsNormBackward(dy, x, w);
    for (const impl of await implementations()) {
      const backend = impl.name;
      const inPlace = dy.slice();
      const viewed = new Float32Array(new ArrayBuffer((rows * dim + 1) * 4), 4, rows * dim);
      for (const [dyIn, dx, how] of [[inPlace, inPlace, 'in place'], [dy, viewed, 'into a view']]) {
        const got = centred ? impl.layerNormBackward(dyIn, x, w, w, { dx }) : impl.rmsNormBackward(dyIn, x, w, { dx });
        const what = `rows=${rows} dim=${dim} seed=${seed} ${backend} dx ${how}`;
        assert.equal(got.dx, dx, `${what}: returns options.dx`);
        assertSameBits(dx, expected.dx, what);
        assertSameBits(got.dweight, expected.dweight, `${what}: dweight`);
      }
    }
  });

  // Well-conditioned data: x ~ N(0, 1), w ~ U(0.5, 1.5), dy ~ N(0, 1).
  test(`${name}: within 1e-5 of the float64 analytic gradient and of finite differences`, async (t) => {
    const lines = [];
    for (const [rows, dim] of [[4, 8], [3, 100], [2, 1024], [1, 4096]]) {
      const seed = 1000 + dim;
      const rand = prng(seed);
      const x = normalArray(rand, rows * dim, 1);
      const dy = normalArray(rand, rows * dim, 1);
      const w = uniformArray(rand, dim, 0.5, 1.5);
      const b = centred ? uniformArray(rand, dim, -0.5, 0.5) : null;
      const eps = Math.fround(centred ? 1e-5 : 1e-6);
      const analytic = gradients64(dy, x, w, dim, eps, centred);
      const numeric = finiteDifferences64(dy, x, w, b, dim, eps, centred);
      const got = await allAgree(centred, dy, x, w, b, {}, `rows=${rows} dim=${dim} seed=${seed}`);
      for (const key of centred ? ['dx', 'dweight', 'dbias'] : ['dx', 'dweight']) {
        const what = `rows=${rows} dim=${dim} seed=${seed} ${key}`;
        // The oracle itself: analytic and finite differences agree far below the bound.
        assert.ok(relativeMaxError(numeric[key], analytic[key]) <= 1e-7, `${what}: float64 analytic vs finite differences`);
        const vsAnalytic = relativeMaxError(got[key], analytic[key]);
        const vsNumeric = relativeMaxError(got[key], numeric[key]);
        lines.push(`${rows}x${dim} ${key}: ${vsAnalytic.toExponential(2)}`);
        assert.ok(vsAnalytic <= 1e-5, `${what}: ${vsAnalytic} from the analytic gradient`);
        assert.ok(vsNumeric <= 1e-5, `${what}: ${vsNumeric} from finite differences`);
      }
    }
    t.diagnostic(lines.join('; '));
  });
}

// PyTorch 1.13 float32 CPU autograd on the same inputs. Both sides round
// differently (PyTorch's own reduction order, rsqrt, fused terms), so they
// agree to a few units of 2^-23 of the largest |value|, not to the bit.
// Measured: at most 1.61 units (y, dx, dweight and dbias alike), hence the bound of 4.
const TORCH_BOUND = 4;
const fixtures = JSON.parse(readFileSync(new URL('./fixtures/torch-norm-grads.json', import.meta.url), 'utf8'));

function decode(base64) {
  if (base64 === null) return null;
  const bytes = Buffer.from(base64, 'base64');
  return new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
}

test(`within ${TORCH_BOUND} units of 2^-23 (normwise) of PyTorch autograd, on every backend`, async (t) => {
  assert.ok(fixtures.cases.length >= 10, 'the fixtures hold the cases');
  let worst = 0;
  for (const impl of await implementations()) {
    const backend = impl.name;
    for (const c of fixtures.cases) {
      const [x, w, b, dy] = [c.x, c.weight, c.bias, c.dy].map(decode);
      const options = { dim: c.dim, eps: c.eps };
      const centred = c.op === 'layerNorm';
      const y = centred ? impl.layerNorm(x, w, b, options) : impl.rmsNorm(x, w, options);
      const grads = centred ? impl.layerNormBackward(dy, x, w, b, options) : impl.rmsNormBackward(dy, x, w, options);
      for (const [key, got] of [['y', y], ['dx', grads.dx], ['dweight', grads.dweight], ['dbias', grads.dbias ?? null]]) {
        const expected = decode(c[key]);
        const what = `${backend} ${c.op} rows=${c.rows} dim=${c.dim} ${key}`;
        if (expected === null) {
          assert.equal(got, null, `${what}: expected null`);
          continue;
        }
        const units = relativeMaxError(got, expected) / 2 ** -23;
        worst = Math.max(worst, units);
        assert.ok(units <= TORCH_BOUND, `${what}: ${units.toFixed(2)} units of 2^-23 from PyTorch`);
      }
    }
  }
  t.diagnostic(`worst: ${worst.toFixed(2)} units of 2^-23`);
});

test("rmsNorm's rstd option on 16-bit storage and on addRmsNorm: the same bits everywhere", async () => {
  const dim = 70;
  const rows = 3;
  const seed = 6;
  const rand = prng(seed);
  const toBf16 = (a) => Uint16Array.from(new Uint32Array(a.buffer), (u) => u >>> 16); // truncation: any bf16 will do
  const x16 = toBf16(normalArray(rand, rows * dim, 2));
  const x = normalArray(rand, rows * dim, 2);
  const residual = normalArray(rand, rows * dim, 2);
  const w = uniformArray(rand, dim, 0.5, 1.5);
  const run = (impl) => {
    const r16 = new Float32Array(rows);
    impl.rmsNorm(x16, w, { dtype: 'bfloat16', rstd: r16 });
    const rAdd = new Float32Array(rows);
    const res = residual.slice();
    impl.addRmsNorm(x, res, w, { rstd: rAdd });
    // The rstd of addRmsNorm is the one of the updated residual.
    const rPlain = new Float32Array(rows);
    impl.rmsNorm(res, w, { rstd: rPlain });
    return { r16, rAdd, rPlain };
  };
  const expected = run(reference);
  assertSameBits(expected.rAdd, expected.rPlain, `rows=${rows} dim=${dim} seed=${seed}: addRmsNorm's rstd is the updated residual's`);
  for (const impl of await wasmImplementations()) {
    const backend = impl.name;
    const got = run(impl);
    for (const key of ['r16', 'rAdd']) assertSameBits(got[key], expected[key], `rows=${rows} dim=${dim} seed=${seed} ${backend} ${key}`);
  }
});
