// Every strided layout the docs allow (docs/api.md, options.rowStride): x
// holds `rows` rows `rowStride` apart, and its length lies anywhere in
// [(rows - 1) * rowStride + dim, rows * rowStride]; one row may carry a
// tail of up to rowStride - dim values after its dim. Every function, in
// every form (a call, into out, in place, prepared, a result the call
// makes), on every implementation, gives the bits of the same rows packed
// and never touches a gap or the tail. The WebGPU forms are held to the
// same layouts in tests/webgpu.test.js (tests/helpers/webgpu-cases.js).
// Also: staging holds rows, not the gaps between them (a wide stride does
// not grow wasm memory).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createKernels } from '../src/index.js';
import * as reference from '../src/reference/index.js';
import { assertSameBits } from './helpers/bits.js';
import { implementations } from './helpers/implementations.js';
import { normalArray, prng, uniformArray } from './helpers/random.js';
import { STRIDED_LAYOUTS, packedRows, untouched } from './helpers/strided-layouts.js';

const impls = await implementations();
const SENTINEL = -7.25;

/** The arguments of fn on x (strided), with the other per-row inputs laid out like x. */
function argumentsOf(fn, rand, length, dim) {
  const x = normalArray(rand, length, 2);
  const other = normalArray(rand, length, 1);
  const w = uniformArray(rand, dim, 0.5, 1.5);
  const b = uniformArray(rand, dim, -0.5, 0.5);
  switch (fn) {
    case 'rmsNorm': return { x, args: [x, w], out: 'out' };
    case 'addRmsNorm': return { x, args: [x, other, w], out: 'out', residual: other };
    case 'layerNorm': return { x, args: [x, w, b], out: 'out' };
    case 'rmsNormBackward': return { x: other, args: [other, x, w], out: 'dx' };
    default: return { x: other, args: [other, x, w, b], out: 'dx' };
  }
}
const FUNCTIONS = ['rmsNorm', 'addRmsNorm', 'layerNorm', 'rmsNormBackward', 'layerNormBackward'];

/** What fn returns as one array to compare: its out (or dx), and the residual it updated. */
const resultOf = (value) => (value instanceof Float32Array ? value : value.dx);

for (const impl of impls) {
  test(`${impl.name}: every strided layout the docs allow, one row with a tail among them, in every form, gives the packed rows' bits`, () => {
    let cases = 0;
    for (const { rows, dim, stride, length } of STRIDED_LAYOUTS) {
      for (const fn of FUNCTIONS) {
        const rand = prng(rows * 1000 + dim * 10 + length);
        const { x, args, out, residual } = argumentsOf(fn, rand, length, dim);
        const what = `${impl.name} ${fn} rows=${rows} dim=${dim} rowStride=${stride} x.length=${length}`;
        const packedArgs = args.map((a) => (a.length === length ? packedRows(a, rows, dim, stride) : a));
        const expected = reference[fn](...packedArgs.map((a) => a.slice()), { dim });
        const expectedResidual = residual === undefined ? null : packedRows(residual, rows, dim, stride);
        if (residual !== undefined) reference.addRmsNorm(packedRows(x, rows, dim, stride), expectedResidual, args[2], { dim });
        const forms = {
          made: (a) => impl[fn](...a, { dim, rowStride: stride }),
          out: (a) => impl[fn](...a, { dim, rowStride: stride, [out]: new Float32Array(length).fill(SENTINEL) }),
          inPlace: (a) => impl[fn](...a, { dim, rowStride: stride, [out]: a[0] }),
          prepared: (a) => impl[fn].prepare(...a, { dim, rowStride: stride, [out]: new Float32Array(length).fill(SENTINEL) }).run(),
        };
        for (const [form, call] of Object.entries(forms)) {
          const given = args.map((a) => a.slice());
          const before = given.map((a) => a.slice());
          const result = resultOf(call(given));
          assert.equal(result.length, length, `${what} ${form}: the result has x's length`);
          assertSameBits(packedRows(result, rows, dim, stride), resultOf(expected), `${what} ${form}`);
          const gapsHold = form === 'made' ? untouched(result, new Float32Array(length), rows, dim, stride)
            : form === 'inPlace' ? untouched(result, before[0], rows, dim, stride)
              : untouched(result, new Float32Array(length).fill(SENTINEL), rows, dim, stride);
          assert.ok(gapsHold, `${what} ${form}: a value between rows or in the tail was written`);
          if (residual !== undefined) {
            assertSameBits(packedRows(given[1], rows, dim, stride), expectedResidual, `${what} ${form}: the residual`);
            assert.ok(untouched(given[1], before[1], rows, dim, stride), `${what} ${form}: the residual's gaps`);
          }
          cases++;
        }
      }
    }
    assert.ok(cases >= 200, `${cases} cases`);
  });
}

for (const impl of impls.filter((i) => i.alloc !== undefined)) {
  test(`${impl.name}: one strided row with a tail on tensors and on a tensor's view, called and prepared`, () => {
    const [dim, stride] = [40, 64];
    const x = normalArray(prng(3), stride, 2); // one row of 40 and a tail of 24
    const w = uniformArray(prng(4), dim, 0.5, 1.5);
    const expected = reference.rmsNorm(x.subarray(0, dim), w);
    const t = impl.alloc(stride);
    const out = impl.alloc(stride);
    t.array.set(x);
    out.array.fill(SENTINEL);
    impl.rmsNorm(t, w, { rowStride: stride, out });
    assertSameBits(out.array.subarray(0, dim), expected, `${impl.name}: tensors`);
    assert.ok(out.array.subarray(dim).every((v) => v === SENTINEL), `${impl.name}: the tensor out's tail`);
    const view = t.array.subarray(0, 50);
    const prepared = impl.rmsNorm.prepare(view, w, { rowStride: stride, out: view });
    prepared.run();
    assertSameBits(view.subarray(0, dim), expected, `${impl.name}: a view, prepared, in place`);
    assertSameBits(view.subarray(dim), x.subarray(dim, 50), `${impl.name}: the view's tail`);
    t.free();
    out.free();
  });
}

test('staging holds rows, not the gaps between them: rows 2^26 values apart leave wasm memory as it was', async () => {
  for (const backend of ['simd', 'scalar']) {
    const kernels = await createKernels({ backend });
    const probe = kernels.alloc(1);
    const before = probe.array.buffer.byteLength;
    const [dim, stride] = [64, 2 ** 26];
    const x = new Float32Array(stride + dim);
    x.set(normalArray(prng(5), dim, 1), 0);
    x.set(normalArray(prng(6), dim, 3), stride);
    const w = uniformArray(prng(7), dim, 0.5, 1.5);
    const expected = reference.rmsNorm(packedRows(x, 2, dim, stride), w);
    const out = new Float32Array(x.length).fill(SENTINEL);
    kernels.rmsNorm(x, w, { rowStride: stride, out });
    assertSameBits(packedRows(out, 2, dim, stride), expected, `${backend}: copied`);
    // A tensor x and a copied out: the out is staged, a row at a time.
    const t = kernels.alloc(2 * dim);
    t.array.set(packedRows(x, 2, dim, stride));
    kernels.rmsNorm(t, w, { rowStride: dim, out: new Float32Array(2 * dim) });
    kernels.addRmsNorm(x, x.slice(), w, { rowStride: stride });
    assert.ok(probe.array.buffer.byteLength <= before + 2 ** 20, `${backend}: memory grew from ${before} to ${probe.array.buffer.byteLength} bytes`);
    t.free();
  }
});

test('a bound memory stages one row of a wide stride in a scratch a row fits in', async () => {
  const [dim, stride] = [256, 2 ** 20];
  const memory = new WebAssembly.Memory({ initial: 2 + Math.ceil((4 * (stride + 2 * dim)) / 65536) });
  const { bindMemory } = await import('../src/index.js');
  const bound = await bindMemory(memory, { scratch: { byteOffset: 65536, byteLength: 8192 } });
  // x's two rows in the memory, 2^20 values apart; the result staged a row at a time.
  const x = new Float32Array(memory.buffer, 2 * 65536, stride + dim);
  const rows = [normalArray(prng(8), dim, 1), normalArray(prng(9), dim, 2)];
  x.set(rows[0], 0);
  x.set(rows[1], stride);
  const w = new Float32Array(memory.buffer, 2 * 65536 + 4 * (stride + dim), dim);
  w.set(uniformArray(prng(10), dim, 0.5, 1.5));
  const out = bound.rmsNorm(x, w, { rowStride: stride }); // a result the call makes: staged, then copied out
  assertSameBits(out.subarray(0, dim), reference.rmsNorm(rows[0], w), 'row 0');
  assertSameBits(out.subarray(stride, stride + dim), reference.rmsNorm(rows[1], w), 'row 1');
  assert.ok(out.subarray(dim, stride).every((v) => v === 0), 'the gap');
});
