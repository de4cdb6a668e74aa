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

function requireFloat32Array(fn, name, value) {
  if (typedArrayKind(value) !== 'Float32Array') {
    throw new TypeError(`${fn}: ${name} must be a Float32Array, got ${describe(value)}`);
  }
}

function requireAttached(fn, name, view) {
  if (isDetached(view)) {
    throw new TypeError(`${fn}: ${name} is a view of a detached ArrayBuffer (or out of bounds of a shrunk resizable one)`);
  }
}

/** options as an object holding only `allowed` names ({} when undefined). */
export function checkOptionNames(fn, options, allowed) {
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
  requireAttached(fn, 'options.out', out);
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

const RMSNORM_OPTIONS = ['eps', 'dim', 'out'];
export const RMSNORM_DEFAULT_EPS = 1e-6;

/**
 * Checks rmsNorm(x, weight, options) and resolves it to the kernel's terms.
 * @returns {{rows: number, dim: number, eps: number, out: Float32Array|undefined}}
 */
export function resolveRmsNormArgs(fn, x, weight, options) {
  requireFloat32Array(fn, 'x', x);
  if (weight !== null) {
    if (weight === undefined) {
      throw new TypeError(`${fn}: weight must be a Float32Array or null (for no weight), got undefined`);
    }
    requireFloat32Array(fn, 'weight', weight);
  }
  // Each option is read once, here, before any array is measured: a getter
  // runs user code, which could detach or shrink a buffer checked earlier.
  const { eps: epsOption, dim: dimOption, out: outOption } = checkOptionNames(fn, options, RMSNORM_OPTIONS);
  requireAttached(fn, 'x', x);
  if (weight !== null) requireAttached(fn, 'weight', weight);
  const eps = resolveEps(fn, epsOption, RMSNORM_DEFAULT_EPS);
  const dim = resolveDim(fn, dimOption, weight);
  if (x.length % dim !== 0) {
    throw new RangeError(`${fn}: x.length (${x.length}) must be a multiple of dim (${dim})`);
  }
  const out = resolveOut(fn, outOption, x, weight);
  return { rows: x.length / dim, dim, eps, out };
}
