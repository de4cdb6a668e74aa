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
import { defineProperty, freeze, ITERATOR, List, ownWeakMap, promiseThen, setPrototypeOf, TypeError, Uint32Array } from '../loader/intrinsics.js';
import { describe } from '../ops/options.js';
import { readCall, STORAGE, UNIFORM } from './args.js';
import {
  adapterInfoOf, beginComputePass, createBindGroup, createBuffer, createComputePipeline, createComputePipelineAsync, createShaderModule, destroyBuffer,
  dispatchWorkgroups, endPass, getBindGroupLayout, getMappedRange, isCommandEncoder, isGpuDevice, isPassEncoder, limitsOf, maxStorageBufferBindingSizeOf,
  minStorageBufferOffsetAlignmentOf, setBindGroup, setPipeline, sizeOf, unmap,
} from './gpu.js';
import { FORM_NAMES, FORMS } from './programs/index.js';

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
 * an invocation each (./programs/layout.js, teamOf). */
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

  /** A call of `form` ({ op, program }) checked, laid out and planned: its passes and scratch buffers. */
  function planOf(form, fn, buffers, params) {
    const call = readCall(fn, buffers, params);
    const { program } = form;
    const layout = program.layout(call, limits, adapter, invocationsPerRow);
    const none = call.rows === 0;
    return { __proto__: null, fn, passes: none ? new List() : program.passes(call, layout), scratch: none ? new List() : program.scratch(call, layout) };
  }

  /** The bound dispatches of a plan, with its pipelines built: its scratch
   * and uniform buffers made, its bind groups made, once. */
  function bind(plan, built) {
    const { fn, passes, scratch } = plan;
    const dispatches = new List(passes.length);
    const owned = new List();
    const made = new List(scratch.length);
    for (let k = 0; k < scratch.length; k++) {
      made[k] = createBuffer(device, { __proto__: null, size: scratch[k].size, usage: STORAGE, label: `rmsnorm-wasm ${fn} ${scratch[k].label}` });
      owned[owned.length] = made[k];
    }
    for (let i = 0; i < passes.length; i++) {
      const pass = passes[i];
      const uniform = uniformOf(pass.names, pass.values);
      owned[owned.length] = uniform;
      const entries = new List(pass.entries.length + 1);
      entries[0] = whole(uniform);
      for (let k = 0; k < pass.entries.length; k++) {
        const e = pass.entries[k];
        entries[k + 1] = e.scratch === undefined ? e : whole(made[e.scratch]);
      }
      dispatches[i] = new Dispatch(built[i], bindGroupOf(built[i], entries), pass.groups);
    }
    return new PreparedCall(fn, dispatches, owned);
  }

  function prepareNow(plan) {
    const { passes } = plan;
    const built = new List(passes.length);
    for (let i = 0; i < passes.length; i++) built[i] = pipelineNow(passes[i].key, passes[i].code);
    return bind(plan, built);
  }

  async function prepareLater(plan) {
    const { passes } = plan;
    const pending = new List(passes.length);
    for (let i = 0; i < passes.length; i++) pending[i] = pipelineLater(passes[i].key, passes[i].code);
    const built = new List(pending.length);
    for (let i = 0; i < pending.length; i++) built[i] = await pending[i];
    return bind(plan, built);
  }

  function fnOf(fn) {
    const form = FORMS[fn];
    const record = (encoder, buffers, params) => {
      checkEncoder(fn, encoder);
      runPrepared(prepareNow(planOf(form, fn, buffers, params)), encoder);
    };
    defineProperty(record, 'prepare', {
      __proto__: null,
      value: async (buffers, params) => preparedFace(await prepareLater(planOf(form, fn, buffers, params))),
    });
    return freeze(record);
  }

  // { device, rmsNorm, addRmsNorm, layerNorm }: each form of every program
  // (./programs/) records its call into the caller's encoder or pass.
  const kernels = { __proto__: null, device };
  for (let i = 0; i < FORM_NAMES.length; i++) kernels[FORM_NAMES[i]] = fnOf(FORM_NAMES[i]);
  return freeze(kernels);
}
