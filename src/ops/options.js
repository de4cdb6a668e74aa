// Options and scalar arguments: read once, checked once. Every public
// function, of the wasm API and of the reference alike, reads its options
// here, so both throw the same TypeError (wrong type) or RangeError (wrong
// size or value) for the same mistake; the WebGPU device form checks its
// params with the same functions (`where`: 'params' there, for the
// messages), so a rule about rows, strides, heads or blocks is written once.

import { BLOCK_FORMAT, BLOCK_FORMATS, CAST_MODES, DTYPES } from '../loader/abi.js';
import {
  abs, ceil, defineProperty, freeze, fround, hasOwn, holds, isArray, isSafeInteger, isView, join, JSONStringify, keys, kindOf,
  lengthOf, List, RangeError, sliceString, StringOf, TypeError,
} from '../loader/intrinsics.js';
import { isTensor, recordOf } from '../loader/tensor.js';

export const FLT_MAX = 3.4028234663852886e38;

/** A short description of what was passed, for error messages. Runs no caller code. */
export function describe(value) {
  switch (value === null ? 'null' : typeof value) {
    case 'null': case 'undefined': return `${value}`;
    case 'string': return `string ${JSONStringify(sliceString(value, 0, 20))}`;
    case 'bigint': return `bigint ${StringOf(value)}n`;
    case 'symbol': return 'a symbol';
    case 'function': return 'a function';
    case 'object': break;
    default: return `${typeof value} ${StringOf(value)}`;
  }
  if (isView(value)) return kindOf(value) === undefined ? 'DataView' : `${kindOf(value)}(${lengthOf(value)})`;
  if (isTensor(value)) {
    const record = recordOf(value);
    return record === null ? 'a freed Tensor' : `${record.dtype} Tensor(${record.length})`;
  }
  const array = isArray(value);
  if (array === undefined) return 'a revoked Proxy';
  try {
    if (array) return `Array(${value.length})`;
    const name = value.constructor?.name;
    return typeof name === 'string' && name !== '' ? name : 'object';
  } catch {
    return isArray(value) === undefined ? 'a revoked Proxy' : 'object';
  }
}

const revoked = (fn, name) => new TypeError(`${fn}: ${name} is a revoked Proxy`);

/** The hint for a parameter given undefined or an object that is no array
 * (`signature`: the function's parameter list, or '' for none): an argument
 * may have been left out, shifting the rest into the wrong places. */
export const missing = (fn, signature) => (signature === '' ? '' : ` (${fn} takes ${signature}: was an argument left out?)`);

/** An object with exactly `keys` as own properties, each `value`: spread
 * (`{ ...template }`) into records of one shape that never read a
 * prototype. Not frozen, as V8 spreads a frozen object several times
 * slower: a template is only spread, never written nor handed out. */
export function template(keys, value) {
  const t = {};
  for (let i = 0; i < keys.length; i++) defineProperty(t, keys[i], { __proto__: null, value, writable: true, enumerable: true, configurable: true });
  return t;
}

/** A record of `plain`'s shape holding previous[key] for the names whose
 * bits are set in `seen` (bit i: names[i]). The bit is a shift: V8 makes
 * `2 ** i` a call to its pow function, about 70 ns a name. */
function copyOf(plain, previous, names, seen) {
  const record = { ...plain };
  for (let i = 0; i < names.length; i++) if ((seen & (1 << i)) !== 0) record[names[i]] = previous[names[i]];
  return record;
}

/**
 * A reader of the options named in `defaults` (the description's options):
 * (fn, options) → a record of what was given, undefined for the rest. An
 * omitted options argument reads nothing; only own enumerable properties
 * count (as object spread reads them), so an inherited property never
 * steers a call and a getter runs once; an own key the function does not
 * know (a typo) is a TypeError. Given `previous` (a record this reader
 * made, of `previousCount` options), options with the same values read as
 * `previous` itself: a decode loop's call makes no record. Re-entrant: a
 * getter may call the API, which reads options too.
 *
 * The keys are enumerated with for-in, which allocates nothing for an
 * ordinary object (Object.keys makes an array each call); the options seen
 * are a bit set over `names`.
 */
export function optionReader(defaults) {
  const names = keys(defaults);
  const plain = template(names, undefined);
  const blank = freeze({ ...plain }); // the record of no options, handed out
  const bits = { __proto__: null };
  for (let i = 0; i < names.length; i++) bits[names[i]] = 1 << i; // at most 31 options: bit operations stay exact
  return (fn, options, name = 'options', previous = undefined, previousCount = -1) => {
    lastRead.count = 0;
    if (options === undefined) return blank;
    const array = options === null || typeof options !== 'object' || isArray(options);
    if (array !== false) throw array === undefined ? revoked(fn, name) : new TypeError(`${fn}: ${name} must be an object, got ${describe(options)}`);
    let record = previous === undefined ? { ...plain } : null;
    let seen = 0;
    let count = 0;
    try {
      // Own enumerable keys first, in Object.keys order, then inherited ones
      // (skipped); a key an earlier getter deleted is not listed, or not own
      // (a Proxy's traps run here).
      for (const key in options) {
        if (!hasOwn(options, key)) continue;
        const bit = bits[key];
        if (bit === undefined) throw new TypeError(`${fn}: unknown option '${key}' (allowed: ${join(names, ', ')})`);
        if ((seen & bit) !== 0) continue;
        // Its getter, if any, runs here and only here. The float options by
        // name, each value kept in its own branch: a keyed read of a property
        // holding a non-integer number, or one value variable for every
        // option, makes a new heap number in V8 at each call.
        if (key === 'eps') {
          const value = options.eps;
          if (record === null && previous.eps !== value) record = copyOf(plain, previous, names, seen);
          if (record !== null) record.eps = value;
        } else if (key === 'weightOffset') {
          const value = options.weightOffset;
          if (record === null && previous.weightOffset !== value) record = copyOf(plain, previous, names, seen);
          if (record !== null) record.weightOffset = value;
        } else {
          const value = options[key];
          if (record === null && previous[key] !== value) record = copyOf(plain, previous, names, seen);
          if (record !== null) record[key] = value;
        }
        count++;
        seen |= bit;
      }
    } catch (error) {
      throw isArray(options) === undefined ? revoked(fn, name) : error; // a proxy revoked while read: say so
    }
    if (record === null && count !== previousCount) record = copyOf(plain, previous, names, seen);
    lastRead.count = count; // written last: a getter above may have read options too
    return record ?? previous;
  };
}

/** How many options the last read found (src/ops/resolve.js, LastCall). */
export const lastRead = { count: 0 };

/** A count (a length, a dim): a TypeError for no number, a RangeError for
 * a number that is no non-negative integer. */
export function countOf(fn, name, n) {
  if (typeof n !== 'number') throw new TypeError(`${fn}: ${name} must be a number, got ${describe(n)}`);
  if (!isSafeInteger(n) || n < 0) throw new RangeError(`${fn}: ${name} must be a non-negative integer, got ${n}`);
  return n;
}

/** The rank of a shape that isArray has accepted (a proxy's length may be anything): at least one dim. */
export function rankOf(fn, name, shape) {
  const rank = shape.length;
  if (!isSafeInteger(rank) || rank < 0) throw new TypeError(`${fn}: ${name} must be an array of dims, got one of length ${describe(rank)}`);
  if (rank === 0) throw new RangeError(`${fn}: ${name} must hold at least one dim, got []`);
  return rank;
}

/** options.shape read once, element by element, into a plain array of counts. */
export function readShape(fn, shape) {
  if (shape === undefined) return undefined;
  const array = isArray(shape);
  if (array === undefined) throw revoked(fn, 'options.shape');
  if (!array) throw new TypeError(`${fn}: options.shape must be an array of dims, got ${describe(shape)}`);
  let rank;
  const dims = new List();
  try {
    rank = rankOf(fn, 'options.shape', shape);
    for (let i = 0; i < rank; i++) {
      if (!hasOwn(shape, i)) throw new TypeError(`${fn}: options.shape has a hole at index ${i}`);
      dims[i] = countOf(fn, `options.shape[${i}]`, shape[i]);
    }
  } catch (error) {
    throw isArray(shape) === undefined ? revoked(fn, 'options.shape') : error;
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

/** A count: a number, an integer >= `least` (0 or 1). */
export function countOption(fn, name, value, least) {
  if (typeof value !== 'number') throw new TypeError(`${fn}: ${name} must be a number, got ${describe(value)}`);
  if (!isSafeInteger(value) || value < least) {
    throw new RangeError(`${fn}: ${name} must be ${least === 0 ? 'a non-negative' : 'a positive'} integer, got ${value}`);
  }
  return value;
}

/** An option about the weight (`name`: weightDtype, weightOffset) given
 * with no weight (`weight`, named `weightName`, null or undefined). */
export function requireWeightFor(fn, name, value, weightName, weight) {
  if (value !== undefined && weight == null) throw new TypeError(`${fn}: ${name} needs a weight, but ${weightName} is ${describe(weight)}`);
}

/** The block formats as a message offers them: 'q8_0', 'q8_1' or 'q8_K'. */
export const BLOCK_FORMAT_CHOICES = BLOCK_FORMATS.length === 1 ? `'${BLOCK_FORMATS[0]}'`
  : `${join(BLOCK_FORMATS.slice(0, -1), ', ', "'")} or '${BLOCK_FORMATS[BLOCK_FORMATS.length - 1]}'`;

/** What a message offers for rows of `dim` values that some format's
 * blocks do not divide: the formats whose blocks do (", or use 'q8_0' or
 * 'q8_1' (blocks of 32)"), if any. */
function formatsFor(dim) {
  const names = new List();
  const sizes = new List();
  for (let i = 0; i < BLOCK_FORMATS.length; i++) {
    const { values } = BLOCK_FORMAT[BLOCK_FORMATS[i]];
    if (dim % values !== 0) continue;
    names[names.length] = BLOCK_FORMATS[i];
    if (!holds(sizes, values)) sizes[sizes.length] = values;
  }
  return names.length === 0 ? '' : `, or use ${join(names, ' or ', "'")} (blocks of ${join(sizes, ' or ')})`;
}

/** The bytes of a row of `dim` values as blocks of the format `outDtype`
 * (options.outDtype, named `name`): a row must be whole blocks. */
export function blockRowBytes(fn, name, outDtype, dim, dtype) {
  const format = BLOCK_FORMAT[outDtype];
  if (dim % format.values !== 0) {
    const fitting = formatsFor(dim);
    throw new RangeError(`${fn}: ${name} '${outDtype}' needs dim (${dim}) to be a multiple of ${format.values}, its block size: ` +
      `leave ${name.replace(/^\w+\./, '')} out for ${dtype} rows${fitting}`);
  }
  return (dim / format.values) * format.bytes;
}

export const dtypeOption = (fn, value, fallback) => oneOf(fn, 'options.dtype', value, DTYPES, fallback);
export const castModeOption = (fn, value, fallback) => oneOf(fn, 'options.castMode', value, CAST_MODES, fallback);

/**
 * The row length (dim) from options.dim, or options.shape and options.axis,
 * or else the length of the first of `weight` and `bias` given (records or
 * null; bias undefined where the function has none); checks both against
 * it (rowsOf checks x.length).
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
    rowLength = countOption(fn, 'options.dim', dim, 1);
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
  return rowLength;
}

/** options.heads: how many rows each token (each rowStride) holds; 1 when not given. */
export function headsOption(fn, opts, shape, where = 'options') {
  const { heads } = opts;
  if (heads === undefined) return 1;
  if (shape !== undefined) throw new TypeError(`${fn}: give options.heads or options.shape, not both`);
  if (typeof heads !== 'number') throw new TypeError(`${fn}: ${where}.heads must be a number, got ${describe(heads)}`);
  if (!isSafeInteger(heads) || heads < 1) throw new RangeError(`${fn}: ${where}.heads must be a positive integer, the rows each token holds; got ${heads}`);
  return heads;
}

/** options.headStride: the values from one head's start to the next's within a token, at least dim; dim when not given. */
export function headStrideOption(fn, opts, dim, where = 'options') {
  const stride = opts.headStride;
  if (stride === undefined) return dim;
  if (opts.heads === undefined) throw new TypeError(`${fn}: ${where}.headStride needs ${where}.heads`);
  if (typeof stride !== 'number') throw new TypeError(`${fn}: ${where}.headStride must be a number, got ${describe(stride)}`);
  if (!isSafeInteger(stride) || stride < dim) {
    throw new RangeError(`${fn}: ${where}.headStride must be an integer >= dim (${dim}), the values from one head's start to the next's within a token; got ${stride}`);
  }
  return stride;
}

/** options.rowStride: the values from one row's (with heads, one token's)
 * start to the next's, at least dim; when not given, `extent`, a token's
 * values from its first head's start to its last's end (dim without heads). */
export function resolveStride(fn, opts, shape, dim, extent = dim, where = 'options') {
  const stride = opts.rowStride;
  if (stride === undefined) return extent;
  if (shape !== undefined) throw new TypeError(`${fn}: give options.rowStride or options.shape, not both`);
  if (typeof stride !== 'number') throw new TypeError(`${fn}: ${where}.rowStride must be a number, got ${describe(stride)}`);
  if (!isSafeInteger(stride) || stride < dim) {
    throw new RangeError(`${fn}: ${where}.rowStride must be an integer >= dim (${dim}), the values from one row's start to the next's; got ${stride}`);
  }
  return stride;
}

/** Two or more tokens must not overlap: a token's heads span `extent`
 * values, (heads - 1) * headStride + dim, at most the row stride. */
export function tokensFit(fn, tokens, stride, extent, where = 'options') {
  if (tokens > 1 && extent > stride) {
    throw new RangeError(`${fn}: ${where}.rowStride (${stride}) must be at least (heads - 1) * headStride + dim (${extent}) for ${tokens} tokens: a token's heads would run into the next token's`);
  }
}

/**
 * The values a per-row array's first `rows` rows span: every row's dim
 * values and the gaps between rows, (rows - 1) * stride + dim; none for no
 * rows. What follows the last row's dim values (a one-row call's tail, up
 * to a whole stride) is not the call's: no form reads, stages or writes it.
 */
export const rowSpan = (rows, dim, stride) => (rows === 0 ? 0 : (rows - 1) * stride + dim);

/**
 * The rows of x: length / dim, or with a row stride s, ceil(length / s)
 * rows, the last of which may end right after its dim values. `dimFrom`:
 * the array whose length dim is ('weight' or 'bias'), whose fault a length
 * that does not divide more likely is; '' when the call gave dim.
 */
export function rowsOf(fn, length, dim, stride, dimFrom, extent = dim) {
  if (extent !== dim) return tokensOf(fn, length, stride, extent);
  if (stride === dim) {
    if (length % dim === 0) return length / dim;
    if (dimFrom === '') throw new RangeError(`${fn}: x.length (${length}) must be a multiple of dim (${dim})`);
    throw new RangeError(`${fn}: ${dimFrom}.length (${dim}) does not divide x.length (${length}): ${dimFrom} holds one value per feature, so x must be rows of ${dimFrom}.length values (is it this layer's ${dimFrom}? give options.dim for another row length)`);
  }
  const rows = ceil(length / stride);
  if (rowSpan(rows, dim, stride) > length) {
    throw new RangeError(`${fn}: x.length (${length}) ends inside a row: rows start every ${stride} values (options.rowStride) and hold ${dim} (dim), so x.length must lie in [(rows - 1) * ${stride} + ${dim}, rows * ${stride}]`);
  }
  return rows;
}

/** Whether `tokens` tokens of `heads` rows, headStride apart within a token
 * and stride apart between tokens, are plain rows headStride apart, the
 * same rows in the same order: one token, or heads evenly spaced across
 * tokens too (stride = heads · headStride). Every form runs them as such. */
const plainHeads = (tokens, heads, headStride, stride) => heads > 1 && (tokens <= 1 || stride === heads * headStride);

/**
 * Sets a checked call's rows (its tokens, rows, heads, headStride and
 * stride) as every form runs them: `tokens` tokens of `heads` rows,
 * headStride apart within a token and `stride` apart between tokens; plain
 * heads (plainHeads) as plain rows headStride apart.
 */
export function layRows(call, tokens, heads, headStride, stride) {
  const plain = plainHeads(tokens, heads, headStride, stride);
  call.rows = tokens * heads;
  call.tokens = plain ? call.rows : tokens;
  call.heads = plain ? 1 : heads;
  call.headStride = headStride;
  call.stride = plain ? headStride : stride;
}

/** One row has no next row: its span is dim (rowSpan), and its stride,
 * which may be any safe integer, becomes dim, so that it never reaches a
 * kernel's 32-bit parameter, a shader or the staging. */
export function oneRowStride(call) {
  if (call.rows <= 1) call.stride = call.dim;
}

/**
 * The tokens of x when each holds several heads (options.heads): as rowsOf's
 * strided rows, each token `extent` values long, (heads - 1) * headStride +
 * dim; two or more tokens must not overlap (extent <= stride).
 */
function tokensOf(fn, length, stride, extent) {
  const tokens = ceil(length / stride);
  tokensFit(fn, tokens, stride, extent);
  if (rowSpan(tokens, extent, stride) > length) {
    throw new RangeError(`${fn}: x.length (${length}) ends inside a token: tokens start every ${stride} values (options.rowStride) and their heads span ${extent} ((heads - 1) * headStride + dim), so x.length must lie in [(tokens - 1) * ${stride} + ${extent}, tokens * ${stride}]`);
  }
  return tokens;
}
