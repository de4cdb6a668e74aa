// Options and scalar arguments: read once, checked once. Every public
// function, of the wasm API and of the reference alike, reads its options
// here, so both throw the same TypeError (wrong type) or RangeError (wrong
// size or value) for the same mistake.

import { CAST_MODES, DTYPES } from '../loader/abi.js';
import {
  abs, defineProperty, freeze, fround, hasOwn, holds, isArray, isSafeInteger, isView, join, JSONStringify, kindOf, lengthOf,
  RangeError, setPrototypeOf, sliceString, StringOf, TypeError,
} from '../loader/intrinsics.js';
import { Tensor } from '../loader/tensor.js';

export const FLT_MAX = 3.4028234663852886e38;

/** A short description of what was passed, for error messages. Runs no caller code. */
export function describe(value) {
  if (value === undefined) return 'undefined';
  if (value === null) return 'null';
  switch (typeof value) {
    case 'string': return `string ${JSONStringify(sliceString(value, 0, 20))}`;
    case 'bigint': return `bigint ${StringOf(value)}n`;
    case 'symbol': return 'a symbol';
    case 'function': return 'a function';
    case 'object': break;
    default: return `${typeof value} ${StringOf(value)}`;
  }
  if (isView(value)) {
    const kind = kindOf(value);
    return kind === undefined ? 'DataView' : `${kind}(${lengthOf(value)})`;
  }
  if (Tensor.is(value)) {
    const record = Tensor.recordOf(value);
    return record === null ? 'a freed Tensor' : `${record.dtype} Tensor(${record.length})`;
  }
  try {
    if (isArray(value, () => 0)) return `Array(${value.length})`;
    const name = value.constructor?.name;
    return typeof name === 'string' && name !== '' ? name : 'object';
  } catch {
    return isRevoked(value) ? 'a revoked Proxy' : 'object';
  }
}

const revokedError = (fn, name) => () => new TypeError(`${fn}: ${name} is a revoked Proxy`);
function isRevoked(value) {
  try {
    isArray(value, () => 0);
    return false;
  } catch {
    return true;
  }
}

/** What one read of options found, key by key, before it is known whether
 * they are the last call's (then no record is made). */
class Found {
  constructor(size) {
    this.keys = [];
    this.values = [];
    for (let i = 0; i < size; i++) {
      this.keys[i] = '';
      this.values[i] = undefined;
    }
  }
}
setPrototypeOf(Found.prototype, null);

/**
 * A reader of the options named in `defaults` (the description's options):
 * (fn, options) → a record of what was given, undefined for the rest. An
 * omitted options argument reads nothing; only own enumerable properties
 * count (as object spread reads them), so an inherited property never
 * steers a call and a getter runs once; an own key the function does not
 * know (a typo) is a TypeError. The record's class inherits nothing.
 * Given `previous` (a record this reader made, of `previousCount` options),
 * options with the same values read as `previous` itself: a decode loop's
 * call makes no record (object spread is slow in SpiderMonkey).
 */
export function optionReader(defaults) {
  const names = [];
  const template = {}; // every name its own property, so none is ever looked up on a prototype
  for (const name in defaults) {
    names[names.length] = name;
    defineProperty(template, name, { value: undefined, writable: true, enumerable: true, configurable: true });
  }
  const none = freeze({ ...template });
  // Reused from read to read; a getter that calls the API while options are
  // read gets a Found of its own.
  let spare = new Found(names.length);
  return (fn, options, name = 'options', previous = undefined, previousCount = -1) => {
    lastRead.count = 0;
    lastRead.same = previous !== undefined;
    if (options === undefined) return none;
    if (options === null || typeof options !== 'object' || isArray(options, () => revokedError(fn, name)())) {
      throw new TypeError(`${fn}: ${name} must be an object, got ${describe(options)}`);
    }
    const found = spare ?? new Found(names.length);
    spare = null;
    const { keys, values } = found;
    let count = 0;
    let same = previous !== undefined;
    try {
      for (const key in options) {
        if (!hasOwn(options, key)) continue; // inherited (a polluted prototype, say)
        if (!hasOwn(template, key)) throw new TypeError(`${fn}: unknown option '${key}' (allowed: ${join(names, ', ')})`);
        const value = options[key]; // own: its getter, if any, runs here and only here
        keys[count] = key;
        values[count] = value;
        count++;
        if (same && previous[key] !== value) same = false;
      }
    } catch (error) {
      release(found, count);
      isArray(options, revokedError(fn, name)); // a proxy revoked while read: say so
      throw error;
    }
    let record = previous;
    if (!same || count !== previousCount) {
      record = { ...template }; // a clone of one shape: own properties only
      for (let i = 0; i < count; i++) record[keys[i]] = values[i];
    }
    release(found, count);
    // Written last: a getter above may have called the API, which reads options too.
    lastRead.count = count;
    lastRead.same = same;
    return record;
  };

  /** `found` back for the next read, holding none of the caller's values. */
  function release(found, count) {
    for (let i = 0; i < count; i++) found.values[i] = undefined;
    spare = found;
  }
}

/** What the last read found: how many options were given, and whether each
 * was the value `previous` holds (src/ops/resolve.js, LastCall). */
export const lastRead = { count: 0, same: false };

/** options.shape read once, element by element, into a plain array of counts. */
export function readShape(fn, shape) {
  if (shape === undefined) return undefined;
  const bad = () => new TypeError(`${fn}: options.shape must be a non-empty array of non-negative integers, got ${describe(shape)}`);
  if (!isArray(shape, revokedError(fn, 'options.shape'))) throw bad();
  let rank;
  const dims = [];
  try {
    rank = shape.length;
    if (!isSafeInteger(rank) || rank === 0) throw bad();
    for (let i = 0; i < rank; i++) {
      if (!hasOwn(shape, i)) throw new TypeError(`${fn}: options.shape has a hole at index ${i}`);
      const n = shape[i];
      if (!isSafeInteger(n) || n < 0) throw bad();
      dims[i] = n;
    }
  } catch (error) {
    isArray(shape, revokedError(fn, 'options.shape'));
    throw error;
  }
  return dims;
}

/** One of the strings `allowed`; `fallback` when not given. */
export function oneOf(fn, name, value, allowed, fallback) {
  if (value === undefined) return fallback;
  if (!holds(allowed, value)) throw new TypeError(`${fn}: ${name} must be ${join(allowed, ' or ', "'")}, got ${describe(value)}`);
  return value;
}

/** A number option as the float32 the kernels use: finite (and >= 0 if asked). */
export function float32Option(fn, name, value, fallback, nonNegative) {
  if (value === undefined) return fround(fallback);
  if (typeof value !== 'number') throw new TypeError(`${fn}: ${name} must be a number, got ${describe(value)}`);
  if (!(nonNegative ? value >= 0 && value <= FLT_MAX : abs(value) <= FLT_MAX)) {
    throw new RangeError(`${fn}: ${name} must be a finite float32${nonNegative ? ' >= 0' : ''}, got ${value}`);
  }
  return fround(value);
}

export const dtypeOption = (fn, value, fallback) => oneOf(fn, 'options.dtype', value, DTYPES, fallback);
export const castModeOption = (fn, value, fallback) => oneOf(fn, 'options.castMode', value, CAST_MODES, fallback);

/**
 * The row length (dim) from options.dim, or options.shape and options.axis,
 * or else the length of the first of `weight` and `bias` given (records or
 * null; bias undefined where the function has none); checks both against
 * it, and that it divides `length` (x.length).
 */
export function resolveDim(fn, opts, shape, length, weight, bias) {
  const { dim, axis } = opts;
  let rowLength;
  if (shape !== undefined) {
    if (dim !== undefined) throw new TypeError(`${fn}: give options.dim or options.shape, not both`);
    const rank = shape.length;
    const at = axis === undefined ? -1 : axis;
    if (typeof at !== 'number') throw new TypeError(`${fn}: options.axis must be an integer, got ${describe(at)}`);
    if (!isSafeInteger(at) || at < -rank || at >= rank) {
      throw new RangeError(`${fn}: options.axis must be an integer in [${-rank}, ${rank - 1}] for a shape of rank ${rank}, got ${describe(at)}`);
    }
    let total = 1;
    for (let i = 0; i < rank; i++) total *= shape[i];
    if (total !== length) throw new RangeError(`${fn}: options.shape [${join(shape, ',')}] holds ${total} values, but x.length is ${length}`);
    rowLength = 1;
    for (let i = at < 0 ? at + rank : at; i < rank; i++) rowLength *= shape[i];
    if (rowLength === 0) throw new RangeError(`${fn}: the normalized dims of options.shape [${join(shape, ',')}] must not be empty (dim = 0)`);
  } else if (axis !== undefined) {
    throw new TypeError(`${fn}: options.axis needs options.shape`);
  } else if (dim !== undefined) {
    if (typeof dim !== 'number') throw new TypeError(`${fn}: options.dim must be a number, got ${describe(dim)}`);
    if (!isSafeInteger(dim) || dim < 1) throw new RangeError(`${fn}: options.dim must be a positive integer, got ${dim}`);
    rowLength = dim;
  } else if (weight !== null || bias != null) {
    rowLength = (weight ?? bias).length;
  } else {
    throw new TypeError(`${fn}: options.dim is required when weight${bias === undefined ? ' is' : ' and bias are'} null`);
  }
  // Where dim came from, for the messages.
  const from = () => (shape !== undefined ? 'the product of the normalized dims of options.shape'
    : dim !== undefined ? 'options.dim' : `${weight !== null ? 'weight' : 'bias'}.length`);
  if (weight !== null && weight.length !== rowLength) {
    throw new RangeError(`${fn}: weight.length (${weight.length}) must equal ${from()} (${rowLength})`);
  }
  if (bias != null && bias.length !== rowLength) {
    throw new RangeError(`${fn}: bias.length (${bias.length}) must equal ${from()} (${rowLength})`);
  }
  if (length % rowLength !== 0) {
    throw new RangeError(`${fn}: x.length (${length}) must be a multiple of dim (${rowLength}, from ${from()})`);
  }
  return rowLength;
}
