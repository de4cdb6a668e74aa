// ggml's 8-bit block formats for the JS reference: float32 values to
// blocks, and blocks back to float32, written from ggml's reference
// functions (ggml/src/ggml-quants.c: quantize_row_q8_0_ref,
// quantize_row_q8_1_ref, quantize_row_q8_K_ref and the dequantizers),
// not from the kernels (src/kernels/q8_blocks.h), so that the two check
// each other. The rule, where ggml's C leaves a step undefined, is stated
// once in src/kernels/q8_blocks.h; docs/numerics.md says why. The block
// formats' table (src/loader/abi.js, which the kernels' constants are
// written from) gives the values and bytes of a block, as it does to every
// call's checks; where each field sits in a block is written here, from
// ggml-common.h, so that a wrong offset in the table shows as bytes the
// kernels and this reference disagree on.
//
// Every float32 operation is one Math.fround of the float64 result (exact
// float32, as src/reference/rmsnorm.js says); integer steps are exact.

import { BLOCK_FORMAT, BLOCK_FORMATS } from '../loader/abi.js';
import { abs, copyInto, floor, Float32Array, fround, isView, keys, kindOf, RangeError, TypeError, Uint32Array, Uint8Array } from '../loader/intrinsics.js';
import { isTensor, recordOf, tensorView } from '../loader/tensor.js';
import { viewLength } from '../ops/arrays.js';
import { quantize as QUANTIZE } from '../ops/descriptions.js';
import { BLOCK_FORMAT_CHOICES, describe, oneOf, optionReader } from '../ops/options.js';
import { referenceFunction } from './calls.js';
import { float16ToNumber, numberToFloat16 } from './float16.js';

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/** C's truncation toward zero of a float (not for NaN or infinities). */
const truncate = (v) => (v < 0 ? -floor(-v) : floor(v));

/** C's roundf: to the nearest integer, halves away from zero (infinities kept). */
function roundHalfAway(v) {
  if (!(abs(v) < 2 ** 23)) return v; // an integer already, an infinity, or NaN
  const t = truncate(v);
  return abs(v - t) >= 0.5 ? t + (v < 0 ? -1 : 1) : t;
}

/** ggml's nearest_int (the float sum v + 1.5·2^23 rounds to an integer, ties to even). */
function roundHalfEven(v) {
  if (!(abs(v) < 2 ** 23)) return v;
  const below = floor(v);
  const fraction = v - below;
  if (fraction !== 0.5) return fraction < 0.5 ? below : below + 1;
  return below % 2 === 0 ? below : below + 1;
}

/** The float → int8 conversion, defined where C's is not: NaN is 0, the rest saturates to [-128, 127]. */
function toInt8(v) {
  if (v !== v) return 0;
  return v > 127 ? 127 : v < -128 ? -128 : v;
}

function putUint16(bytes, at, bits) {
  bytes[at] = bits & 0xff;
  bytes[at + 1] = bits >>> 8;
}

function putInt16(bytes, at, v) {
  putUint16(bytes, at, v & 0xffff);
}

function putFloat32(bytes, at, v) {
  f32[0] = v;
  const bits = u32[0];
  for (let k = 0; k < 4; k++) bytes[at + k] = (bits >>> (8 * k)) & 0xff;
}

const uint16At = (bytes, at) => bytes[at] | (bytes[at + 1] << 8);
const int8At = (bytes, at) => (bytes[at] << 24) >> 24;

function float32At(bytes, at) {
  u32[0] = (bytes[at] | (bytes[at + 1] << 8) | (bytes[at + 2] << 16) | (bytes[at + 3] << 24)) >>> 0;
  return f32[0];
}

/** q8_0 and q8_1: one block of 32 values x[from..from+32) to bytes[at..). */
function quantize32(x, from, bytes, at, withSum) {
  // ggml's MAX(amax, fabsf(v)) is `amax > |v| ? amax : |v|`: a NaN makes
  // amax NaN, and the next value replaces it.
  let amax = 0;
  for (let j = 0; j < 32; j++) {
    const a = abs(x[from + j]);
    amax = amax > a ? amax : a;
  }
  const d = fround(amax / 127);
  const id = d !== 0 ? fround(1 / d) : 0; // C's `d ? 1/d : 0`: NaN is true there
  putUint16(bytes, at, numberToFloat16(d));
  const qs = at + (withSum ? 4 : 2);
  let sum = 0;
  for (let j = 0; j < 32; j++) {
    const q = toInt8(roundHalfAway(fround(x[from + j] * id)));
    bytes[qs + j] = q & 0xff;
    sum += q;
  }
  if (withSum) putUint16(bytes, at + 2, numberToFloat16(fround(sum * d))); // the float32 d, not its float16
}

/** q8_K: one block of 256 values x[from..from+256) to bytes[at..). */
function quantize256(x, from, bytes, at) {
  // The first value of the largest magnitude (`ax > amax`: NaNs never win).
  let amax = 0;
  let max = 0;
  for (let j = 0; j < 256; j++) {
    const a = abs(x[from + j]);
    if (a > amax) {
      amax = a;
      max = x[from + j];
    }
  }
  if (amax === 0) {
    // ggml leaves bsums as they were; the package writes zeros.
    for (let k = 0; k < 292; k++) bytes[at + k] = 0;
    return;
  }
  const iscale = fround(-127 / max);
  for (let g = 0; g < 16; g++) {
    let sum = 0;
    for (let j = 16 * g; j < 16 * g + 16; j++) {
      const v = toInt8(roundHalfEven(fround(iscale * x[from + j])));
      bytes[at + 4 + j] = v & 0xff;
      sum += v;
    }
    putInt16(bytes, at + 260 + 2 * g, sum);
  }
  putFloat32(bytes, at, fround(1 / iscale));
}

/** Each format's rule and where its fields sit (ggml-common.h): its
 * block quantizer, the type of its scale d (at byte 0), where its quants
 * start. A format of the table with no row here is refused by name. */
const RULES = {
  __proto__: null,
  q8_0: { quantize: (x, from, bytes, at) => quantize32(x, from, bytes, at, false), scale: 'float16', qs: 2 },
  q8_1: { quantize: (x, from, bytes, at) => quantize32(x, from, bytes, at, true), scale: 'float16', qs: 4 },
  q8_K: { quantize: quantize256, scale: 'float32', qs: 4 },
};

/** The block formats the reference has a rule for. */
export const REFERENCE_FORMATS = keys(RULES);

/** Each of them: its values and bytes a block (the table's) and its rule here, made once. */
const FORMATS = { __proto__: null };
for (let i = 0; i < REFERENCE_FORMATS.length; i++) {
  const dtype = REFERENCE_FORMATS[i];
  FORMATS[dtype] = { values: BLOCK_FORMAT[dtype].values, bytes: BLOCK_FORMAT[dtype].bytes, rule: RULES[dtype] };
}

/** A format's record, or the error naming the missing rule. */
function formatOf(dtype) {
  const format = FORMATS[dtype];
  if (format === undefined) throw new TypeError(`the reference has no rule for the block format ${dtype}: add its row to RULES (src/reference/q8.js)`);
  return format;
}

/**
 * `n` float32 values of `x` from value `from` (n a multiple of the block
 * size), as blocks of `dtype` ('q8_0', 'q8_1' or 'q8_K') written to
 * `bytes` from byte `at`.
 */
export function quantizeInto(x, from, n, dtype, bytes, at) {
  const { values, bytes: blockBytes, rule } = formatOf(dtype);
  for (let b = 0; b < n / values; b++) rule.quantize(x, from + b * values, bytes, at + b * blockBytes);
}

/** float32 values as a new Uint8Array of blocks of `dtype`. */
export function quantizeValues(x, dtype) {
  const { values, bytes: blockBytes } = formatOf(dtype);
  const bytes = new Uint8Array((x.length / values) * blockBytes);
  quantizeInto(x, 0, x.length, dtype, bytes, 0);
  return bytes;
}

/** Blocks of `dtype` back to float32, as ggml's dequantize_row_*:
 * q8_0 and q8_1 qs · float16 d, q8_K d · qs (one float32 product each). */
export function dequantizeValues(bytes, dtype) {
  const { values, bytes: blockBytes, rule } = formatOf(dtype);
  const blocks = bytes.length / blockBytes;
  const out = new Float32Array(blocks * values);
  for (let b = 0; b < blocks; b++) {
    const at = b * blockBytes;
    const d = rule.scale === 'float32' ? float32At(bytes, at) : float16ToNumber(uint16At(bytes, at));
    const qs = at + rule.qs;
    for (let j = 0; j < values; j++) out[b * values + j] = fround(int8At(bytes, qs + j) * d);
  }
  return out;
}

const readOptions = optionReader({ dtype: undefined });

/** Each format's block bytes, as dequantize's message gives them: 'q8_0' 34 bytes, 'q8_1' 36, 'q8_K' 292. */
const BLOCK_BYTES = BLOCK_FORMATS.map((name, i) => `'${name}' ${BLOCK_FORMAT[name].bytes}${i === 0 ? ' bytes' : ''}`).join(', ');

/** options.dtype of dequantize: a block format, required. */
function formatOption(fn, options) {
  const { dtype } = readOptions(fn, options);
  if (dtype === undefined) throw new TypeError(`${fn}: options.dtype is required: ${BLOCK_FORMAT_CHOICES}`);
  return oneOf(fn, 'options.dtype', dtype, BLOCK_FORMATS, undefined);
}

/** A copy of a Uint8Array, measured through the intrinsics (no caller code runs after). */
function copyOf(fn, name, value, kind, what) {
  if (!isView(value) || kindOf(value) !== kind) throw new TypeError(`${fn}: ${name} must be ${what}, got ${describe(value)}`);
  const copy = new Uint8Array(viewLength(fn, name, value));
  copyInto(copy, value, 0);
  return copy;
}

/**
 * float32 values as ggml blocks of options.dtype ('q8_0', 'q8_1' or
 * 'q8_K'): a new Uint8Array of (x.length / block size) blocks, as ggml's
 * quantize_row_*_ref writes them (the rule in src/kernels/q8_blocks.h).
 * Same signature, options and errors as `quantize`.
 */
export const quantize = referenceFunction(QUANTIZE, (call, { x }) => ({ out: quantizeValues(x, call.outDtype) }));

/**
 * ggml blocks of options.dtype ('q8_0', 'q8_1' or 'q8_K') back to float32,
 * as ggml's dequantize_row_*: a new Float32Array of (bytes.length / block
 * bytes) × block size values.
 */
export function dequantize(bytes, options) {
  const dtype = formatOption('dequantize', options);
  // A tensor of the format (alloc(n, dtype)) is read through its view of the instance's memory.
  const source = isTensor(bytes) && recordOf(bytes)?.dtype === dtype ? tensorView(bytes) : bytes;
  const copy = copyOf('dequantize', 'bytes', source, 'Uint8Array', `a Uint8Array of ggml ${dtype} blocks (or a ${dtype} tensor)`);
  const { bytes: blockBytes } = BLOCK_FORMAT[dtype];
  if (copy.length % blockBytes !== 0) {
    throw new RangeError(`dequantize: bytes.length (${copy.length}) must be a multiple of ${blockBytes}, the bytes of a ${dtype} block: ` +
      `pass whole blocks, in the format they were written in (options.dtype, of ${BLOCK_BYTES})`);
  }
  return dequantizeValues(copy, dtype);
}
