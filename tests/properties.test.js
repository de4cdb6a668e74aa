// Property tests (fast-check): random shapes, values, options, memory
// layouts and backends against the JS reference, bit for bit, and the
// invariants the numerics contract makes exact. A failure prints fast-check's
// shrunk counterexample with its seed and path; replay it with
// FC_SEED=<seed> FC_PATH=<path> node --test tests/properties.test.js
import { test } from 'node:test';
import fc from 'fast-check';
import { init, rmsNorm } from '../src/index.js';
import { rmsNorm as referenceRmsNorm } from '../src/reference/index.js';
import { assertSameBits } from './helpers/bits.js';

const FLT_MAX = 3.4028234663852886e38;
const BLOCK = 256; // the contract's block and lane counts (src/kernels/rmsnorm_f32.h)
const LANES = 16;

const replay = process.env.FC_SEED === undefined ? {}
  : { seed: Number(process.env.FC_SEED), path: process.env.FC_PATH };
const check = (property, numRuns) => fc.assert(property, { numRuns, ...replay });

// Values: mostly ordinary, some of any float32 bits, some special; a whole
// case may be scaled by 2^e, which sends rows down the rescue path.
const specialValue = fc.constantFrom(0, -0, Infinity, -Infinity, NaN, FLT_MAX, -FLT_MAX,
  2 ** -149, -(2 ** -149), 2 ** -126, 1, -1);
const value = fc.oneof(
  { weight: 6, arbitrary: fc.float({ min: -8, max: 8, noNaN: true }) },
  { weight: 2, arbitrary: fc.float() },
  { weight: 1, arbitrary: specialValue },
);
const caseScale = fc.oneof(fc.constant(0), fc.integer({ min: -149, max: 127 }));
const dimArb = fc.oneof(fc.integer({ min: 1, max: 48 }), fc.integer({ min: 1, max: 1100 }));
const epsArb = fc.oneof(
  fc.constantFrom(0, -0, 1e-6, 1e-5, FLT_MAX, 2 ** -149),
  fc.float({ min: 0, max: FLT_MAX, noNaN: true }),
);
const backendArb = fc.constantFrom('simd', 'scalar');
const scaled = (values, e) => Float32Array.from(values, (v) => v * 2 ** e);

const arrays = (length, arb = value) => fc.array(arb, { minLength: length, maxLength: length });

// One call: shape, values, weight or none, eps given or default, where the
// arrays live (plain, at a byteOffset, on a SharedArrayBuffer) and where the
// result goes (new array, out, in place).
const callArb = fc.tuple(fc.integer({ min: 0, max: 4 }), dimArb).chain(([rows, dim]) => fc.record({
  rows: fc.constant(rows),
  dim: fc.constant(dim),
  x: arrays(rows * dim),
  weight: fc.option(arrays(dim), { nil: null }),
  scale: caseScale,
  eps: fc.option(epsArb, { nil: undefined }),
  memory: fc.constantFrom('plain', 'offset', 'shared'),
  output: fc.constantFrom('new', 'out', 'in place'),
  backend: backendArb,
}));

/** A Float32Array holding `values`, laid out as `memory` says. */
function placed(values, memory, offset = 3) {
  if (memory === 'plain') return Float32Array.from(values);
  const Buffer = memory === 'shared' ? SharedArrayBuffer : ArrayBuffer;
  const a = new Float32Array(new Buffer((values.length + offset + 1) * 4), offset * 4, values.length);
  a.set(values);
  return a;
}

function describeCall({ rows, dim, eps, backend, memory, output, weight }) {
  return `${backend} rows=${rows} dim=${dim} eps=${eps} weight=${weight !== null} ${memory} ${output}`;
}

test('property: both backends equal the reference bit for bit, in every layout', async () => {
  await check(fc.asyncProperty(callArb, async (call) => {
    const { dim, scale, eps, memory, output, backend } = call;
    const x = scaled(call.x, scale);
    const weight = call.weight === null ? null : Float32Array.from(call.weight);
    const expected = referenceRmsNorm(x, weight, { dim, eps });
    await init({ backend });
    const xs = placed(x, memory);
    const ws = weight === null ? null : placed(weight, memory, 1);
    const out = output === 'out' ? placed(new Float32Array(x.length), memory, 2)
      : output === 'in place' ? xs : undefined;
    const y = rmsNorm(xs, ws, { dim, eps, ...(out && { out }) });
    if (out !== undefined && y !== out) throw new Error('rmsNorm did not return out');
    assertSameBits(y, expected, describeCall(call));
  }), 300);
});

test('property: rmsNorm(-x) = -rmsNorm(x)', async () => {
  await check(fc.asyncProperty(callArb, async (call) => {
    const { dim, eps, backend } = call;
    const x = scaled(call.x, call.scale);
    const weight = call.weight === null ? null : Float32Array.from(call.weight);
    await init({ backend });
    const y = rmsNorm(x, weight, { dim, eps });
    const yOfNeg = rmsNorm(x.map((v) => -v), weight, { dim, eps });
    assertSameBits(yOfNeg, y.map((v) => -v), describeCall(call));
  }), 200);
});

// Permuting the features of x together with the weight permutes the output
// exactly when the permutation maps the contract's summation tree to itself:
// any node's two children may swap (float addition commutes), provided the
// swapped subtrees cover the same kind of thing. A general permutation
// reorders the additions and may move the result by an ulp.
//   inside a block: lane = j + 4a + 8b (j = j0 + 2 j1) sits at path
//     (j0, j1, b, a) of the fold block = (v0+v2)+(v1+v3),
//     v_j = (L_j + L_j+4) + (L_j+8 + L_j+12); a random flip per tree node gives
//     a lane permutation, applied to every 16-value step of the block.
//   across blocks: sum(B[0..n)) = sum(B[0..p)) + sum(B[p..n)) with p the
//     largest power of two below n; the halves may swap when n = 2p.
function lanePermutation(flips) {
  const perm = [];
  for (let lane = 0; lane < LANES; lane++) {
    const j0 = lane & 1; const j1 = (lane >> 1) & 1; const a = (lane >> 2) & 1; const b = (lane >> 3) & 1;
    const n0 = j0 ^ flips[0];
    const n1 = j1 ^ flips[1 + j0];
    const nb = b ^ flips[3 + 2 * j0 + j1];
    const na = a ^ flips[7 + 4 * j0 + 2 * j1 + b];
    perm.push(n0 + 2 * n1 + 4 * na + 8 * nb);
  }
  return perm;
}

function blockPermutation(n, swaps, at = { i: 0 }) {
  if (n === 1) return [0];
  let p = 1;
  while (p * 2 < n) p *= 2;
  const left = blockPermutation(p, swaps, at);
  const right = blockPermutation(n - p, swaps, at).map((k) => k + p);
  return n === 2 * p && swaps[at.i++ % swaps.length] ? [...right, ...left] : [...left, ...right];
}

const permutationArb = fc.record({
  blocks: fc.integer({ min: 1, max: 6 }),
  steps: fc.integer({ min: 1, max: BLOCK / LANES }),
  laneFlips: fc.array(fc.array(fc.boolean(), { minLength: 15, maxLength: 15 }), { minLength: 6, maxLength: 6 }),
  blockSwaps: fc.array(fc.boolean(), { minLength: 8, maxLength: 8 }),
  rows: fc.integer({ min: 1, max: 3 }),
  backend: backendArb,
  eps: epsArb,
  seed: fc.integer(),
}).chain((p) => {
  // Full blocks, except that a single block may be shorter (whole steps).
  const dim = p.blocks === 1 ? p.steps * LANES : p.blocks * BLOCK;
  return fc.record({ ...Object.fromEntries(Object.entries(p).map(([k, v]) => [k, fc.constant(v)])),
    dim: fc.constant(dim), x: arrays(p.rows * dim), weight: arrays(dim) });
});

test('property: permuting features with the weight along the summation tree permutes the output', async () => {
  await check(fc.asyncProperty(permutationArb, async (c) => {
    const { dim, rows, eps, backend } = c;
    const blockOrder = blockPermutation(Math.ceil(dim / BLOCK), c.blockSwaps);
    const perm = new Array(dim);
    for (let i = 0; i < dim; i++) {
      const block = Math.floor(i / BLOCK);
      const within = i % BLOCK;
      const lanes = lanePermutation(c.laneFlips[block].map(Number));
      perm[i] = blockOrder[block] * BLOCK + within - (within % LANES) + lanes[within % LANES];
    }
    const x = Float32Array.from(c.x);
    const weight = Float32Array.from(c.weight);
    const xp = new Float32Array(x.length);
    for (let r = 0; r < rows; r++) for (let i = 0; i < dim; i++) xp[r * dim + perm[i]] = x[r * dim + i];
    const wp = new Float32Array(dim);
    for (let i = 0; i < dim; i++) wp[perm[i]] = weight[i];
    await init({ backend });
    const y = rmsNorm(x, weight, { eps });
    const yp = rmsNorm(xp, wp, { eps });
    const expected = new Float32Array(y.length);
    for (let r = 0; r < rows; r++) for (let i = 0; i < dim; i++) expected[r * dim + perm[i]] = y[r * dim + i];
    assertSameBits(yp, expected, `${backend} rows=${rows} dim=${dim} eps=${eps} permutation ${perm.slice(0, 20)}…`);
  }), 150);
});

// x·2^k: every square, sum, mean, root and quotient scales exactly as long as
// nothing overflows or underflows, and the rescue path rescales exactly too;
// so values stay within 2^±30 and k within ±30 (squares >= 2^-120).
const moderate = fc.oneof(
  fc.constantFrom(0, -0),
  fc.tuple(fc.float({ min: 1, max: 2, maxExcluded: true, noNaN: true }), fc.integer({ min: -30, max: 30 }), fc.boolean())
    .map(([m, e, negative]) => (negative ? -1 : 1) * m * 2 ** e),
);

test('property: with eps = 0, scaling x by a power of two leaves the output unchanged', async () => {
  const arb = fc.tuple(fc.integer({ min: 1, max: 3 }), dimArb).chain(([rows, dim]) => fc.record({
    rows: fc.constant(rows), dim: fc.constant(dim), x: arrays(rows * dim, moderate),
    weight: fc.option(arrays(dim), { nil: null }), k: fc.integer({ min: -30, max: 30 }), backend: backendArb,
  }));
  await check(fc.asyncProperty(arb, async ({ rows, dim, x, weight, k, backend }) => {
    const x32 = Float32Array.from(x);
    const w32 = weight === null ? null : Float32Array.from(weight);
    await init({ backend });
    const y = rmsNorm(x32, w32, { dim, eps: 0 });
    const yScaled = rmsNorm(scaled(x32, k), w32, { dim, eps: 0 });
    assertSameBits(yScaled, y, `${backend} rows=${rows} dim=${dim} k=${k}`);
  }), 200);
});

test('property: batch invariance, one call over a batch = two calls over its halves', async () => {
  const arb = fc.tuple(fc.integer({ min: 2, max: 40 }), dimArb).chain(([rows, dim]) => fc.record({
    rows: fc.constant(rows), dim: fc.constant(dim), x: arrays(rows * dim),
    weight: fc.option(arrays(dim), { nil: null }), split: fc.integer({ min: 1, max: rows - 1 }),
    scale: caseScale, eps: fc.option(epsArb, { nil: undefined }), backend: backendArb,
  }));
  await check(fc.asyncProperty(arb, async ({ rows, dim, x, weight, split, scale, eps, backend }) => {
    const x32 = scaled(x, scale);
    const w32 = weight === null ? null : Float32Array.from(weight);
    await init({ backend });
    const whole = rmsNorm(x32, w32, { dim, eps });
    const first = rmsNorm(x32.subarray(0, split * dim), w32, { dim, eps });
    const second = rmsNorm(x32.subarray(split * dim), w32, { dim, eps });
    const what = `${backend} rows=${rows} dim=${dim} split=${split} eps=${eps}`;
    assertSameBits(whole.subarray(0, split * dim), first, `${what}: first part`);
    assertSameBits(whole.subarray(split * dim), second, `${what}: second part`);
  }), 100);
});
