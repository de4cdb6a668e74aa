// The device form of the WebGPU backend: kernels for a caller's GPUDevice
// that take GPUBuffers (with byte offsets) and record into the caller's
// GPUCommandEncoder or open GPUComputePassEncoder, so an engine puts the
// norm between its own passes with no readback. Every argument is checked
// before anything is recorded or created; a bad call records nothing.
//
// Two ways to call (docs/webgpu.md): `gpu.rmsNorm(encoder, buffers,
// params)` checks, lays out and records at once (building its pipelines
// synchronously the first time); `await gpu.rmsNorm.prepare(buffers,
// params)` does all of that once, compiling asynchronously, and returns a
// call whose run(encoder) only records: no check, no buffer, no bind group.
import { DTYPE } from '../loader/abi.js';
import { ceil, defineProperty, Float32Array, freeze, ITERATOR, List, ownWeakMap, promiseThen, setPrototypeOf, TypeError, Uint32Array } from '../loader/intrinsics.js';
import { describe } from '../ops/options.js';
import { readCall, STORAGE, UNIFORM } from './args.js';
import {
  adapterInfoOf, beginComputePass, createBindGroup, createBuffer, createComputePipeline, createComputePipelineAsync, createShaderModule, destroyBuffer,
  dispatchWorkgroups, endPass, getBindGroupLayout, getMappedRange, isCommandEncoder, isGpuDevice, isPassEncoder, limitsOf, maxStorageBufferBindingSizeOf,
  minStorageBufferOffsetAlignmentOf, setBindGroup, setPipeline, sizeOf, unmap,
} from './gpu.js';
import { LAYERNORM_PARAMS, layerNormShader } from './layernorm-shader.js';
import { dispatchSize, fastBound, keyOf, layerNormLayout, rmsNormLayout } from './layout.js';
import { PARAMS, PROLOGUE_PARAMS, prologueShader, rmsNormShader } from './rmsnorm-shader.js';
import { WORKGROUP_SIZE } from './wgsl.js';

export { COPY_DST, COPY_SRC, MAP_MODE_READ, MAP_READ, STORAGE } from './args.js';

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

// Pipelines by device, then by variant key: built once per device, whoever
// asks. An entry holds the pipeline once built, and the promise of an
// asynchronous build under way.
const PIPELINES = ownWeakMap();


function checkEncoder(fn, encoder) {
  if (!isCommandEncoder(encoder) && !isPassEncoder(encoder)) {
    throw new TypeError(`${fn}: encoder must be a GPUCommandEncoder or a GPUComputePassEncoder, got ${describe(encoder)}`);
  }
}

/** Where the device runs compute: 'gpu', or on the CPU (a software
 * adapter), 'swiftshader' or 'cpu' for any other (lavapipe): rows then go
 * an invocation each (./layout.js, teamOf). */
function adapterOf(device) {
  const info = adapterInfoOf(device);
  if (info == null) return 'gpu';
  if (info.architecture === 'swiftshader') return 'swiftshader';
  return info.isFallbackAdapter === true || info.device === 'llvmpipe' || info.description === 'llvmpipe' ? 'cpu' : 'gpu';
}

/** One dispatch of a prepared call: its pipeline, bind group and size. */
class Dispatch {
  constructor(pipeline, bindGroup, groups) {
    this.pipeline = pipeline;
    this.bindGroup = bindGroup;
    this.groups = groups;
  }
}
setPrototypeOf(Dispatch.prototype, null);

/**
 * A call checked, laid out and bound once: run(encoder) records its
 * dispatches into a GPUCommandEncoder (a compute pass of its own) or into
 * the caller's open GPUComputePassEncoder (whose pipeline and bind group 0
 * it then leaves set to its own); destroy() frees its uniform and scratch
 * buffers. Its buffers' contents are read when the GPU runs it, not when
 * it was prepared.
 */
class PreparedCall {
  constructor(fn, dispatches, owned) {
    this.fn = fn;
    this.dispatches = dispatches;
    this.owned = owned;
    this.destroyed = false;
  }
}
setPrototypeOf(PreparedCall.prototype, null);

function runPrepared(p, encoder) {
  if (p.destroyed) throw new TypeError(`${p.fn}: this prepared call was destroyed`);
  checkEncoder(p.fn, encoder);
  if (p.dispatches.length === 0) return;
  const own = isCommandEncoder(encoder);
  const pass = own ? beginComputePass(encoder, { __proto__: null, label: `rmsnorm-wasm ${p.fn}` }) : encoder;
  for (let i = 0; i < p.dispatches.length; i++) {
    const d = p.dispatches[i];
    setPipeline(pass, d.pipeline);
    setBindGroup(pass, 0, d.bindGroup);
    dispatchWorkgroups(pass, d.groups[0], d.groups[1]);
  }
  if (own) endPass(pass);
}

/** The public face of a prepared call (frozen, its state private). */
function preparedFace(state) {
  return freeze({
    __proto__: null,
    /** Records the call into a GPUCommandEncoder or an open GPUComputePassEncoder. */
    run: (encoder) => runPrepared(state, encoder),
    /** Frees the uniform and scratch buffers this call made (after the last
     * submit that uses them); run() then throws. */
    destroy() {
      if (state.destroyed) return;
      state.destroyed = true;
      for (let i = 0; i < state.owned.length; i++) destroyBuffer(state.owned[i]);
    },
  });
}

/**
 * Kernels for `device`; see docs/webgpu.md and ./index.d.ts. options:
 * onProgress({ compiled, total, label }), called as pipelines start and
 * finish compiling; invocationsPerRow: 'auto' (default), 1, 4, 16 or 64.
 */
export function createGpuKernels(device, options) {
  if (!isGpuDevice(device)) {
    throw new TypeError(`createGpuKernels: device must be a GPUDevice, got ${describe(device)}`);
  }
  let onProgress = null;
  let invocationsPerRow = 'auto';
  if (options !== undefined) {
    if (options === null || typeof options !== 'object') throw new TypeError(`createGpuKernels: options must be an object, got ${describe(options)}`);
    const given = options.onProgress;
    if (given !== undefined && typeof given !== 'function') throw new TypeError(`createGpuKernels: options.onProgress must be a function, got ${describe(given)}`);
    onProgress = given ?? null;
    const ipr = options.invocationsPerRow;
    if (ipr !== undefined && ipr !== 'auto' && ipr !== 1 && ipr !== 4 && ipr !== 16 && ipr !== 64) {
      throw new TypeError(`createGpuKernels: options.invocationsPerRow must be 'auto', 1, 4, 16 or 64, got ${describe(ipr)}`);
    }
    invocationsPerRow = ipr ?? 'auto';
  }
  const adapter = adapterOf(device);
  // What the layout needs of the device's limits, read once: a device's limits never change.
  const deviceLimits = limitsOf(device);
  const limits = {
    __proto__: null, align: minStorageBufferOffsetAlignmentOf(deviceLimits), maxSize: maxStorageBufferBindingSizeOf(deviceLimits),
  };
  let pipelines = PIPELINES.get(device);
  if (pipelines === undefined) {
    pipelines = { __proto__: null };
    PIPELINES.set(device, pipelines);
  }
  const progress = { __proto__: null, compiled: 0, total: 0 };
  const report = (label) => {
    if (onProgress !== null) onProgress({ __proto__: null, compiled: progress.compiled, total: progress.total, label });
  };

  function descriptor(key, code) {
    const module = createShaderModule(device, { __proto__: null, code, label: `rmsnorm-wasm ${key}` });
    return { __proto__: null, layout: 'auto', label: `rmsnorm-wasm ${key}`, compute: { __proto__: null, module, entryPoint: 'main' } };
  }

  /** The pipeline of `key` now (compiled here if no build has finished). */
  function pipelineNow(key, code) {
    const entry = pipelines[key];
    if (entry !== undefined && entry.pipeline !== null) return entry.pipeline;
    const pipeline = createComputePipeline(device, descriptor(key, code()));
    pipelines[key] = { __proto__: null, pipeline, promise: null };
    return pipeline;
  }

  /** The pipeline of `key`, or the promise of it, compiled asynchronously once. */
  function pipelineLater(key, code) {
    const entry = pipelines[key];
    if (entry !== undefined) return entry.pipeline !== null ? entry.pipeline : entry.promise;
    progress.total++;
    report(key);
    const promise = promiseThen(createComputePipelineAsync(device, descriptor(key, code())), (pipeline) => {
      pipelines[key] = { __proto__: null, pipeline, promise: null };
      progress.compiled++;
      report(key);
      return pipeline;
    }, (error) => {
      delete pipelines[key];
      throw error;
    });
    pipelines[key] = { __proto__: null, pipeline: null, promise };
    return promise;
  }

  /** A uniform buffer holding `values` (named by `names`), filled at creation. */
  function uniformOf(names, values) {
    const buffer = createBuffer(device, { __proto__: null, size: names.length * 4, usage: UNIFORM, mappedAtCreation: true });
    const words = new Uint32Array(getMappedRange(buffer));
    for (let i = 0; i < names.length; i++) words[i] = values[names[i]] ?? 0;
    unmap(buffer);
    return buffer;
  }

  function bindGroupOf(pipeline, entries) {
    const list = new List(entries.length);
    for (let i = 0; i < entries.length; i++) {
      const e = entries[i];
      list[i] = { __proto__: null, binding: i, resource: { __proto__: null, buffer: e.buffer, offset: e.offset, size: e.size } };
    }
    return createBindGroup(device, { __proto__: null, layout: getBindGroupLayout(pipeline, 0), entries: sequence(list) });
  }
  const whole = (buffer) => ({ __proto__: null, buffer, offset: 0, size: sizeOf(buffer) });

  /** What an RMSNorm call needs built: its layout and its pipelines' keys and code. */
  function planRms(fn, buffers, params) {
    const call = readCall(fn, buffers, params);
    const layout = rmsNormLayout(call, limits, adapter, invocationsPerRow);
    const { variant } = layout;
    const plan = { __proto__: null, fn, call, layout, keys: new List(), codes: new List() };
    if (call.rows === 0) return plan;
    if (layout.prologue !== null) {
      const prologue = { __proto__: null, program: 'prologue', dtype: DTYPE[call.weightDtype].code };
      plan.keys[0] = keyOf(prologue);
      plan.codes[0] = () => prologueShader(prologue.dtype);
    }
    plan.keys[plan.keys.length] = keyOf(variant);
    plan.codes[plan.codes.length] = () => rmsNormShader(variant);
    return plan;
  }

  function planLayerNorm(buffers, params) {
    const call = readCall('layerNorm', buffers, params);
    const layout = layerNormLayout(call, limits);
    const plan = { __proto__: null, fn: 'layerNorm', call, layout, keys: new List(), codes: new List() };
    if (call.rows === 0) return plan;
    plan.keys[0] = keyOf(layout.variant);
    plan.codes[0] = () => layerNormShader(layout.variant);
    return plan;
  }

  /** The bound dispatches of a plan, with its pipelines built: uniform and
   * scratch buffers made, bind groups made, once. */
  function bind(plan, built) {
    const { fn, call, layout } = plan;
    const dispatches = new List();
    const owned = new List();
    if (call.rows === 0) return new PreparedCall(fn, dispatches, owned);
    const { roles, bindings, groups } = layout;
    const off = (key) => (roles[key] === undefined ? 0 : roles[key].offset);
    const main = built[built.length - 1];
    const entries = new List();
    if (fn === 'layerNorm') {
      const uniform = uniformOf(LAYERNORM_PARAMS, {
        __proto__: null, rows: call.rows, dim: call.dim, dim_f32: bitsOfFloat(call.dim), eps: bitsOfFloat(call.eps), groups_x: groups[0],
        x_off: off('x'), x_stride: call.stride, w_off: off('weight'), b_off: off('bias'), y_off: off('out'), y_stride: call.stride,
        m_off: off('mean'), s_off: off('rstd'),
      });
      owned[0] = uniform;
      entries[0] = whole(uniform);
      for (let k = 0; k < bindings.length; k++) entries[k + 1] = bindings[k];
      dispatches[0] = new Dispatch(main, bindGroupOf(main, entries), groups);
      return new PreparedCall(fn, dispatches, owned);
    }
    const uniform = uniformOf(PARAMS, {
      __proto__: null, rows: call.rows, dim: call.dim, dim_f32: bitsOfFloat(call.dim), eps: bitsOfFloat(call.eps), groups_x: groups[0],
      x_hi: fastBound(call.dim), x_off: off('x'), x_stride: call.stride, r_off: off('residual'), r_stride: call.stride,
      y_off: off('out'), y_stride: call.stride, s_off: off('rstd'), w_off: off('weight'),
    });
    owned[0] = uniform;
    entries[0] = whole(uniform);
    for (let k = 0; k < bindings.length; k++) entries[k + 1] = bindings[k];
    if (layout.prologue !== null) {
      // w' = weight_offset + w: made by the prologue on every run, from the weight as it is then.
      const wv = createBuffer(device, { __proto__: null, size: call.dim * 4, usage: STORAGE, label: `rmsnorm-wasm ${fn} w'` });
      const proGroups = dispatchSize(fn, ceil(call.dim / WORKGROUP_SIZE), call.rows);
      const pro = uniformOf(PROLOGUE_PARAMS, {
        __proto__: null, dim: call.dim, w_off: layout.prologue.offset, weight_offset: bitsOfFloat(call.weightOffset), groups_x: proGroups[0],
      });
      owned[1] = pro;
      owned[2] = wv;
      const proEntries = new List(3);
      proEntries[0] = whole(pro);
      proEntries[1] = layout.prologue.binding;
      proEntries[2] = whole(wv);
      dispatches[0] = new Dispatch(built[0], bindGroupOf(built[0], proEntries), proGroups);
      entries[bindings.length] = whole(wv); // the main pass's last binding
    }
    dispatches[dispatches.length] = new Dispatch(main, bindGroupOf(main, entries), groups);
    return new PreparedCall(fn, dispatches, owned);
  }

  function prepareNow(plan) {
    const built = new List(plan.keys.length);
    for (let i = 0; i < plan.keys.length; i++) built[i] = pipelineNow(plan.keys[i], plan.codes[i]);
    return bind(plan, built);
  }

  async function prepareLater(plan) {
    const pending = new List(plan.keys.length);
    for (let i = 0; i < plan.keys.length; i++) pending[i] = pipelineLater(plan.keys[i], plan.codes[i]);
    const built = new List(pending.length);
    for (let i = 0; i < pending.length; i++) built[i] = await pending[i];
    return bind(plan, built);
  }

  function fnOf(fn, planOf) {
    const record = (encoder, buffers, params) => {
      checkEncoder(fn, encoder);
      runPrepared(prepareNow(planOf(buffers, params)), encoder);
    };
    defineProperty(record, 'prepare', {
      __proto__: null,
      value: async (buffers, params) => preparedFace(await prepareLater(planOf(buffers, params))),
    });
    return freeze(record);
  }

  return freeze({
    __proto__: null,
    device,
    /** Records RMSNorm of buffers.x into buffers.out (and/or 1/rms into buffers.rstd). */
    rmsNorm: fnOf('rmsNorm', (b, p) => planRms('rmsNorm', b, p)),
    /** Records residual <- round(x + residual), then RMSNorm of it into buffers.out / buffers.rstd. */
    addRmsNorm: fnOf('addRmsNorm', (b, p) => planRms('addRmsNorm', b, p)),
    /** Records LayerNorm (float32) of buffers.x into buffers.out, and/or the statistics into buffers.mean / buffers.rstd. */
    layerNorm: fnOf('layerNorm', (b, p) => planLayerNorm(b, p)),
  });
}
