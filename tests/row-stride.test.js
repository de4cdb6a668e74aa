// Row strides (options.rowStride): rows that start `rowStride` values apart,
// as in a fused QKV buffer or a strided tensor view. Every function gives
// the bits of the same rows packed (tests/helpers/bit-exact-suite.js runs
// those cases in every engine); here, what only a strided layout can get
// wrong: the values between rows are never written, whichever way the
// arrays travel (copied, staged in chunks, tensors, a bound memory); rows
// of two arrays interleaved in one buffer are legal, overlapping ones are
// refused with nothing written; and QK-norm over the q and k heads inside
// one fused QKV buffer leaves v untouched to the byte.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { bindMemory } from '../src/index.js';
import * as reference from '../src/reference/index.js';
import { assertSameBits } from './helpers/bits.js';
import { implementations } from './helpers/implementations.js';
import { normalArray, prng, uniformArray } from './helpers/random.js';

/** The rows of a strided array, packed. */
function packed(a, rows, dim, stride) {
  const p = new (a.constructor)(rows * dim);
  for (let r = 0; r < rows; r++) p.set(a.subarray(r * stride, r * stride + dim), r * dim);
  return p;
}

/** The values between rows (and after the last), which no call may write. */
function gaps(a, rows, dim, stride) {
  const g = [];
  for (let i = 0; i < a.length; i++) if (i % stride >= dim || i >= rows * stride) g.push(Object.is(a[i], -0) ? '-0' : a[i]);
  return g;
}

const impls = await implementations();

for (const impl of impls) {
  test(`${impl.name}: strided rows, in place and into out, leave every value between rows as it was`, () => {
    // 2000 rows of 64 at stride 96: three staging chunks for the copied calls.
    for (const [rows, dim, stride] of [[3, 5, 7], [16, 128, 256], [2000, 64, 96]]) {
      const rand = prng(rows + dim);
      const length = (rows - 1) * stride + dim;
      const x = normalArray(rand, length, 2);
      const w = uniformArray(rand, dim, 0.5, 1.5);
      const expected = reference.rmsNorm(packed(x, rows, dim, stride), w);
      const what = `${impl.name} rows=${rows} dim=${dim} stride=${stride}`;
      const inPlace = x.slice();
      impl.rmsNorm(inPlace, w, { rowStride: stride, out: inPlace });
      assertSameBits(packed(inPlace, rows, dim, stride), expected, `${what}: in place`);
      assert.deepEqual(gaps(inPlace, rows, dim, stride), gaps(x, rows, dim, stride), `${what}: in place, the gaps`);
      const out = new Float32Array(length).fill(7.5);
      impl.rmsNorm(x, w, { rowStride: stride, out });
      assertSameBits(packed(out, rows, dim, stride), expected, `${what}: into out`);
      assert.ok(gaps(out, rows, dim, stride).every((v) => v === 7.5), `${what}: out's gaps`);
      // A result the call makes: x's layout, zeros between the rows.
      const made = impl.rmsNorm(x, w, { rowStride: stride });
      assert.equal(made.length, length);
      assert.ok(gaps(made, rows, dim, stride).every((v) => v === 0), `${what}: a new result's gaps`);
      // A statistic stays one value a row.
      const rstd = new Float32Array(rows);
      impl.rmsNorm(x, w, { rowStride: stride, rstd, out });
      assertSameBits(rstd, (() => { const r = new Float32Array(rows); reference.rmsNorm(packed(x, rows, dim, stride), w, { rstd: r }); return r; })(), `${what}: rstd`);
    }
  });

  test(`${impl.name}: rows of out interleaved with rows of x in one buffer are legal; rows that share a value are refused, nothing written`, () => {
    const dim = 4;
    const stride = 8;
    const rows = 3;
    const buffer = new Float32Array(stride * rows + dim).map((_, i) => i + 1);
    const x = buffer.subarray(0, (rows - 1) * stride + dim);
    const w = new Float32Array([1, 2, 3, 4]);
    const expected = reference.rmsNorm(packed(x, rows, dim, stride), w);
    const interleaved = buffer.subarray(dim, dim + (rows - 1) * stride + dim);
    const before = buffer.slice();
    impl.rmsNorm(x, w, { rowStride: stride, out: interleaved });
    assertSameBits(packed(interleaved, rows, dim, stride), expected, `${impl.name}: interleaved out`);
    assertSameBits(packed(x, rows, dim, stride), packed(before.subarray(0, x.length), rows, dim, stride), `${impl.name}: x kept`);
    for (const shift of [1, 2, 3, 5, 6, 7, 8]) {
      const snapshot = buffer.slice();
      const out = buffer.subarray(shift, shift + x.length);
      assert.throws(() => impl.rmsNorm(x, w, { rowStride: stride, out }), { name: 'RangeError', message: /^rmsNorm: options\.out must be x itself or not overlap x$/ },
        `${impl.name}: out ${shift} values after x`);
      assert.deepEqual(buffer, snapshot, `${impl.name}: a refused call wrote`);
    }
    // An array of one value a row or of dim values inside a gap is apart; across a row it overlaps.
    const rstdInGap = buffer.subarray(dim, dim + rows);
    impl.rmsNorm(x, w, { rowStride: stride, out: interleaved.slice(), rstd: rstdInGap });
    assert.throws(() => impl.rmsNorm(x, w, { rowStride: stride, out: interleaved.slice(), rstd: buffer.subarray(dim + 2, dim + 2 + rows) }),
      { name: 'RangeError', message: /^rmsNorm: options\.rstd must not overlap x$/ });
    assert.throws(() => impl.addRmsNorm(x, buffer.subarray(dim + 1, dim + 1 + x.length), w, { rowStride: stride, out: interleaved.slice() }),
      { name: 'RangeError', message: /^addRmsNorm: .*residual/ });
  });

  test(`${impl.name}: QK-norm over the q and k heads inside one fused QKV buffer leaves v untouched to the byte`, () => {
    // Qwen3-style attention: 16 q heads, 8 k and 8 v heads of 128, three tokens;
    // each token's row of the fused projection is [q | k | v].
    const [heads, kvHeads, headDim, tokens] = [16, 8, 128, 3];
    const width = (heads + 2 * kvHeads) * headDim;
    const rand = prng(2026);
    const qkv = normalArray(rand, tokens * width, 3);
    const qNorm = uniformArray(rand, headDim, 0.5, 1.5);
    const kNorm = uniformArray(rand, headDim, 0.5, 1.5);
    const original = qkv.slice();
    // One call per head index: that head of every token, `width` apart.
    for (const [first, count, weight] of [[0, heads, qNorm], [heads, kvHeads, kNorm]]) {
      for (let h = first; h < first + count; h++) {
        const view = qkv.subarray(h * headDim, h * headDim + (tokens - 1) * width + headDim);
        impl.rmsNorm(view, weight, { eps: 1e-6, rowStride: width, out: view });
      }
    }
    const bytes = (a) => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
    for (let t = 0; t < tokens; t++) {
      const row = (a) => a.subarray(t * width, (t + 1) * width);
      const q = row(original).subarray(0, heads * headDim);
      const k = row(original).subarray(heads * headDim, (heads + kvHeads) * headDim);
      assertSameBits(row(qkv).subarray(0, heads * headDim), reference.rmsNorm(q, qNorm, { eps: 1e-6 }), `${impl.name}: token ${t}'s q heads`);
      assertSameBits(row(qkv).subarray(heads * headDim, (heads + kvHeads) * headDim), reference.rmsNorm(k, kNorm, { eps: 1e-6 }), `${impl.name}: token ${t}'s k heads`);
      assert.deepEqual(bytes(row(qkv).subarray((heads + kvHeads) * headDim)), bytes(row(original).subarray((heads + kvHeads) * headDim)), `${impl.name}: token ${t}'s v`);
    }
  });
}

for (const impl of impls.filter((i) => i.alloc !== undefined)) {
  test(`${impl.name}: strided tensors and a strided call mixing tensors with copied arrays`, () => {
    const [rows, dim, stride] = [40, 96, 160];
    const length = (rows - 1) * stride + dim;
    const rand = prng(77);
    const x = normalArray(rand, length, 1);
    const w = uniformArray(rand, dim, 0.5, 1.5);
    const expected = reference.rmsNorm(packed(x, rows, dim, stride), w);
    const t = impl.alloc(length);
    t.array.set(x);
    impl.rmsNorm(t, w, { rowStride: stride, out: t });
    assertSameBits(packed(t.array, rows, dim, stride), expected, `${impl.name}: a tensor in place`);
    assert.deepEqual(gaps(t.array, rows, dim, stride), gaps(x, rows, dim, stride), `${impl.name}: the tensor's gaps`);
    // x a tensor, out a copied array (and the other way round): one stride for both.
    t.array.set(x);
    const out = new Float32Array(length).fill(-1);
    impl.rmsNorm(t, w, { rowStride: stride, out });
    assertSameBits(packed(out, rows, dim, stride), expected, `${impl.name}: tensor x, copied out`);
    assert.ok(gaps(out, rows, dim, stride).every((v) => v === -1), `${impl.name}: the copied out's gaps`);
    const to = impl.alloc(length);
    to.array.fill(-2);
    impl.rmsNorm(x, w, { rowStride: stride, out: to });
    assertSameBits(packed(to.array, rows, dim, stride), expected, `${impl.name}: copied x, tensor out`);
    assert.ok(gaps(to.array, rows, dim, stride).every((v) => v === -2), `${impl.name}: the tensor out's gaps`);
    t.free();
    to.free();
  });
}

test('bindMemory: strided views of an engine\'s memory, zero-copy, gaps untouched', async () => {
  const memory = new WebAssembly.Memory({ initial: 8 });
  const bound = await bindMemory(memory, { scratch: { byteOffset: 65536, byteLength: 65536 } });
  const [rows, dim, stride] = [16, 128, 384];
  const length = (rows - 1) * stride + dim;
  const x = new Float32Array(memory.buffer, 2 * 65536, length);
  x.set(normalArray(prng(5), length, 2));
  const original = x.slice();
  const w = new Float32Array(memory.buffer, 4 * 65536, dim);
  w.set(uniformArray(prng(6), dim, 0.5, 1.5));
  bound.rmsNorm(x, w, { rowStride: stride, out: x });
  assertSameBits(packed(x, rows, dim, stride), reference.rmsNorm(packed(original, rows, dim, stride), w), 'bound, in place');
  assert.deepEqual(gaps(x, rows, dim, stride), gaps(original, rows, dim, stride), 'bound: the gaps');
});

test('a stride beyond what wasm32 can address is refused or unused, never wrapped', async () => {
  for (const impl of impls) {
    // One row: the stride is never used, whatever it is.
    const x = normalArray(prng(8), 8, 1);
    const w = uniformArray(prng(9), 8, 0.5, 1.5);
    assertSameBits(impl.rmsNorm(x, w, { rowStride: 2 ** 40 }), reference.rmsNorm(x, w), `${impl.name}: one row, stride 2^40`);
    assertSameBits(impl.rmsNorm(x, w, { rowStride: 2 ** 32 + 3 }), reference.rmsNorm(x, w), `${impl.name}: one row, stride 2^32 + 3`);
    // Two rows need x to span the stride: a length no array has is refused before anything else.
    assert.throws(() => impl.rmsNorm(x, w, { rowStride: 2 ** 53 }), { name: 'RangeError', message: /^rmsNorm: options\.rowStride must be an integer >= dim/ });
    assert.throws(() => impl.rmsNorm(new Float32Array(26), w, { rowStride: 12 }), { name: 'RangeError', message: /^rmsNorm: x\.length \(26\) ends inside a row/ }, `${impl.name}: the third row cut short`);
  }
});
