// Heads (options.heads, options.headStride): one call for every head of a
// token, as QK-norm at prefill needs (Qwen3: 16 q heads and 8 k heads of
// 128 in each token's row of a fused QKV buffer). Row (t, h) starts at
// t·rowStride + h·headStride; the rows are taken in that order (a
// statistic's index is t·heads + h). One call must give the bits of the
// calls it replaces, one per head with the token row as its stride, on
// every implementation and however the arrays travel (copied in place or
// into out, staged in chunks, tensors, a bound memory, prepared, 16-bit);
// the values outside the rows are never written; the overlap rule holds on
// the new layout, against a model that compares bytes; wrong options are
// refused with nothing written.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { bindMemory } from '../src/index.js';
import * as reference from '../src/reference/index.js';
import { normal16, uniform16 } from './helpers/float16-data.js';
import { assertAllAgree, implementations } from './helpers/implementations.js';
import { normalArray, prng, uniformArray } from './helpers/random.js';

const impls = await implementations();
const [Q_HEADS, KV_HEADS, HEAD_DIM] = [16, 8, 128];
const WIDTH = (Q_HEADS + 2 * KV_HEADS) * HEAD_DIM; // a token's row of the fused projection: [q | k | v]
const bytes = (a) => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);

/** The 24 per-head calls QK-norm took before heads: head h of every token, rowStride apart. */
function perHead(impl, qkv, tokens, qNorm, kNorm, options = {}) {
  const rstds = [];
  for (let h = 0; h < Q_HEADS + KV_HEADS; h++) {
    const x = qkv.subarray(h * HEAD_DIM, h * HEAD_DIM + (tokens - 1) * WIDTH + HEAD_DIM);
    const rstd = new Float32Array(tokens);
    impl.rmsNorm(x, h < Q_HEADS ? qNorm : kNorm, { ...options, dim: HEAD_DIM, rowStride: WIDTH, out: x, rstd });
    rstds.push(rstd);
  }
  return rstds;
}

/** The same with one call for q and one for k; their rstd, tokens × heads values each. */
function oneCallEach(impl, q, k, qNorm, kNorm, options = {}) {
  const qRstd = new Float32Array((q.length + WIDTH - HEAD_DIM * Q_HEADS) / WIDTH * Q_HEADS);
  const kRstd = new Float32Array(Math.ceil(k.length / WIDTH) * KV_HEADS);
  impl.rmsNorm(q, qNorm, { ...options, rowStride: WIDTH, heads: Q_HEADS, headStride: HEAD_DIM, out: q, rstd: qRstd });
  impl.rmsNorm(k, kNorm, { ...options, rowStride: WIDTH, heads: KV_HEADS, headStride: HEAD_DIM, out: k, rstd: kRstd });
  return [qRstd, kRstd];
}

/** Per-head rstds (head-major) in a heads call's order, t·heads + h. */
function interleaved(rstds, first, count, tokens) {
  const r = new Float32Array(tokens * count);
  for (let t = 0; t < tokens; t++) for (let h = 0; h < count; h++) r[t * count + h] = rstds[first + h][t];
  return r;
}

for (const tokens of [7, 1, 40]) {
  test(`Qwen3 QK-norm, ${tokens} token(s): one call for q and one for k give the bits of the 24 per-head calls, v untouched`, () => {
    const rand = prng(tokens);
    const qkv = normalArray(rand, tokens * WIDTH, 3);
    const qNorm = uniformArray(rand, HEAD_DIM, 0.5, 1.5);
    const kNorm = uniformArray(rand, HEAD_DIM, 0.5, 1.5);
    // What the per-head calls give, from the reference: the bits every implementation must have.
    const want = qkv.slice();
    const wantRstd = perHead(reference, want, tokens, qNorm, kNorm);
    // And independently of any strided code: each head's rows packed, normalized.
    for (let t = 0; t < tokens; t++) {
      const row = want.subarray(t * WIDTH, (t + 1) * WIDTH);
      const orig = qkv.subarray(t * WIDTH, (t + 1) * WIDTH);
      assert.deepEqual(bytes(row.subarray(0, Q_HEADS * HEAD_DIM)), bytes(reference.rmsNorm(orig.subarray(0, Q_HEADS * HEAD_DIM), qNorm)), `token ${t}: q, packed`);
    }
    const results = {};
    for (const impl of impls) {
      const one = qkv.slice();
      const [qRstd, kRstd] = oneCallEach(impl, one.subarray(0, (tokens - 1) * WIDTH + Q_HEADS * HEAD_DIM), one.subarray(Q_HEADS * HEAD_DIM), qNorm, kNorm);
      const heads = qkv.slice();
      perHead(impl, heads, tokens, qNorm, kNorm);
      results[impl.name] = [one, heads, qRstd, kRstd];
      assert.deepEqual(bytes(one), bytes(want), `${impl.name}: one call each = the per-head calls, v and every byte outside the heads included`);
      assert.deepEqual(bytes(qRstd), bytes(interleaved(wantRstd, 0, Q_HEADS, tokens)), `${impl.name}: q's rstd, t·heads + h`);
      assert.deepEqual(bytes(kRstd), bytes(interleaved(wantRstd, Q_HEADS, KV_HEADS, tokens)), `${impl.name}: k's rstd`);
    }
    assertAllAgree(results, `tokens=${tokens}`);
  });
}

test('heads on tensors, into another out, fused with a residual, in bfloat16, on a bound memory and prepared: the per-head bits', async () => {
  const tokens = 5;
  const rand = prng(99);
  for (const impl of impls) {
    // Tensors: the whole fused buffer in place (q), then a view of it (k).
    const qNorm = uniformArray(rand, HEAD_DIM, 0.5, 1.5);
    const kNorm = uniformArray(rand, HEAD_DIM, 0.5, 1.5);
    const values = normalArray(rand, tokens * WIDTH, 2);
    const want = values.slice();
    perHead(reference, want, tokens, qNorm, kNorm);
    if (impl.alloc !== undefined) {
      const t = impl.alloc(tokens * WIDTH);
      t.array.set(values);
      impl.rmsNorm(t, qNorm, { rowStride: WIDTH, heads: Q_HEADS, out: t });
      const k = t.array.subarray(Q_HEADS * HEAD_DIM);
      impl.rmsNorm(k, kNorm, { rowStride: WIDTH, heads: KV_HEADS, headStride: HEAD_DIM, out: k });
      assert.deepEqual(bytes(t.array), bytes(want), `${impl.name}: tensors`);
      t.free();
    }
    // Into another out: only the rows are written.
    const out = new Float32Array(tokens * WIDTH).fill(-7);
    impl.rmsNorm(values, qNorm, { rowStride: WIDTH, heads: Q_HEADS, out });
    for (let t = 0; t < tokens; t++) {
      assert.deepEqual(bytes(out.subarray(t * WIDTH, t * WIDTH + Q_HEADS * HEAD_DIM)), bytes(want.subarray(t * WIDTH, t * WIDTH + Q_HEADS * HEAD_DIM)), `${impl.name}: out, token ${t}`);
      assert.ok(out.subarray(t * WIDTH + Q_HEADS * HEAD_DIM, (t + 1) * WIDTH).every((v) => v === -7), `${impl.name}: out between the rows`);
    }
    // Heads with gaps between them (headStride > dim), fused with a residual.
    const [heads, dim, headStride, rowStride] = [3, 8, 11, 40];
    const length = (tokens - 1) * rowStride + (heads - 1) * headStride + dim;
    const x = normalArray(rand, length, 1);
    const residual = normalArray(rand, length, 1);
    const w = uniformArray(rand, dim, 0.5, 1.5);
    const perHeadRes = residual.slice();
    const perHeadOut = new Float32Array(length);
    for (let h = 0; h < heads; h++) {
      const view = (a) => a.subarray(h * headStride, h * headStride + (tokens - 1) * rowStride + dim);
      reference.addRmsNorm(view(x), view(perHeadRes), w, { rowStride, out: view(perHeadOut) });
    }
    const res = residual.slice();
    const fused = impl.addRmsNorm(x, res, w, { rowStride, heads, headStride });
    assert.deepEqual(bytes(fused), bytes(perHeadOut), `${impl.name}: addRmsNorm's out (zeros outside the rows)`);
    assert.deepEqual(bytes(res), bytes(perHeadRes), `${impl.name}: addRmsNorm's residual`);
    // bfloat16 storage and weight.
    const x16 = normal16(rand, tokens * WIDTH, 'bfloat16', 2);
    const w16 = uniform16(rand, HEAD_DIM, 'bfloat16', 0.5, 1.5);
    const want16 = x16.slice();
    for (let h = 0; h < Q_HEADS; h++) {
      const view = want16.subarray(h * HEAD_DIM, h * HEAD_DIM + (tokens - 1) * WIDTH + HEAD_DIM);
      reference.rmsNorm(view, w16, { dtype: 'bfloat16', rowStride: WIDTH, out: view });
    }
    const got16 = x16.slice();
    impl.rmsNorm(got16, w16, { dtype: 'bfloat16', rowStride: WIDTH, heads: Q_HEADS, out: got16 });
    assert.deepEqual(bytes(got16), bytes(want16), `${impl.name}: bfloat16`);
    // Prepared: run twice on new contents.
    const px = normalArray(rand, tokens * WIDTH, 1);
    const prepared = impl.rmsNorm.prepare(px, qNorm, { rowStride: WIDTH, heads: Q_HEADS, out: px });
    for (let run = 0; run < 2; run++) {
      px.set(normalArray(rand, tokens * WIDTH, 1));
      const wantP = px.slice();
      for (let h = 0; h < Q_HEADS; h++) {
        const view = wantP.subarray(h * HEAD_DIM, h * HEAD_DIM + (tokens - 1) * WIDTH + HEAD_DIM);
        reference.rmsNorm(view, qNorm, { rowStride: WIDTH, out: view });
      }
      prepared.run();
      assert.deepEqual(bytes(px), bytes(wantP), `${impl.name}: prepared, run ${run}`);
    }
  }
  // A bound memory: zero-copy views in place; and a result the call makes, staged in a lent region so small it holds one token.
  const memory = new WebAssembly.Memory({ initial: 16 });
  for (const [label, scratch, inPlace] of [['zero-copy, in place', 65536, true], ['a made result, staged a token at a time', 4096 + 4 * WIDTH + 16, false]]) {
    const bound = await bindMemory(memory, { scratch: { byteOffset: 65536, byteLength: scratch } });
    const values = normalArray(rand, tokens * WIDTH, 2);
    const w = uniformArray(rand, HEAD_DIM, 0.5, 1.5);
    const want = inPlace ? values.slice() : new Float32Array(values.length);
    const wantRstd = new Float32Array(tokens * Q_HEADS);
    for (let h = 0; h < Q_HEADS; h++) {
      const span = (a) => a.subarray(h * HEAD_DIM, h * HEAD_DIM + (tokens - 1) * WIDTH + HEAD_DIM);
      const r = new Float32Array(tokens);
      reference.rmsNorm(span(values), w, { rowStride: WIDTH, out: span(want), rstd: r });
      for (let t = 0; t < tokens; t++) wantRstd[t * Q_HEADS + h] = r[t];
    }
    const x = new Float32Array(memory.buffer, 4 * 65536, tokens * WIDTH);
    x.set(values);
    const wv = new Float32Array(memory.buffer, 3 * 65536, HEAD_DIM);
    wv.set(w);
    const rstd = new Float32Array(memory.buffer, 3 * 65536 + 4096, tokens * Q_HEADS);
    const got = bound.rmsNorm(x, wv, inPlace ? { rowStride: WIDTH, heads: Q_HEADS, out: x, rstd } : { rowStride: WIDTH, heads: Q_HEADS });
    assert.deepEqual(bytes(got), bytes(want), `bindMemory, ${label}`);
    if (inPlace) assert.deepEqual(bytes(rstd), bytes(wantRstd), `bindMemory, ${label}: rstd, t·heads + h`);
  }
});

test('layerNorm with heads: out, mean and rstd are the per-head calls\' bits, copied and on tensors', () => {
  const rand = prng(7);
  const [tokens, heads, dim, headStride, rowStride] = [6, 4, 64, 80, 400];
  const length = (tokens - 1) * rowStride + (heads - 1) * headStride + dim;
  const x = normalArray(rand, length, 2);
  const w = uniformArray(rand, dim, 0.5, 1.5);
  const b = normalArray(rand, dim, 0.1);
  // The per-head calls, from the reference: y into zeros, mean and rstd head-major, interleaved to t·heads + h.
  const want = new Float32Array(length);
  const wantMean = new Float32Array(tokens * heads);
  const wantRstd = new Float32Array(tokens * heads);
  for (let h = 0; h < heads; h++) {
    const span = (a) => a.subarray(h * headStride, h * headStride + (tokens - 1) * rowStride + dim);
    const [mean, rstd] = [new Float32Array(tokens), new Float32Array(tokens)];
    reference.layerNorm(span(x), w, b, { rowStride, out: span(want), mean, rstd });
    for (let t = 0; t < tokens; t++) {
      wantMean[t * heads + h] = mean[t];
      wantRstd[t * heads + h] = rstd[t];
    }
  }
  for (const impl of impls) {
    const [mean, rstd] = [new Float32Array(tokens * heads), new Float32Array(tokens * heads)];
    const y = impl.layerNorm(x, w, b, { rowStride, heads, headStride, mean, rstd });
    assert.deepEqual(bytes(y), bytes(want), `${impl.name}: out`);
    assert.deepEqual(bytes(mean), bytes(wantMean), `${impl.name}: mean`);
    assert.deepEqual(bytes(rstd), bytes(wantRstd), `${impl.name}: rstd`);
    if (impl.alloc !== undefined) {
      const [tx, ty] = [impl.alloc(length), impl.alloc(length)];
      tx.array.set(x);
      impl.layerNorm(tx, w, b, { rowStride, heads, headStride, out: ty });
      assert.deepEqual(bytes(ty.array), bytes(want), `${impl.name}: tensors`);
      tx.free();
      ty.free();
    }
  }
  // The backward passes take no heads.
  for (const impl of impls) {
    assert.throws(() => impl.rmsNormBackward(x, x, null, { dim, heads }), { name: 'TypeError', message: /^rmsNormBackward: unknown option 'heads'/ });
  }
});

test('wrong heads and head strides are refused by every implementation, with the same error, nothing written', () => {
  const x = new Float32Array(2 * 64).fill(1);
  const w = new Float32Array(8).fill(1);
  const cases = [
    [{ heads: 0 }, RangeError, /^rmsNorm: options\.heads must be a positive integer, the rows each token holds; got 0$/],
    [{ heads: 1.5 }, RangeError, /^rmsNorm: options\.heads must be a positive integer/],
    [{ heads: '2' }, TypeError, /^rmsNorm: options\.heads must be a number, got string "2"$/],
    [{ heads: 2, headStride: 7 }, RangeError, /^rmsNorm: options\.headStride must be an integer >= dim \(8\)/],
    [{ heads: 2, headStride: 8.5 }, RangeError, /^rmsNorm: options\.headStride must be an integer >= dim/],
    [{ heads: 2, headStride: null }, TypeError, /^rmsNorm: options\.headStride must be a number, got null$/],
    [{ headStride: 16 }, TypeError, /^rmsNorm: options\.headStride needs options\.heads$/],
    [{ heads: 2, shape: [16, 8], axis: -1 }, TypeError, /^rmsNorm: give options\.heads or options\.shape, not both$/],
    // Two tokens of 64 whose four heads of 8, 20 apart, span 68 values: into the next token.
    [{ heads: 4, headStride: 20, rowStride: 64 }, RangeError, /^rmsNorm: options\.rowStride \(64\) must be at least \(heads - 1\) \* headStride \+ dim \(68\) for 2 tokens/],
    // Two tokens of 64, the second cut short: its heads end at 64 + 3·16 + 8 = 120.
    [{ heads: 4, headStride: 16, rowStride: 64, dim: 8 }, RangeError, /^rmsNorm: x\.length \(118\) ends inside a token/, new Float32Array(118)],
  ];
  for (const [options, type, message, input = x] of cases) {
    for (const impl of impls) {
      const out = new Float32Array(input.length).fill(3);
      assert.throws(() => impl.rmsNorm(input, w, { ...options, out }), (error) => error instanceof type && message.test(error.message), `${impl.name}: ${JSON.stringify(options)}`);
      assert.ok(out.every((v) => v === 3), `${impl.name}: ${JSON.stringify(options)}: written`);
    }
  }
  // The defaults: headStride dim, rowStride a token's span (its heads packed, tokens packed): plain rows of dim.
  const packed = normalArray(prng(4), 3 * 24, 1);
  const strided = normalArray(prng(5), 2 * 20, 1);
  for (const impl of impls) {
    assert.deepEqual(bytes(impl.rmsNorm(packed, w, { heads: 3 })), bytes(reference.rmsNorm(packed, w)), `${impl.name}: heads alone`);
    // headStride's default with a rowStride: two heads of 8 back to back, tokens 20 apart (4 values of gap).
    const want = new Float32Array(strided.length);
    for (let t = 0; t < 2; t++) want.set(reference.rmsNorm(strided.subarray(t * 20, t * 20 + 16), w), t * 20);
    assert.deepEqual(bytes(impl.rmsNorm(strided, w, { heads: 2, rowStride: 20 })), bytes(want), `${impl.name}: headStride's default`);
  }
});

test('the overlap rule on heads: out may sit in the gaps between x\'s rows, and is refused wherever it shares a byte, as a byte model says', () => {
  const rand = prng(404);
  let checked = 0;
  let refused = 0;
  for (let trial = 0; trial < 300; trial++) {
    const dim = 1 + Math.floor(rand() * 4);
    const heads = 2 + Math.floor(rand() * 3);
    const headStride = dim + Math.floor(rand() * 4);
    const extent = (heads - 1) * headStride + dim;
    const rowStride = extent + Math.floor(rand() * 6);
    const tokens = 2 + Math.floor(rand() * 3);
    const length = (tokens - 1) * rowStride + extent;
    const shift = Math.floor(rand() * (2 * rowStride)) - 2;
    const buffer = new Float32Array(length + 2 * rowStride + 8).map(() => rand());
    const xAt = 4;
    const outAt = xAt + shift;
    if (outAt < 0 || outAt + length > buffer.length) continue;
    const rows = (at) => {
      const set = new Set();
      for (let t = 0; t < tokens; t++) for (let h = 0; h < heads; h++) for (let i = 0; i < dim; i++) set.add(at + t * rowStride + h * headStride + i);
      return set;
    };
    const xRows = rows(xAt);
    const outRows = rows(outAt);
    const meet = [...outRows].some((i) => xRows.has(i)) && shift !== 0;
    const x = buffer.subarray(xAt, xAt + length);
    const out = buffer.subarray(outAt, outAt + length);
    const w = uniformArray(rand, dim, 0.5, 1.5);
    const options = { dim, heads, headStride, rowStride, out };
    const what = `dim ${dim}, ${heads} heads ${headStride} apart, tokens ${rowStride} apart, out ${shift} values after x`;
    for (const impl of impls) {
      const before = buffer.slice();
      if (meet) {
        assert.throws(() => impl.rmsNorm(x, w, options), { name: 'RangeError', message: /^rmsNorm: options\.out must be x itself or not overlap x$/ }, `${impl.name}: ${what}`);
        assert.deepEqual(buffer, before, `${impl.name}: ${what}: a refused call wrote`);
      } else {
        // Expected from calls without heads: one per head, rowStride apart, from a copy of x.
        const want = before.slice();
        for (let h = 0; h < heads; h++) {
          const span = (tokens - 1) * rowStride + dim;
          const at = h * headStride;
          reference.rmsNorm(before.subarray(xAt + at, xAt + at + span), w, { dim, rowStride, out: want.subarray(outAt + at, outAt + at + span) });
        }
        impl.rmsNorm(x, w, options);
        assert.deepEqual(bytes(buffer), bytes(want), `${impl.name}: ${what}: only out's rows written, with the reference's bits`);
      }
    }
    checked++;
    if (meet) refused++;
  }
  assert.ok(checked > 200 && refused > 50 && checked - refused > 50, `${checked} layouts, ${refused} refused`);
});
