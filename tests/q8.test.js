// ggml's 8-bit block outputs (options.outDtype 'q8_0', 'q8_1', 'q8_K').
// First the reference quantizer against blocks worked out by hand from
// ggml's definitions (quantize_row_q8_0_ref, quantize_row_q8_1_ref,
// quantize_row_q8_K_ref in ggml/src/ggml-quants.c; the package's rule
// where their C is undefined: src/kernels/q8_blocks.h), then the fused
// outputs of every implementation against that quantizer applied to the
// package's own storage-dtype output of the same call.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { BLOCK_FORMAT, BLOCK_FORMATS } from '../src/loader/abi.js';
import { dequantize, quantize } from '../src/reference/index.js';
import { REFERENCE_FORMATS } from '../src/reference/q8.js';
import { blocksWgsl } from '../src/webgpu/wgsl/blocks.js';

/** A block's bytes as ggml's struct lays them out, little-endian. */
const u16 = (v) => [v & 0xff, (v >> 8) & 0xff];
const f32le = (v) => [...new Uint8Array(new Float32Array([v]).buffer)];
const i8 = (values) => values.map((v) => v & 0xff);
const i16 = (values) => values.flatMap((v) => u16(v & 0xffff));
const padded = (values, n) => [...values, ...new Array(n - values.length).fill(0)];

/** The bytes of block_q8_0 { d (float16 bits); qs[32] }. */
const q8_0Block = (dBits, qs) => [...u16(dBits), ...i8(padded(qs, 32))];
/** The bytes of block_q8_1 { d; s (float16 bits); qs[32] }. */
const q8_1Block = (dBits, sBits, qs) => [...u16(dBits), ...u16(sBits), ...i8(padded(qs, 32))];
/** The bytes of block_q8_K { float d; qs[256]; bsums[16] }. */
const q8_KBlock = (d, qs, bsums) => [...f32le(d), ...i8(padded(qs, 256)), ...i16(padded(bsums, 16))];

const block = (values, n) => new Float32Array(padded(values, n));

function assertBytes(got, want, what) {
  assert.deepEqual([...got], want, what);
}

test('every format of the table (src/loader/abi.js) has its rule in the reference and the GPU\'s shaders (the C ones: the build, by -Wswitch)', () => {
  assert.deepEqual([...REFERENCE_FORMATS], [...BLOCK_FORMATS], 'the reference\'s RULES, in table order');
  for (const name of BLOCK_FORMATS) {
    assert.match(blocksWgsl(BLOCK_FORMAT[name].code, 3), /fn quantize\(range: vec2<u32>\)/, name);
  }
});

test('q8_0 and q8_1 by hand: roundf halves away from zero, where nearest-even would not', () => {
  // amax 127: d = 1 exactly (float16 0x3C00), id = 1, so qs[j] = roundf(x_j).
  const x = block([127, -63.5, 0.5, -0.5, 1.5, 2.5, 0, -3.5], 32);
  // roundf: -63.5 → -64, 0.5 → 1, -0.5 → -1, 2.5 → 3 (nearest-even: -64, 0, -0, 2).
  const qs = [127, -64, 1, -1, 2, 3, 0, -4];
  assertBytes(quantize(x, { dtype: 'q8_0' }), q8_0Block(0x3c00, qs), 'q8_0');
  // s = fp16(Σqs · d) = fp16(64) = 0x5400.
  assert.equal(qs.reduce((a, b) => a + b), 64);
  assertBytes(quantize(x, { dtype: 'q8_1' }), q8_1Block(0x3c00, 0x5400, qs), 'q8_1');
});

test('q8_1 by hand: s is the sum times the float32 d, not its float16', () => {
  // 32 values fround(0.3): d = fround(0.3/127) ≈ 0.0023622048 (float16 0x18D6 =
  // 2^-9 · 1238/1024 ≈ 0.0023612976), id = fround(1/d) ≈ 423.33, every qs 127,
  // Σqs = 4064. 4064 · d ≈ 9.6000003 → float16 9.6015625 (0x48CD); 4064 times
  // the float16 d would be 9.59631 → 9.59375 (0x48CC).
  const x = new Float32Array(32).fill(0.3);
  assertBytes(quantize(x, { dtype: 'q8_1' }), q8_1Block(0x18d6, 0x48cd, new Array(32).fill(127)), 'q8_1');
  assertBytes(quantize(x, { dtype: 'q8_0' }), q8_0Block(0x18d6, new Array(32).fill(127)), 'q8_0');
});

test('q8_0: zero blocks, and the rule where ggml\'s C is undefined', () => {
  assertBytes(quantize(new Float32Array(32), { dtype: 'q8_0' }), q8_0Block(0, []), 'all zeros: d = 0, qs = 0');
  assertBytes(quantize(block([-0], 32), { dtype: 'q8_0' }), q8_0Block(0, []), '-0 gives +0 bytes');
  // An infinity: amax = d = Inf (0x7C00), id = 1/Inf = 0, x·0 = 0 (NaN for the infinity: 0).
  assertBytes(quantize(block([Infinity, 1, -5], 32), { dtype: 'q8_0' }), q8_0Block(0x7c00, []), 'infinity');
  // A NaN last: MAX(amax, NaN) is NaN, so d = NaN (0x7E00), id = NaN, every qs NaN → 0.
  assertBytes(quantize(block([3, ...new Array(30).fill(0), NaN], 32), { dtype: 'q8_0' }), q8_0Block(0x7e00, []), 'NaN last');
  // A NaN first: MAX(NaN, 2) = 2 (ggml's `a > b ? a : b`), so amax = 2: d = fround(2/127)
  // (float16 0x2408), 2·id rounds to 127, the NaN to 0.
  assertBytes(quantize(block([NaN, 2], 32), { dtype: 'q8_0' }), q8_0Block(0x2408, [0, 127]), 'NaN first');
  // A tiny block: d = fround(2^-140/127) is a float32 subnormal whose reciprocal
  // overflows (id = Inf), float16 d = 0; ±2^-140 · Inf saturates to 127 and -128, 0 · Inf is NaN → 0.
  assertBytes(quantize(block([2 ** -140, 0, -(2 ** -140)], 32), { dtype: 'q8_0' }), q8_0Block(0, [127, 0, -128]), 'id = Inf');
});

test('q8_K by hand: the first value of the largest magnitude, nearest_int ties to even', () => {
  // max = -127 (first of ±127): iscale = -127/max = 1, d = 1/iscale = 1.
  const tail = [0.5, 1.5, 2.5, -0.5, -2.5, 3.5];
  // nearest_int: 0.5 → 0, 1.5 → 2, 2.5 → 2, -0.5 → 0, -2.5 → -2, 3.5 → 4 (roundf: 1, 2, 3, -1, -3, 4).
  const qsA = [-127, 127, 0, 2, 2, 0, -2, 4];
  assertBytes(quantize(block([-127, 127, ...tail], 256), { dtype: 'q8_K' }), q8_KBlock(1, qsA, [6]), '-127 first');
  // max = +127 first: iscale = -1, d = -1, and every q negated (ties still to even).
  const qsB = [-127, 127, 0, -2, -2, 0, 2, -4];
  assertBytes(quantize(block([127, -127, ...tail], 256), { dtype: 'q8_K' }), q8_KBlock(-1, qsB, [-6]), '+127 first');
  // bsums: sums of 16 quants; a group of sixteen 127s sums past int8.
  const x = new Float32Array(256);
  x.fill(-127, 16, 32); // max = -127 → iscale = 1
  x[40] = 5;
  const bsums = [0, -16 * 127, 5];
  assertBytes(quantize(x, { dtype: 'q8_K' }), q8_KBlock(1, [...new Array(16).fill(0), ...new Array(16).fill(-127), ...new Array(8).fill(0), 5], bsums), 'bsums');
});

test('q8_K: zero blocks (bsums written as zeros), NaNs never the max, infinities and tiny blocks', () => {
  assertBytes(quantize(new Float32Array(256), { dtype: 'q8_K' }), q8_KBlock(0, [], []), 'all zeros');
  // NaN: `ax > amax` is false, so max = 1: iscale = -127, d = fround(1/-127); the NaN quantizes to 0.
  assertBytes(quantize(block([NaN, 1, -1], 256), { dtype: 'q8_K' }), q8_KBlock(Math.fround(1 / Math.fround(-127)), [0, -127, 127], [0]), 'NaN');
  assertBytes(quantize(block([NaN], 256), { dtype: 'q8_K' }), q8_KBlock(0, [], []), 'only NaN: a zero block');
  // max = +Inf: iscale = -0, d = 1/-0 = -Inf; finite x · -0 = ∓0 → 0, Inf · -0 = NaN → 0.
  assertBytes(quantize(block([1, Infinity, -3], 256), { dtype: 'q8_K' }), q8_KBlock(-Infinity, [], []), 'infinity');
  // max = 2^-140: iscale = -127/max overflows to -Inf, d = -0; x · -Inf saturates (−Inf → -128, +Inf → 127), 0 · Inf → 0.
  const tiny = 2 ** -140;
  assertBytes(quantize(block([tiny, 0, -tiny], 256), { dtype: 'q8_K' }), q8_KBlock(-0, [-128, 0, 127], [-1]), 'iscale = -Inf');
});

test('dequantize: qs · d, with d the float16 (q8_0, q8_1) or float32 (q8_K) of the block', () => {
  const q80 = new Uint8Array([...q8_0Block(0x3c00, [127, -64, 1]), ...q8_0Block(0x2008, [2])]); // 0x2008 = 2^-7 · (1 + 8/1024)
  const want0 = [127, -64, 1, ...new Array(29).fill(0), 2 * 2 ** -7 * (1 + 8 / 1024), ...new Array(31).fill(0)];
  assert.deepEqual([...dequantize(q80, { dtype: 'q8_0' })], want0);
  const q81 = new Uint8Array(q8_1Block(0x4000, 0x7bff, [-3, 5])); // d = 2; s is not read
  assert.deepEqual([...dequantize(q81, { dtype: 'q8_1' })], [-6, 10, ...new Array(30).fill(0)]);
  const q8K = new Uint8Array(q8_KBlock(-0.5, [-127, 3], [9]));
  assert.deepEqual([...dequantize(q8K, { dtype: 'q8_K' })], [63.5, -1.5, ...new Array(254).fill(-0)]);
});

test('quantize and dequantize refuse wrong arguments by name', () => {
  assert.throws(() => quantize(new Float32Array(31), { dtype: 'q8_0' }), { name: 'RangeError', message: /^quantize: x\.length \(31\) must be a multiple of 32/ });
  assert.throws(() => quantize(new Float32Array(32)), { name: 'TypeError', message: /^quantize: options\.dtype is required/ });
  assert.throws(() => quantize(new Float32Array(32), { dtype: 'q4_0' }), { name: 'TypeError', message: /^quantize: options\.dtype must be/ });
  assert.throws(() => quantize([1, 2], { dtype: 'q8_0' }), { name: 'TypeError', message: /^quantize: x must be a Float32Array/ });
  assert.throws(() => dequantize(new Uint8Array(35), { dtype: 'q8_0' }), { name: 'RangeError', message: /^dequantize: bytes\.length \(35\) must be a multiple of 34/ });
  assert.throws(() => dequantize(new Int8Array(34), { dtype: 'q8_0' }), { name: 'TypeError', message: /^dequantize: bytes must be a Uint8Array/ });
  assert.throws(() => dequantize(new Uint8Array(34), { dtype: 'q8_0', out: 1 }), { name: 'TypeError', message: /^dequantize: unknown option 'out'/ });
});

// ---- fused outputs ------------------------------------------------------------

const { implementations } = await import('./helpers/implementations.js');
const { prng, normalArray } = await import('./helpers/random.js');
const { EDGE_POWERS, q8EdgeWeight, signedPowerRows } = await import('./helpers/q8-edges.js');
const reference = await import('../src/reference/index.js');
const IMPLS = await implementations();
const FORMATS = { q8_0: { n: 32, bytes: 34 }, q8_1: { n: 32, bytes: 36 }, q8_K: { n: 256, bytes: 292 } };

/** The float32 values a storage-dtype output holds. */
const widened = (out, dtype) => (dtype === 'float32' ? out : reference.toFloat32(out, { dtype }));
const copy = (a) => (a === null ? null : a.slice());

/** The first index where two byte arrays differ, or -1. */
function firstDifference(a, b) {
  if (a.length !== b.length) return -2;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return i;
  return -1;
}

/**
 * impl's fused call (options.outDtype = format) against the reference
 * quantizer applied to impl's own storage-dtype output of the same call
 * (fresh copies of the residual for each). Returns the fused bytes.
 */
function checkFused(impl, { fn, x, residual = null, weight = null, options = {} }, format, context) {
  const plainResidual = copy(residual);
  const plainArgs = fn === 'addRmsNorm' ? [x, plainResidual, weight] : [x, weight];
  const plain = impl[fn](...plainArgs, options);
  const dtype = options.dtype ?? 'float32';
  const stride = options.rowStride;
  let values = widened(plain, dtype);
  const dim = options.dim ?? weight.length;
  if (stride !== undefined && stride !== dim) {
    // The fused rows are packed: the plain call's rows, gathered.
    const rows = Math.ceil(x.length / stride);
    const packed = new Float32Array(rows * dim);
    for (let r = 0; r < rows; r++) packed.set(values.subarray(r * stride, r * stride + dim), r * dim);
    values = packed;
  }
  const want = reference.quantize(values, { dtype: format });
  const fusedResidual = copy(residual);
  const fusedArgs = fn === 'addRmsNorm' ? [x, fusedResidual, weight] : [x, weight];
  const got = impl[fn](...fusedArgs, { ...options, outDtype: format });
  const at = firstDifference(got, want);
  if (at !== -1) {
    const block = Math.floor(at / FORMATS[format].bytes);
    assert.fail(`${impl.name} ${fn} ${format} ${context}: first differing byte ${at} (block ${block}): ${got[at]} vs ${want[at]}`);
  }
  if (residual !== null) assert.deepEqual(fusedResidual, plainResidual, `${impl.name} ${context}: the residual as the plain call updates it`);
  return got;
}

const DTYPES = ['float32', 'bfloat16', 'float16'];
const as16 = (values, dtype) => (dtype === 'float32' ? values : reference.fromFloat32(values, { dtype }));

/** Random rows of dim: each row its own scale, 2^-20 to 2^20. */
function randomRows(rand, rows, dim) {
  const x = normalArray(rand, rows * dim);
  for (let r = 0; r < rows; r++) {
    const scale = 2 ** Math.round(rand() * 40 - 20);
    for (let i = r * dim; i < (r + 1) * dim; i++) x[i] = Math.fround(x[i] * scale);
  }
  return x;
}

// The weight modes: none, float32, bfloat16, float16 weights, Gemma's offset with either cast mode.
const WEIGHT_MODES = [
  { name: 'no weight', weight: () => null, options: {} },
  { name: 'float32 weight', weight: (rand, dim) => normalArray(rand, dim), options: {} },
  { name: 'bfloat16 weight', weight: (rand, dim) => reference.fromFloat32(normalArray(rand, dim), { dtype: 'bfloat16' }), options: { weightDtype: 'bfloat16' } },
  { name: 'float16 weight', weight: (rand, dim) => reference.fromFloat32(normalArray(rand, dim), { dtype: 'float16' }), options: { weightDtype: 'float16' } },
  { name: 'gemma offset', weight: (rand, dim) => normalArray(rand, dim, 0.1), options: { weightOffset: 1, castMode: 'gemma' } },
  { name: 'llama offset', weight: (rand, dim) => normalArray(rand, dim, 0.1), options: { weightOffset: 1, castMode: 'llama' } },
];

test('a million random rows: SIMD and scalar fused blocks are the reference quantizer on their own float32 output', () => {
  const [simd, scalar] = IMPLS;
  let rowsChecked = 0;
  const plan = [['q8_0', 32, 450_000], ['q8_1', 32, 450_000], ['q8_K', 256, 100_000]];
  for (const [format, dim, total] of plan) {
    const batch = format === 'q8_K' ? 5_000 : 50_000;
    for (let done = 0, k = 0; done < total; done += batch, k++) {
      const seed = 1000 + k + dim;
      const rand = prng(seed);
      const mode = WEIGHT_MODES[k % WEIGHT_MODES.length];
      const x = randomRows(rand, batch, dim);
      const weight = mode.weight(rand, dim);
      const call = { fn: 'rmsNorm', x, weight, options: { ...mode.options, dim } };
      checkFused(simd, call, format, `seed ${seed}, ${mode.name}, ${batch} rows of ${dim}`);
      rowsChecked += batch;
      if (k % 4 === 0) checkFused(scalar, call, format, `seed ${seed}, ${mode.name}`);
    }
  }
  assert.ok(rowsChecked >= 1_000_000);
});

test('every implementation, every weight mode, storage dtype, residual and row stride', () => {
  for (const format of Object.keys(FORMATS)) {
    const dim = FORMATS[format].n * 3;
    for (const dtype of DTYPES) {
      for (const [m, mode] of WEIGHT_MODES.entries()) {
        for (const fused of [false, true]) {
          for (const stride of [undefined, dim + 5]) {
            const seed = 77 + m + (fused ? 10 : 0) + (stride === undefined ? 0 : 100) + dim;
            const rand = prng(seed);
            const rows = 5;
            const length = stride === undefined ? rows * dim : (rows - 1) * stride + dim;
            const x = as16(randomRows(rand, 1, length), dtype);
            const residual = fused ? as16(normalArray(rand, length), dtype) : null;
            let weight = mode.weight(rand, dim);
            if (weight !== null && dtype !== 'float32' && weight instanceof Float32Array && mode.options.weightDtype === undefined) weight = as16(weight, dtype);
            const options = { ...mode.options, dtype, dim, ...(stride === undefined ? {} : { rowStride: stride }) };
            if (weight !== null && weight instanceof Uint16Array && options.weightDtype === undefined) options.weightDtype = dtype;
            const call = { fn: fused ? 'addRmsNorm' : 'rmsNorm', x, residual, weight, options };
            for (const impl of IMPLS) checkFused(impl, call, format, `seed ${seed}, ${dtype}, ${mode.name}, stride ${stride}`);
          }
        }
      }
    }
  }
});

// 16-bit rows and weights into blocks: every pairing of row and weight
// dtype, both cast modes, rows of one block to several 256-value chunks and
// a remainder, rows at scales whose blocks are rare (huge and tiny values),
// and weights so large that float16 rows overflow to Inf, or, with a zero
// weight after an overflowing llama cast, to NaN (the chunk's short float16
// widening must hand such blocks to the full one).
test('16-bit rows and weights into blocks: every dtype pairing, both cast modes, across the chunks, overflowing', () => {
  for (const format of ['q8_0', 'q8_1']) {
    for (const dtype of DTYPES) {
      for (const weightDtype of DTYPES) {
        for (const castMode of ['llama', 'gemma']) {
          for (const dim of [32, 256, 288, 800]) {
            const seed = 500 + dim + DTYPES.indexOf(dtype) * 7 + DTYPES.indexOf(weightDtype) * 3 + (castMode === 'gemma' ? 1 : 0);
            const rand = prng(seed);
            const rows = 4;
            const x = as16(randomRows(rand, rows, dim), dtype);
            for (const scale of [1, 30000]) {
              const values = normalArray(rand, dim, scale);
              if (scale !== 1) values[dim - 1] = 0;
              const weight = as16(values, weightDtype);
              const options = { dtype, weightDtype, castMode, dim };
              const context = `seed ${seed}, ${format}, ${dtype} rows, ${weightDtype} weight ×${scale}, ${castMode}, dim ${dim}`;
              for (const impl of IMPLS) checkFused(impl, { fn: 'rmsNorm', x, weight, options }, format, context);
            }
          }
        }
      }
    }
  }
});

test('ties: x·id on k + 0.5 (roundf away from zero; q8_K to even), ±amax, zero blocks, subnormal and huge blocks', () => {
  const rand = prng(4242);
  for (const format of Object.keys(FORMATS)) {
    const weight = q8EdgeWeight(FORMATS[format].n);
    const dim = weight.length;
    for (const k of EDGE_POWERS) {
      const x = signedPowerRows(rand, 4, dim, k);
      for (const impl of IMPLS) {
        const plain = impl.rmsNorm(x, weight, { eps: 0 });
        if (k !== 9) {
          for (let i = 0; i < dim; i++) assert.equal(Math.abs(plain[i]), Math.abs(weight[i]), `${impl.name}: y = ±w at ${i}`);
        }
        checkFused(impl, { fn: 'rmsNorm', x, weight, options: { eps: 0 } }, format, `ties, 2^${k}`);
      }
    }
  }
});

test('non-finite rows and weights: NaN, Inf and rescued rows quantize as the reference says', () => {
  for (const format of Object.keys(FORMATS)) {
    const n = FORMATS[format].n;
    const dim = 2 * n;
    const rand = prng(99);
    const cases = [];
    const x = randomRows(rand, 6, dim);
    x[3] = NaN; // row 0 all NaN
    x[dim + 4] = Infinity; // row 1: NaN at 4, ±0 elsewhere
    for (let i = 2 * dim; i < 3 * dim; i++) x[i] = Math.fround(x[i] * 1e-40); // subnormal row (rescued)
    for (let i = 3 * dim; i < 4 * dim; i++) x[i] = Math.fround(x[i] * 1e37); // huge row (rescued)
    x.fill(0, 4 * dim, 5 * dim); // zero row
    cases.push({ x, weight: normalArray(rand, dim) });
    const nanWeight = normalArray(rand, dim);
    nanWeight[n + 1] = NaN; // the scalar writer's rows
    nanWeight[2] = Infinity;
    cases.push({ x: randomRows(rand, 3, dim), weight: nanWeight });
    for (const [c, { x: xs, weight }] of cases.entries()) {
      for (const impl of IMPLS) {
        for (const dtype of DTYPES) {
          checkFused(impl, { fn: 'rmsNorm', x: as16(xs, dtype), weight, options: { dtype } }, format, `case ${c}, ${dtype}`);
        }
      }
    }
  }
});

test('rstd, a given out, prepared and repeated calls, and tensors give the same blocks', async () => {
  const rand = prng(5);
  const dim = 512;
  const rows = 9;
  const x = randomRows(rand, rows, dim);
  const weight = normalArray(rand, dim);
  for (const format of Object.keys(FORMATS)) {
    const want = reference.quantize(reference.rmsNorm(x, weight), { dtype: format });
    const wantRstd = new Float32Array(rows);
    reference.rmsNorm(x, weight, { rstd: wantRstd });
    for (const impl of IMPLS) {
      const out = new Uint8Array(want.length).fill(0xa5);
      const rstd = new Float32Array(rows);
      const result = impl.rmsNorm(x, weight, { outDtype: format, out, rstd });
      assert.equal(result, out, `${impl.name}: returns the given out`);
      assert.deepEqual(out, want, `${impl.name} ${format}: given out`);
      assert.deepEqual(rstd, wantRstd, `${impl.name} ${format}: rstd`);
      const prepared = impl.rmsNorm.prepare(x, weight, { outDtype: format });
      assert.deepEqual(prepared.run(), want, `${impl.name} ${format}: prepared`);
      const again = prepared.run();
      assert.deepEqual(again, want, `${impl.name} ${format}: prepared, run again`);
      const options = { outDtype: format };
      for (let i = 0; i < 3; i++) assert.deepEqual(impl.rmsNorm(x, weight, options), want, `${impl.name} ${format}: repeated call ${i}`);
      // x changed between two remembered calls: the new bits.
      const x2 = x.slice();
      const first = impl.rmsNorm(x2, weight, options);
      x2[0] = 1e6;
      assert.deepEqual(impl.rmsNorm(x2, weight, options), reference.quantize(reference.rmsNorm(x2, weight), { dtype: format }), `${impl.name}: remembered call, new x`);
      assert.deepEqual(first, want);
      if (impl.alloc === undefined) continue;
      // Tensors: x and the weight in wasm memory, out a Uint8Array view of a tensor's bytes (zero-copy).
      const tx = impl.alloc(x.length);
      const tw = impl.alloc(dim);
      const tout = impl.alloc(Math.ceil(want.length / 4));
      tx.array.set(x);
      tw.array.set(weight);
      const view = new Uint8Array(tout.array.buffer, tout.byteOffset, want.length);
      impl.rmsNorm(tx, tw, { outDtype: format, out: view });
      assert.deepEqual(new Uint8Array(tout.array.buffer, tout.byteOffset, want.length), want, `${impl.name} ${format}: tensors`);
      tx.free();
      tw.free();
      tout.free();
    }
  }
});

// The dequantize bound of docs/numerics.md ("Dequantize error"), per value,
// in units of the block's float32 d (amax/127; q8_K's |d|): rounding to the
// code, at most 0.5, plus the float16 d's relative error (at most 2^-11,
// for d a normal float16) on codes up to 127, plus float32 roundings.
const Q8_BOUND = 0.5 + 127 * 2 ** -11 + 127 * 2 ** -22;
const Q8_K_BOUND = 0.5 + 127 * 2 ** -22;

/** The largest |dequantize(quantize(x)) − x| / d over the blocks of x. */
function worstRatio(x, format) {
  const { n } = FORMATS[format];
  const back = dequantize(quantize(x, { dtype: format }), { dtype: format });
  let worst = 0;
  for (let b = 0; b < x.length; b += n) {
    let amax = 0;
    for (let j = 0; j < n; j++) amax = Math.max(amax, Math.abs(x[b + j]));
    const d = format === 'q8_K' ? 1 / Math.fround(127 / amax) : Math.fround(amax / 127);
    for (let j = 0; j < n; j++) worst = Math.max(worst, Math.abs(back[b + j] - x[b + j]) / d);
  }
  return worst;
}

test('dequantize error: within 0.5·d + 127·|d − fp16(d)| per value (0.5621·d), reached by worst-case blocks', () => {
  const rand = prng(77);
  // Random blocks at scales whose d is a normal float16 (2^-14 ≤ d ≤ 65504).
  for (const format of Object.keys(FORMATS)) {
    const { n } = FORMATS[format];
    const x = new Float32Array(4000 * n);
    for (let b = 0; b < x.length; b += n) {
      const scale = 2 ** (Math.floor(rand() * 26) - 7); // amax about 2^-6 to 2^21
      x.set(normalArray(rand, n, scale), b);
    }
    const worst = worstRatio(x, format);
    assert.ok(worst <= (format === 'q8_K' ? Q8_K_BOUND : Q8_BOUND), `${format}: random blocks, ${worst}·d`);
    assert.ok(worst > 0.5, `${format}: random blocks come near the bound (${worst}·d)`);
  }
  // Worst cases: d just above a float16 midpoint (fp16(d) − d ≈ 2^-11·d), and a value just past
  // 126.5·d, whose code 127 the stored d then overshoots; and d just below one, a value just
  // under 126.5·d rounded down to 126. Both within the bound, the first above 0.56·d.
  for (const format of ['q8_0', 'q8_1']) {
    let worst = 0;
    for (const [above, sign] of [[1, 1], [1, -1], [-1, 1], [-1, -1]]) {
      for (let e = -13; e <= 15; e += 4) {
        const target = 2 ** e * (1 + 2 ** -11 + above * 2 ** -22); // a float16 midpoint, then a step off it
        const amax = Math.fround(127 * target);
        const d = Math.fround(amax / 127);
        const block = new Float32Array(32);
        block[0] = amax;
        block[1] = sign * Math.fround(126.5 * d * (1 + above * 2 ** -22));
        for (let j = 2; j < 32; j++) block[j] = Math.fround((rand() - 0.5) * amax);
        worst = Math.max(worst, worstRatio(block, format));
      }
    }
    assert.ok(worst <= Q8_BOUND, `${format}: worst cases within the bound (${worst}·d)`);
    assert.ok(worst > 0.56, `${format}: the bound is reached to within 0.003·d (${worst}·d)`);
  }
});

test('byteLength: the bytes of a shape in each format and dtype, counted by hand; its mistakes refused by name', async () => {
  const { byteLength } = await import('../src/index.js');
  assert.equal(byteLength, reference.byteLength, 'one function, exported by both');
  // Rows of whole blocks: rows × blocks a row × bytes a block (ggml's ggml_row_size(type, dim) × rows).
  assert.equal(byteLength('q8_0', [4, 4096]), 4 * 128 * 34);
  assert.equal(byteLength('q8_1', [3, 2, 64]), 6 * 2 * 36);
  assert.equal(byteLength('q8_K', [2, 512]), 2 * 2 * 292);
  assert.equal(byteLength('q8_0', 96), 3 * 34, 'a count of values: one row');
  assert.equal(byteLength('q8_K', [0, 256]), 0);
  assert.equal(byteLength('float32', [2, 3]), 24);
  assert.equal(byteLength('bfloat16', 5), 10);
  assert.equal(byteLength('float16', [7]), 14);
  assert.throws(() => byteLength('q8_K', [2, 100]), { name: 'RangeError', message: "byteLength: a row of q8_K blocks must hold a multiple of 256 values, the block size; the shape's last dim is 100" });
  assert.throws(() => byteLength('q8_0', 48), { name: 'RangeError', message: /^byteLength: a row of q8_0 blocks must hold a multiple of 32 values/ });
  assert.throws(() => byteLength('q4_0', 32), { name: 'TypeError', message: /^byteLength: dtype must be 'float32' or 'bfloat16' or 'float16' or 'q8_0' or 'q8_1' or 'q8_K', got string "q4_0"/ });
  assert.throws(() => byteLength([2, 32], 'q8_0'), { name: 'TypeError', message: /^byteLength: dtype must be/ });
  // A wrong type is a TypeError, a number of the wrong value a RangeError, a count or a dim alike.
  for (const shape of ['32', undefined, { length: 1, 0: 32 }]) {
    assert.throws(() => byteLength('q8_0', shape), { name: 'TypeError', message: /^byteLength: shape must be a count of values or an array of dims, got / }, String(shape));
  }
  for (const [shape, message] of [[[2, , 32], 'shape[1] must be a number, got undefined'], [['3'], 'shape[0] must be a number, got string "3"']]) { // eslint-disable-line no-sparse-arrays
    assert.throws(() => byteLength('q8_0', shape), { name: 'TypeError', message: `byteLength: ${message}` }, String(shape));
  }
  for (const [shape, message] of [[[2, -32], 'shape[1] must be a non-negative integer, got -32'], [[2, 1.5], 'shape[1] must be a non-negative integer, got 1.5'],
    [[2 ** 53], 'shape[0] must be a non-negative integer, got 9007199254740992'], [[], 'shape must hold at least one dim, got []']]) {
    assert.throws(() => byteLength('q8_0', shape), { name: 'RangeError', message: `byteLength: ${message}` }, String(shape));
  }
  assert.throws(() => byteLength('float32', -1), { name: 'RangeError', message: 'byteLength: shape (a count of values) must be a non-negative integer, got -1' });
  assert.throws(() => byteLength('float32', 2.5), { name: 'RangeError', message: 'byteLength: shape (a count of values) must be a non-negative integer, got 2.5' });
  for (const length of [-1, 1.5, NaN, 2 ** 60]) {
    const lying = new Proxy([2, 32], { get: (target, key) => (key === 'length' ? length : target[key]) });
    assert.throws(() => byteLength('q8_0', lying), { name: 'TypeError', message: /^byteLength: shape must be an array of dims, got one of length number / }, `length ${length}`);
  }
  // Each dim is read once (a getter on it runs once).
  let reads = 0;
  const counted = [2];
  Object.defineProperty(counted, 1, { get: () => { reads++; return 32; }, enumerable: true });
  assert.equal(byteLength('q8_0', counted), 68);
  assert.equal(reads, 1);
  // Also where the size is refused: the message shows the dims as read, not read again.
  const huge = [2 ** 40];
  Object.defineProperty(huge, 1, { get: () => { reads++; return 2 ** 40; }, enumerable: true });
  assert.throws(() => byteLength('q8_0', huge), { name: 'RangeError', message: 'byteLength: shape [1099511627776,1099511627776] of q8_0 takes 2^53 bytes or more' });
  assert.equal(reads, 2);
  assert.throws(() => byteLength('q8_0', [2 ** 40, 2 ** 40]), { name: 'RangeError', message: 'byteLength: shape [1099511627776,1099511627776] of q8_0 takes 2^53 bytes or more' });
});

test('tensors of a block format: the blocks written zero-copy into alloc(byteLength(format, [rows, dim]), format)', () => {
  const rand = prng(9);
  const rows = 3;
  const dim = 512;
  const x = randomRows(rand, rows, dim);
  const weight = normalArray(rand, dim);
  for (const impl of IMPLS.filter((i) => i.alloc !== undefined)) {
    for (const format of Object.keys(FORMATS)) {
      const want = reference.quantize(reference.rmsNorm(x, weight), { dtype: format });
      const out = impl.alloc(reference.byteLength(format, [rows, dim]), format);
      assert.equal(out.dtype, format);
      assert.equal(out.length, want.length);
      assert.ok(out.array instanceof Uint8Array && out.array.byteOffset === out.byteOffset, `${impl.name} ${format}: a byte view of the tensor`);
      assert.equal(impl.rmsNorm(x, weight, { outDtype: format, out }), out, `${impl.name} ${format}: returns the given tensor`);
      assert.deepEqual(out.array, want, `${impl.name} ${format}: rmsNorm into the tensor`);
      assert.deepEqual(reference.dequantize(out, { dtype: format }), reference.dequantize(want, { dtype: format }), `${impl.name} ${format}: dequantize reads a tensor`);
      out.array.fill(0);
      assert.equal(impl.rmsNorm.prepare(x, weight, { outDtype: format, out }).run(), out);
      assert.deepEqual(out.array, want, `${impl.name} ${format}: prepared`);
      const residual = x.slice();
      impl.addRmsNorm(x, residual, weight, { outDtype: format, out });
      assert.deepEqual(out.array, reference.quantize(reference.rmsNorm(residual, weight), { dtype: format }), `${impl.name} ${format}: addRmsNorm`);
      assert.equal(impl.quantize(x, { dtype: format, out }), out);
      assert.deepEqual(out.array, reference.quantize(x, { dtype: format }), `${impl.name} ${format}: quantize into the tensor`);
      out.free();
    }
    // Mistakes, by name: a length of no whole blocks, a tensor of another format, blocks where values are read.
    assert.throws(() => impl.alloc(100, 'q8_0'), { name: 'RangeError', message: "alloc: length (100) must be a whole number of q8_0 blocks, a multiple of 34 bytes: byteLength('q8_0', [rows, dim]) gives a shape's" });
    assert.throws(() => impl.alloc(34, 'q4_0'), { name: 'TypeError', message: /^alloc: dtype must be 'float32' or 'bfloat16' or 'float16' or 'q8_0' or 'q8_1' or 'q8_K'/ });
    const q8_0 = impl.alloc(reference.byteLength('q8_0', [rows, dim]), 'q8_0');
    assert.throws(() => impl.rmsNorm(x, weight, { outDtype: 'q8_1', out: q8_0 }), { name: 'TypeError', message: /^rmsNorm: options\.out must be a Uint8Array \(the bytes of ggml q8_1 blocks\) for outDtype 'q8_1', got q8_0 Tensor\(1632\)/ });
    assert.throws(() => impl.rmsNorm(q8_0, null, { dim: 32 }), { name: 'TypeError', message: "rmsNorm: x must be a Float32Array, got q8_0 Tensor(1632) (a q8_0 tensor holds ggml blocks: dequantize(x.array, { dtype: 'q8_0' }) gives their values)" });
    assert.throws(() => reference.dequantize(q8_0, { dtype: 'q8_K' }), { name: 'TypeError', message: /^dequantize: bytes must be a Uint8Array of ggml q8_K blocks \(or a q8_K tensor\), got q8_0 Tensor/ });
    q8_0.free();
  }
});

test('bindMemory: an engine\'s own memory, the blocks written where it says and nowhere else', async () => {
  const { bindMemory } = await import('../src/index.js');
  for (const backend of ['simd', 'scalar']) {
    const memory = new WebAssembly.Memory({ initial: 8 });
    const bytes = new Uint8Array(memory.buffer);
    for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 131 + 7) & 0xff;
    const bound = await bindMemory(memory, { scratch: { byteOffset: 0x1000, byteLength: 0x4000 }, backend });
    const rand = prng(6);
    const dim = 256;
    const rows = 3;
    const x = randomRows(rand, rows, dim);
    const weight = normalArray(rand, dim);
    new Float32Array(memory.buffer, 0x10000, x.length).set(x);
    new Float32Array(memory.buffer, 0x20000, dim).set(weight);
    const before = new Uint8Array(memory.buffer).slice();
    for (const format of Object.keys(FORMATS)) {
      const want = reference.quantize(reference.rmsNorm(x, weight), { dtype: format });
      const out = new Uint8Array(memory.buffer, 0x30003, want.length); // unaligned, as ggml's rows may be
      bound.rmsNorm(new Float32Array(memory.buffer, 0x10000, x.length), new Float32Array(memory.buffer, 0x20000, dim), { outDtype: format, out });
      assert.deepEqual(out, want, `${backend} ${format}`);
      const after = new Uint8Array(memory.buffer);
      for (let i = 0; i < after.length; i++) {
        if ((i >= 0x1000 && i < 0x5000) || (i >= 0x30003 && i < 0x30003 + want.length)) continue;
        if (after[i] !== before[i]) assert.fail(`${backend} ${format}: byte ${i} written outside out and the scratch`);
      }
      out.set(before.subarray(0x30003, 0x30003 + want.length));
    }
  }
});

test('mistakes are refused by name before anything is written', () => {
  const dim = 48; // not a multiple of 32
  const x = new Float32Array(2 * dim).fill(1);
  for (const impl of IMPLS) {
    const residual = new Float32Array(2 * dim).fill(2);
    const out = new Uint8Array(64).fill(9);
    assert.throws(() => impl.rmsNorm(x, new Float32Array(dim), { outDtype: 'q8_0' }),
      { name: 'RangeError', message: "rmsNorm: options.outDtype 'q8_0' needs dim (48) to be a multiple of 32, its block size: leave outDtype out for float32 rows" });
    assert.throws(() => impl.addRmsNorm(x, residual, null, { dim, outDtype: 'q8_1', out }),
      { name: 'RangeError', message: /^addRmsNorm: options\.outDtype 'q8_1' needs dim \(48\)/ });
    assert.ok(residual.every((v) => v === 2), `${impl.name}: the residual is not written`);
    assert.ok(out.every((v) => v === 9), `${impl.name}: out is not written`);
    assert.throws(() => impl.rmsNorm(new Float32Array(256), null, { dim: 128, outDtype: 'q8_K' }), { name: 'RangeError', message: /multiple of 256/ });
    const x64 = new Float32Array(64).fill(1);
    assert.throws(() => impl.rmsNorm(x64, null, { dim: 32, outDtype: 'q8_0', out: new Uint8Array(67) }),
      { name: 'RangeError', message: 'rmsNorm: options.out.length (67) must equal the bytes of 2 q8_0 blocks of 34 (68)' });
    assert.throws(() => impl.rmsNorm(x64, null, { dim: 32, outDtype: 'q8_0', out: new Float32Array(17) }),
      { name: 'TypeError', message: /^rmsNorm: options\.out must be a Uint8Array \(the bytes of ggml q8_0 blocks\)/ });
    assert.throws(() => impl.rmsNorm(x64, null, { dim: 32, outDtype: 'q4_0' }), { name: 'TypeError', message: /^rmsNorm: options\.outDtype must be 'float32' or 'q8_0' or 'q8_1' or 'q8_K'/ });
    assert.throws(() => impl.rmsNorm(x64, null, { dim: 32, dtype: 'float32', outDtype: 'bfloat16' }), { name: 'TypeError', message: /^rmsNorm: options\.outDtype must be/ });
    // The one overlap rule, in bytes: blocks over x, even exactly over it, are refused.
    const buffer = new ArrayBuffer(1024);
    const xv = new Float32Array(buffer, 0, 64);
    xv.fill(1);
    const snapshot = new Uint8Array(buffer).slice();
    assert.throws(() => impl.rmsNorm(xv, null, { dim: 32, outDtype: 'q8_0', out: new Uint8Array(buffer, 200, 68) }),
      { name: 'RangeError', message: /^rmsNorm: options\.out must not overlap x \(ggml blocks are never written in place/ });
    assert.throws(() => impl.rmsNorm(xv, null, { dim: 32, outDtype: 'q8_0', out: new Uint8Array(buffer, 0, 68) }),
      { name: 'RangeError', message: /^rmsNorm: options\.out must not overlap x \(ggml blocks are never written in place/ });
    assert.deepEqual(new Uint8Array(buffer), snapshot, `${impl.name}: nothing written`);
    // Beside x in the same buffer is fine; and outDtype naming the storage dtype is the plain call.
    const beside = new Uint8Array(buffer, 256, 68);
    impl.rmsNorm(xv, null, { dim: 32, outDtype: 'q8_0', out: beside });
    assert.deepEqual(beside, reference.quantize(reference.rmsNorm(xv, null, { dim: 32 }), { dtype: 'q8_0' }));
    assert.deepEqual(impl.rmsNorm(x64, null, { dim: 32, outDtype: 'float32' }), reference.rmsNorm(x64, null, { dim: 32 }));
  }
});

// Issue 46's measure on the JS side: mistakes a user makes with the block
// outputs, each refused with the right class and a message that names the
// fix (the C library's are held in tests/c-library.test.js).
test('mistakes on the block outputs: each message names the fix', () => {
  const x = new Float32Array(64).fill(1);
  const w = new Float32Array(64).fill(1);
  const MISTAKES = [
    ['a format ggml has but the package does not', (k) => k.rmsNorm(x, w, { outDtype: 'q4_0' }), TypeError, "must be 'float32' or 'q8_0' or 'q8_1' or 'q8_K'"],
    ['q8_0 rows of 48', (k) => k.rmsNorm(new Float32Array(96), new Float32Array(48), { outDtype: 'q8_0' }), RangeError, 'leave outDtype out for float32 rows'],
    ['q8_K rows of 64', (k) => k.rmsNorm(x, w, { outDtype: 'q8_K' }), RangeError, "or use 'q8_0' or 'q8_1' (blocks of 32)"],
    ['quantize without a format', (k) => k.quantize(x, {}), TypeError, "'q8_0', 'q8_1' or 'q8_K'"],
    ['quantize 40 values', (k) => k.quantize(new Float32Array(40), { dtype: 'q8_0' }), RangeError, 'quantize whole rows whose length is a multiple of 32'],
    ['quantize bfloat16 bits', (k) => k.quantize(new Uint16Array(64), { dtype: 'q8_0' }), TypeError, "widen them first: toFloat32(x, { dtype: 'bfloat16' })"],
    ['blocks into a Float32Array', (k) => k.rmsNorm(x, w, { outDtype: 'q8_0', out: new Float32Array(64) }), TypeError, 'must be a Uint8Array (the bytes of ggml q8_0 blocks)'],
    ['an out of the float32 length', (k) => k.rmsNorm(x, w, { outDtype: 'q8_0', out: new Uint8Array(64) }), RangeError, 'must equal the bytes of 2 q8_0 blocks of 34 (68)'],
    ['blocks written over x', (k) => k.rmsNorm(x, w, { outDtype: 'q8_0', out: new Uint8Array(x.buffer, 0, 68) }), RangeError, 'give options.out a buffer of its own'],
    ['dequantize a partial block', (k) => (k.dequantize ?? dequantize)(new Uint8Array(35), { dtype: 'q8_0' }), RangeError, 'pass whole blocks, in the format they were written in'],
    ['dequantize an Int8Array', (k) => (k.dequantize ?? dequantize)(new Int8Array(34), { dtype: 'q8_0' }), TypeError, 'must be a Uint8Array of ggml q8_0 blocks'],
  ];
  for (const impl of IMPLS) {
    for (const [mistake, call, type, fix] of MISTAKES) {
      assert.throws(() => call(impl), (e) => {
        assert.ok(e instanceof type, `${impl.name} ${mistake}: ${e}`);
        assert.ok(e.message.includes(fix), `${impl.name} ${mistake}: "${e.message}" does not name the fix "${fix}"`);
        return true;
      });
    }
  }
  assert.ok(MISTAKES.length >= 10);
});

test('quantize alone: every implementation is the reference quantizer, on special blocks and large, unaligned arrays', () => {
  const rand = prng(31);
  for (const format of Object.keys(FORMATS)) {
    const n = FORMATS[format].n;
    const special = new Float32Array(6 * n);
    special.set(normalArray(rand, n), 0);
    special[n + 3] = NaN; // a NaN block
    special[2 * n + 1] = Infinity;
    special.fill(2 ** -140, 3 * n, 4 * n); // 1/d overflows
    special.set(normalArray(rand, n, 1e30), 4 * n); // huge
    // (block 5 stays zeros)
    const large = normalArray(rand, 5000 * n); // beyond one staging chunk
    const buffer = new ArrayBuffer(4 * (special.length + 1));
    const unaligned = new Float32Array(buffer, 4, special.length);
    unaligned.set(special);
    for (const values of [special, unaligned, large]) {
      const want = reference.quantize(values, { dtype: format });
      for (const impl of IMPLS) {
        const got = impl.quantize(values, { dtype: format });
        const at = firstDifference(got, want);
        if (at !== -1) assert.fail(`${impl.name} quantize ${format} (${values.length} values): first differing byte ${at}`);
        const out = new Uint8Array(want.length);
        assert.equal(impl.quantize(values, { dtype: format, out }), out);
        assert.deepEqual(out, want);
      }
    }
  }
  for (const impl of IMPLS) {
    assert.throws(() => impl.quantize(new Float32Array(48), { dtype: 'q8_K' }), { name: 'RangeError', message: /^quantize: x\.length \(48\) must be a multiple of 256, the q8_K block size: quantize whole rows whose length is a multiple of 256/ });
    assert.throws(() => impl.quantize(new Float32Array(32), { dtype: 'float16' }), { name: 'TypeError', message: /^quantize: options\.dtype must be 'q8_0' or 'q8_1' or 'q8_K'/ });
    assert.throws(() => impl.quantize(new Float32Array(32)), { name: 'TypeError', message: /^quantize: options\.dtype is required/ });
    assert.throws(() => impl.quantize(new Float32Array(32), { dtype: 'q8_0', out: new Uint8Array(33) }), { name: 'RangeError', message: 'quantize: options.out.length (33) must equal the bytes of 1 q8_0 blocks of 34 (34)' });
    const buffer = new ArrayBuffer(256);
    assert.throws(() => impl.quantize(new Float32Array(buffer, 0, 32), { dtype: 'q8_0', out: new Uint8Array(buffer, 100, 34) }), { name: 'RangeError', message: /^quantize: options\.out must not overlap x \(ggml blocks are never written in place/ });
  }
});
