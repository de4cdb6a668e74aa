// Seeded random numbers, so a batch the page shows can be named by its seed,
// and a failing test replayed from its seed (tests/helpers/random.js
// re-exports these).

/** mulberry32: a small 32-bit PRNG; returns floats in [0, 1). */
export function prng(seed) {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A standard normal sample (Box-Muller). */
export function gaussian(rand) {
  const u = rand() || 2 ** -32;
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * rand());
}

/** n float32 values ~ N(0, sigma²). */
export function normalArray(rand, n, sigma = 1) {
  const a = new Float32Array(n);
  for (let i = 0; i < n; i++) a[i] = sigma * gaussian(rand);
  return a;
}

/** n float32 values ~ U(lo, hi). */
export function uniformArray(rand, n, lo, hi) {
  const a = new Float32Array(n);
  for (let i = 0; i < n; i++) a[i] = lo + (hi - lo) * rand();
  return a;
}

/** A fresh 32-bit seed. */
export function newSeed() {
  return crypto.getRandomValues(new Uint32Array(1))[0];
}
