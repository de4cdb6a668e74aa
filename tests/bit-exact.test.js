// SIMD module = scalar module = JS reference, bit for bit, over the sizes
// that break kernels: every dim up to 40 (all tails of the 16-wide step and
// of the 4-wide output loop), the block edges 255/256/257, and long rows.
import { test } from 'node:test';
import { assertAllAgree, onEvery } from './helpers/implementations.js';
import { assertSameBits } from './helpers/bits.js';
import { normalArray, prng, uniformArray } from './helpers/random.js';

const DIMS = [...Array.from({ length: 40 }, (_, i) => i + 1),
  63, 64, 65, 127, 255, 256, 257, 896, 1024, 4095, 4096, 8192, 16384];
const ROWS = [0, 1, 2, 3, 7, 33];
const SCALES = [1e-30, 1e-20, 1e-10, 1, 1e10, 1e20, 1e30];

test('simd = scalar = reference over dims, rows and scales', async () => {
  for (const dim of DIMS) {
    for (const rows of ROWS) {
      for (const [s, scale] of SCALES.entries()) {
        const seed = dim * 1000 + rows * 10 + s;
        const rand = prng(seed);
        const x = normalArray(rand, rows * dim, scale);
        const w = uniformArray(rand, dim, 0.5, 1.5);
        // eps = 0 at the extreme scales sends rows through the rescue path.
        const eps = s % 2 === 0 ? 0 : 1e-6;
        const results = await onEvery(({ rmsNorm }) => rmsNorm(x, w, { eps }));
        assertAllAgree(results, `rows=${rows} dim=${dim} scale=${scale} eps=${eps} seed=${seed}`);
      }
    }
  }
});

test('simd = scalar = reference without a weight', async () => {
  for (const dim of [1, 5, 16, 17, 300, 4096]) {
    const seed = 7 + dim;
    const x = normalArray(prng(seed), 3 * dim, 2);
    const results = await onEvery(({ rmsNorm }) => rmsNorm(x, null, { dim }));
    assertAllAgree(results, `rows=3 dim=${dim} weight=null seed=${seed}`);
  }
});

test('views at any byteOffset, in place, and into out', async () => {
  for (const dim of [3, 16, 33, 1024]) {
    for (const offset of [1, 2, 3, 5]) {
      const seed = dim + 100 * offset;
      const rand = prng(seed);
      const rows = 7;
      const backing = normalArray(rand, rows * dim + 2 * offset, 3);
      const weightBacking = uniformArray(rand, dim + offset, 0.5, 1.5);
      const view = () => new Float32Array(backing.buffer.slice(0), offset * 4, rows * dim);
      const w = new Float32Array(weightBacking.buffer, offset * 4, dim);
      const what = `rows=${rows} dim=${dim} byteOffset=${offset * 4} seed=${seed}`;

      const fresh = await onEvery(({ rmsNorm }) => rmsNorm(view(), w));
      assertAllAgree(fresh, `${what} fresh output`);
      const inPlace = await onEvery(({ rmsNorm }) => {
        const x = view();
        const y = rmsNorm(x, w, { out: x });
        if (y !== x) throw new Error('in-place call must return x');
        return x;
      });
      assertAllAgree(inPlace, `${what} in place`);
      assertSameBits(inPlace.simd, fresh.simd, `${what} in place vs fresh`);
      const outView = await onEvery(({ rmsNorm }) => {
        const out = new Float32Array(new ArrayBuffer((rows * dim + 1) * 4), 4, rows * dim);
        return rmsNorm(view(), w, { out });
      });
      assertAllAgree(outView, `${what} out at byteOffset 4`);
      assertSameBits(outView.simd, fresh.simd, `${what} out vs fresh`);
    }
  }
});

test('a large batch staged in several chunks gives the bits of row-by-row calls', async () => {
  const dim = 1000; // 2^18 / 1000 is not a whole number of rows: chunk edges move
  const rows = 700;
  const seed = 99;
  const rand = prng(seed);
  const x = normalArray(rand, rows * dim, 5);
  const w = uniformArray(rand, dim, 0.5, 1.5);
  const results = await onEvery(({ rmsNorm }) => {
    const whole = rmsNorm(x, w);
    for (const r of [0, 261, 262, 263, 699]) {
      const one = rmsNorm(x.subarray(r * dim, (r + 1) * dim), w);
      assertSameBits(whole.subarray(r * dim, (r + 1) * dim), one, `row ${r} of rows=${rows} dim=${dim} seed=${seed}`);
    }
    return whole;
  });
  assertAllAgree(results, `rows=${rows} dim=${dim} seed=${seed}`);
});
