// rmsNorm's and addRmsNorm's shortcut for the zero-copy call
// (isPlainTensorCall in src/api/args.js): tensors, no shape, no rstd. It
// must give the general path's bits, and leave every call it does not
// fully recognize, mistakes included, to the general path and its errors.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { addRmsNorm, alloc, init, rmsNorm } from '../src/index.js';
import { makeTensor } from '../src/loader/tensor.js';
import { activeKernels } from '../src/api/runtime.js';
import { isPlainTensorCall, readRmsNormOptions } from '../src/api/args.js';
import { assertSameBits } from './helpers/bits.js';
import { normalArray, prng, uniformArray } from './helpers/random.js';

function tensorOf(values) {
  const t = alloc(values.length);
  t.array.set(values);
  return t;
}

const isPlain = (x, w, options, residual) =>
  isPlainTensorCall(activeKernels('test'), x, residual, w, readRmsNormOptions('test', options));

for (const backend of ['simd', 'scalar']) {
  test(`${backend}: the plain tensor call gives the general path's bits, in place too`, async () => {
    await init({ backend });
    const rand = prng(21);
    for (const dim of [1, 3, 16, 17, 896, 4097]) {
      for (const rows of [1, 3]) {
        const x = normalArray(rand, rows * dim, 3);
        const xt = tensorOf(x);
        const wt = tensorOf(uniformArray(rand, dim, 0.5, 1.5));
        const yt = alloc(rows * dim);
        for (const options of [{}, { eps: 0 }, { eps: 1e-5, dim }, { eps: -0 }]) {
          const plain = { ...options, out: yt };
          assert.ok(isPlain(xt, wt, plain), `dim=${dim} rows=${rows} ${JSON.stringify(options)}: plain`);
          // shape given: the same call on the general path
          const general = { ...options, shape: [rows, dim] };
          delete general.dim;
          assert.ok(!isPlain(xt, wt, { ...general, out: yt }));
          assert.equal(rmsNorm(xt, wt, plain), yt);
          const expected = rmsNorm(Float32Array.from(x), Float32Array.from(wt.array), general);
          assertSameBits(yt.array, expected, `dim=${dim} rows=${rows} ${JSON.stringify(options)}`);
          assert.equal(rmsNorm(xt, wt, { ...options, out: xt }), xt);
          assertSameBits(xt.array, expected, `in place, dim=${dim} rows=${rows}`);
          xt.array.set(x);
        }
        for (const t of [xt, wt, yt]) t.free();
      }
    }
  });
}

for (const backend of ['simd', 'scalar']) {
  test(`${backend}: 16-bit tensors, any weight dtype, cast modes, offsets and the fused add: the general path's bits`, async () => {
    await init({ backend });
    const rand = prng(23);
    const { narrow } = await import('../src/reference/float16.js');
    const tensor16 = (values, dtype) => {
      const t = alloc(values.length, dtype);
      if (dtype === 'float32') t.array.set(values);
      else t.array.set(Uint16Array.from(values, (v) => narrow(v, dtype)));
      return t;
    };
    for (const dim of [5, 64, 1000]) {
      const rows = 2;
      const xs = normalArray(rand, rows * dim, 2);
      const rs = normalArray(rand, rows * dim, 1);
      const ws = uniformArray(rand, dim, 0.5, 1.5);
      for (const dtype of ['float32', 'bfloat16', 'float16']) {
        for (const weightDtype of ['float32', 'bfloat16', 'float16']) {
          for (const options of [{ castMode: 'gemma', weightOffset: 1 }, { castMode: 'llama', eps: 1e-5 }, { weightOffset: -0.25 }]) {
            const what = `dim=${dim} dtype=${dtype} weightDtype=${weightDtype} ${JSON.stringify(options)} seed=23`;
            const xt = tensor16(xs, dtype);
            const wt = tensor16(ws, weightDtype);
            const yt = alloc(xs.length, dtype);
            const opts = { ...options, dtype, out: yt };
            assert.ok(isPlain(xt, wt, opts), `${what}: plain`);
            // shape given: the same call, on the general path
            const general = { ...options, dtype, shape: [rows, dim] };
            assert.ok(!isPlain(xt, wt, { ...general, out: yt }));
            rmsNorm(xt, wt, opts);
            const bits = (a) => new Uint8Array(a.buffer, a.byteOffset, a.byteLength).slice();
            assert.deepEqual(bits(yt.array), bits(rmsNorm(xt, wt, general)), what);
            // the fused add
            const rt = tensor16(rs, dtype);
            const rCopy = tensor16(rs, dtype);
            assert.ok(isPlain(xt, wt, opts, rt), `${what}: plain addRmsNorm`);
            addRmsNorm(xt, rt, wt, opts);
            const expected = addRmsNorm(xt, rCopy, wt, general);
            assert.deepEqual(bits(yt.array), bits(expected), `${what}: addRmsNorm`);
            assert.deepEqual(bits(rt.array), bits(rCopy.array), `${what}: addRmsNorm's residual`);
            assert.ok(!isPlain(xt, wt, opts, xt), 'the residual may not be x');
            assert.ok(!isPlain(xt, wt, { ...opts, out: rt }, rt), 'nor out');
            for (const t of [xt, wt, yt, rt, rCopy]) t.free();
          }
        }
      }
    }
  });
}

test('calls it does not fully recognize take the general path, which throws for mistakes', async () => {
  await init({ backend: 'simd' });
  const dim = 8;
  const xt = tensorOf(normalArray(prng(3), 2 * dim, 1));
  const wt = tensorOf(new Float32Array(dim).fill(1));
  const yt = alloc(2 * dim);
  const before = yt.array.slice();
  const mistakes = [
    [{ out: wt }, RangeError, /options\.out/],
    [{ out: yt, eps: -1 }, RangeError, /options\.eps/],
    [{ out: yt, eps: NaN }, RangeError, /options\.eps/],
    [{ out: yt, eps: Infinity }, RangeError, /options\.eps/],
    [{ out: yt, eps: '1e-6' }, TypeError, /options\.eps/],
    [{ out: yt, dim: 4 }, RangeError, /options\.dim/],
    [{ out: yt, dim: 8.5 }, RangeError, /options\.dim/],
    [{ out: alloc(dim) }, RangeError, /options\.out\.length/],
    [{ out: alloc(2 * dim, 'bfloat16') }, TypeError, /options\.out/],
  ];
  for (const [options, type, message] of mistakes) {
    assert.ok(!isPlain(xt, wt, options), `${JSON.stringify(Object.keys(options))}: not plain`);
    assert.throws(() => rmsNorm(xt, wt, options), (e) => e instanceof type && message.test(e.message));
  }
  // an unknown option is refused while the options are read, before either path
  assert.throws(() => rmsNorm(xt, wt, { out: yt, epsilon: 1 }), { name: 'TypeError', message: /unknown option 'epsilon'/ });
  // x.length not a multiple of weight.length
  const odd = alloc(2 * dim + 1);
  assert.ok(!isPlain(odd, wt, { out: alloc(2 * dim + 1) }));
  assert.throws(() => rmsNorm(odd, wt, { out: alloc(2 * dim + 1) }), RangeError);
  // a freed tensor, and a tensor of the other backend's memory
  const freed = alloc(2 * dim);
  freed.free();
  assert.ok(!isPlain(xt, wt, { out: freed }));
  assert.throws(() => rmsNorm(xt, wt, { out: freed }), { name: 'TypeError', message: /freed/ });
  await init({ backend: 'scalar' });
  const foreign = alloc(2 * dim);
  await init({ backend: 'simd' });
  assert.ok(!isPlain(xt, wt, { out: foreign }));
  assert.throws(() => rmsNorm(xt, wt, { out: foreign }), { name: 'TypeError', message: /another instance/ });
  // tensors whose bytes overlap (made by hand: alloc never gives such)
  const kernels = activeKernels('test');
  const overlapping = makeTensor(kernels, xt.byteOffset + 4, 2 * dim, 'float32');
  assert.ok(!isPlain(xt, wt, { out: overlapping }));
  assert.throws(() => rmsNorm(xt, wt, { out: overlapping }), { name: 'RangeError', message: /overlap/ });
  assertSameBits(yt.array, before, 'nothing written by rejected calls');
});

test('zero rows and a null weight take the general path and still work; 16-bit tensors the plain one', async () => {
  await init({ backend: 'simd' });
  const empty = alloc(0);
  const wt = tensorOf(new Float32Array(4).fill(1));
  assert.ok(!isPlain(empty, wt, { out: alloc(0) }));
  assert.equal(rmsNorm(empty, wt, { out: empty }).length, 0);
  const xt = tensorOf(new Float32Array([2, -4, 6, -8]));
  const yt = alloc(4);
  assert.ok(!isPlain(xt, null, { out: yt, dim: 4 }));
  rmsNorm(xt, null, { out: yt, dim: 4 });
  assert.ok(Math.abs(yt.array[0] - 2 / Math.sqrt(30)) < 1e-6);
  const x16 = alloc(4, 'bfloat16');
  x16.array.set([0x4000, 0xc080, 0x40c0, 0xc100]); // 2, -4, 6, -8
  const w16 = alloc(4, 'bfloat16');
  w16.array.fill(0x3f80); // 1
  const y16 = alloc(4, 'bfloat16');
  const options = { out: y16, dtype: 'bfloat16' };
  assert.ok(isPlain(x16, w16, options));
  rmsNorm(x16, w16, options);
  assert.equal(y16.array[0], 0x3ebb); // 2 / sqrt(30) = 0.36515 rounds to 0.365234375
});
