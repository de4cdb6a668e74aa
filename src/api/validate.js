// Where arguments are checked. Every public function (the wasm API and the
// JS reference alike) resolves its arguments here, so both throw the same
// TypeError/RangeError for the same mistake, and always before anything is
// written to an output.

import { ARRAY_TYPE_OF, DTYPES, Tensor } from './tensor.js';

const typedArrayTag = Object.getOwnPropertyDescriptor(
  Object.getPrototypeOf(Uint8Array.prototype), Symbol.toStringTag).get;

const FLT_MAX = 3.4028234663852886e38;

/** typedArrayKind of each dtype's array: a function's `name` is a slow read on every call. */
const ARRAY_KIND_OF = Object.fromEntries(DTYPES.map((dtype) => [dtype, ARRAY_TYPE_OF[dtype].name]));

/** The typed-array kind of `value` ('Float32Array', …), or undefined. Works across realms. */
export function typedArrayKind(value) {
  return ArrayBuffer.isView(value) ? typedArrayTag.call(value) : undefined;
}

/** A short description of what was passed, for error messages. */
export function describe(value) {
  if (value === null) return 'null';
  const kind = typedArrayKind(value);
  if (kind !== undefined) return `${kind}(${value.length})`;
  if (value instanceof Tensor) return `${value.dtype} Tensor(${value.length})`;
  if (Array.isArray(value)) return `Array(${value.length})`;
  if (typeof value === 'object') return value.constructor?.name ?? 'object';
  if (typeof value === 'string') return `string ${JSON.stringify(value.slice(0, 20))}`;
  if (typeof value === 'bigint') return `bigint ${value}n`;
  return `${typeof value} ${String(value)}`;
}

const typedArraySlice = Object.getPrototypeOf(Uint8Array.prototype).slice;

/** Whether a view can no longer reach its memory: its ArrayBuffer was
 * detached (transferred, e.g. postMessage to a worker), or a resizable one
 * shrank below it. Such a view reads as empty, so it would silently come
 * back as an empty result. Only a view of byteLength 0 can be one, and
 * %TypedArray%.prototype.slice throws on exactly these
 * (ArrayBuffer.prototype.detached is too new for Node 18 and 20). */
export function isDetached(view) {
  if (view.byteLength !== 0) return false;
  try {
    typedArraySlice.call(view, 0, 0);
    return false;
  } catch {
    return true;
  }
}

function requireAttached(fn, name, view) {
  if (isDetached(view)) {
    throw new TypeError(`${fn}: ${name} is a view of a detached ArrayBuffer (or out of bounds of a shrunk resizable one)`);
  }
}

function expectedArray(dtype) {
  return dtype === 'float32' ? 'a Float32Array' : `a Uint16Array (${dtype} bit patterns)`;
}

/**
 * Where a typed array lies: its buffer and byte range, each read at most once
 * per argument and call, because V8 does not inline the `buffer` and
 * `byteOffset` getters (about 20 ns each). The range is read only when it
 * matters: arrays on different buffers cannot overlap, and an array outside
 * wasm memory has no address there (src/loader/kernels.js).
 */
class ArraySpan {
  #array;
  #start = -1;

  constructor(array) {
    this.#array = array;
    this.buffer = array.buffer;
  }

  get start() {
    if (this.#start < 0) this.#start = this.#array.byteOffset;
    return this.#start;
  }

  get end() {
    return this.start + this.#array.length * this.#array.BYTES_PER_ELEMENT;
  }
}
export const spanOf = (array) => new ArraySpan(array);

/**
 * A tensor argument resolved: { array, tensor, span }, the tensor's own
 * record (src/api/tensor.js, no allocation), or undefined for anything that
 * is not a tensor. A freed tensor is an error.
 */
function resolvedTensor(fn, name, value) {
  if (!(value instanceof Tensor)) return undefined;
  if (value.freed) throw new TypeError(`${fn}: ${name} is a freed tensor`);
  return value.resolved;
}

/**
 * An array argument holding `dtype` values (a typed array or a tensor),
 * resolved to { array, tensor, span } (tensor undefined for plain arrays).
 * Resolved arguments are shared (a tensor's is its own): read, never write.
 */
function resolveArray(fn, name, value, dtype) {
  const resolved = resolvedTensor(fn, name, value);
  if (resolved !== undefined) {
    // A live tensor's view is the package's own, rebuilt when stale: no
    // type or detachment to check, only the dtype.
    if (value.dtype !== dtype) throw new TypeError(`${fn}: ${name} must be ${expectedArray(dtype)}${dtype === 'float32' ? '' : ` for dtype '${dtype}'`}, got ${describe(value)}`);
    return resolved;
  }
  if (typedArrayKind(value) !== ARRAY_KIND_OF[dtype]) {
    const what = dtype === 'float32' ? '' : ` for dtype '${dtype}'`;
    throw new TypeError(`${fn}: ${name} must be ${expectedArray(dtype)}${what}, got ${describe(value)}`);
  }
  requireAttached(fn, name, value);
  return { array: value, tensor: undefined, span: spanOf(value) };
}

const hasOwn = Object.prototype.hasOwnProperty;

/**
 * The options a function takes, as a reader: `read` picks them out of an
 * options object into a new object of fixed shape, each read once (a getter
 * runs user code, which could detach or shrink a buffer, so no option is read
 * again after the arrays are measured). Its names are the keys `read` copies.
 */
export function optionSet(read) {
  const names = Object.keys(read({}));
  return { read, names: new Set(names), list: names.join(', ') };
}

/**
 * options read through `set` (from optionSet), all undefined when options is
 * undefined. An own key the function does not know (a typo, say) is a
 * TypeError; known names are read as WebIDL dictionaries read them, so a
 * prototype's values count. This runs on every kernel call: the key check is
 * one for-in and a Set lookup a key, and the copy one literal.
 */
export function checkOptionNames(fn, options, set) {
  if (options === undefined) return set.read(EMPTY_OPTIONS);
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new TypeError(`${fn}: options must be an object, got ${describe(options)}`);
  }
  for (const key in options) {
    if (!set.names.has(key) && hasOwn.call(options, key)) {
      throw new TypeError(`${fn}: unknown option '${key}' (allowed: ${set.list})`);
    }
  }
  return set.read(options);
}
const EMPTY_OPTIONS = Object.freeze({});

function oneOf(fn, name, value, allowed, fallback) {
  if (value === undefined) return fallback;
  if (!allowed.includes(value)) {
    throw new TypeError(`${fn}: ${name} must be ${allowed.map((a) => `'${a}'`).join(' or ')}, got ${describe(value)}`);
  }
  return value;
}

const NON_NEGATIVE = true;
const ANY_SIGN = false;

/** A number option as the float32 the kernels use: finite (and >= 0 if asked). */
function resolveFloat32(fn, name, value, fallback, nonNegative) {
  if (value === undefined) return Math.fround(fallback);
  if (typeof value !== 'number') {
    throw new TypeError(`${fn}: ${name} must be a number, got ${describe(value)}`);
  }
  const ok = nonNegative ? value >= 0 && value <= FLT_MAX : Math.abs(value) <= FLT_MAX;
  if (!ok) {
    throw new RangeError(`${fn}: ${name} must be a finite float32${nonNegative ? ' >= 0' : ''}, got ${value}`);
  }
  return Math.fround(value);
}

const WEIGHT_DTYPES_FOR = { float32: ['float32'], bfloat16: ['float32', 'bfloat16'], float16: ['float32', 'float16'] };

/** A missing weight (or bias), resolved. */
const NO_WEIGHT = Object.freeze({ array: null, tensor: undefined, span: undefined });

/** The dtype the weight holds (null for no weight), checked against its
 * array's type and options.weightDtype; resolveArray does the rest. */
function resolveWeightDtype(fn, weight, weightDtypeOption, dtype) {
  if (weight === null) {
    if (weightDtypeOption !== undefined) {
      throw new TypeError(`${fn}: options.weightDtype needs a weight, but weight is null`);
    }
    return null;
  }
  if (weight === undefined) {
    throw new TypeError(`${fn}: weight must be a Float32Array or null (for no weight), got undefined`);
  }
  const allowed = WEIGHT_DTYPES_FOR[dtype];
  const tensor = resolvedTensor(fn, 'weight', weight) !== undefined;
  // By default a weight is what its array holds: a Uint16Array holds the storage dtype.
  const kind = tensor ? ARRAY_KIND_OF[weight.dtype] : typedArrayKind(weight);
  const held = kind === 'Uint16Array' ? dtype : 'float32';
  const weightDtype = oneOf(fn, 'options.weightDtype', weightDtypeOption, allowed, held);
  if (kind !== ARRAY_KIND_OF[weightDtype] || (tensor && weight.dtype !== weightDtype)) {
    const expected = weightDtypeOption === undefined
      ? allowed.map(expectedArray).join(' or ')
      : `${expectedArray(weightDtype)} for weightDtype '${weightDtype}'`;
    throw new TypeError(`${fn}: weight must be ${expected}, got ${describe(weight)}`);
  }
  return weightDtype;
}

function isCount(n) {
  return Number.isSafeInteger(n) && n >= 0;
}

/** dim (the row length; rows = length / dim) from options.dim, or from
 * options.shape and options.axis. */
function resolveShape(fn, dim, shape, axis, weight, length) {
  if (shape !== undefined) {
    if (dim !== undefined) {
      throw new TypeError(`${fn}: give options.dim or options.shape, not both`);
    }
    if (!Array.isArray(shape) || shape.length === 0 || !shape.every(isCount)) {
      throw new TypeError(`${fn}: options.shape must be a non-empty array of non-negative integers, got ${describe(shape)}`);
    }
    const rank = shape.length;
    const at = axis ?? -1;
    if (!Number.isInteger(at) || at < -rank || at >= rank) {
      throw new RangeError(`${fn}: options.axis must be an integer in [${-rank}, ${rank - 1}] for a shape of rank ${rank}, got ${describe(at)}`);
    }
    const first = at < 0 ? at + rank : at;
    const product = (dims) => dims.reduce((a, b) => a * b, 1);
    if (product(shape) !== length) {
      throw new RangeError(`${fn}: options.shape [${shape}] holds ${product(shape)} values, but x.length is ${length}`);
    }
    const normalized = product(shape.slice(first));
    if (normalized === 0) throw new RangeError(`${fn}: the normalized dims of options.shape [${shape}] must not be empty (dim = 0)`);
    if (weight !== null && weight.length !== normalized) {
      throw new RangeError(`${fn}: weight.length (${weight.length}) must equal the product of the normalized dims of options.shape (${normalized})`);
    }
    return normalized;
  }
  if (axis !== undefined) throw new TypeError(`${fn}: options.axis needs options.shape`);
  if (dim === undefined) {
    if (weight === null) throw new TypeError(`${fn}: options.dim is required when weight is null`);
    dim = weight.length;
  } else if (typeof dim !== 'number') {
    throw new TypeError(`${fn}: options.dim must be a number, got ${describe(dim)}`);
  } else if (!Number.isSafeInteger(dim) || dim < 1) {
    throw new RangeError(`${fn}: options.dim must be a positive integer, got ${dim}`);
  } else if (weight !== null && weight.length !== dim) {
    throw new RangeError(`${fn}: weight.length (${weight.length}) must equal options.dim (${dim})`);
  }
  if (length % dim !== 0) {
    throw new RangeError(`${fn}: x.length (${length}) must be a multiple of dim (${dim})`);
  }
  return dim;
}

/** What a call returns for a resolved options.out: the caller's own object
 * (the tensor, or the array), without reading options.out a second time. */
export function outValue(out) {
  return out.tensor ?? out.array;
}

/** Whether two resolved arguments share bytes (by their spans). */
function spansOverlap({ span: a }, { span: b }) {
  return a.buffer === b.buffer && a.start < b.end && b.start < a.end;
}

/** Whether two resolved arguments start at the same byte of the same buffer. */
export function sameStart({ span: a }, { span: b }) {
  return a.buffer === b.buffer && a.start === b.start;
}

/** Whether two typed arrays share bytes. */
function overlaps(a, b) {
  return spansOverlap({ span: spanOf(a) }, { span: spanOf(b) });
}

/** Whether two typed arrays start at the same byte of the same buffer. */
function sameView(a, b) {
  return sameStart({ span: spanOf(a) }, { span: spanOf(b) });
}

export const RMSNORM_DEFAULT_EPS = 1e-6;
const CAST_MODES = ['llama', 'gemma'];
const RMSNORM_OPTIONS = optionSet((o) => ({
  eps: o.eps, dim: o.dim, out: o.out, dtype: o.dtype, weightDtype: o.weightDtype, castMode: o.castMode,
  weightOffset: o.weightOffset, shape: o.shape, axis: o.axis, rstd: o.rstd,
}));

/**
 * Checks rmsNorm(x, weight, options) and resolves it to the kernel's terms.
 * Arrays come back as { array, tensor } (tensor: the Tensor it came from).
 */
export function resolveRmsNormArgs(fn, x, weight, options) {
  return resolveArgs(fn, x, undefined, weight, readRmsNormOptions(fn, options));
}

/** rmsNorm's options read once (checkOptionNames): what resolveReadRmsNormArgs
 * and isPlainTensorCall take. */
export function readRmsNormOptions(fn, options) {
  return checkOptionNames(fn, options, RMSNORM_OPTIONS);
}

/** resolveRmsNormArgs on options already read by readRmsNormOptions. */
export function resolveReadRmsNormArgs(fn, x, weight, opts) {
  return resolveArgs(fn, x, undefined, weight, opts);
}

/**
 * Whether rmsNorm(x, weight, opts) is the plain zero-copy call an engine
 * makes on every token: x, weight and options.out live float32 tensors of
 * `kernels`, at least one row, out x itself or apart from it, the weight
 * apart from out, and no option but out, a valid eps and a dim equal to
 * weight.length. Every such call is one resolveReadRmsNormArgs accepts, and
 * resolves to rows = x.length / weight.length, dim = weight.length,
 * eps = fround(eps or its default), castMode 'llama', no offset: the caller
 * may then call the kernel with those at once. Anything else (including
 * every mistake) takes the general path, which checks it and throws. Why:
 * at 1 x 4096 the general path costs 0.4 µs over the bare kernel call, this
 * 0.2 µs (most of it cache misses the kernel takes after any JS runs).
 */
export function isPlainTensorCall(kernels, x, weight, opts) {
  const { out, eps, dim } = opts;
  return x instanceof Tensor && weight instanceof Tensor && out instanceof Tensor &&
    x.kernels === kernels && weight.kernels === kernels && out.kernels === kernels &&
    x.dtype === 'float32' && weight.dtype === 'float32' && out.dtype === 'float32' &&
    opts.dtype === undefined && opts.weightDtype === undefined && opts.castMode === undefined &&
    opts.weightOffset === undefined && opts.shape === undefined && opts.axis === undefined &&
    opts.rstd === undefined &&
    (eps === undefined || (typeof eps === 'number' && eps >= 0 && eps <= FLT_MAX)) &&
    weight.length > 0 && (dim === undefined || dim === weight.length) &&
    x.length > 0 && x.length % weight.length === 0 && out.length === x.length &&
    (sameStart(out.resolved, x.resolved) || !spansOverlap(out.resolved, x.resolved)) &&
    !spansOverlap(out.resolved, weight.resolved);
}

/** Checks addRmsNorm(x, residual, weight, options) likewise. */
export function resolveAddRmsNormArgs(fn, x, residual, weight, options) {
  if (residual === undefined) {
    throw new TypeError(`${fn}: residual must be an array of x's dtype, got undefined`);
  }
  return resolveArgs(fn, x, residual, weight, readRmsNormOptions(fn, options));
}

function resolveArgs(fn, x, residual, weight, opts) {
  const dtype = oneOf(fn, 'options.dtype', opts.dtype, DTYPES, 'float32');
  const xs = resolveArray(fn, 'x', x, dtype);
  const rs = residual === undefined ? undefined : resolveArray(fn, 'residual', residual, dtype);
  if (rs !== undefined && rs.array.length !== xs.array.length) {
    throw new RangeError(`${fn}: residual.length (${rs.array.length}) must equal x.length (${xs.array.length})`);
  }
  const weightDtype = resolveWeightDtype(fn, weight, opts.weightDtype, dtype);
  const ws = weight === null ? NO_WEIGHT : resolveArray(fn, 'weight', weight, weightDtype);
  if (ws.array !== null && ws.array.length === 0) throw new RangeError(`${fn}: weight must not be empty (dim = 0)`);
  const eps = resolveFloat32(fn, 'options.eps', opts.eps, RMSNORM_DEFAULT_EPS, NON_NEGATIVE);
  const castMode = oneOf(fn, 'options.castMode', opts.castMode, CAST_MODES, 'llama');
  const weightOffset = resolveFloat32(fn, 'options.weightOffset', opts.weightOffset, 0, ANY_SIGN);
  if (opts.weightOffset !== undefined && ws.array === null) {
    throw new TypeError(`${fn}: options.weightOffset needs a weight, but weight is null`);
  }
  const dim = resolveShape(fn, opts.dim, opts.shape, opts.axis, ws.array, xs.array.length);
  const rows = xs.array.length / dim;

  const os = opts.out === undefined ? undefined : resolveArray(fn, 'options.out', opts.out, dtype);
  if (os !== undefined) {
    const out = os.array;
    if (out.length !== xs.array.length) {
      throw new RangeError(`${fn}: options.out.length (${out.length}) must equal x.length (${xs.array.length})`);
    }
    if (!sameStart(os, xs) && spansOverlap(os, xs)) {
      throw new RangeError(`${fn}: options.out must be x itself or not overlap x`);
    }
    if (ws.array !== null && spansOverlap(os, ws)) {
      throw new RangeError(`${fn}: options.out must not overlap weight`);
    }
    if (rs !== undefined && spansOverlap(os, rs)) {
      throw new RangeError(`${fn}: options.out must not overlap residual`);
    }
  }
  if (rs !== undefined && (spansOverlap(rs, xs) || (ws.array !== null && spansOverlap(rs, ws)))) {
    throw new RangeError(`${fn}: residual must not overlap x or weight`);
  }
  // Only when asked for: building the lists costs more than the rest of a small call.
  const rstd = opts.rstd === undefined ? undefined : resolveStatsOut(fn, { rstd: opts.rstd }, rows,
    [['x', xs.array], ['weight', ws.array], ['residual', rs?.array], ['options.out', os?.array]])[0];
  return {
    rows, dim, eps, dtype, castMode, weightOffset, weightDtype,
    x: xs, residual: rs, weight: ws.array === null ? null : ws, out: os, rstd,
  };
}

// ---- LayerNorm and the backward passes ----------------------------------
// float32 only. Arrays come back as { array, tensor } like rmsNorm's.

function requireLength(fn, name, array, length, what) {
  if (array.length !== length) {
    throw new RangeError(`${fn}: ${name}.length (${array.length}) must equal ${what} (${length})`);
  }
}

/** Throws unless `array` (an output) overlaps none of `others` ([name, array|null|undefined] pairs). */
function requireNoOverlap(fn, name, array, others) {
  for (const [otherName, other] of others) {
    if (other && other !== array && overlaps(array, other)) {
      throw new RangeError(`${fn}: ${name} must not overlap ${otherName}`);
    }
  }
}

/** weight or bias: a float32 array or tensor, or null. */
function resolveParameter(fn, name, value) {
  if (value === undefined) {
    throw new TypeError(`${fn}: ${name} must be a Float32Array or null (for no ${name}), got undefined`);
  }
  if (value === null) return NO_WEIGHT;
  const resolved = resolveArray(fn, name, value, 'float32');
  if (resolved.array.length === 0) throw new RangeError(`${fn}: ${name} must not be empty (dim = 0)`);
  return resolved;
}

/**
 * rows × dim from options.dim or options.shape/axis (as rmsNorm's), where
 * dim defaults to the length of the first parameter given; every parameter
 * given must have dim values.
 */
function resolveParameterShape(fn, { dim, shape, axis }, parameters, length) {
  const given = parameters.filter(([, p]) => p.array !== null);
  const implicit = dim === undefined && shape === undefined;
  if (implicit && given.length === 0) {
    throw new TypeError(`${fn}: options.dim is required when ${parameters.map(([n]) => n).join(' and ')} are null`);
  }
  const rowLength = resolveShape(fn, implicit ? given[0][1].array.length : dim, shape, axis, null, length);
  const what = shape !== undefined ? 'the product of the normalized dims of options.shape'
    : implicit ? `${given[0][0]}.length` : 'options.dim';
  for (const [name, p] of given) requireLength(fn, name, p.array, rowLength, what);
  return { rows: length / rowLength, dim: rowLength };
}

/**
 * Per-row statistics the caller asks for as outputs (rmsNorm's rstd,
 * layerNorm's mean and rstd): each a Float32Array or tensor of `rows`
 * values that overlaps neither `others` nor each other. Returned in the
 * order of `stats`, undefined where not given.
 */
function resolveStatsOut(fn, stats, rows, others) {
  const resolved = [];
  for (const [key, value] of Object.entries(stats)) {
    if (value === undefined) {
      resolved.push(undefined);
      continue;
    }
    const name = `options.${key}`;
    const stat = resolveArray(fn, name, value, 'float32');
    requireLength(fn, name, stat.array, rows, 'the number of rows');
    requireNoOverlap(fn, name, stat.array, others);
    others = [...others, [name, stat.array]];
    resolved.push(stat);
  }
  return resolved;
}

/** Statistics passed in to a backward pass: float32, `rows` values each. */
function resolveStatsIn(fn, stats, rows) {
  return Object.entries(stats).map(([key, value]) => {
    if (value === undefined) return undefined;
    const stat = resolveArray(fn, `options.${key}`, value, 'float32');
    requireLength(fn, `options.${key}`, stat.array, rows, 'the number of rows');
    return stat;
  });
}

/** An output of x's length that may be `inPlaceOf` itself and overlaps nothing else. */
function resolveRowsOut(fn, name, value, length, inPlaceOf, others) {
  if (value === undefined) return undefined;
  const out = resolveArray(fn, name, value, 'float32');
  requireLength(fn, name, out.array, length, 'x.length');
  const [sourceName, source] = inPlaceOf;
  if (!sameView(out.array, source) && overlaps(out.array, source)) {
    throw new RangeError(`${fn}: ${name} must be ${sourceName} itself or not overlap ${sourceName}`);
  }
  requireNoOverlap(fn, name, out.array, others);
  return out;
}

const LAYERNORM_OPTIONS = optionSet((o) => ({
  eps: o.eps, dim: o.dim, shape: o.shape, axis: o.axis, out: o.out, mean: o.mean, rstd: o.rstd,
}));
export const LAYERNORM_DEFAULT_EPS = 1e-5;

/** Checks layerNorm(x, weight, bias, options) and resolves it to the kernel's terms. */
export function resolveLayerNormArgs(fn, x, weight, bias, options) {
  const opts = checkOptionNames(fn, options, LAYERNORM_OPTIONS);
  const xs = resolveArray(fn, 'x', x, 'float32');
  const ws = resolveParameter(fn, 'weight', weight);
  const bs = resolveParameter(fn, 'bias', bias);
  const eps = resolveFloat32(fn, 'options.eps', opts.eps, LAYERNORM_DEFAULT_EPS, NON_NEGATIVE);
  const { rows, dim } = resolveParameterShape(fn, opts, [['weight', ws], ['bias', bs]], xs.array.length);
  const params = [['weight', ws.array], ['bias', bs.array]];
  const out = resolveRowsOut(fn, 'options.out', opts.out, xs.array.length, ['x', xs.array], params);
  const [mean, rstd] = resolveStatsOut(fn, { mean: opts.mean, rstd: opts.rstd }, rows,
    [['x', xs.array], ...params, ['options.out', out?.array]]);
  return { rows, dim, eps, x: xs, weight: ws, bias: bs, out, mean, rstd };
}

function resolveBackwardInputs(fn, dy, x) {
  const xs = resolveArray(fn, 'x', x, 'float32');
  const dys = resolveArray(fn, 'dy', dy, 'float32');
  requireLength(fn, 'dy', dys.array, xs.array.length, 'x.length');
  return { xs, dys };
}

const RMSNORM_BACKWARD_OPTIONS = optionSet((o) => ({
  eps: o.eps, dim: o.dim, shape: o.shape, axis: o.axis, rstd: o.rstd, dx: o.dx,
}));

/** Checks rmsNormBackward(dy, x, weight, options). */
export function resolveRmsNormBackwardArgs(fn, dy, x, weight, options) {
  const opts = checkOptionNames(fn, options, RMSNORM_BACKWARD_OPTIONS);
  const { xs, dys } = resolveBackwardInputs(fn, dy, x);
  const ws = resolveParameter(fn, 'weight', weight);
  const eps = resolveFloat32(fn, 'options.eps', opts.eps, RMSNORM_DEFAULT_EPS, NON_NEGATIVE);
  const { rows, dim } = resolveParameterShape(fn, opts, [['weight', ws]], xs.array.length);
  const dx = resolveRowsOut(fn, 'options.dx', opts.dx, xs.array.length, ['dy', dys.array],
    [['x', xs.array], ['weight', ws.array]]);
  const [rstd] = resolveStatsIn(fn, { rstd: opts.rstd }, rows);
  return { rows, dim, eps, dy: dys, x: xs, weight: ws, rstd, dx };
}

const LAYERNORM_BACKWARD_OPTIONS = optionSet((o) => ({
  eps: o.eps, dim: o.dim, shape: o.shape, axis: o.axis, mean: o.mean, rstd: o.rstd, dx: o.dx,
}));

/** Checks layerNormBackward(dy, x, weight, bias, options); mean and rstd come together or not at all. */
export function resolveLayerNormBackwardArgs(fn, dy, x, weight, bias, options) {
  const opts = checkOptionNames(fn, options, LAYERNORM_BACKWARD_OPTIONS);
  const { xs, dys } = resolveBackwardInputs(fn, dy, x);
  const ws = resolveParameter(fn, 'weight', weight);
  const bs = resolveParameter(fn, 'bias', bias);
  const eps = resolveFloat32(fn, 'options.eps', opts.eps, LAYERNORM_DEFAULT_EPS, NON_NEGATIVE);
  const { rows, dim } = resolveParameterShape(fn, opts, [['weight', ws], ['bias', bs]], xs.array.length);
  const dx = resolveRowsOut(fn, 'options.dx', opts.dx, xs.array.length, ['dy', dys.array],
    [['x', xs.array], ['weight', ws.array], ['bias', bs.array]]);
  const [mean, rstd] = resolveStatsIn(fn, { mean: opts.mean, rstd: opts.rstd }, rows);
  if ((mean === undefined) !== (rstd === undefined)) {
    throw new TypeError(`${fn}: options.mean and options.rstd must be given together`);
  }
  return { rows, dim, eps, dy: dys, x: xs, weight: ws, bias: bs, mean, rstd, dx };
}
