// The device form of the WebGPU backend: kernels for a caller's GPUDevice
// that take GPUBuffers (with byte offsets) and record one compute pass into
// the caller's GPUCommandEncoder, so an engine puts the norm between its own
// passes with no readback. Every argument is checked before anything is
// recorded; a bad call records nothing.
import { CAST_MODE, CAST_MODES, DTYPE, DTYPES } from '../loader/abi.js';
import { ceil, Float32Array, hasOwn, isSafeInteger, ITERATOR, keys, List, max, min, RangeError, TypeError, Uint32Array } from '../loader/intrinsics.js';
import { describe, float32Option as float32Param, oneOf, optionReader } from '../ops/options.js';
import { NO_WEIGHT, PARAMS, rmsNormShader, SLOTS, WORKGROUP_SIZE } from './shader.js';
import { LAYERNORM_PARAMS, LAYERNORM_SLOTS, layerNormShader } from './layernorm-shader.js';

// The shaders' source, written out when this module loads: nothing a page
// replaces later (Array.prototype.join, say) can reach the code it runs.
const CODE = { rmsNorm: rmsNormShader(), layerNorm: layerNormShader() };
// Each shader's entry points (an invocation a row, a workgroup a row), parameters and bindings.
const SHADERS = {
  rmsNorm: { entries: ['main_rows', 'main'], params: PARAMS, slotCount: SLOTS },
  layerNorm: { entries: ['main', 'main_wg'], params: LAYERNORM_PARAMS, slotCount: LAYERNORM_SLOTS },
};

// Rows up to one block long are normalized an invocation a row: a workgroup
// would spend them waiting at its barriers. Longer rows take a workgroup
// each (a single invocation on a long row may outlast a driver's watchdog).
const SERIAL_DIM = 256;

const MAX_GROUPS = 65535; // maxComputeWorkgroupsPerDimension's guaranteed value

// WebGPU's flags, as they were when the package loaded.
export const { STORAGE, UNIFORM, COPY_SRC, COPY_DST, MAP_READ } = globalThis.GPUBufferUsage ?? {};
export const MAP_MODE_READ = globalThis.GPUMapMode?.READ;

// Every descriptor the package hands WebGPU has a null prototype: WebGPU
// reads a dictionary member the descriptor lacks (an entry's offset, a
// pipeline's constants) through the prototype chain, where a page may have
// put it on Object.prototype.

/** The items of an array as a WebIDL sequence: iterated through an
 * iterator of its own, not Array.prototype's, which a page may have replaced. */
export function sequence(items) {
  let i = 0;
  const next = () => (i < items.length ? { __proto__: null, done: false, value: items[i++] } : { __proto__: null, done: true, value: undefined });
  return { __proto__: null, [ITERATOR]: () => ({ __proto__: null, next }) };
}
const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);
const bitsOfFloat = (v) => {
  f32[0] = v;
  return u32[0];
};

// The roles of a call, in the order overlaps are checked and reported.
// inPlaceOf: the role an output may be exactly (out over x).
const ROLES = {
  x: { writes: false },
  residual: { writes: true },
  weight: { writes: false },
  bias: { writes: false },
  out: { writes: true, inPlaceOf: 'x' },
  mean: { writes: true },
  rstd: { writes: true },
};

// What each function reads of its buffers and params objects: own
// properties only, each once (src/ops/options.js, as the wasm API's options).
const RMSNORM_PARAMS = { rows: undefined, dim: undefined, eps: 1e-6, dtype: 'float32', weightDtype: undefined, castMode: 'llama', weightOffset: 0 };
const readers = {
  rmsNorm: [optionReader({ x: undefined, weight: undefined, out: undefined, rstd: undefined }), optionReader(RMSNORM_PARAMS)],
  addRmsNorm: [optionReader({ x: undefined, residual: undefined, weight: undefined, out: undefined, rstd: undefined }), optionReader(RMSNORM_PARAMS)],
  layerNorm: [optionReader({ x: undefined, weight: undefined, bias: undefined, out: undefined, mean: undefined, rstd: undefined }),
    optionReader({ rows: undefined, dim: undefined, eps: 1e-5 })],
};

function isGpuBuffer(value) {
  return typeof GPUBuffer !== 'undefined' && value instanceof GPUBuffer;
}

function countParam(fn, name, value, least) {
  if (typeof value !== 'number') throw new TypeError(`${fn}: ${name} must be a number, got ${describe(value)}`);
  if (!isSafeInteger(value) || value < least) {
    throw new RangeError(`${fn}: ${name} must be ${least === 0 ? 'a non-negative' : 'a positive'} integer, got ${value}`);
  }
  return value;
}

/** A binding argument: a GPUBuffer or { buffer, offset }, checked for its
 * usage, alignment and size: { name, buffer, start, end, dtype, writes }. */
function measureBinding(fn, name, value, dtype, count, writes) {
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
  const end = offset + count * bytes;
  if (end > buffer.size) {
    throw new RangeError(`${fn}: ${name} needs ${count * bytes} bytes from offset ${offset}, but the buffer has ${buffer.size}`);
  }
  return { name, buffer, start: offset, end, dtype, writes };
}

/** The overlap rule of the wasm API (src/ops/overlap.js): nothing written
 * shares a byte with anything else of the call, except out exactly over x. */
function checkOverlaps(fn, measured) {
  const roles = keys(measured);
  for (let i = 0; i < roles.length; i++) {
    for (let j = i + 1; j < roles.length; j++) {
      const a = measured[roles[i]];
      const b = measured[roles[j]];
      if (!(a.writes || b.writes) || a.buffer !== b.buffer || a.start === a.end || b.start === b.end) continue;
      if (!(a.start < b.end && b.start < a.end)) continue;
      const writer = b.writes ? b : a;
      const other = b.writes ? a : b;
      const inPlace = ROLES[b.writes ? roles[j] : roles[i]].inPlaceOf === (b.writes ? roles[i] : roles[j]);
      if (inPlace && a.start === b.start && a.end === b.end) continue;
      throw new RangeError(inPlace
        ? `${fn}: ${writer.name} must be ${other.name} itself or not overlap ${other.name}`
        : `${fn}: ${writer.name} must not overlap ${other.name}`);
    }
  }
}

/**
 * The bindings of a call: the roles in one GPUBuffer whose bound ranges
 * (from the offset alignment below their first byte to the 4-byte word
 * after their last) would overlap share one. Returns { slots: [{ buffer,
 * offset, size }], roleSlot, roleOffset (in elements of the role's dtype,
 * from its binding's start) }.
 */
function bindingsOf(fn, device, measured) {
  const align = device.limits.minStorageBufferOffsetAlignment;
  const maxSize = device.limits.maxStorageBufferBindingSize;
  const roles = keys(measured);
  let groups = new List();
  for (let i = 0; i < roles.length; i++) {
    const m = measured[roles[i]];
    groups[i] = { buffer: m.buffer, start: m.start - (m.start % align), end: ceil(m.end / 4) * 4, roles: new List(1) };
    groups[i].roles[0] = roles[i];
  }
  for (let merged = true; merged;) {
    merged = false;
    for (let i = 0; i < groups.length && !merged; i++) {
      for (let j = i + 1; j < groups.length && !merged; j++) {
        const a = groups[i];
        const b = groups[j];
        if (a.buffer === b.buffer && a.start < b.end && b.start < a.end) {
          a.start = min(a.start, b.start);
          a.end = max(a.end, b.end);
          for (let k = 0; k < b.roles.length; k++) a.roles[a.roles.length] = b.roles[k];
          const rest = new List();
          for (let k = 0; k < groups.length; k++) if (k !== j) rest[rest.length] = groups[k];
          groups = rest;
          merged = true;
        }
      }
    }
  }
  const roleSlot = { __proto__: null }; // a role not bound reads as undefined, never as a prototype's
  const roleOffset = { __proto__: null };
  const slots = new List();
  for (let slot = 0; slot < groups.length; slot++) {
    const g = groups[slot];
    let names = '';
    for (let k = 0; k < g.roles.length; k++) names += `${k === 0 ? '' : ', '}${measured[g.roles[k]].name}`;
    if (g.end > g.buffer.size) {
      throw new RangeError(`${fn}: the buffer of ${names} is ${g.buffer.size} bytes; WebGPU binds whole 4-byte words, so it must extend to byte ${g.end}`);
    }
    if (g.end - g.start > maxSize) {
      throw new RangeError(`${fn}: ${names} span ${g.end - g.start} bytes of one buffer, beyond the device's maxStorageBufferBindingSize (${maxSize})`);
    }
    for (let k = 0; k < g.roles.length; k++) {
      const r = g.roles[k];
      roleSlot[r] = slot;
      roleOffset[r] = (measured[r].start - g.start) / DTYPE[measured[r].dtype].bytes;
    }
    slots[slot] = { buffer: g.buffer, offset: g.start, size: g.end - g.start };
  }
  return { slots, roleSlot, roleOffset };
}

/**
 * Kernels for `device`: `rmsNorm(encoder, buffers, params)` and
 * `addRmsNorm(encoder, buffers, params)` record into `encoder`; see
 * docs/webgpu.md and ./index.d.ts.
 */
export function createGpuKernels(device) {
  if (typeof GPUDevice === 'undefined' || !(device instanceof GPUDevice)) {
    throw new TypeError(`createGpuKernels: device must be a GPUDevice, got ${describe(device)}`);
  }
  // Built on first use (seconds each on a software adapter): 'main', a
  // workgroup a row; 'main_rows', an invocation a row, for rows of one block.
  // LayerNorm's shader is a module of its own, built only if it is called.
  const pipelines = { __proto__: null };
  const modules = { __proto__: null };
  let spare = null; // a small buffer for each binding a call leaves unused

  function pipelineOf(entryPoint, shader) {
    modules[shader] ??= device.createShaderModule({
      __proto__: null, code: CODE[shader], label: `rmsnorm-wasm exact ${shader}`,
    });
    if (spare === null) {
      spare = new List();
      for (let k = 0; k < max(SLOTS, LAYERNORM_SLOTS); k++) spare[k] = device.createBuffer({ __proto__: null, size: 16, usage: STORAGE });
    }
    const key = `${shader} ${entryPoint}`;
    pipelines[key] ??= device.createComputePipeline({
      __proto__: null, layout: 'auto', compute: { __proto__: null, module: modules[shader], entryPoint },
    });
    return pipelines[key];
  }

  /** One compute pass of `pipe` with the uniform `values` (named by `names`) and `slots` bindings (of `count`). */
  function encodePass(encoder, label, pipe, names, values, slots, count, groups) {
    // A uniform buffer per call, filled at creation: calls recorded into
    // one encoder each keep their own parameters.
    const uniform = device.createBuffer({ __proto__: null, size: names.length * 4, usage: UNIFORM, mappedAtCreation: true });
    const words = new Uint32Array(uniform.getMappedRange());
    for (let i = 0; i < names.length; i++) words[i] = values[names[i]] ?? 0;
    uniform.unmap();
    const entries = new List(count + 1);
    entries[0] = { __proto__: null, binding: 0, resource: { __proto__: null, buffer: uniform, offset: 0, size: names.length * 4 } };
    for (let k = 0; k < count; k++) {
      const b = slots[k] ?? { __proto__: null, buffer: spare[k], offset: 0, size: 16 };
      entries[k + 1] = { __proto__: null, binding: k + 1, resource: { __proto__: null, buffer: b.buffer, offset: b.offset, size: b.size } };
    }
    const bindGroup = device.createBindGroup({ __proto__: null, layout: pipe.getBindGroupLayout(0), entries: sequence(entries) });
    const pass = encoder.beginComputePass({ __proto__: null, label });
    pass.setPipeline(pipe);
    pass.setBindGroup(0, bindGroup);
    pass.dispatchWorkgroups(groups[0], groups[1]);
    pass.end();
  }

  function checkEncoder(fn, encoder, buffers, params) {
    if (typeof GPUCommandEncoder === 'undefined' || !(encoder instanceof GPUCommandEncoder)) {
      throw new TypeError(`${fn}: encoder must be a GPUCommandEncoder, got ${describe(encoder)}`);
    }
    if (buffers === null || typeof buffers !== 'object') throw new TypeError(`${fn}: buffers must be an object, got ${describe(buffers)}`);
    if (params === null || typeof params !== 'object') throw new TypeError(`${fn}: params must be an object, got ${describe(params)}`);
  }

  /** [x, y] workgroups for `groups` in all, within the per-dimension limit. */
  function dispatchSize(fn, groups, rows) {
    const size = [min(groups, MAX_GROUPS), ceil(groups / MAX_GROUPS)];
    if (size[1] > MAX_GROUPS) throw new RangeError(`${fn}: params.rows is too large (${rows})`);
    return size;
  }

  /** Binds `measured` (checked for overlaps) and records one pass of
   * `shader` over `rows` rows: an invocation a row for rows of one block,
   * else a workgroup a row; values(roleSlot, roleOffset, groupsX) gives the
   * pass's parameters. A call of no rows binds and records nothing more. */
  function encodeRows(fn, encoder, shader, measured, rows, dim, values) {
    checkOverlaps(fn, measured);
    const { slots, roleSlot, roleOffset } = bindingsOf(fn, device, measured);
    if (rows === 0) return;
    const perInvocation = dim <= SERIAL_DIM;
    const groups = dispatchSize(fn, perInvocation ? ceil(rows / WORKGROUP_SIZE) : rows, rows);
    const { entries, params, slotCount } = SHADERS[shader];
    encodePass(encoder, `rmsnorm-wasm ${fn}`, pipelineOf(entries[perInvocation ? 0 : 1], shader), params,
      values(roleSlot, roleOffset, groups[0]), slots, slotCount, groups);
  }

  function recordLayerNorm(encoder, given, options) {
    const fn = 'layerNorm';
    checkEncoder(fn, encoder, given, options);
    const buffers = readers[fn][0](fn, given, 'buffers');
    const params = readers[fn][1](fn, options, 'params');
    const rows = countParam(fn, 'params.rows', params.rows, 0);
    const dim = countParam(fn, 'params.dim', params.dim, 1);
    const eps = float32Param(fn, 'params.eps', params.eps, 1e-5, true);
    if (!isSafeInteger(rows * dim)) throw new RangeError(`${fn}: params.rows * params.dim (${rows * dim}) is too large`);
    if (buffers.out == null && buffers.mean == null && buffers.rstd == null) {
      throw new TypeError(`${fn}: buffers.out, buffers.mean or buffers.rstd is required`);
    }
    const n = rows * dim;
    // Null-prototype: a role not given reads as undefined, and is set as an own key.
    const measured = { __proto__: null, x: measureBinding(fn, 'buffers.x', buffers.x, 'float32', n, false) };
    if (buffers.weight != null) measured.weight = measureBinding(fn, 'buffers.weight', buffers.weight, 'float32', dim, false);
    if (buffers.bias != null) measured.bias = measureBinding(fn, 'buffers.bias', buffers.bias, 'float32', dim, false);
    if (buffers.out != null) measured.out = measureBinding(fn, 'buffers.out', buffers.out, 'float32', n, true);
    if (buffers.mean != null) measured.mean = measureBinding(fn, 'buffers.mean', buffers.mean, 'float32', rows, true);
    if (buffers.rstd != null) measured.rstd = measureBinding(fn, 'buffers.rstd', buffers.rstd, 'float32', rows, true);
    encodeRows(fn, encoder, 'layerNorm', measured, rows, dim, (roleSlot, roleOffset, groupsX) => ({
      __proto__: null, rows, dim, dim_f32: bitsOfFloat(dim), eps: bitsOfFloat(eps), groups_x: groupsX,
      has_weight: measured.weight ? 1 : 0, has_bias: measured.bias ? 1 : 0, has_out: measured.out ? 1 : 0,
      has_mean: measured.mean ? 1 : 0, has_rstd: measured.rstd ? 1 : 0,
      x_slot: roleSlot.x, w_slot: roleSlot.weight, b_slot: roleSlot.bias, y_slot: roleSlot.out, m_slot: roleSlot.mean, s_slot: roleSlot.rstd,
      x_off: roleOffset.x, w_off: roleOffset.weight, b_off: roleOffset.bias, y_off: roleOffset.out, m_off: roleOffset.mean, s_off: roleOffset.rstd,
    }));
  }

  function record(fn, encoder, given, options, withResidual) {
    checkEncoder(fn, encoder, given, options);
    const buffers = readers[fn][0](fn, given, 'buffers');
    const params = readers[fn][1](fn, options, 'params');
    const rows = countParam(fn, 'params.rows', params.rows, 0);
    const dim = countParam(fn, 'params.dim', params.dim, 1);
    const dtype = oneOf(fn, 'params.dtype', params.dtype, DTYPES, 'float32');
    const hasWeight = buffers.weight != null;
    if (!hasWeight && params.weightDtype !== undefined) throw new TypeError(`${fn}: params.weightDtype needs a weight, but buffers.weight is ${describe(buffers.weight)}`);
    if (!hasWeight && params.weightOffset !== undefined) throw new TypeError(`${fn}: params.weightOffset needs a weight, but buffers.weight is ${describe(buffers.weight)}`);
    const weightDtype = hasWeight ? oneOf(fn, 'params.weightDtype', params.weightDtype, DTYPES, dtype) : null;
    const eps = float32Param(fn, 'params.eps', params.eps, 1e-6, true);
    const castMode = oneOf(fn, 'params.castMode', params.castMode, CAST_MODES, 'llama');
    const weightOffset = float32Param(fn, 'params.weightOffset', params.weightOffset, 0, false);
    if (!isSafeInteger(rows * dim)) throw new RangeError(`${fn}: params.rows * params.dim (${rows * dim}) is too large`);
    if (buffers.out == null && buffers.rstd == null && !withResidual) {
      throw new TypeError(`${fn}: buffers.out or buffers.rstd is required`);
    }
    const n = rows * dim;
    const measured = { __proto__: null, x: measureBinding(fn, 'buffers.x', buffers.x, dtype, n, false) };
    if (withResidual) measured.residual = measureBinding(fn, 'buffers.residual', buffers.residual, dtype, n, true);
    if (hasWeight) measured.weight = measureBinding(fn, 'buffers.weight', buffers.weight, weightDtype, dim, false);
    if (buffers.out != null) measured.out = measureBinding(fn, 'buffers.out', buffers.out, dtype, n, true);
    if (buffers.rstd != null) measured.rstd = measureBinding(fn, 'buffers.rstd', buffers.rstd, 'float32', rows, true);
    encodeRows(fn, encoder, 'rmsNorm', measured, rows, dim, (roleSlot, roleOffset, groupsX) => ({
      __proto__: null, rows, dim, dim_f32: bitsOfFloat(dim), eps: bitsOfFloat(eps), weight_offset: bitsOfFloat(weightOffset),
      cast_gemma: CAST_MODE[castMode] === CAST_MODE.gemma ? 1 : 0, groups_x: groupsX,
      dtype: DTYPE[dtype].code, weight_dtype: hasWeight ? DTYPE[weightDtype].code : NO_WEIGHT,
      has_residual: withResidual ? 1 : 0, has_out: measured.out ? 1 : 0, has_rstd: measured.rstd ? 1 : 0,
      x_slot: roleSlot.x, r_slot: roleSlot.residual, w_slot: roleSlot.weight, y_slot: roleSlot.out, s_slot: roleSlot.rstd,
      x_off: roleOffset.x, r_off: roleOffset.residual, w_off: roleOffset.weight, y_off: roleOffset.out, s_off: roleOffset.rstd,
    }));
  }

  return Object.freeze({
    device,
    /** Records RMSNorm of buffers.x into buffers.out (and/or 1/rms into buffers.rstd). */
    rmsNorm: (encoder, buffers, params) => record('rmsNorm', encoder, buffers, params, false),
    /** Records residual <- round(x + residual), then RMSNorm of it into buffers.out / buffers.rstd. */
    addRmsNorm: (encoder, buffers, params) => record('addRmsNorm', encoder, buffers, params, true),
    /** Records LayerNorm (float32) of buffers.x into buffers.out, and/or the statistics into buffers.mean / buffers.rstd. */
    layerNorm: (encoder, buffers, params) => recordLayerNorm(encoder, buffers, params),
  });
}
