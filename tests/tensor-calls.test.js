// Calls on tensors from alloc(): the zero-copy call an engine makes on every
// token. On the SIMD and the scalar instance, rmsNorm and addRmsNorm on
// tensors give the reference's bits (computed on plain copies) for every
// storage dtype, weight dtype, cast mode, weight offset and eps, with dim or
// shape, into an out tensor or in place; and a tensor call with a mistake in
// it is refused by name before anything is written.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as reference from '../src/reference/index.js';
import { narrow } from '../src/reference/float16.js';
import { assertSameBits, assertSameBitsAs } from './helpers/bits.js';
import { wasmImplementations } from './helpers/implementations.js';
import { normalArray, prng, uniformArray } from './helpers/random.js';

const DTYPES = ['float32', 'bfloat16', 'float16'];
const INSTANCES = await wasmImplementations();

/** `values` (numbers) in `dtype` storage: a Float32Array, or 16-bit patterns rounded by the reference. */
const stored = (values, dtype) => (dtype === 'float32' ? Float32Array.from(values) : Uint16Array.from(values, (v) => narrow(v, dtype)));

/** A tensor of `kernels` holding `array`'s values. */
function tensorOf(kernels, array, dtype = 'float32') {
  const t = kernels.alloc(array.length, dtype);
  t.array.set(array);
  return t;
}

for (const kernels of INSTANCES) {
  test(`${kernels.name}: float32 tensors give the reference's bits, into out and in place, with dim or shape`, () => {
    const rand = prng(21);
    for (const dim of [1, 3, 16, 17, 896, 4097]) {
      for (const rows of [1, 3]) {
        const x = normalArray(rand, rows * dim, 3);
        const w = uniformArray(rand, dim, 0.5, 1.5);
        const xt = tensorOf(kernels, x);
        const wt = tensorOf(kernels, w);
        const yt = kernels.alloc(rows * dim);
        for (const options of [{}, { eps: 0 }, { eps: 1e-5, dim }, { eps: -0 }, { eps: 1e-5, shape: [rows, dim] }]) {
          const what = `${kernels.name} rows=${rows} dim=${dim} ${JSON.stringify(options)} seed=21`;
          const expected = reference.rmsNorm(x, w, options);
          assert.equal(kernels.rmsNorm(xt, wt, { ...options, out: yt }), yt, `${what}: returns out`);
          assertSameBits(yt.array, expected, `${what}: into an out tensor`);
          assert.equal(kernels.rmsNorm(xt, wt, { ...options, out: xt }), xt, `${what}: returns x in place`);
          assertSameBits(xt.array, expected, `${what}: in place`);
          xt.array.set(x);
          assertSameBits(kernels.rmsNorm(xt, wt, options), expected, `${what}: a new array`);
        }
        for (const t of [xt, wt, yt]) t.free();
      }
    }
  });

  test(`${kernels.name}: 16-bit tensors, every weight dtype, cast modes, offsets and the fused add give the reference's bits`, () => {
    const rand = prng(23);
    for (const dim of [5, 64, 1000]) {
      const rows = 2;
      const xs = normalArray(rand, rows * dim, 2);
      const rs = normalArray(rand, rows * dim, 1);
      const ws = uniformArray(rand, dim, 0.5, 1.5);
      for (const dtype of DTYPES) {
        for (const weightDtype of DTYPES) {
          for (const extra of [{ castMode: 'gemma', weightOffset: 1 }, { castMode: 'llama', eps: 1e-5 }, { weightOffset: -0.25 }, { shape: [rows, dim] }]) {
            const options = { ...extra, dtype, weightDtype };
            const what = `${kernels.name} rows=${rows} dim=${dim} ${JSON.stringify(options)} seed=23`;
            const [x, r, w] = [stored(xs, dtype), stored(rs, dtype), stored(ws, weightDtype)];
            const [xt, wt, yt] = [tensorOf(kernels, x, dtype), tensorOf(kernels, w, weightDtype), kernels.alloc(x.length, dtype)];
            const rt = tensorOf(kernels, r, dtype);
            assert.equal(kernels.rmsNorm(xt, wt, { ...options, out: yt }), yt);
            assertSameBitsAs(dtype, yt.array, reference.rmsNorm(x, w, options), `${what}: rmsNorm`);
            const rExpected = r.slice();
            const expected = reference.addRmsNorm(x, rExpected, w, options);
            assert.equal(kernels.addRmsNorm(xt, rt, wt, { ...options, out: yt }), yt);
            assertSameBitsAs(dtype, yt.array, expected, `${what}: addRmsNorm`);
            assertSameBitsAs(dtype, rt.array, rExpected, `${what}: addRmsNorm's residual`);
            // In place, as vLLM's fused_add_rms_norm writes into its input.
            rt.array.set(r);
            assert.equal(kernels.addRmsNorm(xt, rt, wt, { ...options, out: xt }), xt);
            assertSameBitsAs(dtype, xt.array, expected, `${what}: addRmsNorm in place`);
            assertSameBitsAs(dtype, rt.array, rExpected, `${what}: addRmsNorm in place, residual`);
            for (const t of [xt, wt, yt, rt]) t.free();
          }
        }
      }
    }
  });

  test(`${kernels.name}: zero rows, a null weight and a known bfloat16 answer on tensors`, () => {
    const empty = kernels.alloc(0);
    const wt = tensorOf(kernels, new Float32Array(4).fill(1));
    assert.equal(kernels.rmsNorm(empty, wt, { out: empty }).length, 0);
    const xt = tensorOf(kernels, new Float32Array([2, -4, 6, -8]));
    const yt = kernels.alloc(4);
    kernels.rmsNorm(xt, null, { out: yt, dim: 4 });
    assertSameBits(yt.array, reference.rmsNorm(new Float32Array([2, -4, 6, -8]), null, { dim: 4 }), 'a null weight');
    const x16 = tensorOf(kernels, new Uint16Array([0x4000, 0xc080, 0x40c0, 0xc100]), 'bfloat16'); // 2, -4, 6, -8
    const w16 = tensorOf(kernels, new Uint16Array(4).fill(0x3f80), 'bfloat16'); // 1
    const y16 = kernels.alloc(4, 'bfloat16');
    kernels.rmsNorm(x16, w16, { out: y16, dtype: 'bfloat16' });
    assert.equal(y16.array[0], 0x3ebb, '2 / sqrt(30) = 0.36515 rounds to bfloat16 0.365234375');
    for (const t of [empty, wt, xt, yt, x16, w16, y16]) t.free();
  });

  test(`${kernels.name}: a tensor call with a mistake is refused by name, and writes nothing`, () => {
    const dim = 8;
    const other = INSTANCES.find((k) => k !== kernels);
    const xt = tensorOf(kernels, normalArray(prng(3), 2 * dim, 1));
    const wt = tensorOf(kernels, new Float32Array(dim).fill(1));
    const rt = tensorOf(kernels, new Float32Array(2 * dim).fill(0.5));
    const yt = tensorOf(kernels, new Float32Array(2 * dim).fill(7));
    const freed = kernels.alloc(2 * dim);
    freed.free();
    const foreign = other.alloc(2 * dim);
    const short = kernels.alloc(dim);
    const odd = kernels.alloc(2 * dim + 1);
    const oddOut = kernels.alloc(2 * dim + 1);
    const bf16 = kernels.alloc(2 * dim, 'bfloat16');
    const mistakes = [
      ['out is the weight', () => kernels.rmsNorm(xt, wt, { out: wt }), RangeError, /^rmsNorm: options\.out/],
      ['eps < 0', () => kernels.rmsNorm(xt, wt, { out: yt, eps: -1 }), RangeError, /^rmsNorm: options\.eps/],
      ['eps NaN', () => kernels.rmsNorm(xt, wt, { out: yt, eps: NaN }), RangeError, /^rmsNorm: options\.eps/],
      ['eps Infinity', () => kernels.rmsNorm(xt, wt, { out: yt, eps: Infinity }), RangeError, /^rmsNorm: options\.eps/],
      ['eps a string', () => kernels.rmsNorm(xt, wt, { out: yt, eps: '1e-6' }), TypeError, /^rmsNorm: options\.eps/],
      ['dim not the weight\'s', () => kernels.rmsNorm(xt, wt, { out: yt, dim: 4 }), RangeError, /^rmsNorm: .*options\.dim/],
      ['dim fractional', () => kernels.rmsNorm(xt, wt, { out: yt, dim: 8.5 }), RangeError, /^rmsNorm: options\.dim/],
      ['out too short', () => kernels.rmsNorm(xt, wt, { out: short }), RangeError, /^rmsNorm: options\.out\.length/],
      ['a bfloat16 out for float32', () => kernels.rmsNorm(xt, wt, { out: bf16 }), TypeError, /^rmsNorm: options\.out/],
      ['an unknown option', () => kernels.rmsNorm(xt, wt, { out: yt, epsilon: 1 }), TypeError, /^rmsNorm: unknown option 'epsilon'/],
      ['x.length not a multiple of dim', () => kernels.rmsNorm(odd, wt, { out: oddOut }), RangeError, /^rmsNorm: weight\.length \(8\) does not divide x\.length \(17\)/],
      ['a freed out', () => kernels.rmsNorm(xt, wt, { out: freed }), TypeError, /^rmsNorm: options\.out is a freed tensor/],
      ['another instance\'s out', () => kernels.rmsNorm(xt, wt, { out: foreign }), TypeError, /^rmsNorm: options\.out is a tensor of another instance's memory/],
      ['out a view overlapping x by one value', () => kernels.rmsNorm(xt.array.subarray(0, dim), null, { dim, out: xt.array.subarray(1, dim + 1) }),
        RangeError, /^rmsNorm: options\.out must be x itself or not overlap x/],
      ['addRmsNorm: the residual is x', () => kernels.addRmsNorm(xt, xt, wt, { out: yt }), RangeError, /^addRmsNorm: .*residual/],
      ['addRmsNorm: out is the residual', () => kernels.addRmsNorm(xt, rt, wt, { out: rt }), RangeError, /^addRmsNorm: options\.out/],
    ];
    const snapshot = () => [xt, wt, rt, yt].map((t) => new Uint8Array(t.array.buffer, t.byteOffset, 4 * t.length).slice());
    for (const [what, call, type, message] of mistakes) {
      const before = snapshot();
      assert.throws(call, (e) => e instanceof type && message.test(e.message), `${kernels.name}: ${what}`);
      assert.deepEqual(snapshot(), before, `${kernels.name}: ${what}: a tensor was written`);
    }
    for (const t of [xt, wt, rt, yt, foreign, short, odd, oddOut, bf16]) t.free();
  });
}

test('a decode loop is checked once: each call\'s arrays and option values, in a fresh options object, resolve to its remembered call', async () => {
  // Internals: what the one path remembers is not observable from outside but in time.
  const { init, alloc } = await import('../src/index.js');
  const { activeKernels } = await import('../src/api/runtime.js');
  const { OPS } = await import('../src/ops/descriptions.js');
  const { resolve } = await import('../src/ops/resolve.js');
  await init();
  const memory = activeKernels('test');
  const [x, w, y, r] = [alloc(16), alloc(16), alloc(16), alloc(16)];
  const first = resolve(OPS.rmsNorm, 'rmsNorm', memory, x, w, { out: y, eps: 1e-5 });
  assert.equal(resolve(OPS.rmsNorm, 'rmsNorm', memory, x, w, { out: y, eps: 1e-5 }), first, 'fresh options of the same values');
  assert.equal(resolve(OPS.rmsNorm, 'rmsNorm', memory, x, w, { eps: 1e-5, out: y }), first, 'the same values in another key order');
  assert.notEqual(resolve(OPS.rmsNorm, 'rmsNorm', memory, x, w, { out: y, eps: 1e-6 }), first, 'another eps');
  const other = resolve(OPS.rmsNorm, 'rmsNorm', memory, x, w, { out: r, eps: 1e-6 });
  assert.notEqual(other, first, 'another out');
  assert.notEqual(resolve(OPS.rmsNorm, 'rmsNorm', memory, y, w, { out: r, eps: 1e-6 }), other, 'another x');
  assert.notEqual(resolve(OPS.rmsNorm, 'rmsNorm', memory, y, w, { out: r }), other, 'an option left out');
  // A layer stack: each call with its own weight, remembered each.
  const weights = [alloc(16), alloc(16), alloc(16)];
  const layers = weights.map((weight) => resolve(OPS.rmsNorm, 'rmsNorm', memory, x, weight, { out: y }));
  for (let token = 0; token < 2; token++) {
    weights.forEach((weight, l) => assert.equal(resolve(OPS.rmsNorm, 'rmsNorm', memory, x, weight, { out: y }), layers[l], `layer ${l}`));
  }
  const noWeight = resolve(OPS.rmsNorm, 'rmsNorm', memory, x, null, { out: y, dim: 16 });
  assert.equal(resolve(OPS.rmsNorm, 'rmsNorm', memory, x, null, { out: y, dim: 16 }), noWeight, 'no weight: x is the key');
  assert.notEqual(resolve(OPS.rmsNorm, 'rmsNorm', memory, r, null, { out: y, dim: 16 }), noWeight, 'no weight, another x');
  weights[1].free();
  assert.throws(() => resolve(OPS.rmsNorm, 'rmsNorm', memory, x, weights[1], { out: y }), /^TypeError: rmsNorm: weight is a freed tensor/,
    'a remembered call whose weight was freed');
  const fused = resolve(OPS.addRmsNorm, 'addRmsNorm', memory, x, r, w, { out: y });
  assert.equal(resolve(OPS.addRmsNorm, 'addRmsNorm', memory, x, r, w, { out: y }), fused, 'addRmsNorm, fresh options');
  assert.notEqual(resolve(OPS.addRmsNorm, 'addRmsNorm', memory, x, r, y, { out: w }), fused, 'addRmsNorm, another weight');
  for (const t of [x, w, y, r, weights[0], weights[2]]) t.free();
});
