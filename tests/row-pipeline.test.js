// The SIMD kernel scales row r while it sums the squares of row r+1 (float32
// and bfloat16 storage). Every
// kind of row (plain, rescued from overflow or underflow, all-zero, NaN) must
// come out the same next to every other kind, in place or not, and equal to
// the row normalized alone: that interleaving must never leak between rows.
import { test } from 'node:test';
import { assertAllAgree, onEvery, wasmImplementations } from './helpers/implementations.js';
import { narrow } from '../src/reference/float16.js';
import { assertSameBitsAs } from './helpers/bits.js';
import { normalArray, prng, uniformArray } from './helpers/random.js';

const KINDS = {
  plain: (rand, dim) => normalArray(rand, dim, 3),
  overflow: (rand, dim) => normalArray(rand, dim, 1e30),
  underflow: (rand, dim) => normalArray(rand, dim, 1e-30),
  zero: (rand, dim) => new Float32Array(dim),
  nan: (rand, dim) => normalArray(rand, dim, 1).fill(NaN, dim >> 1, (dim >> 1) + 1),
};
const NAMES = Object.keys(KINDS);
// Every ordered pair of kinds appears as neighbours in this sequence.
const SEQUENCE = [...NAMES, ...NAMES.flatMap((a) => NAMES.flatMap((b) => [a, b]))];

const STORAGES = [
  { dtype: 'float32' },
  { dtype: 'bfloat16', castMode: 'llama' },
  { dtype: 'bfloat16', castMode: 'gemma' },
];
const toStorage = (values, dtype) => (dtype === 'float32' ? values : Uint16Array.from(values, (v) => narrow(v, dtype)));

for (const options of STORAGES) {
  for (const dim of [1, 15, 16, 17, 256, 257, 300, 1024]) {
    test(`every kind of row next to every other, ${options.dtype} ${options.castMode ?? ''} dim ${dim}`, async () => {
      const { dtype } = options;
      const seed = 4000 + dim;
      const rand = prng(seed);
      const rows = SEQUENCE.map((kind) => toStorage(KINDS[kind](rand, dim), dtype));
      const x = dtype === 'float32' ? new Float32Array(rows.length * dim) : new Uint16Array(rows.length * dim);
      rows.forEach((row, r) => x.set(row, r * dim));
      const w = toStorage(uniformArray(rand, dim, 0.5, 1.5), dtype);
      const what = `${dtype} ${options.castMode ?? ''} dim=${dim} seed=${seed}`;
      const results = await onEvery(({ rmsNorm }) => rmsNorm(x, w, options));
      const inPlace = await onEvery(({ rmsNorm }) => {
        const xy = x.slice();
        return rmsNorm(xy, w, { ...options, out: xy });
      });
      assertAllAgree(results, what);
      assertAllAgree({ ...inPlace, reference: results.reference }, `${what} in place`);
      const [simd] = await wasmImplementations(); // the interleaving is the SIMD kernel's
      for (const [r, kind] of SEQUENCE.entries()) {
        const alone = simd.rmsNorm(rows[r], w, options);
        assertSameBitsAs(dtype, results.simd.subarray(r * dim, (r + 1) * dim), alone, `${what} row ${r} (${kind}) vs alone`);
      }
    });
  }
}
