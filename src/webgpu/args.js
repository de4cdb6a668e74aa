// The device form's arguments: its buffers and params read and checked,
// with the option defaults and checks of the wasm API's descriptions
// (src/ops/descriptions.js, src/ops/options.js), into one record a
// prepared call is made from. Nothing is recorded or created before this
// returns: a bad call throws a TypeError or RangeError naming the function
// and the argument.
import { CAST_MODE, CAST_MODES, DTYPE, DTYPES } from '../loader/abi.js';
import { abs, ceil, floor, hasOwn, isSafeInteger, keys, max, min, RangeError, setPrototypeOf, TypeError } from '../loader/intrinsics.js';
import { addRmsNorm as ADD_RMSNORM, layerNorm as LAYERNORM, rmsNorm as RMSNORM } from '../ops/descriptions.js';
import { describe, float32Option, oneOf, optionReader } from '../ops/options.js';

// WebGPU's flags, as they were when the package loaded.
export const { STORAGE, UNIFORM, COPY_SRC, COPY_DST, MAP_READ } = globalThis.GPUBufferUsage ?? {};
export const MAP_MODE_READ = globalThis.GPUMapMode?.READ;

export const ROW = 0;
export const STAT = 1;
export const ONCE = 2;

// The device form of each function: its description (for the option
// defaults), its roles in the order they are checked and overlaps
// reported, and what it reads of params. `over`: the role an output may
// be exactly (in place). rowStride is the distance between row starts of
// the per-row roles, in elements (design: every per-row array of a call).
const role = (per, writes, kind, over = null) => ({ __proto__: null, per, writes, kind, over });
const FORMS = {
  __proto__: null,
  rmsNorm: {
    __proto__: null, op: RMSNORM, residual: false,
    roles: { __proto__: null, x: role(ROW, false, 'storage'), weight: role(ONCE, false, 'weight'), out: role(ROW, true, 'storage', 'x'), rstd: role(STAT, true, 'float32') },
  },
  addRmsNorm: {
    __proto__: null, op: ADD_RMSNORM, residual: true,
    roles: {
      __proto__: null, x: role(ROW, false, 'storage'), residual: role(ROW, true, 'storage'), weight: role(ONCE, false, 'weight'),
      out: role(ROW, true, 'storage', 'x'), rstd: role(STAT, true, 'float32'),
    },
  },
  layerNorm: {
    __proto__: null, op: LAYERNORM, residual: false,
    roles: {
      __proto__: null, x: role(ROW, false, 'float32'), weight: role(ONCE, false, 'float32'), bias: role(ONCE, false, 'float32'),
      out: role(ROW, true, 'float32', 'x'), mean: role(STAT, true, 'float32'), rstd: role(STAT, true, 'float32'),
    },
  },
};

const RMS_PARAMS = { rows: undefined, dim: undefined, rowStride: undefined, eps: undefined, dtype: undefined, weightDtype: undefined, castMode: undefined, weightOffset: undefined };
const readers = {
  __proto__: null,
  rmsNorm: [optionReader({ x: undefined, weight: undefined, out: undefined, rstd: undefined }), optionReader(RMS_PARAMS)],
  addRmsNorm: [optionReader({ x: undefined, residual: undefined, weight: undefined, out: undefined, rstd: undefined }), optionReader(RMS_PARAMS)],
  layerNorm: [optionReader({ x: undefined, weight: undefined, bias: undefined, out: undefined, mean: undefined, rstd: undefined }),
    optionReader({ rows: undefined, dim: undefined, rowStride: undefined, eps: undefined })],
};

export function isGpuBuffer(value) {
  return typeof GPUBuffer !== 'undefined' && value instanceof GPUBuffer;
}

function countParam(fn, name, value, least) {
  if (typeof value !== 'number') throw new TypeError(`${fn}: ${name} must be a number, got ${describe(value)}`);
  if (!isSafeInteger(value) || value < least) {
    throw new RangeError(`${fn}: ${name} must be ${least === 0 ? 'a non-negative' : 'a positive'} integer, got ${value}`);
  }
  return value;
}

/** A role's record: its buffer, byte offset, dtype, and its values: `runs`
 * runs of `length` elements every `stride` (the rows of a per-row role;
 * one run for the others), spanning [start, end). */
class Binding {
  constructor(name, buffer, start, dtype, writes, runs, length, stride) {
    const bytes = DTYPE[dtype].bytes;
    this.name = name;
    this.buffer = buffer;
    this.start = start;
    this.dtype = dtype;
    this.bytes = bytes;
    this.writes = writes;
    this.runs = runs;
    this.length = length;
    this.stride = stride;
    this.end = start + (runs === 0 || length === 0 ? 0 : ((runs - 1) * stride + length) * bytes);
  }
}
setPrototypeOf(Binding.prototype, null);

/** A binding argument: a GPUBuffer or { buffer, offset }, checked for its
 * usage, alignment and size. */
function measureBinding(fn, name, value, dtype, writes, runs, length, stride) {
  // Of a { buffer, offset } object, its own properties only, as of options.
  const own = (key) => (value !== null && typeof value === 'object' && hasOwn(value, key) ? value[key] : undefined);
  const buffer = isGpuBuffer(value) ? value : own('buffer');
  if (!isGpuBuffer(buffer)) {
    throw new TypeError(`${fn}: ${name} must be a GPUBuffer or { buffer: GPUBuffer, offset }, got ${describe(value)}`);
  }
  const given = isGpuBuffer(value) ? undefined : own('offset');
  const offset = given === undefined ? 0 : given;
  const at = isGpuBuffer(value) ? name : `${name}.offset`;
  if (typeof offset !== 'number') throw new TypeError(`${fn}: ${at} must be a number, got ${describe(offset)}`);
  const { bytes } = DTYPE[dtype];
  if (!isSafeInteger(offset) || offset < 0 || offset % bytes !== 0) {
    throw new RangeError(`${fn}: ${at} must be a non-negative multiple of ${bytes} (the bytes of a ${dtype} value), got ${offset}`);
  }
  if ((buffer.usage & STORAGE) === 0) {
    throw new RangeError(`${fn}: ${name} must be a buffer with GPUBufferUsage.STORAGE`);
  }
  if (buffer.mapState !== 'unmapped') {
    throw new RangeError(`${fn}: ${name} must be unmapped, but its mapState is '${buffer.mapState}'`);
  }
  const b = new Binding(name, buffer, offset, dtype, writes, runs, length, stride);
  if (b.end > buffer.size) {
    throw new RangeError(`${fn}: ${name} needs ${b.end - offset} bytes from offset ${offset}, but the buffer has ${buffer.size}`);
  }
  return b;
}

/** Whether the values of two records of one buffer share a byte: runs of
 * `length` every `stride` (one run for a statistic or a once-array). Two
 * per-row records of a call have one stride; a run against a record of
 * one run is found by division, with no loop over the rows. */
function valuesMeet(a, b) {
  if (!(a.start < b.end && b.start < a.end)) return false;
  if (a.runs === 1 && b.runs === 1) return true;
  if (a.runs === 1 || b.runs === 1) {
    const runs = a.runs === 1 ? b : a;
    const single = a.runs === 1 ? a : b;
    // The runs starting before single.end and ending after single.start.
    const step = runs.stride * runs.bytes;
    const len = runs.length * runs.bytes;
    const first = max(0, floor((single.start - runs.start - len) / step) + 1);
    const last = min(runs.runs - 1, ceil((single.end - runs.start) / step) - 1);
    return first <= last;
  }
  // One stride: row i of a and row j of b meet iff |d + (j - i) * step| < len,
  // d the distance of their starts; only the two k = j - i nearest -d / step can.
  const step = a.stride * a.bytes;
  const len = a.length * a.bytes;
  const d = b.start - a.start;
  const k0 = floor(-d / step);
  for (let k = k0; k <= k0 + 1; k++) {
    if (k > -a.runs && k < a.runs && abs(d + k * step) < len) return true;
  }
  return false;
}

/** The overlap rule of the wasm API (src/ops/overlap.js), on strided
 * spans: nothing written shares a byte with the values of anything else
 * of the call, except out exactly over x. */
function checkOverlaps(fn, form, measured) {
  const roles = keys(measured);
  for (let i = 0; i < roles.length; i++) {
    for (let j = i + 1; j < roles.length; j++) {
      const a = measured[roles[i]];
      const b = measured[roles[j]];
      if (!(a.writes || b.writes) || a.buffer !== b.buffer || a.start === a.end || b.start === b.end) continue;
      if (!valuesMeet(a, b)) continue;
      const w = b.writes ? roles[j] : roles[i];
      const o = b.writes ? roles[i] : roles[j];
      const writer = measured[w];
      const other = measured[o];
      const inPlace = form.roles[w].over === o;
      if (inPlace && a.start === b.start && a.end === b.end) continue;
      throw new RangeError(inPlace
        ? `${fn}: ${writer.name} must be ${other.name} itself or not overlap ${other.name}`
        : `${fn}: ${writer.name} must not overlap ${other.name}`);
    }
  }
}

/** A call of the device form, checked. */
export class GpuCall {
  constructor(fn) {
    this.fn = fn;
    this.rows = 0;
    this.dim = 0;
    this.stride = 0;
    this.eps = 0;
    this.dtype = 'float32';
    this.weightDtype = null;
    this.gemma = false;
    this.weightOffset = 0;
    this.measured = null;
  }
}
setPrototypeOf(GpuCall.prototype, null);

/**
 * Reads and checks a device-form call of `fn` ('rmsNorm', 'addRmsNorm' or
 * 'layerNorm'): buffers and params as documented (docs/webgpu.md).
 */
export function readCall(fn, given, options) {
  if (given === null || typeof given !== 'object') throw new TypeError(`${fn}: buffers must be an object, got ${describe(given)}`);
  if (options === null || typeof options !== 'object') throw new TypeError(`${fn}: params must be an object, got ${describe(options)}`);
  const form = FORMS[fn];
  const { op } = form;
  const buffers = readers[fn][0](fn, given, 'buffers');
  const params = readers[fn][1](fn, options, 'params');
  const call = new GpuCall(fn);
  const rows = countParam(fn, 'params.rows', params.rows, 0);
  const dim = countParam(fn, 'params.dim', params.dim, 1);
  const stride = params.rowStride === undefined ? dim : countParam(fn, 'params.rowStride', params.rowStride, 1);
  if (stride < dim) throw new RangeError(`${fn}: params.rowStride must be at least params.dim (${dim}), got ${stride}`);
  call.rows = rows;
  call.dim = dim;
  call.stride = stride;
  const rms = fn !== 'layerNorm';
  const dtype = rms ? oneOf(fn, 'params.dtype', params.dtype, DTYPES, op.options.dtype) : 'float32';
  const hasWeight = buffers.weight != null;
  if (rms) {
    if (!hasWeight && params.weightDtype !== undefined) throw new TypeError(`${fn}: params.weightDtype needs a weight, but buffers.weight is ${describe(buffers.weight)}`);
    if (!hasWeight && params.weightOffset !== undefined) throw new TypeError(`${fn}: params.weightOffset needs a weight, but buffers.weight is ${describe(buffers.weight)}`);
    call.weightDtype = hasWeight ? oneOf(fn, 'params.weightDtype', params.weightDtype, DTYPES, dtype) : null;
  }
  call.dtype = dtype;
  call.eps = float32Option(fn, 'params.eps', params.eps, op.options.eps, true);
  if (rms) {
    call.gemma = CAST_MODE[oneOf(fn, 'params.castMode', params.castMode, CAST_MODES, op.options.castMode)] === CAST_MODE.gemma;
    call.weightOffset = float32Option(fn, 'params.weightOffset', params.weightOffset, op.options.weightOffset, false);
  }
  if (!isSafeInteger(rows * stride)) throw new RangeError(`${fn}: params.rows * params.rowStride (${rows * stride}) is too large`);
  if (buffers.out == null && buffers.rstd == null && buffers.mean == null && !form.residual) {
    throw new TypeError(rms ? `${fn}: buffers.out or buffers.rstd is required` : `${fn}: buffers.out, buffers.mean or buffers.rstd is required`);
  }
  // Null-prototype: a role not given reads as undefined, and is set as an own key.
  const measured = { __proto__: null };
  const roles = keys(form.roles);
  for (let i = 0; i < roles.length; i++) {
    const key = roles[i];
    const r = form.roles[key];
    const value = buffers[key];
    if (value == null && key !== 'x' && key !== 'residual') continue;
    const roleDtype = r.kind === 'storage' ? dtype : r.kind === 'weight' ? call.weightDtype : 'float32';
    const name = `buffers.${key}`;
    measured[key] = r.per === ROW ? measureBinding(fn, name, value, roleDtype, r.writes, rows, dim, stride)
      : measureBinding(fn, name, value, roleDtype, r.writes, 1, r.per === STAT ? rows : dim, 0);
  }
  checkOverlaps(fn, form, measured);
  call.measured = measured;
  return call;
}
