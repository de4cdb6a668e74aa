// Array arguments: each measured once, through the intrinsic
// %TypedArray%.prototype getters saved at load (never through the object's
// own properties or methods), into an ArrayRecord. From then on only the
// record is used: no caller code runs again in the call. Also the read-in
// and write-out of records that the reference and the staging share.

import { BLOCK_FORMAT, DTYPES, ELEMENT_BYTES, TENSOR_DTYPES } from '../loader/abi.js';
import {
  bufferOf, byteOffsetOf, copyInto, Float16Array, Float32Array, hasOwn, holds, isArray, isDetached, isFixedLength, isSafeInteger, isSharedBuffer, isUnreachable, isView,
  join, kindOf, lengthOf, List, ownView, RangeError, TypeError, Uint16Array, Uint8Array,
} from '../loader/intrinsics.js';
import { ArrayRecord, isTensor, recordOf, tensorView } from '../loader/tensor.js';
import { countOf, describe, missing, oneOf, rankOf, requireWeightFor, rowSpan } from './options.js';

/** The typed array that holds each dtype's bits (float16 may also come as
 * a Float16Array; a block format is bytes). */
const storageKind = (dtype) => (dtype === 'float32' ? 'Float32Array' : BLOCK_FORMAT[dtype] !== undefined ? 'Uint8Array' : 'Uint16Array');
const accepts = (kind, dtype) => kind === storageKind(dtype) || (kind === 'Float16Array' && dtype === 'float16');

function expected(dtype) {
  if (dtype === 'float32') return 'a Float32Array';
  if (BLOCK_FORMAT[dtype] !== undefined) return `a Uint8Array (the bytes of ggml ${dtype} blocks)`;
  if (dtype === 'bfloat16') return 'a Uint16Array (bfloat16 bit patterns)';
  return `a Uint16Array (float16 bit patterns)${Float16Array === undefined ? '' : ' or a Float16Array'}`;
}

/** How a wrong array is put right: the conversion that makes one (from a
 * number array or another typed array; not for an output, which is
 * written, not read), or the dtype option a tensor or a Uint16Array needs.
 * `of`: the option the dtype comes from ('' for a dtype the function
 * fixes), `named`: whether the call gave it. */
function fixFor(name, value, dtype, of, named, output) {
  const tensorDtype = isTensor(value) ? recordOf(value)?.dtype : undefined;
  if (BLOCK_FORMAT[tensorDtype] !== undefined && BLOCK_FORMAT[dtype] === undefined) {
    return ` (a ${tensorDtype} tensor holds ggml blocks: dequantize(${name}.array, { dtype: '${tensorDtype}' }) gives their values)`;
  }
  if (tensorDtype !== undefined) {
    if (of === '') return ` (${name} holds float32 values)`;
    return named ? ` (options.${of} is '${dtype}')` : ` (pass options.${of}: '${tensorDtype}' for a ${tensorDtype} tensor)`;
  }
  const kind = isView(value) ? kindOf(value) : undefined;
  if (dtype === 'float32' && kind === 'Uint16Array' && !output) {
    return of !== ''
      ? ` (for 16-bit values, say which format in options.${of}: 'bfloat16' or 'float16')`
      : ` (for 16-bit values, widen them first: toFloat32(${name}, { dtype: 'bfloat16' }) or 'float16')`;
  }
  if (output || (kind === undefined && isArray(value) !== true)) return '';
  if (dtype === 'float32') return ` (copy it into one: Float32Array.from(${name}))`;
  const values = kind === 'Float32Array' ? name : `Float32Array.from(${name})`;
  return ` (16-bit values travel as their bits: fromFloat32(${values}, { dtype: '${dtype}' }) makes them)`;
}

function wrongType(fn, name, value, dtype, of, named, signature, output) {
  const what = dtype === 'float32' && of !== 'weightDtype' ? '' : ` for ${of === '' ? 'dtype' : of} '${dtype}'`;
  const plain = value === undefined || (typeof value === 'object' && value !== null && !isView(value) && !isTensor(value) && isArray(value) === false);
  return new TypeError(`${fn}: ${name} must be ${expected(dtype)}${what}, got ${describe(value)}${fixFor(name, value, dtype, of, named, output)}${plain ? missing(fn, signature) : ''}`);
}

/** Measures an array argument holding `dtype` values: a typed array or a
 * live tensor. For the message: `of` names the option the dtype comes from
 * ('' for none), `named` whether the call gave it, `signature` the
 * function's parameters where an argument may have been left out
 * (./options.js, missing), `output` whether the array only receives values. */
export function measure(fn, name, value, dtype, of = 'dtype', named = false, signature = '', output = false) {
  if (isTensor(value)) {
    const record = recordOf(value);
    if (record === null) throw new TypeError(`${fn}: ${name} is a freed tensor`);
    if (record.dtype !== dtype) throw wrongType(fn, name, value, dtype, of, named, signature, output);
    return record;
  }
  const kind = isView(value) ? kindOf(value) : undefined;
  if (!accepts(kind, dtype) || (kind === 'Float16Array' && Float16Array === undefined)) throw wrongType(fn, name, value, dtype, of, named, signature, output);
  return new ArrayRecord(value, dtype, null, bufferOf(value), byteOffsetOf(value), viewLength(fn, name, value), kind);
}

/** A typed array's length, through the intrinsic getter: a TypeError
 * naming it where its buffer was detached, or shrunk below it (whose
 * length reads 0, and which no copy can read). */
export function viewLength(fn, name, value) {
  const length = lengthOf(value);
  if (length === 0 && isUnreachable(value)) {
    throw new TypeError(`${fn}: ${name} is a view of a detached ArrayBuffer (or out of bounds of a shrunk resizable one); a memory that grew detached its old buffer: take a new view of memory.buffer`);
  }
  return length;
}

const WEIGHT_EXPECTED = `weight must be a Float32Array, a Uint16Array${Float16Array === undefined ? '' : ' or Float16Array'} of 16-bit values, a tensor, or null (for no weight)`;

/** The dtype a weight holds: options.weightDtype, else its array's (a
 * Uint16Array beside 16-bit x holds x's format); null for no weight. */
export function weightDtypeOf(fn, weight, option, dtype, signature = '') {
  if (weight === undefined) throw new TypeError(`${fn}: ${WEIGHT_EXPECTED}, got undefined${missing(fn, signature)}`);
  if (weight === null) {
    requireWeightFor(fn, 'options.weightDtype', option, 'weight', weight);
    return null;
  }
  const named = oneOf(fn, 'options.weightDtype', option, DTYPES, undefined);
  if (named !== undefined) return named;
  if (isTensor(weight)) return recordOf(weight)?.dtype ?? 'float32';
  const kind = isView(weight) ? kindOf(weight) : undefined;
  if (kind === 'Float32Array') return 'float32';
  if (kind === 'Float16Array' && Float16Array !== undefined) return 'float16';
  if (kind === 'Uint16Array') {
    if (dtype !== 'float32') return dtype;
    throw new TypeError(`${fn}: weight is a Uint16Array and x float32: say which 16-bit format it holds in options.weightDtype ('bfloat16' or 'float16')`);
  }
  const plain = typeof weight === 'object' && weight !== null && !isView(weight) && isArray(weight) === false;
  throw new TypeError(`${fn}: ${WEIGHT_EXPECTED}, got ${describe(weight)}${fixFor('weight', weight, 'float32', '', false, false)}${plain ? missing(fn, signature) : ''}`);
}

/** Whether a record lies on shared memory, asked once and only when it
 * matters (the check costs a builtin call). */
export function isShared(record) {
  if (record.shared === undefined) record.shared = isSharedBuffer(record.buffer);
  return record.shared;
}

/** A new array for a call's result: float16 comes back as a Float16Array
 * where the engine has one. Its record has no buffer but a Float16Array's
 * (read as bits through it, viewOf): asking a new typed array for its
 * buffer makes JavaScriptCore build one, and a result is only ever copied
 * to whole, after every check that compares buffers. */
export function newOutput(dtype, length) {
  const kind = dtype === 'float16' && Float16Array !== undefined ? 'Float16Array' : storageKind(dtype);
  const record = new ArrayRecord(null, dtype, null, undefined, 0, length, kind);
  record.owned = true;
  record.shared = false;
  renewOutput(record);
  return record;
}

/** A result record (newOutput) given a new array: a remembered or prepared
 * call's, at each run. */
export function renewOutput(record) {
  const { kind, length } = record;
  const value = kind === 'Float32Array' ? new Float32Array(length) : kind === 'Float16Array' ? new Float16Array(length)
    : kind === 'Uint8Array' ? new Uint8Array(length) : new Uint16Array(length);
  record.value = value;
  if (kind === 'Float16Array') record.buffer = bufferOf(value);
}

/**
 * Whether a measured record still describes its array: a tensor not
 * freed, a view not detached nor shrunk (its buffer, offset and kind
 * cannot change; its length can, and is asked again). A view of a buffer
 * that can neither grow nor shrink changes length only when detached, and
 * so does a view of the same values the package makes: its shadow, whose
 * length (ownView) is cheap to ask and which the staging copies through.
 */
export function stillHolds(record) {
  if (record.buffer === null) return record.live;
  if (record.owned) return true; // a result the call makes afresh at each run
  if (record.within !== null && !record.within.live) return false; // a view of a tensor since freed
  if (record.shadow !== null) return record.shadow.size === record.length;
  return viewHolds(record);
}

// Apart from stillHolds, which SpiderMonkey then optimizes as the small function it is.
function viewHolds(record) {
  if (lengthOf(record.value) !== record.length) return false;
  if (isFixedLength(record.buffer)) record.shadow = ownView(storageView(record.dtype, record.buffer, record.start, record.length));
  return true;
}

/** What a prepared call's record (src/ops/prepared.js) can have become: */
export const HOLDS = 0, FREED = 1, DETACHED = 2, SHRUNK = 3;

/**
 * What became of a prepared call's view that stillHolds no longer finds as
 * measured. A view of wasm memory, an instance's (claimed, or inside a
 * tensor of another instance) or a bound one, is the bytes at its address
 * whatever buffer the memory has now, as a tensor is: a memory that grew
 * detached its old buffer, and the view is made again on the new one (the
 * run returns that one). A length-tracking view whose buffer grew is read at
 * its measured length. Otherwise the bytes are gone: a view of a tensor
 * since freed, a buffer detached, or one shrunk below the view's end. Only
 * a prepared call's records are followed: a repeated unprepared call
 * (src/ops/resolve.js, LastCall) measures a changed view anew.
 */
export function followView(record) {
  const { within } = record;
  if (within !== null && !within.live) return FREED;
  const memory = record.memory ?? (within === null ? null : within.memory);
  if (memory !== null) {
    const buffer = memory.buffer();
    const { dtype, start, length } = record;
    record.buffer = buffer;
    record.value = record.kind === 'Float16Array' ? new Float16Array(buffer, start, length) : storageView(dtype, buffer, start, length);
    record.shadow = ownView(storageView(dtype, buffer, start, length));
    return HOLDS;
  }
  const length = lengthOf(record.value);
  if (length > record.length) {
    record.shadow = ownView(storageView(record.dtype, record.buffer, record.start, record.length));
    return HOLDS;
  }
  return isDetached(record.buffer) ? DETACHED : SHRUNK;
}

/** Values [from, from + n) of a record as a view in its storage type, at
 * its measured range: a length-tracking view of a shared buffer another
 * thread grew since is read at the length it was checked at, and a
 * Float16Array is copied as bits. All of it is its shadow where it has
 * one, else the caller's own array when of that type and unshared (no
 * caller code has run since it was measured, so its length is the measured one). */
export function viewOf(record, from, n) {
  if (record.memory !== null) {
    const view = isTensor(record.value) ? tensorView(record.value) : null;
    if (view !== null && from === 0 && n === record.length) return view;
    return storageView(record.dtype, record.memory.buffer(), record.start + from * ELEMENT_BYTES[record.dtype], n);
  }
  if (from === 0 && n === record.length) {
    if (record.shadow !== null) return record.shadow;
    if (record.kind === storageKind(record.dtype) && !isShared(record)) return record.value;
  }
  return storageView(record.dtype, record.buffer, record.start + from * ELEMENT_BYTES[record.dtype], n);
}

export function storageView(dtype, buffer, byteOffset, length) {
  if (dtype === 'float32') return new Float32Array(buffer, byteOffset, length);
  return ELEMENT_BYTES[dtype] === 1 ? new Uint8Array(buffer, byteOffset, length) : new Uint16Array(buffer, byteOffset, length);
}

/** A copy of a record's bits. */
export function readIn(record) {
  const copy = record.dtype === 'float32' ? new Float32Array(record.length) : new Uint16Array(record.length);
  copyInto(copy, viewOf(record, 0, record.length), 0);
  return copy;
}

/** Writes `bits` (a whole result) over a record. */
export function writeOut(record, bits) {
  copyInto(viewOf(record, 0, record.length), bits, 0);
}

/** The values of a per-row record's rows, packed one after another in the
 * call's order (a copy): row (t, h) of its tokens at t·stride + h·headStride
 * (one row a token without heads), never what lies between or after the
 * rows (./options.js, rowSpan). */
export function readRows(record, call) {
  const { tokens, heads, dim, stride, headStride } = call;
  const copy = record.dtype === 'float32' ? new Float32Array(tokens * heads * dim) : new Uint16Array(tokens * heads * dim);
  if (heads === 1 && stride === dim) copyInto(copy, viewOf(record, 0, rowSpan(tokens, dim, stride)), 0);
  else {
    for (let t = 0; t < tokens; t++) {
      for (let h = 0; h < heads; h++) copyInto(copy, viewOf(record, t * stride + h * headStride, dim), (t * heads + h) * dim);
    }
  }
  return copy;
}

/** Writes `bits`, the call's rows packed (readRows' order), over the rows
 * of a per-row record, leaving the values between them, and what follows
 * the last row, as they are. */
export function writeRows(record, bits, call) {
  const { tokens, heads, dim, stride, headStride } = call;
  const whole = viewOf(record, 0, record.length);
  if (heads === 1 && stride === dim) {
    copyInto(whole, bits, 0);
    return;
  }
  const bytes = ELEMENT_BYTES[record.dtype];
  for (let t = 0; t < tokens; t++) {
    for (let h = 0; h < heads; h++) {
      const r = t * heads + h;
      copyInto(whole, storageView(record.dtype, bufferOf(bits), byteOffsetOf(bits) + r * dim * bytes, dim), t * stride + h * headStride);
    }
  }
}

/**
 * The bytes that values of `shape` take as `dtype`: `shape` a count of
 * values, or an array of dims whose last is a row's (ggml's ne0). A block
 * format's rows are blocks: the row a multiple of the block size, and
 * (rows × dim / block size) × block bytes in all, what a block output or
 * quantize writes and alloc(n, format) holds; a storage dtype's, values ×
 * bytes a value. TypeError for an unknown dtype, a shape that is neither or
 * a dim that is no number; RangeError for an empty shape, a dim that is no
 * non-negative integer, a row that is no whole number of blocks or a size
 * past 2^53.
 */
export function byteLength(dtype, shape) {
  if (!holds(TENSOR_DTYPES, dtype)) throw new TypeError(`byteLength: dtype must be ${join(TENSOR_DTYPES, ' or ', "'")}, got ${describe(dtype)}`);
  let values;
  let dim;
  let shown; // the shape as it was read, for a message (reading it again would run its getters again)
  if (typeof shape === 'number') {
    values = countOf('byteLength', 'shape (a count of values)', shape);
    dim = values;
    shown = `${values}`;
  } else {
    if (isArray(shape) !== true) throw new TypeError(`byteLength: shape must be a count of values or an array of dims, got ${describe(shape)}`);
    const rank = rankOf('byteLength', 'shape', shape);
    const dims = new List();
    values = 1;
    for (let i = 0; i < rank; i++) {
      dim = countOf('byteLength', `shape[${i}]`, hasOwn(shape, i) ? shape[i] : undefined);
      dims[i] = dim;
      values *= dim;
    }
    shown = `[${join(dims, ',')}]`;
  }
  const format = BLOCK_FORMAT[dtype];
  if (format !== undefined && dim % format.values !== 0) {
    throw new RangeError(`byteLength: a row of ${dtype} blocks must hold a multiple of ${format.values} values, the block size; the shape's last dim is ${dim}`);
  }
  const bytes = format === undefined ? values * ELEMENT_BYTES[dtype] : (values / format.values) * format.bytes;
  if (!isSafeInteger(bytes)) throw new RangeError(`byteLength: shape ${shown} of ${dtype} takes 2^53 bytes or more`);
  return bytes;
}
