// The inputs every row of one shape normalizes, the float64 oracle's answer,
// and the check each row must pass before it is timed.
import { layerNorm64, rmsNorm64, ulpErrors } from '../helpers/oracle.js';
import { normalArray, prng, uniformArray } from '../helpers/random.js';

export const EPS = Math.fround(1e-6);
const FLOAT_BYTES = 4;

/** x ~ N(0, 9), w ~ U(0.5, 1.5), seeded by the shape. */
export function makeShape(rows, dim) {
  const seed = rows * 100_003 + dim;
  const rand = prng(seed);
  const x = normalArray(rand, rows * dim, 3);
  const w = uniformArray(rand, dim, 0.5, 1.5);
  return { rows, dim, eps: EPS, seed, x, w, label: `${rows}×${dim}` };
}

/** Bytes an RMSNorm call moves: x read, y written, w read once. */
export const normBytes = ({ rows, dim }) => FLOAT_BYTES * (2 * rows * dim + dim);

const ORACLES = { rmsNorm: rmsNorm64, layerNorm: layerNorm64 };
const oracleCache = new Map();
/** The float64 oracle's answer for `input` (x by default) with the shape's w and eps. */
function oracle(shape, input, weight, op) {
  const key = `${shape.label}:${op}:${input === shape.x ? 'x' : 'other'}:${weight === shape.w ? 'w' : 'other'}`;
  let entry = oracleCache.get(key);
  if (entry?.input !== input || entry?.weight !== weight) {
    entry = { input, weight, y64: ORACLES[op](input, weight, shape.dim, shape.eps) };
    oracleCache.set(key, entry);
  }
  return entry.y64;
}

// float32 implementations that sum in other orders (the peers) land within a
// few 1e-6 of the oracle relative to the output's scale; a wrong formula (no
// weight, eps outside the root, wrong axis) misses by orders of magnitude.
export const FLOAT32_TOLERANCE = 1e-4;

/**
 * Why `y` is not RMSNorm of the shape (its first bad index, the shape and
 * seed), or null when every value is within `tolerance` (relative to the
 * output's largest value) of the float64 oracle. `input` and `weight` are
 * what the row actually normalized (x + residual, values rounded to 16 bits),
 * `op` the oracle's formula ('rmsNorm' or 'layerNorm').
 */
export function oracleMismatch(shape, y, {
  input = shape.x, weight = shape.w, tolerance = FLOAT32_TOLERANCE, op = 'rmsNorm',
} = {}) {
  const y64 = oracle(shape, input, weight, op);
  if (!(y instanceof Float32Array) || y.length !== y64.length) {
    return `${shape.label} seed=${shape.seed}: expected ${y64.length} floats, got ${y?.constructor?.name}(${y?.length})`;
  }
  let scale = 0;
  for (let i = 0; i < y64.length; i++) scale = Math.max(scale, Math.abs(y64[i]));
  for (let i = 0; i < y64.length; i++) {
    if (!(Math.abs(y[i] - y64[i]) <= tolerance * scale)) {
      return `${shape.label} seed=${shape.seed}: index ${i} is ${y[i]}, the oracle says ${y64[i]}`;
    }
  }
  return null;
}

/** Max and mean error of `y` in float32 ulps of the float64 oracle's RMSNorm of the shape. */
export function oracleUlpErrors(shape, y) {
  return ulpErrors(y, oracle(shape, shape.x, shape.w, 'rmsNorm'));
}
