// Where arguments are checked. Every public function, the wasm API and the
// JS reference alike, resolves its arguments here, so both throw the same
// TypeError/RangeError for the same mistake, always before anything is
// written. The rule, in three steps:
//
// 1. Read. Each option is read once, from the options object's own
//    enumerable properties (as object spread reads them), so an inherited
//    property never steers a call and a getter runs at most once. Every
//    piece of caller code that can run (getters, proxies) runs here.
// 2. Measure. Each array is measured once, through the intrinsic
//    %TypedArray%.prototype getters saved when this module loaded, never
//    through the object's own properties or methods, and described by an
//    Arg record. From here on only the records are used: no caller code
//    runs again in the call.
// 3. Check. Sizes and values, then one overlap rule over the byte ranges of
//    every array of the call, outputs and statistics included.

import { IN, INOUT, ONCE, OUT, PER_ROW, PER_STAT, SCRATCH } from '../loader/kernels.js';
import {
  bufferOf, byteLengthOf, byteOffsetOf, copyInto, Float16ArrayOf, Float32ArrayOf, hasOwn, isShared, isSharedBuffer,
  isUnreachable, isView, kindOf, lengthOf, Uint16ArrayOf,
} from '../loader/intrinsics.js';
import { DTYPES, Tensor } from '../loader/tensor.js';

const { isArray } = Array;
const { isSafeInteger, isInteger } = Number;
const { fround, abs } = Math;
const StringOf = String;
const JSONStringify = JSON.stringify;

export const FLT_MAX = 3.4028234663852886e38;

// ---- Messages ------------------------------------------------------------

/** A short description of what was passed, for error messages. Never throws. */
export function describe(value) {
  if (value === undefined) return 'undefined';
  if (value === null) return 'null';
  switch (typeof value) {
    case 'string': return `string ${JSONStringify(value.slice(0, 20))}`;
    case 'bigint': return `bigint ${value}n`;
    case 'symbol': return 'a symbol';
    case 'function': return 'a function';
    case 'object': break;
    default: return `${typeof value} ${StringOf(value)}`;
  }
  if (isView(value)) {
    const kind = kindOf(value);
    return kind === undefined ? 'DataView' : `${kind}(${lengthOf(value)})`;
  }
  if (Tensor.is(value)) return `${Tensor.dtypeOf(value)} Tensor(${Tensor.lengthOf(value)})`;
  try {
    if (isArray(value)) return `Array(${value.length})`;
    const name = value.constructor?.name;
    return typeof name === 'string' && name !== '' ? name : 'object';
  } catch {
    return 'object';
  }
}

// ---- Step 1: options -------------------------------------------------------

/**
 * A reader of the options `Record` declares as fields: (fn, options) → a
 * new Record holding what was given (undefined for the rest). An omitted
 * options argument reads nothing; an own key the function does not know (a
 * typo, say) is a TypeError. Every field is the record's own and its class's
 * prototype inherits nothing, so a record never answers with an inherited value.
 */
export function optionReader(Record) {
  Object.setPrototypeOf(Record.prototype, null);
  const names = Object.keys(new Record());
  const allowed = names.join(', ');
  const defaults = Object.freeze(new Record());
  return (fn, options) => {
    if (options === undefined) return defaults;
    if (options === null || typeof options !== 'object' || isArray(options)) {
      throw new TypeError(`${fn}: options must be an object, got ${describe(options)}`);
    }
    const record = new Record();
    for (const key in options) {
      if (!hasOwn(options, key)) continue; // inherited (a polluted prototype, say)
      if (!hasOwn(record, key)) throw new TypeError(`${fn}: unknown option '${key}' (allowed: ${allowed})`);
      record[key] = options[key]; // own: its getter, if any, runs here and only here
    }
    return record;
  };
}

/** options.shape read once, element by element, into a plain array of counts. */
function readShape(fn, shape) {
  if (shape === undefined) return undefined;
  const bad = () => new TypeError(`${fn}: options.shape must be a non-empty array of non-negative integers, got ${describe(shape)}`);
  if (!isArray(shape)) throw bad();
  const rank = shape.length;
  if (!isSafeInteger(rank) || rank === 0) throw bad();
  const dims = [];
  for (let i = 0; i < rank; i++) {
    if (!hasOwn(shape, i)) throw new TypeError(`${fn}: options.shape has a hole at index ${i}`);
    const n = shape[i];
    if (!isSafeInteger(n) || n < 0) throw bad();
    dims.push(n);
  }
  return dims;
}

// ---- Step 2: arrays --------------------------------------------------------

/**
 * One array argument, measured: where its values lie and what they hold.
 * For a tensor, `kernels` is its instance and `buffer` is null (its
 * memory's buffer changes when the memory grows); for a typed array,
 * `buffer`, `start` and `length` are what the intrinsic getters said.
 */
class Arg {
  constructor(name, value, dtype, kernels, buffer, start, length, kind) {
    this.name = name;
    this.value = value; // what the call returns, when this is its output
    this.dtype = dtype;
    this.kernels = kernels;
    this.buffer = buffer;
    this.start = start;
    this.length = length;
    this.end = start + length * (dtype === 'float32' ? 4 : 2);
    this.shared = undefined; // whether buffer is a SharedArrayBuffer: asked only when it matters (isShared)
    this.kind = kind; // 'Float32Array' | 'Uint16Array' | 'Float16Array', or null for a tensor
    this.owned = false; // made by the package for its result, not the caller's
  }
}

/** The typed array that holds each dtype's bits (float16 may also come as a Float16Array). */
const STORAGE_KIND = { float32: 'Float32Array', bfloat16: 'Uint16Array', float16: 'Uint16Array' };

function expected(dtype) {
  if (dtype === 'float32') return 'a Float32Array';
  if (dtype === 'bfloat16') return 'a Uint16Array (bfloat16 bit patterns)';
  return `a Uint16Array (float16 bit patterns)${Float16ArrayOf === undefined ? '' : ' or a Float16Array'}`;
}

/** Measures an array argument holding `dtype` values: a typed array or a
 * live tensor. `of` names what the dtype belongs to in the type error. */
export function measure(fn, name, value, dtype, of = 'dtype') {
  if (Tensor.is(value)) {
    const kernels = Tensor.kernelsOf(value);
    if (kernels === null) throw new TypeError(`${fn}: ${name} is a freed tensor`);
    if (Tensor.dtypeOf(value) !== dtype) throw wrongType(fn, name, value, dtype, of);
    return new Arg(name, value, dtype, kernels, null, Tensor.byteOffsetOf(value), Tensor.lengthOf(value), null);
  }
  const kind = isView(value) ? kindOf(value) : undefined;
  if (kind !== STORAGE_KIND[dtype] && (kind !== 'Float16Array' || dtype !== 'float16' || Float16ArrayOf === undefined)) {
    throw wrongType(fn, name, value, dtype, of);
  }
  const length = lengthOf(value);
  if (length === 0 && isUnreachable(value)) {
    throw new TypeError(`${fn}: ${name} is a view of a detached ArrayBuffer (or out of bounds of a shrunk resizable one)`);
  }
  return new Arg(name, value, dtype, null, bufferOf(value), byteOffsetOf(value), length, kind);
}

function wrongType(fn, name, value, dtype, of) {
  const what = dtype === 'float32' && of === 'dtype' ? '' : ` for ${of} '${dtype}'`;
  return new TypeError(`${fn}: ${name} must be ${expected(dtype)}${what}, got ${describe(value)}`);
}

export { copyInto, isSharedBuffer };

/** { byteOffset, byteLength } of a typed array that must be a view of `buffer`. */
export function viewRange(fn, name, view, buffer) {
  if (kindOf(view) === undefined || bufferOf(view) !== buffer) {
    throw new TypeError(`${fn}: ${name} must be a view of the memory's buffer, or { byteOffset, byteLength }`);
  }
  return { byteOffset: byteOffsetOf(view), byteLength: byteLengthOf(view) };
}

// ---- Reading in, writing out ------------------------------------------------
// Through views made here at the measured range: a length-tracking view whose
// shared buffer another thread grew since is read at the length it was
// checked at, and a Float16Array is copied as bits.

/** The bits of an argument as a view of its measured range (Float32Array or
 * Uint16Array): the tensor's own view, or a new view of the array's buffer. */
export function bitsOf(arg) {
  if (arg.kernels !== null) return Tensor.viewOf(arg.value);
  return arg.dtype === 'float32'
    ? new Float32ArrayOf(arg.buffer, arg.start, arg.length)
    : new Uint16ArrayOf(arg.buffer, arg.start, arg.length);
}

/** A copy of an argument's bits. */
export function readIn(arg) {
  const copy = arg.dtype === 'float32' ? new Float32ArrayOf(arg.length) : new Uint16ArrayOf(arg.length);
  copyInto(copy, bitsOf(arg), 0);
  return copy;
}

/** A new array for a call's result: float16 comes back as a Float16Array where the engine has one. */
export function newOutput(name, dtype, length) {
  let value;
  if (dtype === 'float32') value = new Float32ArrayOf(length);
  else if (dtype === 'float16' && Float16ArrayOf !== undefined) value = new Float16ArrayOf(length);
  else value = new Uint16ArrayOf(length);
  const arg = new Arg(name, value, dtype, null, bufferOf(value), 0, length, kindOf(value));
  arg.owned = true;
  arg.shared = false;
  return arg;
}

// ---- Step 3: checks ----------------------------------------------------------

const APART = 0;
const SAME = 1;
const OVERLAP = 2;
const MAYBE = 3;

/** How two measured arguments' bytes relate. Two views of different
 * SharedArrayBuffer objects may still share memory (structuredClone of a
 * SharedArrayBuffer is a second object over the same bytes): MAYBE. */
function relation(a, b) {
  if (a.start === a.end || b.start === b.end) return APART;
  if (a.kernels === null || b.kernels === null || a.kernels !== b.kernels) {
    const bufferA = a.kernels === null ? a.buffer : a.kernels.buffer();
    const bufferB = b.kernels === null ? b.buffer : b.kernels.buffer();
    if (bufferA !== bufferB) return isShared(a) && isShared(b) ? MAYBE : APART;
  }
  if (a.start === b.start && a.end === b.end) return SAME;
  return a.start < b.end && b.start < a.end ? OVERLAP : APART;
}

/**
 * The one overlap rule, for every function. `arrays` lists a call's arrays
 * (null or undefined where not given) and `layout` says of each whether it
 * is written and which input an output may exactly overlay (`inPlaceOf`,
 * an index, or -1). No array written may share a byte with any other array
 * of the call, except an output exactly over its input. Returns whether
 * some written array may alias another through shared memory: then every
 * input is read in before the first write.
 */
function checkOverlaps(fn, arrays, layout) {
  let mayAlias = false;
  for (let i = 0; i < arrays.length; i++) {
    const a = arrays[i];
    if (a == null) continue;
    for (let j = i + 1; j < arrays.length; j++) {
      const b = arrays[j];
      if (b == null || !(layout[i].writes || layout[j].writes)) continue;
      const rel = relation(a, b);
      if (rel === APART) continue;
      if (rel === MAYBE) {
        mayAlias = true;
        continue;
      }
      const [writer, other, w, o] = layout[j].writes ? [b, a, j, i] : [a, b, i, j];
      const inPlace = layout[w].inPlaceOf === o;
      if (inPlace && rel === SAME) continue;
      throw new RangeError(inPlace
        ? `${fn}: ${writer.name} must be ${other.name} itself or not overlap ${other.name}`
        : `${fn}: ${writer.name} must not overlap ${other.name}`);
    }
  }
  return mayAlias;
}

/**
 * The arrays of each function, in the order its resolved call lists them
 * (`call.arrays`) and its kernel's runner takes them: per (dim values a row,
 * one a row, or dim for the whole call), dir (read, written, both, or the
 * kernel's own working space), inPlaceOf (the input an output may be).
 */
const slot = (per, dir, inPlaceOf = -1) => Object.freeze({ per, dir, inPlaceOf, writes: dir === OUT || dir === INOUT });
export const RMSNORM_ARRAYS = Object.freeze([ // x, weight, residual, out, rstd
  slot(PER_ROW, IN), slot(ONCE, IN), slot(PER_ROW, INOUT), slot(PER_ROW, OUT, 0), slot(PER_STAT, OUT),
]);
export const LAYERNORM_ARRAYS = Object.freeze([ // x, weight, bias, out, mean, rstd
  slot(PER_ROW, IN), slot(ONCE, IN), slot(ONCE, IN), slot(PER_ROW, OUT, 0), slot(PER_STAT, OUT), slot(PER_STAT, OUT),
]);
// dy, x, weight, dweight, dbias, dx, mean, rstd: the statistics read when
// given, else the kernels' working space (recomputed).
const backwardArrays = (statistics) => Object.freeze([
  slot(PER_ROW, IN), slot(PER_ROW, IN), slot(ONCE, IN), slot(ONCE, INOUT), slot(ONCE, INOUT),
  slot(PER_ROW, OUT, 0), slot(PER_STAT, statistics), slot(PER_STAT, statistics),
]);
export const BACKWARD_ARRAYS = backwardArrays(IN);
export const BACKWARD_ARRAYS_RECOMPUTED = backwardArrays(SCRATCH);

function oneOf(fn, name, value, allowed, fallback) {
  if (value === undefined) return fallback;
  if (!allowed.includes(value)) {
    throw new TypeError(`${fn}: ${name} must be ${allowed.map((a) => `'${a}'`).join(' or ')}, got ${describe(value)}`);
  }
  return value;
}

/** A number option as the float32 the kernels use: finite (and >= 0 if asked). */
function float32Option(fn, name, value, fallback, nonNegative) {
  if (value === undefined) return fround(fallback);
  if (typeof value !== 'number') throw new TypeError(`${fn}: ${name} must be a number, got ${describe(value)}`);
  if (!(nonNegative ? value >= 0 && value <= FLT_MAX : abs(value) <= FLT_MAX)) {
    throw new RangeError(`${fn}: ${name} must be a finite float32${nonNegative ? ' >= 0' : ''}, got ${value}`);
  }
  return fround(value);
}

function requireLength(fn, arg, length, what) {
  if (arg.length !== length) {
    throw new RangeError(`${fn}: ${arg.name}.length (${arg.length}) must equal ${what} (${length})`);
  }
}

/**
 * The row length (dim) from options.dim, or options.shape and options.axis,
 * or else the length of the first of `weight` and `bias` given (measured
 * Args or null; bias undefined where the function has none); checks both
 * against it, and that it divides x.length.
 */
function resolveDim(fn, opts, shape, length, weight, bias) {
  const { dim, axis } = opts;
  let rowLength;
  if (shape !== undefined) {
    if (dim !== undefined) throw new TypeError(`${fn}: give options.dim or options.shape, not both`);
    const rank = shape.length;
    const at = axis ?? -1;
    if (!isInteger(at) || at < -rank || at >= rank) {
      throw new RangeError(`${fn}: options.axis must be an integer in [${-rank}, ${rank - 1}] for a shape of rank ${rank}, got ${describe(at)}`);
    }
    let total = 1;
    for (const n of shape) total *= n;
    if (total !== length) throw new RangeError(`${fn}: options.shape [${shape}] holds ${total} values, but x.length is ${length}`);
    rowLength = 1;
    for (let i = at < 0 ? at + rank : at; i < rank; i++) rowLength *= shape[i];
    if (rowLength === 0) throw new RangeError(`${fn}: the normalized dims of options.shape [${shape}] must not be empty (dim = 0)`);
  } else if (axis !== undefined) {
    throw new TypeError(`${fn}: options.axis needs options.shape`);
  } else if (dim !== undefined) {
    if (typeof dim !== 'number') throw new TypeError(`${fn}: options.dim must be a number, got ${describe(dim)}`);
    if (!isSafeInteger(dim) || dim < 1) throw new RangeError(`${fn}: options.dim must be a positive integer, got ${dim}`);
    rowLength = dim;
  } else if (weight !== null || (bias != null)) {
    rowLength = (weight ?? bias).length;
  } else {
    throw new TypeError(`${fn}: options.dim is required when weight${bias === undefined ? ' is' : ' and bias are'} null`);
  }
  // Where dim came from, for the messages.
  const from = () => (shape !== undefined ? 'the product of the normalized dims of options.shape'
    : dim !== undefined ? 'options.dim' : `${(weight ?? bias).name}.length`);
  for (const p of [weight, bias]) {
    if (p != null && p.length !== rowLength) {
      throw new RangeError(`${fn}: ${p.name}.length (${p.length}) must equal ${from()} (${rowLength})`);
    }
  }
  if (length % rowLength !== 0) {
    throw new RangeError(`${fn}: x.length (${length}) must be a multiple of dim (${rowLength}, from ${from()})`);
  }
  return rowLength;
}

/** weight or bias: a float32 array or tensor, or null for none. */
function measureParameter(fn, name, value) {
  if (value === null) return null;
  if (value === undefined) throw new TypeError(`${fn}: ${name} must be a Float32Array or null (for no ${name}), got undefined`);
  const p = measure(fn, name, value, 'float32');
  if (p.length === 0) throw new RangeError(`${fn}: ${name} must not be empty (dim = 0)`);
  return p;
}

/** A per-row statistic, given as an output or an input: float32, one value a row. */
function measureStatistic(fn, name, value, rows) {
  if (value === undefined) return undefined;
  const stat = measure(fn, name, value, 'float32');
  requireLength(fn, stat, rows, 'the number of rows');
  return stat;
}

// ---- rmsNorm and addRmsNorm --------------------------------------------------

export const RMSNORM_DEFAULT_EPS = 1e-6;
const CAST_MODES = ['llama', 'gemma'];
export const readRmsNormOptions = optionReader(class RmsNormOptions {
  eps; dim; out; dtype; weightDtype; castMode; weightOffset; shape; axis; rstd;
});

const WEIGHT_EXPECTED = `weight must be a Float32Array, a Uint16Array${Float16ArrayOf === undefined ? '' : ' or Float16Array'} of 16-bit values, a tensor, or null (for no weight)`;

/** The dtype the weight holds: its array's, or options.weightDtype for a
 * Uint16Array (whose bits could be either 16-bit format). */
function weightDtypeOf(fn, weight, option, dtype) {
  if (weight === null) {
    if (option !== undefined) throw new TypeError(`${fn}: options.weightDtype needs a weight, but weight is null`);
    return null;
  }
  const named = oneOf(fn, 'options.weightDtype', option, DTYPES, undefined);
  if (named !== undefined) return named;
  if (Tensor.is(weight)) return Tensor.dtypeOf(weight);
  const kind = isView(weight) ? kindOf(weight) : undefined;
  if (kind === 'Float32Array') return 'float32';
  if (kind === 'Float16Array') return 'float16';
  if (kind === 'Uint16Array') {
    if (dtype !== 'float32') return dtype;
    throw new TypeError(`${fn}: weight is a Uint16Array and x float32: say which 16-bit format it holds in options.weightDtype ('bfloat16' or 'float16')`);
  }
  throw new TypeError(`${fn}: ${WEIGHT_EXPECTED}, got ${describe(weight)}`);
}

/**
 * Checks rmsNorm(x, weight, options), or addRmsNorm with `residual`, and
 * resolves it to the kernel's terms. `opts` are the options already read
 * (readRmsNormOptions).
 */
export function resolveRmsNorm(fn, x, residual, weight, opts) {
  const shape = readShape(fn, opts.shape); // the last read of caller data
  const inferred = isView(x) && kindOf(x) === 'Float16Array' ? 'float16' : 'float32';
  const dtype = oneOf(fn, 'options.dtype', opts.dtype, DTYPES, inferred);
  const xs = measure(fn, 'x', x, dtype);
  let rs;
  if (residual !== undefined) {
    rs = measure(fn, 'residual', residual, dtype);
    requireLength(fn, rs, xs.length, 'x.length');
  }
  if (weight === undefined) throw new TypeError(`${fn}: ${WEIGHT_EXPECTED}, got undefined`);
  const weightDtype = weightDtypeOf(fn, weight, opts.weightDtype, dtype);
  const ws = weight === null ? null : measure(fn, 'weight', weight, weightDtype, 'weightDtype');
  if (ws !== null && ws.length === 0) throw new RangeError(`${fn}: weight must not be empty (dim = 0)`);
  const eps = float32Option(fn, 'options.eps', opts.eps, RMSNORM_DEFAULT_EPS, true);
  const castMode = oneOf(fn, 'options.castMode', opts.castMode, CAST_MODES, 'llama');
  const weightOffset = float32Option(fn, 'options.weightOffset', opts.weightOffset, 0, false);
  if (opts.weightOffset !== undefined && ws === null) {
    throw new TypeError(`${fn}: options.weightOffset needs a weight, but weight is null`);
  }
  const dim = resolveDim(fn, opts, shape, xs.length, ws, undefined);
  const rows = xs.length / dim;
  let out;
  if (opts.out !== undefined) {
    out = measure(fn, 'options.out', opts.out, dtype);
    requireLength(fn, out, xs.length, 'x.length');
  }
  const rstd = measureStatistic(fn, 'options.rstd', opts.rstd, rows);
  const arrays = [xs, ws, rs, out, rstd];
  const mayAlias = checkOverlaps(fn, arrays, RMSNORM_ARRAYS);
  return {
    fn, rows, dim, eps, dtype, weightDtype, castMode, weightOffset, mayAlias, arrays,
    x: xs, residual: rs, weight: ws, out, rstd,
  };
}

/**
 * Whether rmsNorm(x, weight, opts), or addRmsNorm with `residual` (else
 * undefined), is the zero-copy call an engine makes on every token: x, the
 * residual, the weight and options.out live tensors of `kernels`, at least
 * one row, x, the residual and out of the options' dtype (float32 by
 * default), the weight of options.weightDtype if given; out x itself or
 * apart from it, the residual apart from x, and out and the residual apart
 * from the weight and each other; options only among out, eps, dim,
 * dtype, weightDtype, castMode and weightOffset, each valid. Every such call
 * is one resolveRmsNorm accepts, resolved to rows = x.length /
 * weight.length, dim = weight.length, eps = fround(eps or its default),
 * weightOffset = fround(weightOffset or 0), castMode or 'llama': the caller
 * may call the kernel with those at once. Anything else, every mistake
 * included, takes the general path. (tests/plain-tensor-call.test.js holds
 * the two paths to the same bits.) Reads only private fields: no caller
 * code runs.
 */
export function isPlainTensorCall(kernels, x, residual, weight, opts) {
  const { out, eps, dim, weightOffset, castMode } = opts;
  if (opts.shape !== undefined || opts.axis !== undefined || opts.rstd !== undefined) return false;
  if (!Tensor.is(x) || !Tensor.is(weight) || !Tensor.is(out)) return false;
  if (Tensor.kernelsOf(x) !== kernels || Tensor.kernelsOf(weight) !== kernels || Tensor.kernelsOf(out) !== kernels) return false;
  const dtype = Tensor.dtypeOf(x);
  if ((opts.dtype ?? 'float32') !== dtype || Tensor.dtypeOf(out) !== dtype) return false;
  if (opts.weightDtype !== undefined && opts.weightDtype !== Tensor.dtypeOf(weight)) return false;
  if (castMode !== undefined && castMode !== 'llama' && castMode !== 'gemma') return false;
  if (eps !== undefined && !(typeof eps === 'number' && eps >= 0 && eps <= FLT_MAX)) return false;
  if (weightOffset !== undefined && !(typeof weightOffset === 'number' && abs(weightOffset) <= FLT_MAX)) return false;
  const n = Tensor.lengthOf(x);
  const d = Tensor.lengthOf(weight);
  if (d === 0 || (dim !== undefined && dim !== d) || n === 0 || n % d !== 0 || Tensor.lengthOf(out) !== n) return false;
  const size = dtype === 'float32' ? 4 : 2;
  const bytes = size * n;
  const xAt = Tensor.byteOffsetOf(x);
  const yAt = Tensor.byteOffsetOf(out);
  const wAt = Tensor.byteOffsetOf(weight);
  const wEnd = wAt + d * (Tensor.dtypeOf(weight) === 'float32' ? 4 : 2);
  const apart = (a, aEnd, b, bEnd) => aEnd <= b || bEnd <= a;
  if (!(yAt === xAt || apart(yAt, yAt + bytes, xAt, xAt + bytes)) || !apart(yAt, yAt + bytes, wAt, wEnd)) return false;
  if (residual === undefined) return true;
  if (!Tensor.is(residual) || Tensor.kernelsOf(residual) !== kernels || Tensor.dtypeOf(residual) !== dtype ||
    Tensor.lengthOf(residual) !== n) return false;
  const rAt = Tensor.byteOffsetOf(residual);
  return apart(rAt, rAt + bytes, xAt, xAt + bytes) && apart(rAt, rAt + bytes, yAt, yAt + bytes) &&
    apart(rAt, rAt + bytes, wAt, wEnd);
}

/**
 * Whether rmsNorm(x, weight, opts) is the plain copying call: x, weight and
 * options.out (or none) Float32Arrays outside `kernels`' memory, on
 * unshared buffers, at least one row, out x itself or apart from x and
 * from the weight, and no option but out, a valid eps and a dim equal to
 * weight.length. Every such call is one resolveRmsNorm accepts, with the
 * same rows, dim, eps and no copy-free argument: the caller may stage it at
 * once (WasmKernels.rmsNormCopying). Anything else, every mistake included,
 * takes the general path. (tests/plain-copying-call.test.js holds the two
 * paths to the same bits.) Reads only intrinsics: no caller code runs.
 */
export function isPlainCopyingCall(kernels, x, weight, opts) {
  const { out, eps, dim } = opts;
  if (opts.dtype !== undefined || opts.weightDtype !== undefined || opts.castMode !== undefined ||
    opts.weightOffset !== undefined || opts.shape !== undefined || opts.axis !== undefined || opts.rstd !== undefined) return false;
  if (!isView(x) || kindOf(x) !== 'Float32Array' || !isView(weight) || kindOf(weight) !== 'Float32Array') return false;
  if (out !== undefined && (!isView(out) || kindOf(out) !== 'Float32Array')) return false;
  if (eps !== undefined && !(typeof eps === 'number' && eps >= 0 && eps <= FLT_MAX)) return false;
  const n = lengthOf(x);
  const d = lengthOf(weight);
  if (n === 0 || d === 0 || n % d !== 0 || (dim !== undefined && dim !== d)) return false;
  const memory = kernels.buffer();
  const xBuffer = bufferOf(x);
  const wBuffer = bufferOf(weight);
  if (xBuffer === memory || wBuffer === memory || isSharedBuffer(xBuffer) || isSharedBuffer(wBuffer)) return false;
  if (out === undefined) return true;
  const outBuffer = bufferOf(out);
  if (lengthOf(out) !== n || outBuffer === memory || isSharedBuffer(outBuffer)) return false;
  const at = byteOffsetOf(out);
  const bytes = 4 * n;
  if (outBuffer === xBuffer) {
    const xAt = byteOffsetOf(x);
    if (at !== xAt && at < xAt + bytes && xAt < at + bytes) return false;
  }
  if (outBuffer === wBuffer) {
    const wAt = byteOffsetOf(weight);
    if (at < wAt + 4 * d && wAt < at + bytes) return false;
  }
  return true;
}

// ---- layerNorm and the backward passes (float32) ------------------------------

const LAYERNORM_DEFAULT_EPS = 1e-5;
const readLayerNormOptions = optionReader(class LayerNormOptions { eps; dim; shape; axis; out; mean; rstd; });

/** Checks layerNorm(x, weight, bias, options). */
export function resolveLayerNorm(fn, x, weight, bias, options) {
  const opts = readLayerNormOptions(fn, options);
  const shape = readShape(fn, opts.shape);
  const xs = measure(fn, 'x', x, 'float32');
  const ws = measureParameter(fn, 'weight', weight);
  const bs = measureParameter(fn, 'bias', bias);
  const eps = float32Option(fn, 'options.eps', opts.eps, LAYERNORM_DEFAULT_EPS, true);
  const dim = resolveDim(fn, opts, shape, xs.length, ws, bs);
  const rows = xs.length / dim;
  let out;
  if (opts.out !== undefined) {
    out = measure(fn, 'options.out', opts.out, 'float32');
    requireLength(fn, out, xs.length, 'x.length');
  }
  const mean = measureStatistic(fn, 'options.mean', opts.mean, rows);
  const rstd = measureStatistic(fn, 'options.rstd', opts.rstd, rows);
  const arrays = [xs, ws, bs, out, mean, rstd];
  const mayAlias = checkOverlaps(fn, arrays, LAYERNORM_ARRAYS);
  return { fn, rows, dim, eps, mayAlias, arrays, x: xs, weight: ws, bias: bs, out, mean, rstd };
}

const readRmsNormBackwardOptions = optionReader(class RmsNormBackwardOptions { eps; dim; shape; axis; rstd; dx; });
const readLayerNormBackwardOptions = optionReader(class LayerNormBackwardOptions {
  eps; dim; shape; axis; mean; rstd; dx;
});

/** Checks rmsNormBackward(dy, x, weight, options), or layerNormBackward's
 * arguments when `bias` is given (not undefined for layerNorm's). */
export function resolveBackward(fn, dy, x, weight, bias, options, layer) {
  const opts = (layer ? readLayerNormBackwardOptions : readRmsNormBackwardOptions)(fn, options);
  const shape = readShape(fn, opts.shape);
  const xs = measure(fn, 'x', x, 'float32');
  const dys = measure(fn, 'dy', dy, 'float32');
  requireLength(fn, dys, xs.length, 'x.length');
  const ws = measureParameter(fn, 'weight', weight);
  const bs = layer ? measureParameter(fn, 'bias', bias) : null;
  const eps = float32Option(fn, 'options.eps', opts.eps, layer ? LAYERNORM_DEFAULT_EPS : RMSNORM_DEFAULT_EPS, true);
  const dim = resolveDim(fn, opts, shape, xs.length, ws, layer ? bs : undefined);
  const rows = xs.length / dim;
  let dx;
  if (opts.dx !== undefined) {
    dx = measure(fn, 'options.dx', opts.dx, 'float32');
    requireLength(fn, dx, xs.length, 'x.length');
  }
  const mean = layer ? measureStatistic(fn, 'options.mean', opts.mean, rows) : undefined;
  const rstd = measureStatistic(fn, 'options.rstd', opts.rstd, rows);
  if (layer && (mean === undefined) !== (rstd === undefined)) {
    throw new TypeError(`${fn}: options.mean and options.rstd must be given together`);
  }
  // dweight and dbias (indices 3 and 4) are the package's own new arrays;
  // the bias itself is not read.
  const arrays = [dys, xs, ws, null, null, dx, mean, rstd];
  const mayAlias = checkOverlaps(fn, arrays, BACKWARD_ARRAYS);
  return { fn, rows, dim, eps, mayAlias, arrays, dy: dys, x: xs, weight: ws, bias: bs, mean, rstd, dx };
}
