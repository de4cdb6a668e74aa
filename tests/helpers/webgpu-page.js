// The page side of the WebGPU tests and the tutorial's checks: runs calls
// sent from Node (inputs as base64 bits) through the array form of the
// backend and sends the outputs back the same way.
/* global GPUBufferUsage, GPUMapMode -- this module runs in the page */
import { createArrayKernels, createGpuKernels } from '../../src/webgpu/index.js';

export function toBase64(view) {
  const bytes = new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
  let text = '';
  for (let i = 0; i < bytes.length; i += 0x8000) text += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(text);
}

export function fromBase64(text, kind) {
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return kind === 'float32' ? new Float32Array(bytes.buffer) : new Uint16Array(bytes.buffer);
}

let opened = null;

/** The page's device on the default adapter (one for every call: each new
 * device would build its pipelines again), with the adapter's description
 * and the backend's kernels for it. */
export function openDevice() {
  opened ??= requestDevice();
  return opened;
}

async function requestDevice() {
  if (!navigator.gpu) throw new Error('navigator.gpu is undefined: this engine has no WebGPU');
  const adapter = await navigator.gpu.requestAdapter();
  if (!adapter) throw new Error('navigator.gpu.requestAdapter() gave no adapter');
  const device = await adapter.requestDevice();
  const info = adapter.info ?? {};
  const kernels = createGpuKernels(device);
  return {
    device, kernels, arrays: createArrayKernels(kernels),
    adapter: [info.vendor, info.architecture, info.device, info.description].filter(Boolean).join(' ') || 'unnamed adapter',
  };
}

/**
 * Runs each call { fn, x, residual, weight, kinds: { x, weight }, options:
 * { ..., rstd: rows or absent, out: 'x' for in place } } and returns
 * { out, residual, rstd } as base64, or { error } for a GPU validation error.
 */
export async function runCalls(calls) {
  const { device, adapter, arrays } = await openDevice();
  // Every call at once (each its own submit and readback): the waits for
  // the GPU overlap. A validation error fails the batch.
  const errors = [];
  const onError = (event) => errors.push(event.error.message);
  device.addEventListener('uncapturederror', onError);
  const results = await Promise.all(calls.map(async (call) => {
    const x = fromBase64(call.x, call.kinds.x);
    const weight = call.weight === null ? null : fromBase64(call.weight, call.kinds.weight);
    const options = { ...call.options };
    if (options.rstd !== undefined) options.rstd = new Float32Array(options.rstd);
    if (options.mean !== undefined) options.mean = new Float32Array(options.mean);
    if (options.out === 'x') options.out = x;
    let out;
    let residual;
    if (call.fn === 'layerNorm') {
      const bias = call.bias === null ? null : fromBase64(call.bias, 'float32');
      out = await arrays.layerNorm(x, weight, bias, options);
    } else if (call.fn === 'addRmsNorm') {
      residual = fromBase64(call.residual, call.kinds.x);
      out = await arrays.addRmsNorm(x, residual, weight, options);
    } else {
      out = await arrays.rmsNorm(x, weight, options);
    }
    return {
      out: toBase64(out),
      residual: residual && toBase64(residual),
      rstd: options.rstd && toBase64(options.rstd),
      mean: options.mean && toBase64(options.mean),
    };
  }));
  await device.queue.onSubmittedWorkDone();
  device.removeEventListener('uncapturederror', onError);
  return { adapter, errors, results };
}

/**
 * The device form on caller buffers: each group of roles (['x', 'out'], ...)
 * gets a GPUBuffer holding a copy of `arena` (base64), each role its byte
 * offset in it; records `fn` with `params` into an encoder and returns each
 * buffer's bytes afterwards (base64), or { error } for a validation error.
 */
export async function runOnBuffers({ fn, arena, groups, offsets, params }) {
  const { device, kernels: gpu } = await openDevice();
  const bytes = fromBase64(arena, 'uint16');
  const usage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC;
  const made = groups.map(() => {
    const buffer = device.createBuffer({ size: bytes.byteLength, usage, mappedAtCreation: true });
    new Uint8Array(buffer.getMappedRange()).set(new Uint8Array(bytes.buffer));
    buffer.unmap();
    return buffer;
  });
  const buffers = {};
  groups.forEach((roles, g) => {
    for (const role of roles) buffers[role] = { buffer: made[g], offset: offsets[role] };
  });
  device.pushErrorScope('validation');
  const encoder = device.createCommandEncoder();
  gpu[fn](encoder, buffers, params);
  const reads = made.map((buffer) => {
    const read = device.createBuffer({ size: bytes.byteLength, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
    encoder.copyBufferToBuffer(buffer, 0, read, 0, bytes.byteLength);
    return read;
  });
  device.queue.submit([encoder.finish()]);
  const error = await device.popErrorScope();
  if (error) return { error: error.message };
  const result = [];
  for (const read of reads) {
    await read.mapAsync(GPUMapMode.READ);
    result.push(toBase64(new Uint8Array(read.getMappedRange().slice(0))));
    read.destroy();
  }
  for (const buffer of made) buffer.destroy();
  return { buffers: result };
}

/**
 * Each mistake of `mistakes` (names of BAD_CALLS) made on the device form,
 * each into its own encoder, then every encoder submitted: returns
 * [{ name, error: 'TypeError: message' or null }] and whether the output
 * buffer kept its bytes (nothing was recorded).
 */
export async function deviceMistakes() {
  const { device, kernels } = await openDevice();
  const S = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;
  const buffer = (size, usage = S) => device.createBuffer({ size, usage });
  const x = buffer(256);
  const weight = buffer(64);
  const out = buffer(256);
  const rstd = buffer(16);
  const residual = buffer(256);
  const mapped = device.createBuffer({ size: 64, usage: GPUBufferUsage.STORAGE, mappedAtCreation: true });
  const sentinel = new Uint8Array(256).fill(0xa5);
  device.queue.writeBuffer(out, 0, sentinel);
  const good = { x, weight, out, rstd };
  const params = { rows: 4, dim: 16 };
  const calls = {
    'encoder not an encoder': () => kernels.rmsNorm({}, good, params),
    'x a typed array': (e) => kernels.rmsNorm(e, { ...good, x: new Float32Array(64) }, params),
    'x offset not a multiple of 4': (e) => kernels.rmsNorm(e, { ...good, x: { buffer: x, offset: 2 } }, params),
    'x offset not a number': (e) => kernels.rmsNorm(e, { ...good, x: { buffer: x, offset: '0' } }, params),
    'x without STORAGE usage': (e) => kernels.rmsNorm(e, { ...good, x: buffer(256, GPUBufferUsage.COPY_DST) }, params),
    'out too small from its offset': (e) => kernels.rmsNorm(e, { ...good, out: { buffer: out, offset: 8 } }, params),
    'out over the weight': (e) => kernels.rmsNorm(e, { ...good, weight: { buffer: out, offset: 0 } }, params),
    'out partly over x': (e) => kernels.rmsNorm(e, { ...good, x: { buffer: residual, offset: 0 }, out: { buffer: residual, offset: 0 }, rstd: { buffer: residual, offset: 8 } }, { rows: 2, dim: 16 }),
    'rstd over x': (e) => kernels.rmsNorm(e, { ...good, rstd: { buffer: x, offset: 0 } }, params),
    'weight mapped': (e) => kernels.rmsNorm(e, { ...good, weight: mapped }, params),
    'rows negative': (e) => kernels.rmsNorm(e, good, { rows: -1, dim: 16 }),
    'rowStride below dim': (e) => kernels.rmsNorm(e, good, { ...params, rowStride: 15 }),
    'rowStride a string': (e) => kernels.rmsNorm(e, good, { ...params, rowStride: '16' }),
    'rows at rowStride past the buffer': (e) => kernels.rmsNorm(e, { x, rstd }, { rows: 4, dim: 16, rowStride: 26 }),
    'out rows interleaved with x, overlapping': (e) => kernels.rmsNorm(e, { x: residual, out: { buffer: residual, offset: 32 } }, { rows: 2, dim: 16, rowStride: 20 }),
    'dim zero': (e) => kernels.rmsNorm(e, good, { rows: 4, dim: 0 }),
    'dim a string': (e) => kernels.rmsNorm(e, good, { rows: 4, dim: '16' }),
    'eps NaN': (e) => kernels.rmsNorm(e, good, { ...params, eps: NaN }),
    'eps negative': (e) => kernels.rmsNorm(e, good, { ...params, eps: -1 }),
    'dtype unknown': (e) => kernels.rmsNorm(e, good, { ...params, dtype: 'half' }),
    'castMode unknown': (e) => kernels.rmsNorm(e, good, { ...params, castMode: 'mistral' }),
    'weightOffset infinite': (e) => kernels.rmsNorm(e, good, { ...params, weightOffset: Infinity }),
    'weightDtype without weight': (e) => kernels.rmsNorm(e, { ...good, weight: null }, { ...params, weightDtype: 'float32' }),
    'neither out nor rstd': (e) => kernels.rmsNorm(e, { x, weight }, params),
    'addRmsNorm without residual': (e) => kernels.addRmsNorm(e, good, params),
    'addRmsNorm out over the residual': (e) => kernels.addRmsNorm(e, { ...good, residual: out }, params),
    'addRmsNorm residual over x': (e) => kernels.addRmsNorm(e, { ...good, residual: x }, params),
    'params missing': (e) => kernels.rmsNorm(e, good),
    'layerNorm mean over out': (e) => kernels.layerNorm(e, { x, out, mean: { buffer: out, offset: 16 } }, params),
    'layerNorm bias a number': (e) => kernels.layerNorm(e, { x, bias: 3, out }, params),
    'layerNorm nothing to write': (e) => kernels.layerNorm(e, { x, weight }, params),
  };
  const results = [];
  const encoders = [];
  for (const [name, call] of Object.entries(calls)) {
    const encoder = device.createCommandEncoder();
    encoders.push(encoder);
    try {
      call(encoder);
      results.push({ name, error: null });
    } catch (error) {
      results.push({ name, error: `${error.constructor.name}: ${error.message}` });
    }
  }
  device.queue.submit(encoders.map((e) => e.finish()));
  const read = buffer(256, GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST);
  const copy = device.createCommandEncoder();
  copy.copyBufferToBuffer(out, 0, read, 0, 256);
  device.queue.submit([copy.finish()]);
  await read.mapAsync(GPUMapMode.READ);
  const untouched = new Uint8Array(read.getMappedRange()).every((v) => v === 0xa5);
  for (const b of [x, weight, out, rstd, residual, mapped, read]) b.destroy();
  return { results, untouched };
}

/** The array form's error for each spec (see tests/webgpu.test.js), built
 * from plain data: [kind, length] arrays, null, or absent. */
export async function arrayMistakes(specs) {
  const { arrays } = await openDevice();
  const make = (a) => (a === 'undefined' ? undefined : Array.isArray(a) && typeof a[0] === 'string' ? new globalThis[a[0]](a[1]).fill(a[0] === 'Float32Array' ? 0.5 : 0x3c00) : a);
  const out = [];
  for (const spec of specs) {
    const options = spec.options && Object.fromEntries(Object.entries(spec.options).map(([k, v]) => [k, make(v)]));
    const args = spec.args.map(make);
    try {
      await arrays[spec.fn](...args, options);
      out.push(null);
    } catch (error) {
      out.push(`${error.constructor.name}: ${error.message}`);
    }
  }
  return out;
}

/** The array form's calls whose arrays change while the GPU computes: a
 * tensor freed, a view of a tensor freed, an out detached. Each must be
 * refused, and nothing written after the change. */
export async function changedWhileComputing() {
  const { arrays } = await openDevice();
  const { createKernels } = await import('../../src/index.js');
  const k = await createKernels({ backend: 'scalar' });
  const x = new Float32Array(64).map((_, i) => Math.sin(i));
  const w = new Float32Array(16).fill(1.25);
  const results = {};
  const pin = k.alloc(1);
  const memoryOf = () => pin.array.buffer;
  const cases = {
    'a tensor freed': () => { const t = k.alloc(64); return { out: t, change: () => t.free() }; },
    'a view of a tensor freed': () => { const t = k.alloc(64); return { out: t.array.subarray(0, 64), change: () => t.free() }; },
    'an out detached': () => { const out = new Float32Array(64); return { out, change: () => structuredClone(out.buffer, { transfer: [out.buffer] }) }; },
  };
  for (const [what, make] of Object.entries(cases)) {
    const { out, change } = make();
    const pending = arrays.rmsNorm(x, w, { out });
    change();
    const after = new Uint8Array(memoryOf()).slice();
    try {
      await pending;
      results[what] = 'written';
    } catch (error) {
      results[what] = `${error.constructor.name}: ${error.message}`;
    }
    const now = new Uint8Array(memoryOf());
    if (now.some((v, i) => v !== after[i])) results[what] += ' (memory written after the change)';
  }
  return results;
}
