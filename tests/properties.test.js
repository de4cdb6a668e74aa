// Property tests (fast-check): random shapes, values, options, memory
// layouts and backends against the JS reference, bit for bit, and the
// invariants the numerics contract makes exact. A failure prints fast-check's
// shrunk counterexample with its seed and path; replay it with
// FC_SEED=<seed> FC_PATH=<path> node --test tests/properties.test.js
// (FC_RUNS=<n> for a longer hunt).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import * as reference from '../src/reference/index.js';
import { Tensor } from '../src/index.js';
import {
  addRmsNorm as referenceAddRmsNorm, layerNorm as referenceLayerNorm, rmsNorm as referenceRmsNorm,
} from '../src/reference/index.js';
import { bfloat16ToNumber, float16ToNumber, numberToBfloat16, numberToFloat16 } from '../src/reference/float16.js';
import { assertSameBits, assertSameBitsAs } from './helpers/bits.js';
import { implementations, wasmImplementations } from './helpers/implementations.js';

const INSTANCES = Object.fromEntries((await wasmImplementations()).map((impl) => [impl.name, impl]));

const FLT_MAX = 3.4028234663852886e38;
const BLOCK = 256; // the contract's block and lane counts (src/kernels/f32-rmsnorm/rmsnorm_f32.h)
const LANES = 16;

const replay = process.env.FC_SEED === undefined ? {}
  : { seed: Number(process.env.FC_SEED), path: process.env.FC_PATH };
const check = (property, numRuns) => fc.assert(property, { numRuns: Number(process.env.FC_RUNS ?? numRuns), ...replay });

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

// Storage: float32 values as they are, or narrowed to a 16-bit type; some
// 16-bit cases take raw bit patterns instead (any NaN payload, subnormals).
const NARROW = { bfloat16: numberToBfloat16, float16: numberToFloat16 };
function stored(values, dtype, scale = 0, raw = null) {
  if (dtype === 'float32') return Float32Array.from(values, (v) => v * 2 ** scale);
  if (raw !== null) return Uint16Array.from(raw);
  return Uint16Array.from(values, (v) => NARROW[dtype](Math.fround(v * 2 ** scale)));
}
const ARRAY_OF = { float32: Float32Array, bfloat16: Uint16Array, float16: Uint16Array };
const sameBits = (a, b, what, dtype) => assertSameBitsAs(dtype, a, b, what);

// One call: function (rmsNorm or the fused addRmsNorm), storage type, cast
// mode, weight (none, float32 or the storage type) and weight offset, shape
// given as dim or as shape/axis, values, eps, where the arrays live (plain,
// at a byteOffset, on a SharedArrayBuffer, in wasm memory as tensors or as
// views of them) and where the result goes (new array, out, in place).
const callArb = fc.tuple(fc.integer({ min: 0, max: 4 }), dimArb).chain(([rows, dim]) => fc.record({
  rows: fc.constant(rows),
  dim: fc.constant(dim),
  fn: fc.constantFrom('rmsNorm', 'addRmsNorm'),
  dtype: fc.constantFrom('float32', 'bfloat16', 'float16'),
  x: arrays(rows * dim),
  xRaw: fc.option(arrays(rows * dim, fc.integer({ min: 0, max: 0xffff })), { nil: null, freq: 4 }),
  residual: arrays(rows * dim),
  weight: fc.option(arrays(dim), { nil: null }),
  weightInStorage: fc.boolean(),
  castMode: fc.option(fc.constantFrom('llama', 'gemma'), { nil: undefined }),
  weightOffset: fc.option(fc.oneof(fc.constantFrom(1, -0, 0, 3e38, -3e38), fc.float({ noNaN: true, noDefaultInfinity: true })), { nil: undefined }),
  shapeForm: fc.constantFrom('dim', 'dim', 'shape', 'shape3'),
  scale: caseScale,
  eps: fc.option(epsArb, { nil: undefined }),
  memory: fc.constantFrom('plain', 'offset', 'shared', 'tensor', 'tensor view'),
  output: fc.constantFrom('new', 'out', 'in place'),
  backend: backendArb,
}));

/** A copy of `values` (a typed array), laid out as `memory` says; tensors
 * made (by tensors.alloc) are pushed to `tensors` (to be freed). */
function placed(values, memory, tensors, offset = 3) {
  const Type = values.constructor;
  if (memory === 'plain') return Type.from(values);
  if (memory === 'tensor' || memory === 'tensor view') {
    const t = tensors.alloc(values.length, Type === Float32Array ? 'float32' : tensors.dtype);
    t.array.set(values);
    tensors.push(t);
    return memory === 'tensor' ? t : t.array;
  }
  const Buffer = memory === 'shared' ? SharedArrayBuffer : ArrayBuffer;
  const size = Type.BYTES_PER_ELEMENT;
  const a = new Type(new Buffer((values.length + offset + 1) * size), offset * size, values.length);
  a.set(values);
  return a;
}
const arrayOf = (v) => (v instanceof Tensor ? v.array : v);

/** The call's inputs in storage form, and its options (without out). */
function inputsOf(call) {
  const { rows, dim, dtype, fn } = call;
  const x = stored(call.x, dtype, call.scale, call.xRaw);
  const residual = fn === 'addRmsNorm' ? stored(call.residual, dtype) : undefined;
  const weightDtype = call.weightInStorage ? dtype : 'float32';
  const weight = call.weight === null ? null : stored(call.weight, weightDtype);
  const options = { eps: call.eps, castMode: call.castMode };
  if (dtype !== 'float32') options.dtype = dtype;
  if (weight !== null) Object.assign(options, { weightDtype, weightOffset: call.weightOffset });
  if (call.shapeForm === 'dim') options.dim = dim;
  else if (call.shapeForm === 'shape') options.shape = [rows, dim];
  else Object.assign(options, { shape: [rows, 1, dim], axis: -1 });
  return { x, residual, weight, options };
}

function describeCall(c) {
  return `${c.fn} ${c.backend} ${c.dtype} rows=${c.rows} dim=${c.dim} (${c.shapeForm}) eps=${c.eps} `
    + `weight=${c.weight === null ? 'none' : c.weightInStorage ? c.dtype : 'float32'} castMode=${c.castMode} `
    + `weightOffset=${c.weightOffset} scale=2^${c.scale} ${c.memory} ${c.output}`;
}

test('property: both backends equal the reference bit for bit, for every dtype, option and layout', async () => {
  await check(fc.asyncProperty(callArb, async (call) => {
    const { fn, dtype, memory, output, backend } = call;
    const { x, residual, weight, options } = inputsOf(call);
    const expectedResidual = residual?.slice();
    const expected = fn === 'rmsNorm' ? referenceRmsNorm(x, weight, options)
      : referenceAddRmsNorm(x, expectedResidual, weight, options);
    const { rmsNorm, addRmsNorm, alloc } = INSTANCES[backend];
    const tensors = Object.assign([], { dtype, alloc });
    try {
      const xs = placed(x, memory, tensors);
      const ws = weight === null ? null : placed(weight, memory, tensors, 1);
      const rs = residual === undefined ? undefined : placed(residual, memory, tensors, 2);
      const out = output === 'out' ? placed(new ARRAY_OF[dtype](x.length), memory, tensors, 2)
        : output === 'in place' ? xs : undefined;
      const opts = { ...options, ...(out && { out }) };
      const y = fn === 'rmsNorm' ? rmsNorm(xs, ws, opts) : addRmsNorm(xs, rs, ws, opts);
      if (out !== undefined && y !== out) throw new Error(`${fn} did not return out`);
      sameBits(arrayOf(y), expected, describeCall(call), dtype);
      if (rs !== undefined) sameBits(arrayOf(rs), expectedResidual, `${describeCall(call)}: the updated residual`, dtype);
    } finally {
      tensors.forEach((t) => t.free());
    }
  }), 300);
});

// Negation commutes with every step (round to nearest even is symmetric), in
// every storage type and cast mode, with or without the residual add; except
// where x_i + r_i cancels exactly: IEEE gives +0 for both (1 + -1 and -1 + 1),
// so that position (and its output) keeps its sign. Such residuals are moved
// off the cancellation (r_i = x_i) before the check.
const negate = (a) => (a instanceof Float32Array ? a.map((v) => -v) : a.map((b) => b ^ 0x8000));
// -y for a result: a 16-bit NaN stays the one NaN pattern every
// implementation writes (src/kernels/float16.h), whatever the sign of x.
const INFINITY16 = { bfloat16: 0x7f80, float16: 0x7c00 };
const isNaN16 = (b, dtype) => (b & 0x7fff) > INFINITY16[dtype];
const negateResult = (a, dtype) =>
  (a instanceof Float32Array ? negate(a) : a.map((b) => (isNaN16(b, dtype) ? b : b ^ 0x8000)));
const WIDEN = { float32: (v) => v, bfloat16: bfloat16ToNumber, float16: float16ToNumber };
function withoutCancellation(x, residual, dtype) {
  for (let i = 0; i < x.length; i++) {
    const a = WIDEN[dtype](x[i]);
    const b = WIDEN[dtype](residual[i]);
    if (a + b === 0 && !Object.is(a, b)) residual[i] = x[i];
  }
  return residual;
}

test('property: rmsNorm(-x) = -rmsNorm(x), and addRmsNorm(-x, -r) = -addRmsNorm(x, r)', async () => {
  await check(fc.asyncProperty(callArb, async (call) => {
    const { fn, dtype, backend } = call;
    const { x, residual, weight, options } = inputsOf(call);
    const { rmsNorm, addRmsNorm } = INSTANCES[backend];
    const run = (xs, rs) => (fn === 'rmsNorm' ? rmsNorm(xs, weight, options) : addRmsNorm(xs, rs, weight, options));
    const r1 = residual === undefined ? undefined : withoutCancellation(x, residual.slice(), call.dtype);
    const r2 = r1 === undefined ? undefined : negate(r1);
    const yOfNeg = run(negate(x), r2);
    const y = run(x, r1);
    sameBits(yOfNeg, negateResult(y, dtype), describeCall(call), dtype);
    if (r1 !== undefined) sameBits(r2, negateResult(r1, dtype), `${describeCall(call)}: the updated residual`, dtype);
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
    const { rmsNorm } = INSTANCES[backend];
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
    const { rmsNorm } = INSTANCES[backend];
    const y = rmsNorm(x32, w32, { dim, eps: 0 });
    const yScaled = rmsNorm(scaled(x32, k), w32, { dim, eps: 0 });
    assertSameBits(yScaled, y, `${backend} rows=${rows} dim=${dim} k=${k}`);
  }), 200);
});

test('property: batch invariance, one call over a batch = two calls over its halves', async () => {
  const arb = fc.tuple(fc.integer({ min: 2, max: 40 }), dimArb).chain(([rows, dim]) => fc.record({
    rows: fc.constant(rows), dim: fc.constant(dim), x: arrays(rows * dim), residual: arrays(rows * dim),
    weight: fc.option(arrays(dim), { nil: null }), split: fc.integer({ min: 1, max: rows - 1 }),
    fn: fc.constantFrom('rmsNorm', 'addRmsNorm'), dtype: fc.constantFrom('float32', 'bfloat16', 'float16'),
    castMode: fc.constantFrom('llama', 'gemma'), scale: caseScale, eps: fc.option(epsArb, { nil: undefined }), backend: backendArb,
  }));
  await check(fc.asyncProperty(arb, async ({ rows, dim, x, residual, weight, split, fn, dtype, castMode, scale, eps, backend }) => {
    const xs = stored(x, dtype, scale);
    const rs = stored(residual, dtype);
    const ws = weight === null ? null : Float32Array.from(weight);
    const options = { dim, eps, dtype, castMode };
    const { rmsNorm, addRmsNorm } = INSTANCES[backend];
    const run = (xPart, rPart) => (fn === 'rmsNorm' ? rmsNorm(xPart, ws, options) : addRmsNorm(xPart, rPart, ws, options));
    const rWhole = rs.slice();
    const whole = run(xs, rWhole);
    const rParts = rs.slice();
    const first = run(xs.subarray(0, split * dim), rParts.subarray(0, split * dim));
    const second = run(xs.subarray(split * dim), rParts.subarray(split * dim));
    const what = `${fn} ${backend} ${dtype} ${castMode} rows=${rows} dim=${dim} split=${split} eps=${eps}`;
    sameBits(whole.subarray(0, split * dim), first, `${what}: first part`, dtype);
    sameBits(whole.subarray(split * dim), second, `${what}: second part`, dtype);
    if (fn === 'addRmsNorm') sameBits(rParts, rWhole, `${what}: the updated residual`, dtype);
  }), 100);
});

// LayerNorm and the backward passes: random shapes, values, weights and
// biases (or none), the statistics given or returned, layouts and backends
// against the reference, bit for bit.
const normsArb = fc.tuple(fc.integer({ min: 0, max: 4 }), dimArb).chain(([rows, dim]) => fc.record({
  rows: fc.constant(rows),
  dim: fc.constant(dim),
  fn: fc.constantFrom('layerNorm', 'rmsNormBackward', 'layerNormBackward'),
  x: arrays(rows * dim),
  dy: arrays(rows * dim),
  weight: fc.option(arrays(dim), { nil: null }),
  bias: fc.option(arrays(dim), { nil: null }),
  scale: caseScale,
  eps: fc.option(epsArb, { nil: undefined }),
  stats: fc.boolean(), // layerNorm: return mean and rstd; backward: pass the forward's
  inPlace: fc.boolean(), // layerNorm: out = x; backward: dx = dy
  memory: fc.constantFrom('plain', 'offset', 'shared', 'tensor', 'tensor view'),
  backend: backendArb,
})).filter((c) => c.fn === 'rmsNormBackward' || c.weight !== null || c.bias !== null || c.rows > 0);

function runNorm(m, c, layout) {
  const { fn, dim, eps } = c;
  const x = layout(scaled(c.x, c.scale));
  const weight = c.weight === null ? null : layout(Float32Array.from(c.weight));
  const bias = c.bias === null ? null : layout(Float32Array.from(c.bias));
  const shape = weight === null && bias === null ? { dim } : {};
  const rows = c.x.length / dim;
  if (fn === 'layerNorm') {
    const stats = c.stats ? { mean: layout(new Float32Array(rows)), rstd: layout(new Float32Array(rows)) } : {};
    const y = m.layerNorm(x, weight, bias, { eps, ...shape, ...stats, ...(c.inPlace && { out: x }) });
    return [y, stats.mean, stats.rstd];
  }
  const dy = layout(Float32Array.from(c.dy));
  const opts = { eps, ...(fn === 'rmsNormBackward' && weight === null ? { dim } : shape), ...(c.inPlace && { dx: dy }) };
  // The forward's statistics, from the reference on plain copies.
  if (c.stats && fn === 'rmsNormBackward') {
    const rstd = new Float32Array(rows);
    referenceRmsNorm(scaled(c.x, c.scale), null, { dim, eps, rstd });
    opts.rstd = layout(rstd);
  } else if (c.stats) {
    const mean = new Float32Array(rows);
    const rstd = new Float32Array(rows);
    referenceLayerNorm(scaled(c.x, c.scale), null, null, { dim, eps, mean, rstd });
    Object.assign(opts, { mean: layout(mean), rstd: layout(rstd) });
  }
  const r = fn === 'rmsNormBackward' ? m.rmsNormBackward(dy, x, weight, opts) : m.layerNormBackward(dy, x, weight, bias, opts);
  return [r.dx, r.dweight, r.dbias];
}

test('property: layerNorm and the backward passes equal the reference bit for bit, in every layout', async () => {
  await check(fc.asyncProperty(normsArb, async (c) => {
    const expected = runNorm(reference, c, (a) => a);
    const wasm = INSTANCES[c.backend];
    const tensors = Object.assign([], { dtype: 'float32', alloc: wasm.alloc });
    try {
      const got = runNorm(wasm, c, (a) => placed(a, c.memory, tensors));
      const what = `${c.fn} ${c.backend} rows=${c.rows} dim=${c.dim} eps=${c.eps} weight=${c.weight !== null} `
        + `bias=${c.bias !== null} stats=${c.stats} inPlace=${c.inPlace} scale=2^${c.scale} ${c.memory}`;
      expected.forEach((e, i) => {
        if (e === undefined || e === null) return;
        assertSameBits(arrayOf(got[i]), e, `${what}: output ${i}`);
      });
    } finally {
      tensors.forEach((t) => t.free());
    }
  }), 200);
});

// Odd up to the sign of exact zeros: a difference or sum that cancels exactly
// is +0 either way in IEEE arithmetic (x - x, and every running sum from +0).
function assertOdd(b, a, what) {
  for (let i = 0; i < a.length; i++) {
    if (!(b[i] === -a[i] || (Number.isNaN(a[i]) && Number.isNaN(b[i])))) {
      throw new Error(`${what}: first difference at index ${i}: ${b[i]} vs -(${a[i]})`);
    }
  }
}

test('property: layerNorm(-x) = -layerNorm(x) without a bias; the backward passes are odd in dy', async () => {
  await check(fc.asyncProperty(normsArb, async (c) => {
    const call = c.fn === 'layerNorm' ? { ...c, bias: null, weight: c.weight ?? Array(c.dim).fill(1) } : c;
    const wasm = INSTANCES[c.backend];
    const plain = (a) => a;
    const [a0, a1, a2] = runNorm(wasm, call, plain);
    const negated = c.fn === 'layerNorm' ? { ...call, x: call.x.map((v) => -v) } : { ...call, dy: call.dy.map((v) => -v) };
    const [b0, b1, b2] = runNorm(wasm, negated, plain);
    const what = `${c.fn} ${c.backend} rows=${c.rows} dim=${c.dim} eps=${c.eps} scale=2^${c.scale}`;
    assertOdd(b0, a0, `${what}: y or dx`);
    if (c.fn === 'layerNorm') {
      if (a1 !== undefined) assertOdd(b1, a1, `${what}: mean`);
      if (a2 !== undefined) assertSameBits(b2, a2, `${what}: rstd`);
    } else {
      if (a1 !== null) assertOdd(b1, a1, `${what}: dweight`);
      if (a2 !== null && a2 !== undefined) assertOdd(b2, a2, `${what}: dbias`);
    }
  }), 150);
});

// Zero-row calls name any dim (a shape [0, 2^53 - 1] holds no values): every
// implementation answers every call alike, the same result or the same error
// class and message, and every error is the function's own (its message
// starts with its name: no engine-internal "Invalid array length").
const HUGE_DIMS = [2 ** 31, 2 ** 32, 2 ** 32 + 32, 2 ** 40, 2 ** 53 - 1, 2 ** 53 - 32];
const NORM_PARAMS = {
  rmsNorm: ['x', 'weight'], addRmsNorm: ['x', 'residual', 'weight'], layerNorm: ['x', 'weight', 'bias'],
  rmsNormBackward: ['dy', 'x', 'weight'], layerNormBackward: ['dy', 'x', 'weight', 'bias'],
};
const dimSpecArb = fc.oneof(
  fc.record({ dim: fc.constantFrom(...HUGE_DIMS) }),
  fc.record({ dim: fc.integer({ min: 1, max: 64 }) }),
  // A shape's normalized dims, from axis on: their product may pass 2^53 (not a safe integer).
  fc.record({ shape: fc.tuple(fc.constantFrom(0, 1), fc.constantFrom(...HUGE_DIMS, 20, 32), fc.constantFrom(1, 20, 2 ** 53 - 1)), axis: fc.constantFrom(1, 2, -1, undefined) }),
  fc.record({ shape: fc.tuple(fc.constantFrom(...HUGE_DIMS), fc.constant(0)), axis: fc.constantFrom(0, 1) }),
  fc.record({ dim: fc.constantFrom(...HUGE_DIMS, 4), rowStride: fc.constantFrom(...HUGE_DIMS, 4, 2 ** 53 - 1) }),
  fc.record({ dim: fc.constantFrom(...HUGE_DIMS, 4), heads: fc.constantFrom(1, 2, 2 ** 31), headStride: fc.constantFrom(undefined, ...HUGE_DIMS) }),
  fc.record({}), // dim from the weight, or the error for none
);
const zeroRowCallArb = fc.record({
  fn: fc.constantFrom(...Object.keys(NORM_PARAMS), 'toFloat32', 'fromFloat32', 'quantize'),
  dims: dimSpecArb,
  length: fc.oneof({ weight: 4, arbitrary: fc.constant(0) }, { weight: 1, arbitrary: fc.integer({ min: 1, max: 64 }) }),
  weightLength: fc.option(fc.constantFrom(0, 1, 4, 32), { nil: null }),
  biasLength: fc.option(fc.constantFrom(0, 4), { nil: null }),
  dtype: fc.constantFrom(undefined, 'float32', 'bfloat16', 'float16', 'q8_0'),
  outDtype: fc.constantFrom(undefined, 'q8_0', 'q8_1', 'q8_K', 'float32'),
  out: fc.boolean(), stats: fc.boolean(), eps: fc.constantFrom(undefined, 0, 1e-5),
});

/** fn's arguments for `c`, made anew for each implementation (outputs are written). */
function zeroRowArguments(c) {
  const storage = c.dtype === 'bfloat16' || c.dtype === 'float16' ? Uint16Array : Float32Array;
  const perRow = () => new storage(c.length);
  if (c.fn === 'toFloat32') return [new Uint16Array(c.length), { dtype: c.dtype, ...(c.out ? { out: new Float32Array(c.length) } : {}) }];
  if (c.fn === 'fromFloat32') return [new Float32Array(c.length), { dtype: c.dtype, ...(c.out ? { out: new Uint16Array(c.length) } : {}) }];
  if (c.fn === 'quantize') return [new Float32Array(c.length), { dtype: c.dtype ?? 'q8_0', ...(c.out ? { out: new Uint8Array(0) } : {}) }];
  const forward = c.fn === 'rmsNorm' || c.fn === 'addRmsNorm';
  const options = { ...c.dims };
  for (const key of Object.keys(options)) if (options[key] === undefined) delete options[key];
  if (c.eps !== undefined) options.eps = c.eps;
  if (forward && c.dtype !== undefined) options.dtype = c.dtype;
  if (forward && c.outDtype !== undefined) options.outDtype = c.outDtype;
  if (c.out) options[c.fn.endsWith('Backward') ? 'dx' : 'out'] = c.fn.endsWith('Backward') ? new Float32Array(c.length) : perRow();
  if (c.stats && c.fn !== 'addRmsNorm') {
    options.rstd = new Float32Array(c.length === 0 ? 0 : 1);
    if (c.fn.startsWith('layerNorm')) options.mean = new Float32Array(c.length === 0 ? 0 : 1);
  }
  const args = NORM_PARAMS[c.fn].map((name) => (name === 'weight' ? (c.weightLength === null ? null : new Float32Array(c.weightLength))
    : name === 'bias' ? (c.biasLength === null ? null : new Float32Array(c.biasLength)) : perRow()));
  return [...args, options];
}

/** What a call came to, comparable across implementations: its result's arrays (kind, length, values:
 * float32 ones exactly, but for a NaN's sign and payload, which wasm leaves open) or its error. */
function outcome(call) {
  const values = (v) => (v instanceof Float32Array ? Array.from(v, (f) => (Object.is(f, -0) ? '-0' : String(f))).join(',') : v.join(','));
  const show = (v) => (v === null ? 'null' : `${v.constructor.name}(${v.length}) ${values(v)}`);
  try {
    const result = call();
    return ArrayBuffer.isView(result) ? show(result) : JSON.stringify(Object.fromEntries(Object.entries(result).map(([k, v]) => [k, show(v)])));
  } catch (error) {
    return `${error.constructor.name}: ${error.message}`;
  }
}

test('property: zero-row calls with any dim: every implementation gives the same answer, never an engine-internal error', async () => {
  const impls = await implementations();
  await check(fc.asyncProperty(zeroRowCallArb, async (c) => {
    const outcomes = impls.map((impl) => outcome(() => impl[c.fn](...zeroRowArguments(c))));
    const what = `${c.fn}(${JSON.stringify(zeroRowArguments(c), (k, v) => (ArrayBuffer.isView(v) ? `${v.constructor.name}(${v.length})` : v))})`;
    for (let i = 1; i < impls.length; i++) {
      assert.equal(outcomes[i], outcomes[0], `${what}: ${impls[i].name} vs ${impls[0].name}`);
    }
    if (/Error: /.test(outcomes[0])) assert.match(outcomes[0], new RegExp(`^(TypeError|RangeError): ${c.fn}: `), `${what}: an error not the function's own`);
  }), 400);
});

test('zero-row calls with a dim too large to allocate return empty results from every implementation', async () => {
  const empty = 'Float32Array(0) ';
  for (const impl of await implementations()) {
    for (const [fn, args] of [
      ['rmsNorm', [new Float32Array(0), null, { shape: [0, 20, 2 ** 53 - 1], axis: 1 }]],
      ['rmsNormBackward', [new Float32Array(0), new Float32Array(0), null, { shape: [0, 2 ** 32] }]],
      ['layerNormBackward', [new Float32Array(0), new Float32Array(0), null, null, { dim: 2 ** 53 - 1 }]],
    ]) {
      const expected = fn === 'rmsNorm' ? empty
        : JSON.stringify(fn === 'rmsNormBackward' ? { dx: empty, dweight: 'null' } : { dx: empty, dweight: 'null', dbias: 'null' });
      assert.equal(outcome(() => impl[fn](...args)), expected, `${impl.name} ${fn}`);
    }
  }
});
