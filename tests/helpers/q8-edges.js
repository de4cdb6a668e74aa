// The blocks that put ggml's quantizer rule on its edges (src/kernels/q8_blocks.h),
// for the fused block outputs: tests/q8.test.js in Node, and the bit-exact suite
// (tests/helpers/bit-exact-suite.js) in every engine. Imports nothing: a page
// loads it too.

/**
 * One weight of blocks of n values: blocks of amax 127·2^e, whose d (or 1/iscale)
 * is 2^e exactly, so that (j + 0.5)·2^e lands on a tie, with +amax and -amax both
 * present (e = -107 and -108 sit either side of the smallest amax the SIMD
 * kernel's float32-weight loop writes itself, 2^-100); a zero block; a block of
 * subnormals (1/d overflows); one of huge values; one that overflows to Inf when
 * the row doubles it.
 */
export function q8EdgeWeight(n) {
  const blocks = [];
  for (const e of [-3, -2, -1, 0, 1, 2, 3, -107, -108, 100]) {
    const b = new Float32Array(n);
    for (let j = 0; j < n; j++) b[j] = ((j % 127) - 63 + 0.5) * 2 ** e;
    b[3] = 127 * 2 ** e;
    b[7] = -127 * 2 ** e; // ±amax
    blocks.push(b);
  }
  blocks.push(new Float32Array(n)); // zeros
  blocks.push(Float32Array.from({ length: n }, (_, j) => (j % 3 - 1) * 2 ** -140)); // subnormal
  blocks.push(Float32Array.from({ length: n }, (_, j) => (j - n / 2) * 1e36)); // huge
  blocks.push(Float32Array.from({ length: n }, (_, j) => (j === 5 ? 3e38 : j))); // 3e38 · 2 = Inf below
  const weight = new Float32Array(blocks.length * n);
  blocks.forEach((b, i) => weight.set(b, i * n));
  return weight;
}

/**
 * Rows x = ±2^k (eps = 0 gives inv = 2^-k: y = ±weight exactly, so the weight sets
 * the block values); k = 9 also puts 2^10 in the first 8 values, so that inv is no
 * power of two and the row doubles the last block's 3e38 to Inf.
 */
export function signedPowerRows(rand, rows, dim, k) {
  const x = new Float32Array(rows * dim);
  for (let i = 0; i < x.length; i++) x[i] = (rand() < 0.5 ? -1 : 1) * 2 ** k;
  if (k === 9) x.fill(2 ** 10, 0, 8);
  return x;
}

/** The rows' exponents the edge cases use. */
export const EDGE_POWERS = [0, -5, 9];
