// layerNorm: SIMD module = scalar module = JS reference bit for bit (output
// and per-row statistics), accuracy against float64 on centred and offset
// rows, layerNorm = rmsNorm on zero-mean rows, and special values.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as wasm from '../src/index.js';
import * as reference from '../src/reference/index.js';
import { assertSameBits, bitsOf } from './helpers/bits.js';
import { layerNorm64, rmsNorm64 } from './helpers/oracle.js';
import { normalArray, prng, uniformArray } from './helpers/random.js';

const BACKENDS = ['simd', 'scalar'];

// Runs layerNorm on every implementation with mean and rstd requested;
// asserts that y, mean and rstd agree bit for bit and returns the reference's.
async function allAgree(x, w, b, options, what) {
  const dim = options.dim ?? (w ?? b).length;
  const rows = x.length / dim;
  const run = (impl) => {
    const mean = new Float32Array(rows);
    const rstd = new Float32Array(rows);
    return { y: impl.layerNorm(x, w, b, { ...options, mean, rstd }), mean, rstd };
  };
  const ref = run(reference);
  for (const backend of BACKENDS) {
    await wasm.init({ backend });
    const got = run(wasm);
    for (const key of ['y', 'mean', 'rstd']) assertSameBits(got[key], ref[key], `${what} ${key}: ${backend} vs reference`);
  }
  return ref;
}

const DIMS = [...Array.from({ length: 40 }, (_, i) => i + 1), 63, 64, 65, 255, 256, 257, 1000, 4096, 8192];
const SCALES = [1e-30, 1e-10, 1, 1e10, 1e30];

test('simd = scalar = reference over dims, rows, scales and offsets', async () => {
  for (const dim of DIMS) {
    for (const rows of [0, 1, 3]) {
      for (const [s, scale] of SCALES.entries()) {
        const seed = dim * 1000 + rows * 10 + s;
        const rand = prng(seed);
        const x = normalArray(rand, rows * dim, scale);
        // Half the rows carry an offset of 1e4 scales: the two-part mean at work.
        for (let i = 0; i < x.length; i += 2 * dim) x.fill(Math.fround(1e4 * scale), i, i + dim);
        for (let i = 0; i < x.length; i++) x[i] += normalArray(rand, 1, scale)[0];
        const w = uniformArray(rand, dim, 0.5, 1.5);
        const b = uniformArray(rand, dim, -0.5, 0.5);
        // eps = 0 at the extreme scales sends rows through the rescue path.
        const eps = s % 2 === 0 ? 0 : 1e-5;
        await allAgree(x, w, b, { eps }, `rows=${rows} dim=${dim} scale=${scale} eps=${eps} seed=${seed}`);
      }
    }
  }
});

test('simd = scalar = reference with weight and bias each null', async () => {
  for (const dim of [1, 5, 16, 17, 300]) {
    for (const [w, b] of [[true, false], [false, true], [false, false]]) {
      const seed = dim + (w ? 1 : 0) + (b ? 2 : 0);
      const rand = prng(seed);
      const x = normalArray(rand, 3 * dim, 2);
      const weight = w ? uniformArray(rand, dim, 0.5, 1.5) : null;
      const bias = b ? uniformArray(rand, dim, -0.5, 0.5) : null;
      await allAgree(x, weight, bias, { dim }, `rows=3 dim=${dim} weight=${w} bias=${b} seed=${seed}`);
    }
  }
});

test('in place, views at a byteOffset, and a batch in several chunks', async () => {
  const seed = 12;
  const rand = prng(seed);
  const dim = 1000;
  const rows = 700; // more than one chunk of staged rows
  const x = normalArray(rand, rows * dim, 3);
  const w = uniformArray(rand, dim, 0.5, 1.5);
  const b = uniformArray(rand, dim, -0.5, 0.5);
  const whole = await allAgree(x, w, b, {}, `rows=${rows} dim=${dim} seed=${seed}`);
  for (const backend of BACKENDS) {
    await wasm.init({ backend });
    for (const r of [0, 261, 262, 699]) {
      const one = wasm.layerNorm(x.subarray(r * dim, (r + 1) * dim), w, b);
      assertSameBits(one, whole.y.subarray(r * dim, (r + 1) * dim), `${backend} row ${r} alone, seed=${seed}`);
    }
    const backing = new Float32Array(3 * dim + 1);
    backing.set(x.subarray(0, 3 * dim), 1);
    const view = backing.subarray(1);
    assert.equal(wasm.layerNorm(view, w, b, { out: view }), view);
    assertSameBits(view, whole.y.subarray(0, 3 * dim), `${backend} in place at byteOffset 4, seed=${seed}`);
  }
});

// max |y − y64| / max(|y64|, 1) in units of 2^-23, with y64 from float64.
function errorUnits(y, x, w, b, dim, eps) {
  const y64 = layerNorm64(x, w, dim, eps);
  let max = 0;
  for (let i = 0; i < y.length; i++) {
    const exact = y64[i] + b[i % dim];
    max = Math.max(max, Math.abs(y[i] - exact) / Math.max(Math.abs(exact), 1));
  }
  return max / 2 ** -23;
}

// PyTorch 1.13 float32 (CPU) measures 2.4–3.0 units on N(0, 9) and
// 17 000–28 000 on 1e4 + N(0, 1) (its float32 mean); the issue asks for <= 4
// and <= 20 000. The two-part mean keeps both within 4 (measured 2.4–2.9).
const ACCURACY_BOUND = 4;

test(`accuracy: within ${ACCURACY_BOUND} units of 2^-23 of float64 on N(0, 9) and on 1e4 + N(0, 1)`, async (t) => {
  await wasm.init();
  const lines = [];
  for (const [label, sigma, offset] of [['N(0, 9)', 3, 0], ['1e4 + N(0, 1)', 1, 1e4]]) {
    for (const dim of [64, 1024, 4096]) {
      const seed = 77 + dim + offset;
      const rand = prng(seed);
      const rows = Math.max(4, 2 ** 19 / dim);
      const x = normalArray(rand, rows * dim, sigma).map((v) => v + offset);
      const w = uniformArray(rand, dim, 0.5, 1.5);
      const b = uniformArray(rand, dim, -0.5, 0.5);
      const units = errorUnits(wasm.layerNorm(x, w, b), x, w, b, dim, Math.fround(1e-5));
      lines.push(`${label} dim ${dim}: ${units.toFixed(2)}`);
      assert.ok(units <= ACCURACY_BOUND, `${label} rows=${rows} dim=${dim} seed=${seed}: ${units} units`);
    }
  }
  t.diagnostic(lines.join('; '));
});

test('layerNorm = rmsNorm on zero-mean rows without bias, given the same eps', async () => {
  for (const backend of BACKENDS) {
    await wasm.init({ backend });
    for (const dim of [2, 16, 34, 256, 1000, 4096]) {
      const seed = 5 + dim;
      const rand = prng(seed);
      // Rows of pairs (v, -v): the lanes cancel exactly, so the mean is 0,
      // the deviations are x itself and the variance is RMSNorm's mean square.
      const x = normalArray(rand, 3 * dim, 2);
      for (let i = 1; i < x.length; i += 2) x[i] = -x[i - 1];
      const w = uniformArray(rand, dim, 0.5, 1.5);
      for (const eps of [1e-6, 1e-5]) {
        assertSameBits(wasm.layerNorm(x, w, null, { eps }), wasm.rmsNorm(x, w, { eps }),
          `${backend} rows=3 dim=${dim} eps=${eps} seed=${seed}: layerNorm vs rmsNorm`);
      }
      // Zero mean only up to rounding: the two agree with each other's oracle.
      const z = normalArray(rand, 3 * dim, 2);
      for (let r = 0; r < 3; r++) {
        const row = z.subarray(r * dim, (r + 1) * dim);
        const mean = row.reduce((s, v) => s + v, 0) / dim;
        row.forEach((v, i) => { row[i] = v - mean; });
      }
      const eps = Math.fround(1e-6);
      const y = wasm.layerNorm(z, w, null, { eps });
      const expected = rmsNorm64(z, w, dim, eps);
      const worst = Math.max(...y.map((v, i) => Math.abs(v - expected[i]) / Math.max(Math.abs(expected[i]), 1)));
      assert.ok(worst <= 4 * 2 ** -23, `${backend} rows=3 dim=${dim} seed=${seed}: ${worst / 2 ** -23} units from RMSNorm in float64`);
    }
  }
});

test('special values: constant and zero rows give the bias, NaN spoils only its row, huge and tiny rows are normalized', async () => {
  const dim = 37;
  const rand = prng(3);
  const b = uniformArray(rand, dim, -0.5, 0.5);
  const w = uniformArray(rand, dim, 0.5, 1.5);
  const x = normalArray(rand, 7 * dim, 1);
  x.fill(0, 0, dim); // all zeros
  x.fill(7.25, dim, 2 * dim); // constant
  x[2 * dim + 4] = NaN;
  for (let i = 3 * dim; i < 4 * dim; i++) x[i] *= 1e38; // sum of squares overflows
  for (let i = 4 * dim; i < 5 * dim; i++) x[i] *= 1e-30; // sum of squares underflows
  const clean = 5; // row 5 is plain N(0, 1)
  for (let i = 6 * dim; i < 7 * dim; i++) x[i] *= 1e-40; // subnormals
  const { y, mean, rstd } = await allAgree(x, w, b, { eps: 0 }, 'rows=7 dim=37 special rows eps=0');
  // eps = 0 and no variance: 0 * 1/sqrt(0) is NaN, as the formula says.
  assert.ok(y.subarray(0, 2 * dim).every(Number.isNaN), 'zero-variance rows with eps = 0 are NaN');
  assert.ok(y.subarray(2 * dim, 3 * dim).every(Number.isNaN), 'a NaN makes its row NaN');
  const withEps = await allAgree(x, w, b, {}, 'rows=7 dim=37 special rows eps=1e-5');
  for (const r of [0, 1]) {
    assertSameBits(withEps.y.subarray(r * dim, (r + 1) * dim), b, `row ${r}: constant row gives the bias`);
  }
  assert.equal(withEps.mean[1], 7.25);
  assert.equal(bitsOf(withEps.mean[0]), 0);
  // 1/std of the subnormal row is beyond float32: y is still normalized, rstd overflows.
  assert.equal(rstd[6], Infinity);
  for (const r of [3, 4, clean, 6]) {
    const row = x.subarray(r * dim, (r + 1) * dim);
    const y64 = layerNorm64(row, w, dim, 0);
    const units = Math.max(...y.subarray(r * dim, (r + 1) * dim).map((v, i) =>
      Math.abs(v - (y64[i] + b[i])) / Math.max(Math.abs(y64[i] + b[i]), 1))) / 2 ** -23;
    assert.ok(units <= 4, `row ${r}: ${units} units of 2^-23 from float64`);
    const m64 = row.reduce((s, v) => s + v, 0) / dim;
    assert.ok(Math.abs(mean[r] - m64) <= 2 ** -20 * Math.abs(m64) + 1e-45, `row ${r}: mean ${mean[r]} vs ${m64}`);
    if (r === 6) continue;
    const sd64 = Math.sqrt(row.reduce((s, v) => s + (v - m64) ** 2, 0) / dim);
    assert.ok(Math.abs(rstd[r] * sd64 - 1) <= 2 ** -20, `row ${r}: rstd ${rstd[r]} vs 1/${sd64}`);
  }
});

test('shape/axis and tensors: the bits of the plain float32 call, forward and backward', async () => {
  const shape = [2, 3, 4, 5];
  const dim = 4 * 5; // axis 2: the last two dims are normalized
  const seed = 21;
  const rand = prng(seed);
  const x = normalArray(rand, 2 * 3 * dim, 2);
  const dy = normalArray(rand, x.length, 1);
  const w = uniformArray(rand, dim, 0.5, 1.5);
  const b = uniformArray(rand, dim, -0.5, 0.5);
  const what = `shape=[${shape}] axis=2 seed=${seed}`;
  const expected = reference.layerNorm(x, w, b, { dim });
  const expectedGrads = reference.layerNormBackward(dy, x, w, b, { dim });
  const expectedRms = reference.rmsNormBackward(dy, x, w, { dim });
  assertSameBits(reference.layerNorm(x, w, b, { shape, axis: 2 }), expected, `${what} reference`);
  for (const backend of BACKENDS) {
    await wasm.init({ backend });
    assertSameBits(wasm.layerNorm(x, w, b, { shape, axis: -2 }), expected, `${what} ${backend}`);
    const grads = wasm.layerNormBackward(dy, x, w, b, { shape, axis: 2 });
    for (const key of ['dx', 'dweight', 'dbias']) assertSameBits(grads[key], expectedGrads[key], `${what} ${backend} ${key}`);
    assertSameBits(wasm.rmsNormBackward(dy, x, w, { shape, axis: 2 }).dx, expectedRms.dx, `${what} ${backend} rmsNormBackward`);
    // Tensors in wasm memory as x, weight, bias, out and statistics.
    const [tx, tw, tb, tout, tmean, trstd, tdy] = [x.length, dim, dim, x.length, 6, 6, x.length].map((n) => wasm.alloc(n));
    tx.array.set(x); tw.array.set(w); tb.array.set(b); tdy.array.set(dy);
    assert.equal(wasm.layerNorm(tx, tw, tb, { out: tout, mean: tmean, rstd: trstd }), tout);
    assertSameBits(tout.array, expected, `${what} ${backend} tensors`);
    const tgrads = wasm.layerNormBackward(tdy, tx, tw, tb, { mean: tmean, rstd: trstd, dx: tdy });
    assert.equal(tgrads.dx, tdy);
    assertSameBits(tdy.array, expectedGrads.dx, `${what} ${backend} tensors, dx in place of dy`);
    for (const t of [tx, tw, tb, tout, tmean, trstd, tdy]) t.free();
  }
});

test('tensors are used where they are: no staging of their rows, mixed with plain arrays', async () => {
  const { activeKernels } = await import('../src/api/runtime.js');
  const dim = 1024;
  const rows = 512; // 2 MiB of rows: more than the staging chunk
  const seed = 33;
  const rand = prng(seed);
  const x = normalArray(rand, rows * dim, 2);
  const dy = normalArray(rand, rows * dim, 1);
  const w = uniformArray(rand, dim, 0.5, 1.5);
  const b = uniformArray(rand, dim, -0.5, 0.5);
  const expected = reference.layerNorm(x, w, b);
  const expectedGrads = reference.layerNormBackward(dy, x, w, b);
  for (const backend of BACKENDS) {
    await wasm.init({ backend });
    const what = `rows=${rows} dim=${dim} seed=${seed} ${backend}`;
    const [tx, tdy, tout] = [x, dy, x].map((a) => { const t = wasm.alloc(a.length); t.array.set(a); return t; });
    // Watch what the calls ask of scratch memory: only weight, bias, their
    // running sums and per-row statistics may be staged, never tensor rows.
    const kernels = activeKernels('test');
    const requested = [];
    kernels.staging = (fn, bytes) => {
      requested.push(bytes);
      return Object.getPrototypeOf(kernels).staging.call(kernels, fn, bytes);
    };
    try {
      assert.equal(wasm.layerNorm(tx, w, b, { out: tout }), tout);
      assertSameBits(tout.array, expected, `${what}: tensors`);
      const grads = wasm.layerNormBackward(tdy, tx, w, b, { dx: tdy });
      assertSameBits(tdy.array, expectedGrads.dx, `${what}: backward on tensors, dx in place`);
      assertSameBits(grads.dweight, expectedGrads.dweight, `${what}: dweight`);
    } finally {
      delete kernels.staging;
    }
    assert.equal(requested.length, 2, `${what}: one staging per call`);
    assert.ok(requested.every((n) => n <= 4 * (4 * dim + 2 * rows) + 256), `${what}: staged ${requested} bytes`);
    // Mixed: a tensor in, a plain array out, and the other way round.
    assertSameBits(wasm.layerNorm(tx, w, b), expected, `${what}: tensor x, new array out`);
    const outTensor = wasm.alloc(x.length);
    wasm.layerNorm(x, w, b, { out: outTensor });
    assertSameBits(outTensor.array, expected, `${what}: plain x, tensor out`);
    for (const t of [tx, tdy, tout, outTensor]) t.free();
  }
});
