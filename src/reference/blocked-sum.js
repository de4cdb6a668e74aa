// The blocked sum every reduction of the numerics contract uses
// (src/kernels/f32-rmsnorm/rmsnorm_f32.h, step 1; src/kernels/common.h), for any
// per-value term: 256-value blocks, value i of a block to lane (i mod 16),
// lanes folded in the contract's fixed tree, block sums added pairwise.

import { fround, List, min } from '../loader/intrinsics.js';

const LANES = 16;
const BLOCK = 256;

function blockSum(term, start, end) {
  const lanes = new List(LANES);
  for (let lane = 0; lane < LANES; lane++) lanes[lane] = 0;
  for (let i = start; i < end; i++) {
    const lane = (i - start) % LANES;
    lanes[lane] = fround(lanes[lane] + term(i));
  }
  const v = (j) => fround(fround(lanes[j] + lanes[j + 4]) + fround(lanes[j + 8] + lanes[j + 12]));
  return fround(fround(v(0) + v(2)) + fround(v(1) + v(3)));
}

// Split at the largest power of two below n.
function pairwiseSum(blockSums, lo, hi) {
  const n = hi - lo;
  if (n === 1) return blockSums[lo];
  let p = 1;
  while (p * 2 < n) p *= 2;
  return fround(pairwiseSum(blockSums, lo, lo + p) + pairwiseSum(blockSums, lo + p, hi));
}

/**
 * The contract's sum of term(0) … term(dim − 1), dim ≥ 1; term(i) must
 * return a float32 value (already rounded).
 */
export function blockedSum(dim, term) {
  const blockSums = new List();
  for (let start = 0; start < dim; start += BLOCK) {
    blockSums[blockSums.length] = blockSum(term, start, min(dim, start + BLOCK));
  }
  return pairwiseSum(blockSums, 0, blockSums.length);
}
