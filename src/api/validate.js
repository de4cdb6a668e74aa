// Where arguments are checked. Every public function (the wasm API and the
// JS reference alike) resolves its arguments here, so both throw the same
// TypeError/RangeError for the same mistake, and always before anything is
// written to an output.

const typedArrayTag = Object.getOwnPropertyDescriptor(
  Object.getPrototypeOf(Uint8Array.prototype), Symbol.toStringTag).get;

const FLT_MAX = 3.4028234663852886e38;

/** The typed-array kind of `value` ('Float32Array', …), or undefined. Works across realms. */
export function typedArrayKind(value) {
  return ArrayBuffer.isView(value) ? typedArrayTag.call(value) : undefined;
}

/** A short description of what was passed, for error messages. */
export function describe(value) {
  if (value === null) return 'null';
  const kind = typedArrayKind(value);
  if (kind !== undefined) return `${kind}(${value.length})`;
  if (Array.isArray(value)) return `Array(${value.length})`;
  if (typeof value === 'object') return value.constructor?.name ?? 'object';
  if (typeof value === 'string') return `string ${JSON.stringify(value.slice(0, 20))}`;
  if (typeof value === 'bigint') return `bigint ${value}n`;
  return `${typeof value} ${String(value)}`;
}

function requireFloat32Array(fn, name, value) {
  if (typedArrayKind(value) !== 'Float32Array') {
    throw new TypeError(`${fn}: ${name} must be a Float32Array, got ${describe(value)}`);
  }
}

function checkOptionNames(fn, options, allowed) {
  if (options === undefined) return {};
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new TypeError(`${fn}: options must be an object, got ${describe(options)}`);
  }
  for (const key of Object.keys(options)) {
    if (!allowed.includes(key)) {
      throw new TypeError(`${fn}: unknown option '${key}' (allowed: ${allowed.join(', ')})`);
    }
  }
  return options;
}

/** eps as the float32 the kernels add: a finite, non-negative number. */
function resolveEps(fn, eps, defaultEps) {
  if (eps === undefined) return Math.fround(defaultEps);
  if (typeof eps !== 'number') {
    throw new TypeError(`${fn}: options.eps must be a number, got ${describe(eps)}`);
  }
  if (!(eps >= 0 && eps <= FLT_MAX)) {
    throw new RangeError(`${fn}: options.eps must be a finite float32 >= 0, got ${eps}`);
  }
  return Math.fround(eps);
}

function resolveDim(fn, dim, weight) {
  if (dim === undefined) {
    if (weight === null) {
      throw new TypeError(`${fn}: options.dim is required when weight is null`);
    }
    dim = weight.length;
    if (dim === 0) throw new RangeError(`${fn}: weight must not be empty (dim = 0)`);
    return dim;
  }
  if (typeof dim !== 'number') {
    throw new TypeError(`${fn}: options.dim must be a number, got ${describe(dim)}`);
  }
  if (!Number.isSafeInteger(dim) || dim < 1) {
    throw new RangeError(`${fn}: options.dim must be a positive integer, got ${dim}`);
  }
  if (weight !== null && weight.length !== dim) {
    throw new RangeError(`${fn}: weight.length (${weight.length}) must equal options.dim (${dim})`);
  }
  return dim;
}

function byteRange(a) {
  return [a.byteOffset, a.byteOffset + a.byteLength];
}

function overlaps(a, b) {
  if (a.buffer !== b.buffer) return false;
  const [a0, a1] = byteRange(a);
  const [b0, b1] = byteRange(b);
  return a0 < b1 && b0 < a1;
}

function resolveOut(fn, out, x, weight) {
  if (out === undefined) return undefined;
  requireFloat32Array(fn, 'options.out', out);
  if (out.length !== x.length) {
    throw new RangeError(`${fn}: options.out.length (${out.length}) must equal x.length (${x.length})`);
  }
  const inPlace = out.buffer === x.buffer && out.byteOffset === x.byteOffset;
  if (!inPlace && overlaps(out, x)) {
    throw new RangeError(`${fn}: options.out must be x itself or not overlap x`);
  }
  if (weight !== null && overlaps(out, weight)) {
    throw new RangeError(`${fn}: options.out must not overlap weight`);
  }
  return out;
}

const RMSNORM_OPTIONS = ['eps', 'dim', 'out', 'rstd'];
export const RMSNORM_DEFAULT_EPS = 1e-6;

/**
 * Checks rmsNorm(x, weight, options) and resolves it to the kernel's terms.
 * @returns {{rows: number, dim: number, eps: number, out: Float32Array|undefined,
 *   rstd: Float32Array|undefined}}
 */
export function resolveRmsNormArgs(fn, x, weight, options) {
  requireFloat32Array(fn, 'x', x);
  if (weight !== null) {
    if (weight === undefined) {
      throw new TypeError(`${fn}: weight must be a Float32Array or null (for no weight), got undefined`);
    }
    requireFloat32Array(fn, 'weight', weight);
  }
  const opts = checkOptionNames(fn, options, RMSNORM_OPTIONS);
  const eps = resolveEps(fn, opts.eps, RMSNORM_DEFAULT_EPS);
  const dim = resolveDim(fn, opts.dim, weight);
  if (x.length % dim !== 0) {
    throw new RangeError(`${fn}: x.length (${x.length}) must be a multiple of dim (${dim})`);
  }
  const out = resolveOut(fn, opts.out, x, weight);
  const rows = x.length / dim;
  const [rstd] = resolveStatsOut(fn, { rstd: opts.rstd }, rows, [['x', x], ['weight', weight], ['options.out', out]]);
  return { rows, dim, eps, out, rstd };
}

// LayerNorm and the backward passes (issue 8).

function requireParameter(fn, name, value) {
  if (value === undefined) {
    throw new TypeError(`${fn}: ${name} must be a Float32Array or null (for no ${name}), got undefined`);
  }
  if (value !== null) requireFloat32Array(fn, name, value);
}

function requireLength(fn, name, value, length, what) {
  if (value !== null && value !== undefined && value.length !== length) {
    throw new RangeError(`${fn}: ${name}.length (${value.length}) must equal ${what} (${length})`);
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

/**
 * Per-row statistics (mean, rstd) the caller asks for as outputs: each a
 * Float32Array of `rows` values that overlaps neither `others` nor each other.
 * Returns them in the order of `stats` (undefined where not given).
 */
function resolveStatsOut(fn, stats, rows, others) {
  const resolved = [];
  for (const [key, value] of Object.entries(stats)) {
    if (value === undefined) {
      resolved.push(undefined);
      continue;
    }
    const name = `options.${key}`;
    requireFloat32Array(fn, name, value);
    requireLength(fn, name, value, rows, 'the number of rows');
    requireNoOverlap(fn, name, value, others);
    others = [...others, [name, value]];
    resolved.push(value);
  }
  return resolved;
}

/** Statistics passed in to a backward pass: Float32Array of `rows` values. */
function resolveStatsIn(fn, stats, rows) {
  return Object.entries(stats).map(([key, value]) => {
    if (value === undefined) return undefined;
    requireFloat32Array(fn, `options.${key}`, value);
    requireLength(fn, `options.${key}`, value, rows, 'the number of rows');
    return value;
  });
}

/** dim from options.dim, else from the first of the [name, array|null] parameters given. */
function resolveDimOf(fn, dim, parameters) {
  const given = parameters.filter(([, a]) => a !== null);
  if (dim === undefined) {
    if (given.length === 0) {
      throw new TypeError(`${fn}: options.dim is required when ${parameters.map(([n]) => n).join(' and ')} are null`);
    }
    const [name, first] = given[0];
    if (first.length === 0) throw new RangeError(`${fn}: ${name} must not be empty (dim = 0)`);
    dim = first.length;
  } else {
    dim = resolveDim(fn, dim, null);
  }
  for (const [name, a] of given) requireLength(fn, name, a, dim, 'options.dim');
  return dim;
}

function requireRowsOf(fn, x, dim) {
  if (x.length % dim !== 0) {
    throw new RangeError(`${fn}: x.length (${x.length}) must be a multiple of dim (${dim})`);
  }
  return x.length / dim;
}

const LAYERNORM_OPTIONS = ['eps', 'dim', 'out', 'mean', 'rstd'];
export const LAYERNORM_DEFAULT_EPS = 1e-5;

/**
 * Checks layerNorm(x, weight, bias, options).
 * @returns {{rows: number, dim: number, eps: number, out: Float32Array|undefined,
 *   mean: Float32Array|undefined, rstd: Float32Array|undefined}}
 */
export function resolveLayerNormArgs(fn, x, weight, bias, options) {
  requireFloat32Array(fn, 'x', x);
  requireParameter(fn, 'weight', weight);
  requireParameter(fn, 'bias', bias);
  const opts = checkOptionNames(fn, options, LAYERNORM_OPTIONS);
  const eps = resolveEps(fn, opts.eps, LAYERNORM_DEFAULT_EPS);
  const dim = resolveDimOf(fn, opts.dim, [['weight', weight], ['bias', bias]]);
  const rows = requireRowsOf(fn, x, dim);
  const out = resolveOut(fn, opts.out, x, weight);
  if (out !== undefined && bias !== null && overlaps(out, bias)) {
    throw new RangeError(`${fn}: options.out must not overlap bias`);
  }
  const [mean, rstd] = resolveStatsOut(fn, { mean: opts.mean, rstd: opts.rstd }, rows,
    [['x', x], ['weight', weight], ['bias', bias], ['options.out', out]]);
  return { rows, dim, eps, out, mean, rstd };
}

/** dy and options.dx of a backward pass: dx may be dy itself, else overlaps nothing. */
function resolveGradients(fn, dy, x, dxOption, params) {
  requireFloat32Array(fn, 'dy', dy);
  if (dy.length !== x.length) {
    throw new RangeError(`${fn}: dy.length (${dy.length}) must equal x.length (${x.length})`);
  }
  if (dxOption === undefined) return undefined;
  requireFloat32Array(fn, 'options.dx', dxOption);
  requireLength(fn, 'options.dx', dxOption, x.length, 'x.length');
  const inPlace = dxOption.buffer === dy.buffer && dxOption.byteOffset === dy.byteOffset;
  requireNoOverlap(fn, 'options.dx', dxOption, [...(inPlace ? [] : [['dy', dy]]), ['x', x], ...params]);
  return dxOption;
}

const RMSNORM_BACKWARD_OPTIONS = ['eps', 'dim', 'rstd', 'dx'];

/**
 * Checks rmsNormBackward(dy, x, weight, options).
 * @returns {{rows: number, dim: number, eps: number, rstd: Float32Array|undefined,
 *   dx: Float32Array|undefined}}
 */
export function resolveRmsNormBackwardArgs(fn, dy, x, weight, options) {
  requireFloat32Array(fn, 'x', x);
  requireParameter(fn, 'weight', weight);
  const opts = checkOptionNames(fn, options, RMSNORM_BACKWARD_OPTIONS);
  const eps = resolveEps(fn, opts.eps, RMSNORM_DEFAULT_EPS);
  const dim = resolveDimOf(fn, opts.dim, [['weight', weight]]);
  const rows = requireRowsOf(fn, x, dim);
  const dx = resolveGradients(fn, dy, x, opts.dx, [['weight', weight]]);
  const [rstd] = resolveStatsIn(fn, { rstd: opts.rstd }, rows);
  return { rows, dim, eps, rstd, dx };
}

const LAYERNORM_BACKWARD_OPTIONS = ['eps', 'dim', 'mean', 'rstd', 'dx'];

/**
 * Checks layerNormBackward(dy, x, weight, bias, options). mean and rstd come
 * together or not at all.
 * @returns {{rows: number, dim: number, eps: number, mean: Float32Array|undefined,
 *   rstd: Float32Array|undefined, dx: Float32Array|undefined}}
 */
export function resolveLayerNormBackwardArgs(fn, dy, x, weight, bias, options) {
  requireFloat32Array(fn, 'x', x);
  requireParameter(fn, 'weight', weight);
  requireParameter(fn, 'bias', bias);
  const opts = checkOptionNames(fn, options, LAYERNORM_BACKWARD_OPTIONS);
  const eps = resolveEps(fn, opts.eps, LAYERNORM_DEFAULT_EPS);
  const dim = resolveDimOf(fn, opts.dim, [['weight', weight], ['bias', bias]]);
  const rows = requireRowsOf(fn, x, dim);
  const dx = resolveGradients(fn, dy, x, opts.dx, [['weight', weight], ['bias', bias]]);
  const [mean, rstd] = resolveStatsIn(fn, { mean: opts.mean, rstd: opts.rstd }, rows);
  if ((mean === undefined) !== (rstd === undefined)) {
    throw new TypeError(`${fn}: options.mean and options.rstd must be given together`);
  }
  return { rows, dim, eps, mean, rstd, dx };
}
