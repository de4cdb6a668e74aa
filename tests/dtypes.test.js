// bfloat16 and float16 storage: every backend agrees with the reference bit
// for bit in every cast mode, weight dtype and offset; the fused residual add
// equals add-then-normalize; PyTorch's outputs are matched.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { narrow, roundTo, widen } from '../src/reference/float16.js';
import { allAgree, assertAllAgree, implementations, onEvery } from './helpers/implementations.js';
import { assertSameBitsAs, firstDifference16 } from './helpers/bits.js';
import { fromBase64, normal16, uniform16 } from './helpers/float16-data.js';
import { normalArray, prng, uniformArray } from './helpers/random.js';

const DTYPES16 = ['bfloat16', 'float16'];
const DIMS = [1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 23, 31, 32, 33, 40, 63, 64, 65, 255, 256, 257, 896, 4096];

test('16-bit storage: simd = scalar = reference for every weight dtype, offset and cast mode', async () => {
  for (const dtype of DTYPES16) {
    for (const dim of DIMS) {
      const rows = dim < 64 ? 5 : 2;
      const seed = dim * 7 + (dtype === 'float16' ? 1 : 0);
      const rand = prng(seed);
      const x = normal16(rand, rows * dim, dtype, 3);
      const weights = {
        none: null,
        float32: uniformArray(rand, dim, 0.5, 1.5),
        [dtype]: uniform16(rand, dim, dtype, 0.5, 1.5),
      };
      for (const [kind, weight] of Object.entries(weights)) {
        for (const castMode of ['llama', 'gemma']) {
          for (const weightOffset of weight === null ? [undefined] : [undefined, 1]) {
            const options = { dtype, castMode, weightOffset, dim };
            const what = `dtype=${dtype} rows=${rows} dim=${dim} weight=${kind} castMode=${castMode} weightOffset=${weightOffset} seed=${seed}`;
            await allAgree(({ rmsNorm }) => rmsNorm(x, weight, options), what);
          }
        }
      }
    }
  }
});

test('16-bit storage: all 65536 bit patterns as inputs and as weights, rescue rows included', async () => {
  for (const dtype of DTYPES16) {
    const all = new Uint16Array(65536).map((_, i) => i);
    for (const dim of [16, 256, 1000]) {
      const x = all.subarray(0, Math.floor(65536 / dim) * dim);
      const weight = all.subarray(dim * 3, dim * 4); // includes NaN, Inf, huge and tiny weights somewhere
      for (const castMode of ['llama', 'gemma']) {
        for (const eps of [0, 1e-6]) {
          const what = `dtype=${dtype} all patterns dim=${dim} castMode=${castMode} eps=${eps}`;
          await allAgree(({ rmsNorm }) => rmsNorm(x, weight, { dtype, castMode, eps }), what);
        }
      }
    }
  }
});

// The SIMD writers widen a float16 weight with a short conversion that is
// exact for finite halves only, and check the weight once per call: every
// finite pattern (subnormals, signed zeros, the largest) must widen exactly,
// and a weight holding an Inf or a NaN must still give the reference's
// output, on float32 rows, on 16-bit rows and into q8 blocks (whose
// register path loads the weight too).
test('a float16 weight of every pattern, on float32 and 16-bit rows and into q8 blocks', async () => {
  const dim = 2048;
  const all = new Uint16Array(65536).map((_, i) => i);
  const rand = prng(41);
  for (const dtype of ['float32', ...DTYPES16]) {
    const x = dtype === 'float32' ? normalArray(rand, 2 * dim, 3) : normal16(rand, 2 * dim, dtype, 3);
    for (let start = 0; start < 65536; start += dim) {
      const weight = all.subarray(start, start + dim);
      const specials = weight.some((h) => (h & 0x7c00) === 0x7c00) ? 'with Inf/NaN' : 'finite';
      const what = `dtype=${dtype} float16 weight patterns ${start}..${start + dim - 1} (${specials})`;
      await allAgree(({ rmsNorm }) => rmsNorm(x, weight, { dtype, weightDtype: 'float16' }), what);
      for (const outDtype of ['q8_0', 'q8_1']) {
        await allAgree(({ rmsNorm }) => rmsNorm(x, weight, { dtype, weightDtype: 'float16', outDtype }), `${what} ${outDtype}`);
      }
    }
  }
});

test('views at odd element offsets and in place, 16-bit', async () => {
  for (const dtype of DTYPES16) {
    const dim = 37;
    const rows = 3;
    const rand = prng(5);
    const backing = normal16(rand, rows * dim + 1, dtype, 2);
    const w = uniform16(rand, dim, dtype, 0.5, 1.5);
    const fresh = await allAgree(({ rmsNorm }) =>
      rmsNorm(new Uint16Array(backing.buffer.slice(0), 2, rows * dim), w, { dtype }), `${dtype} byteOffset 2`);
    const inPlace = await allAgree(({ rmsNorm }) => {
      const x = new Uint16Array(backing.buffer.slice(0), 2, rows * dim);
      rmsNorm(x, w, { dtype, out: x });
      return x;
    }, `${dtype} in place`);
    assertSameBitsAs(dtype, inPlace, fresh, `${dtype} in place vs fresh`);
  }
});

test('weightOffset: the applied weight is offset + w in float32 (Gemma), for every dtype', async () => {
  for (const dtype of ['float32', ...DTYPES16]) {
    const dim = 64;
    const rand = prng(9);
    const x = dtype === 'float32' ? uniformArray(rand, 2 * dim, -3, 3) : normal16(rand, 2 * dim, dtype, 3);
    const w = dtype === 'float32' ? uniformArray(rand, dim, -0.1, 0.1) : uniform16(rand, dim, dtype, -0.1, 0.1);
    const withOffset = await allAgree(({ rmsNorm }) => rmsNorm(x, w, { dtype, castMode: 'gemma', weightOffset: 1 }), `${dtype} offset 1`);
    // The same as passing the float32 weights 1 + w (where the weight is float32 already).
    const onePlus = new Float32Array(dim).map((_, i) => Math.fround(1 + widen(w, i, dtype)));
    const explicit = await allAgree(({ rmsNorm }) => rmsNorm(x, onePlus, { dtype, castMode: 'gemma', weightDtype: 'float32' }), `${dtype} 1 + w`);
    assertSameBitsAs(dtype, withOffset, explicit, `${dtype}: offset 1 vs explicit 1 + w`);
  }
});

test('addRmsNorm: residual <- round(x + residual), then rmsNorm of it, on every backend', async () => {
  for (const dtype of ['float32', ...DTYPES16]) {
    for (const dim of [1, 5, 16, 33, 300, 4096]) {
      const rows = 3;
      const seed = dim + 17;
      const rand = prng(seed);
      const make = (sigma) => (dtype === 'float32' ? uniformArray(rand, rows * dim, -sigma, sigma) : normal16(rand, rows * dim, dtype, sigma));
      const x = make(2);
      const residual0 = make(5);
      const w = dtype === 'float32' ? uniformArray(rand, dim, 0.5, 1.5) : uniform16(rand, dim, dtype, 0.5, 1.5);
      for (const [castMode, weightOffset] of [['llama', undefined], ['gemma', undefined], ['llama', 1], ['gemma', 1]]) {
        const options = { dtype, castMode, weightOffset };
        const what = `addRmsNorm dtype=${dtype} rows=${rows} dim=${dim} castMode=${castMode} weightOffset=${weightOffset} seed=${seed}`;
        const results = await onEvery(({ rmsNorm, addRmsNorm }) => {
          const residual = residual0.slice();
          const y = addRmsNorm(x, residual, w, options);
          // Two separate steps on the same backend: add, then rmsNorm.
          const added = residual0.map((r, i) => narrow(Math.fround(widen(x, i, dtype) + widen(residual0, i, dtype)), dtype));
          assertSameBitsAs(dtype, residual, added, `${what}: residual`);
          assertSameBitsAs(dtype, y, rmsNorm(added, w, options), `${what}: fused vs apart`);
          // In place, as vLLM's fused_add_rms_norm writes into its input.
          const xCopy = x.slice();
          const residual2 = residual0.slice();
          addRmsNorm(xCopy, residual2, w, { ...options, out: xCopy });
          assertSameBitsAs(dtype, xCopy, y, `${what}: out = x`);
          return y;
        });
        assertAllAgree(results, what);
      }
    }
  }
});

// Units in the last place of the 16-bit format between two patterns of the
// same sign (their bit patterns are ordered like their values).
function ulpDistance16(a, b) {
  const key = (v) => (v & 0x8000 ? -(v & 0x7fff) : v);
  return Math.abs(key(a) - key(b));
}

test('PyTorch golden outputs: >= 99.9% bit-identical, all within 2 units, both cast modes', async (t) => {
  const { cases, torch } = JSON.parse(readFileSync(new URL('./fixtures/rmsnorm16.json', import.meta.url)));
  assert.ok(cases.length >= 8, 'fixtures present');
  const summary = {};
  for (const c of cases) {
    const x = fromBase64(c.x);
    for (const o of c.outputs) {
      const expected = fromBase64(o.y);
      const weight = fromBase64(c[o.weight]);
      const options = { dtype: c.dtype, castMode: o.castMode, eps: c.eps, weightOffset: o.weightOffset };
      const what = `torch ${torch} dtype=${c.dtype} ${c.rows}x${c.dim} castMode=${o.castMode} weightOffset=${o.weightOffset}`;
      const results = await onEvery(({ rmsNorm }) => rmsNorm(x, weight, options));
      for (const [backend, y] of Object.entries(results)) {
        let same = 0;
        let worst = 0;
        for (let i = 0; i < y.length; i++) {
          if (y[i] === expected[i]) same++;
          worst = Math.max(worst, ulpDistance16(y[i], expected[i]));
        }
        assert.ok(worst <= 2, `${what} ${backend}: ${worst} units from PyTorch`);
        const key = `${c.dtype}/${o.castMode}${o.weightOffset ? '+offset' : ''}`;
        summary[key] ??= { same: 0, total: 0 };
        summary[key].same += same;
        summary[key].total += y.length;
      }
    }
  }
  t.diagnostic(Object.entries(summary).map(([key, { same, total }]) =>
    `${key}: ${same}/${total} (${(100 * same / total).toFixed(3)}%) bit-identical`).join('; '));
  for (const [key, { same, total }] of Object.entries(summary)) {
    assert.ok(same / total >= 0.999, `${key}: only ${(100 * same / total).toFixed(3)}% bit-identical to PyTorch`);
  }
});

test('the cast modes differ: llama output is not gemma output', async () => {
  const { cases } = JSON.parse(readFileSync(new URL('./fixtures/rmsnorm16.json', import.meta.url)));
  for (const c of cases) {
    const [llama, gemma] = c.outputs.map((o) => fromBase64(o.y));
    let differ = 0;
    for (let i = 0; i < llama.length; i++) differ += llama[i] !== gemma[i];
    assert.ok(differ / llama.length > 0.05, `${c.dtype} ${c.rows}x${c.dim}: the modes differ in only ${differ} elements`);
  }
});

// The book chapter's failure: RMSNorm computed in bfloat16 throughout (every
// square, sum, mean and root rounded to bfloat16) instead of in float32.
function rmsNormInBfloat16Throughout(x, w, dim) {
  const r = (v) => roundTo(v, 'bfloat16');
  const y = new Uint16Array(x.length);
  for (let o = 0; o < x.length; o += dim) {
    let sum = 0;
    for (let i = 0; i < dim; i++) sum = r(sum + r(widen(x, o + i, 'bfloat16') ** 2));
    const inv = r(1 / r(Math.sqrt(r(r(sum / dim) + 1e-6))));
    for (let i = 0; i < dim; i++) y[o + i] = narrow(r(r(widen(x, o + i, 'bfloat16') * inv) * widen(w, i, 'bfloat16')), 'bfloat16');
  }
  return y;
}

test('why the float32 upcast is load-bearing: bfloat16 throughout changes a fifth or more of the outputs', async () => {
  for (const dim of [896, 4096]) {
    const rand = prng(dim);
    const x = normal16(rand, 8 * dim, 'bfloat16', 3);
    const w = uniform16(rand, dim, 'bfloat16', 0.5, 1.5);
    const upcast = await allAgree(({ rmsNorm }) => rmsNorm(x, w, { dtype: 'bfloat16', castMode: 'llama' }), `upcast dim=${dim}`);
    const throughout = rmsNormInBfloat16Throughout(x, w, dim);
    let differ = 0;
    for (let i = 0; i < x.length; i++) differ += upcast[i] !== throughout[i];
    assert.ok(firstDifference16(upcast, throughout, 'bfloat16') >= 0);
    assert.ok(differ / x.length >= 0.2, `dim=${dim}: only ${(100 * differ / x.length).toFixed(1)}% differ`);
  }
});

test('16-bit: NaN and infinite weights, and outputs that overflow to Inf, match the reference', async () => {
  for (const dtype of DTYPES16) {
    for (const dim of [7, 64, 300]) {
      const rand = prng(dim + 3);
      const x = normal16(rand, 3 * dim, dtype, 3);
      const wf = uniformArray(rand, dim, 0.5, 1.5);
      wf[1] = NaN;
      wf[dim - 1] = Infinity;
      const w16 = new Uint16Array(dim).map((_, i) => narrow(wf[i], dtype));
      // bfloat16 shares float32's range; float16 overflows past 65504.
      const huge = new Float32Array(dim).fill(dtype === 'float16' ? 1e9 : 3e38);
      for (const castMode of ['llama', 'gemma']) {
        const what = `dtype=${dtype} dim=${dim} castMode=${castMode}`;
        const y = await allAgree(({ rmsNorm }) => rmsNorm(x, wf, { dtype, castMode }), `${what} NaN/Inf float32 weight`);
        assert.ok(Number.isNaN(widen(y, 1, dtype)), `${what}: a NaN weight gives NaN`);
        await allAgree(({ rmsNorm }) => rmsNorm(x, w16, { dtype, castMode }), `${what} NaN/Inf 16-bit weight`);
        const big = await allAgree(({ rmsNorm }) => rmsNorm(x, huge, { dtype, castMode }), `${what} overflowing outputs`);
        const values = Array.from(big, (_, i) => widen(big, i, dtype));
        assert.ok(!values.some(Number.isNaN), `${what}: overflow must not give NaN`);
        const infinite = values.filter((v) => !Number.isFinite(v)).length;
        const expected = dtype === 'float16' ? 0.9 : 0.05;
        assert.ok(infinite / values.length >= expected, `${what}: only ${infinite} of ${values.length} outputs overflowed`);
      }
    }
  }
});

test('any weight dtype with any storage dtype: the bits of the same call with the weight widened to float32', async () => {
  const impls = await implementations();
  const rand = prng(61);
  for (const dim of [7, 64, 300]) {
    const rows = 3;
    const xs = normalArray(rand, rows * dim, 2);
    const weights = uniformArray(rand, dim, 0.5, 1.5);
    for (const dtype of ['float32', 'bfloat16', 'float16']) {
      const x = dtype === 'float32' ? Float32Array.from(xs) : Uint16Array.from(xs, (v) => narrow(v, dtype));
      for (const weightDtype of ['float32', 'bfloat16', 'float16']) {
        const w = weightDtype === 'float32' ? Float32Array.from(weights) : Uint16Array.from(weights, (v) => narrow(v, weightDtype));
        const wide = Float32Array.from(w, (_, i) => widen(w, i, weightDtype));
        for (const castMode of ['llama', 'gemma']) {
          for (const impl of impls) {
            const what = `${impl.name} dtype=${dtype} weightDtype=${weightDtype} castMode=${castMode} rows=${rows} dim=${dim} seed=61`;
            const got = impl.rmsNorm(x, w, { dtype, weightDtype, castMode, weightOffset: 0.5 });
            const expected = impl.rmsNorm(x, wide, { dtype, castMode, weightOffset: 0.5 });
            assert.deepEqual(new Uint8Array(got.buffer), new Uint8Array(expected.buffer), what);
            const residual = x.slice();
            const fused = impl.addRmsNorm(x, residual, w, { dtype, weightDtype, castMode });
            assert.deepEqual(new Uint8Array(fused.buffer), new Uint8Array(impl.rmsNorm(residual, wide, { dtype, castMode }).buffer), `${what}: addRmsNorm`);
          }
        }
      }
    }
  }
});
