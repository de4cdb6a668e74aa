// The SIMD kernel scales row r while it sums the squares of row r+1. Every
// kind of row (plain, rescued from overflow or underflow, all-zero, NaN) must
// come out the same next to every other kind, in place or not, and equal to
// the row normalized alone: that interleaving must never leak between rows.
import { test } from 'node:test';
import { onEveryBackend } from './helpers/backends.js';
import { assertSameBits } from './helpers/bits.js';
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

for (const dim of [1, 15, 16, 17, 256, 257, 300, 1024]) {
  test(`every kind of row next to every other, dim ${dim}`, async () => {
    const seed = 4000 + dim;
    const rand = prng(seed);
    const rows = SEQUENCE.map((kind) => KINDS[kind](rand, dim));
    const x = new Float32Array(rows.length * dim);
    rows.forEach((row, r) => x.set(row, r * dim));
    const w = uniformArray(rand, dim, 0.5, 1.5);
    const what = `dim=${dim} seed=${seed}`;
    const results = await onEveryBackend((rmsNorm) => rmsNorm(x, w));
    const inPlace = await onEveryBackend((rmsNorm) => {
      const xy = x.slice();
      return rmsNorm(xy, w, { out: xy });
    });
    for (const backend of ['simd', 'scalar']) {
      assertSameBits(results[backend], results.reference, `${what} ${backend} vs reference`);
      assertSameBits(inPlace[backend], results.reference, `${what} ${backend} in place vs reference`);
    }
    for (const [r, kind] of SEQUENCE.entries()) {
      const alone = (await onEveryBackend((rmsNorm) => rmsNorm(rows[r], w))).simd;
      assertSameBits(results.simd.subarray(r * dim, (r + 1) * dim), alone, `${what} row ${r} (${kind}) vs alone`);
    }
  });
}
