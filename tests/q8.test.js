// ggml's 8-bit block outputs (options.outDtype 'q8_0', 'q8_1', 'q8_K').
// First the reference quantizer against blocks worked out by hand from
// ggml's definitions (quantize_row_q8_0_ref, quantize_row_q8_1_ref,
// quantize_row_q8_K_ref in ggml/src/ggml-quants.c; the package's rule
// where their C is undefined: src/kernels/q8_blocks.h), then the fused
// outputs of every implementation against that quantizer applied to the
// package's own storage-dtype output of the same call.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { dequantize, quantize } from '../src/reference/index.js';

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
