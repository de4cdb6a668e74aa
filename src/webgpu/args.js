// The device form's arguments: its buffers and params read and checked,
// with the option defaults and checks of the wasm API's descriptions
// (src/ops/descriptions.js, src/ops/options.js), into one record a
// prepared call is made from. Nothing is recorded or created before this
// returns: a bad call throws a TypeError or RangeError naming the function
// and the argument.
import { CAST_MODE, CAST_MODES, DTYPES, ELEMENT_BYTES } from '../loader/abi.js';
import { hasOwn, isSafeInteger, keys, List, RangeError, setPrototypeOf, TypeError } from '../loader/intrinsics.js';
import {
  blockRowBytes, countOption, describe, float32Option, headsOption, headStrideOption, layRows, oneOf, oneRowStride, optionReader, requireWeightFor,
  resolveStride, rowSpan, template, tokensFit,
} from '../ops/options.js';
import { checkOverlaps } from '../ops/overlap.js';
import { BLOCKS, blockOutput, ROW, STAT } from '../ops/resolve.js';
import { isGpuBuffer, mapStateOf, sizeOf, usageOf } from './gpu.js';
import { FORM_NAMES, FORMS } from './programs/index.js';

// WebGPU's flags, as they were when the package loaded.
export const { STORAGE, UNIFORM, COPY_SRC, COPY_DST, MAP_READ } = globalThis.GPUBufferUsage ?? {};
export const MAP_MODE_READ = globalThis.GPUMapMode?.READ;

// The device form of each function is its description's: the same roles
// (the description's arrays, in its slot order), option names and defaults,
// and the one overlap rule (src/ops/overlap.js), here on bytes of GPU
// buffers. Its params are rows, dim and rowStride (the distance between
// row starts of the per-row roles, in elements), and the description's
// options that are values for the whole call (eps; dtype, weightDtype,
// castMode, weightOffset, outDtype where it has them): not its arrays, nor
// the shape, which the device form gives as rows and dim. With outDtype a
// block format, the call is the description's blocked form: out is ggml's
// blocks, packed row after row whatever the row stride. Each param is
// checked by the wasm API's own rule (src/ops/options.js), named params.*.
const NOT_PARAMS = { __proto__: null, dim: true, shape: true, axis: true, rowStride: true };
const readers = { __proto__: null };
for (let i = 0; i < FORM_NAMES.length; i++) {
  const { op } = FORMS[FORM_NAMES[i]];
  const params = { __proto__: null, rows: undefined, dim: undefined, rowStride: undefined };
  const names = keys(op.options);
  for (let k = 0; k < names.length; k++) if (op.index[names[k]] === undefined && NOT_PARAMS[names[k]] === undefined) params[names[k]] = undefined;
  readers[FORM_NAMES[i]] = [optionReader(template(op.keys, undefined)), optionReader(params)];
}

/** "buffers.out or buffers.rstd": the outputs a call of `op` may give alone. */
function outputsOf(op) {
  let named = '';
  const { slots } = op;
  let last = -1;
  for (let i = 0; i < slots.length; i++) if (slots[i].writes && slots[i].param < 0) last = i;
  for (let i = 0; i < slots.length; i++) {
    if (!slots[i].writes || slots[i].param >= 0) continue;
    named += `${named === '' ? '' : i === last ? ' or ' : ', '}buffers.${slots[i].key}`;
  }
  return named;
}

/** A role's record: its buffer, byte offset, dtype, and its values: `runs`
 * runs of `length` elements every `stride` (the rows of a per-row role;
 * one run for the others), spanning [start, end). */
class Binding {
  constructor(name, buffer, bufferSize, start, dtype, writes, runs, length, stride) {
    const bytes = ELEMENT_BYTES[dtype];
    this.name = name;
    this.buffer = buffer;
    this.bufferSize = bufferSize; // its size in bytes, as measured (a GPUBuffer's size never changes)
    this.start = start;
    this.dtype = dtype;
    this.bytes = bytes;
    this.writes = writes;
    this.runs = runs;
    this.length = length;
    this.stride = stride;
    this.end = start + (runs === 0 || length === 0 ? 0 : ((runs - 1) * stride + length) * bytes);
    this.memory = null; // what src/ops/overlap.js reads of a record: no instance memory,
    this.shared = false; // and not a SharedArrayBuffer's
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
  const bytes = ELEMENT_BYTES[dtype];
  if (!isSafeInteger(offset) || offset < 0 || offset % bytes !== 0) {
    throw new RangeError(`${fn}: ${at} must be a non-negative multiple of ${bytes} (the bytes of a ${dtype} value), got ${offset}`);
  }
  if ((usageOf(buffer) & STORAGE) === 0) {
    throw new RangeError(`${fn}: ${name} must be a buffer with GPUBufferUsage.STORAGE`);
  }
  const mapState = mapStateOf(buffer);
  if (mapState !== 'unmapped') {
    throw new RangeError(`${fn}: ${name} must be unmapped, but its mapState is '${mapState}'`);
  }
  const size = sizeOf(buffer);
  const b = new Binding(name, buffer, size, offset, dtype, writes, runs, length, stride);
  if (b.end > size) {
    throw new RangeError(`${fn}: ${name} needs ${b.end - offset} bytes from offset ${offset}, but the buffer has ${size}`);
  }
  return b;
}

/** A call of the device form, checked. */
export class GpuCall {
  constructor(fn) {
    this.fn = fn;
    this.rows = 0; // tokens × heads
    this.tokens = 0;
    this.heads = 1;
    this.headStride = 0;
    this.dim = 0;
    this.stride = 0; // values from one token's start to the next's
    this.eps = 0;
    this.dtype = 'float32';
    this.weightDtype = null;
    this.gemma = false;
    this.weightOffset = 0;
    this.outDtype = null; // a block format (params.outDtype), or null for the storage dtype
    this.blockRowBytes = 0; // bytes a row of blocks
    this.measured = null;
  }
}
setPrototypeOf(GpuCall.prototype, null);

/**
 * Reads and checks a device-form call of `fn` (a form of ./programs/):
 * buffers and params as documented (docs/webgpu.md).
 */
export function readCall(fn, given, options) {
  if (given === null || typeof given !== 'object') throw new TypeError(`${fn}: buffers must be an object, got ${describe(given)}`);
  if (options === null || typeof options !== 'object') throw new TypeError(`${fn}: params must be an object, got ${describe(options)}`);
  let { op } = FORMS[fn];
  const buffers = readers[fn][0](fn, given, 'buffers');
  const params = readers[fn][1](fn, options, 'params');
  const { program } = FORMS[fn];
  for (let i = 0; i < program.unsupported.length; i++) {
    const key = program.unsupported[i];
    if (params[key] !== undefined) throw new RangeError(`${fn}: params.${key} is not on the GPU yet; the wasm kernels take it`);
  }
  const call = new GpuCall(fn);
  const tokens = countOption(fn, 'params.rows', params.rows, 0);
  const dim = countOption(fn, 'params.dim', params.dim, 1);
  // With heads, each of params.rows tokens holds `heads` rows headStride apart (the wasm API's options.heads).
  const heads = headsOption(fn, params, undefined, 'params');
  const headStride = headStrideOption(fn, params, dim, 'params');
  const extent = rowSpan(heads, dim, headStride); // a token's values
  const stride = resolveStride(fn, params, undefined, dim, extent, 'params');
  tokensFit(fn, tokens, stride, extent, 'params');
  call.dim = dim;
  layRows(call, tokens, heads, headStride, stride);
  oneRowStride(call); // (the records below are measured to their rows' span: a one-row call's stride is not needed)
  const rows = call.rows;
  const dtype = op.hasDtype ? oneOf(fn, 'params.dtype', params.dtype, DTYPES, op.options.dtype) : 'float32';
  const hasWeight = buffers.weight != null;
  if (op.hasCastMode) {
    requireWeightFor(fn, 'params.weightDtype', params.weightDtype, 'buffers.weight', buffers.weight);
    requireWeightFor(fn, 'params.weightOffset', params.weightOffset, 'buffers.weight', buffers.weight);
    call.weightDtype = hasWeight ? oneOf(fn, 'params.weightDtype', params.weightDtype, DTYPES, dtype) : null;
  }
  call.dtype = dtype;
  call.eps = float32Option(fn, 'params.eps', params.eps, op.options.eps, true);
  if (op.hasCastMode) {
    call.gemma = CAST_MODE[oneOf(fn, 'params.castMode', params.castMode, CAST_MODES, op.options.castMode)] === CAST_MODE.gemma;
    call.weightOffset = float32Option(fn, 'params.weightOffset', params.weightOffset, op.options.weightOffset, false);
  }
  call.outDtype = blockOutput(op, fn, params, 'params', dtype);
  if (call.outDtype !== null) {
    call.blockRowBytes = blockRowBytes(fn, 'params.outDtype', call.outDtype, dim, dtype);
    if (buffers.out == null) throw new TypeError(`${fn}: params.outDtype needs an output, but buffers.out is ${describe(buffers.out)}`);
    op = op.blocked;
  }
  if (!isSafeInteger(tokens * stride)) throw new RangeError(`${fn}: params.rows * params.rowStride (${tokens * stride}) is too large`);
  // A call must write something: an output it may give alone, or an array it updates (addRmsNorm's residual).
  let writes = false;
  for (let i = 0; i < op.slots.length; i++) if (op.slots[i].writes && (op.slots[i].param >= 0 || buffers[op.slots[i].key] != null)) writes = true;
  if (!writes) throw new TypeError(`${fn}: ${outputsOf(op)} is required`);
  // Null-prototype: a role not given reads as undefined, and is set as an own key.
  const measured = { __proto__: null };
  const { slots } = op;
  const records = new List(slots.length);
  const names = new List(slots.length);
  for (let i = 0; i < slots.length; i++) {
    const s = slots[i];
    const value = buffers[s.key];
    records[i] = null;
    names[i] = `buffers.${s.key}`;
    // x and residual are required; weight may be null; out and the statistics are optional.
    if (value == null && (s.param < 0 || s.nullable)) continue;
    const roleDtype = s.dtype === 'weight' ? call.weightDtype : s.dtype === 'storage' ? dtype : s.dtype === 'blocks' ? call.outDtype : 'float32';
    // A per-row role: its tokens, each its heads' span (a statistic: a value a row; blocks: their bytes, packed).
    const once = s.per === STAT ? rows : s.per === BLOCKS ? rows * call.blockRowBytes : dim;
    records[i] = s.per === ROW ? measureBinding(fn, names[i], value, roleDtype, s.writes, call.tokens, rowSpan(call.heads, dim, call.headStride), call.stride)
      : measureBinding(fn, names[i], value, roleDtype, s.writes, 1, once, 0);
    measured[s.key] = records[i];
  }
  checkOverlaps(fn, op, records, call.stride, dim, names, call.heads, call.headStride);
  call.measured = measured;
  return call;
}
