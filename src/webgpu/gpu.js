// WebGPU's methods, getters and limits as they were when the package
// loaded, as src/loader/intrinsics.js saves the language's built-ins: after
// load the backend calls only these, so a page that replaces
// GPUQueue.prototype.writeBuffer, a pass's dispatchWorkgroups or a
// GPUSupportedLimits getter changes nothing the backend records, reads or
// sizes (docs/api.md, "Threat model"). Where the engine has no WebGPU
// (Node), every one is a function that throws: no device can reach them.
//
// The saved getters are also the brand checks: a getter of a WebIDL
// interface throws for any object the engine did not make as one, so an
// `Object.create(GPUBuffer.prototype)` is told apart from a GPUBuffer.

import { TypeError } from '../loader/intrinsics.js';

const { call, bind } = Function.prototype;
const uncurryThis = bind.bind(call);
const descriptor = Object.getOwnPropertyDescriptor;
const absent = () => {
  throw new TypeError('rmsnorm-wasm/webgpu: this engine had no WebGPU when the package loaded');
};

/** The interface `name`'s prototype, or null where the engine has none. */
const prototypeOf = (name) => globalThis[name]?.prototype ?? null;
const method = (name, key) => {
  const f = prototypeOf(name)?.[key];
  return typeof f === 'function' ? uncurryThis(f) : absent;
};
const getter = (name, key) => {
  const prototype = prototypeOf(name);
  const get = prototype === null ? undefined : descriptor(prototype, key)?.get;
  return get === undefined ? absent : uncurryThis(get);
};

export const createBuffer = method('GPUDevice', 'createBuffer');
export const createShaderModule = method('GPUDevice', 'createShaderModule');
export const createComputePipeline = method('GPUDevice', 'createComputePipeline');
export const createComputePipelineAsync = method('GPUDevice', 'createComputePipelineAsync');
export const createBindGroup = method('GPUDevice', 'createBindGroup');
export const createCommandEncoder = method('GPUDevice', 'createCommandEncoder');
export const queueOf = getter('GPUDevice', 'queue');
export const limitsOf = getter('GPUDevice', 'limits');
export const lostOf = getter('GPUDevice', 'lost');
const deviceLabel = getter('GPUDevice', 'label');
// Newer engines only; where missing, the layout treats the device as a GPU.
const adapterInfoGetter = getter('GPUDevice', 'adapterInfo');
export const adapterInfoOf = (device) => (adapterInfoGetter === absent ? undefined : adapterInfoGetter(device));

export const writeBuffer = method('GPUQueue', 'writeBuffer');
export const submit = method('GPUQueue', 'submit');

export const mapAsync = method('GPUBuffer', 'mapAsync');
export const getMappedRange = method('GPUBuffer', 'getMappedRange');
export const unmap = method('GPUBuffer', 'unmap');
export const destroyBuffer = method('GPUBuffer', 'destroy');
export const sizeOf = getter('GPUBuffer', 'size');
export const usageOf = getter('GPUBuffer', 'usage');
export const mapStateOf = getter('GPUBuffer', 'mapState');

export const beginComputePass = method('GPUCommandEncoder', 'beginComputePass');
export const copyBufferToBuffer = method('GPUCommandEncoder', 'copyBufferToBuffer');
export const finish = method('GPUCommandEncoder', 'finish');
const commandEncoderLabel = getter('GPUCommandEncoder', 'label');

export const setPipeline = method('GPUComputePassEncoder', 'setPipeline');
export const setBindGroup = method('GPUComputePassEncoder', 'setBindGroup');
export const dispatchWorkgroups = method('GPUComputePassEncoder', 'dispatchWorkgroups');
export const endPass = method('GPUComputePassEncoder', 'end');
const passEncoderLabel = getter('GPUComputePassEncoder', 'label');

export const getBindGroupLayout = method('GPUComputePipeline', 'getBindGroupLayout');

export const maxStorageBufferBindingSizeOf = getter('GPUSupportedLimits', 'maxStorageBufferBindingSize');
export const minStorageBufferOffsetAlignmentOf = getter('GPUSupportedLimits', 'minStorageBufferOffsetAlignment');

/** Whether the saved getter `get` accepts `value`: an object the engine made as that interface. */
function isBrand(get, value) {
  if (get === absent || value === null || typeof value !== 'object') return false;
  try {
    get(value);
    return true;
  } catch {
    return false;
  }
}

export const isGpuDevice = (value) => isBrand(deviceLabel, value);
export const isGpuBuffer = (value) => isBrand(sizeOf, value);
export const isCommandEncoder = (value) => isBrand(commandEncoderLabel, value);
export const isPassEncoder = (value) => isBrand(passEncoderLabel, value);
