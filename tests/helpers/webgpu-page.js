// The page side of the WebGPU tests and the tutorial's checks: runs calls
// sent from Node (inputs as base64 bits) through the array form of the
// backend and sends the outputs back the same way.
/* global GPUBufferUsage, GPUMapMode, GPUDevice, GPUQueue, GPUBuffer, GPUCommandEncoder, GPUComputePassEncoder, GPUSupportedLimits -- this module runs in the page */
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
  const arrays = createArrayKernels(kernels);
  // Kernels with the team size fixed (invocationsPerRow), for the calls
  // that name one: the layout's own choice would leave a team size
  // untried on some adapter. They share the device's pipelines.
  const teams = new Map();
  const teamOf = (team) => {
    if (!teams.has(team)) {
      const fixed = createGpuKernels(device, { invocationsPerRow: team });
      teams.set(team, { kernels: fixed, arrays: createArrayKernels(fixed) });
    }
    return teams.get(team);
  };
  return {
    device, kernels, arrays,
    teamKernels: (team) => (team === undefined ? kernels : teamOf(team).kernels),
    teamArrays: (team) => (team === undefined ? arrays : teamOf(team).arrays),
    adapter: [info.vendor, info.architecture, info.device, info.description].filter(Boolean).join(' ') || 'unnamed adapter',
  };
}

/**
 * Runs each call { fn, x, residual, weight, kinds: { x, weight }, options:
 * { ..., rstd: rows or absent, out: 'x' for in place }, team: the
 * invocations a row, or absent for the layout's choice } and returns
 * { out, residual, rstd } as base64, or { error } for a GPU validation error.
 */
export async function runCalls(calls) {
  const { device, adapter, teamArrays } = await openDevice();
  // Every call at once (each its own submit and readback): the waits for
  // the GPU overlap. A validation error fails the batch.
  const errors = [];
  const onError = (event) => errors.push(event.error.message);
  device.addEventListener('uncapturederror', onError);
  const results = await Promise.all(calls.map(async (call) => {
    const arrays = teamArrays(call.team);
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
 * offset in it; records `fn` with `params` (and `team` invocations a row,
 * if given) into an encoder and returns each
 * buffer's bytes afterwards (base64), or { error } for a validation error.
 */
export async function runOnBuffers({ fn, arena, groups, offsets, params, team }) {
  const { device, teamKernels } = await openDevice();
  const gpu = teamKernels(team);
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
    'heads running into the next token': (e) => kernels.rmsNorm(e, good, { rows: 2, dim: 16, rowStride: 32, heads: 2, headStride: 24 }),
    'headStride below dim': (e) => kernels.rmsNorm(e, good, { rows: 2, dim: 16, heads: 2, headStride: 8 }),
    'headStride without heads': (e) => kernels.rmsNorm(e, good, { rows: 2, dim: 16, headStride: 16 }),
    'heads zero': (e) => kernels.rmsNorm(e, good, { rows: 2, dim: 16, heads: 0 }),
    'outDtype with dim not a multiple of its block': (e) => kernels.rmsNorm(e, good, { ...params, outDtype: 'q8_0' }),
    'outDtype unknown': (e) => kernels.rmsNorm(e, good, { rows: 2, dim: 32, outDtype: 'q4_0' }),
    'outDtype without out': (e) => kernels.rmsNorm(e, { x, weight, rstd }, { rows: 2, dim: 32, outDtype: 'q8_0' }),
    'out too small for its blocks': (e) => kernels.rmsNorm(e, { x, out: { buffer: out, offset: 200 } }, { rows: 2, dim: 32, outDtype: 'q8_0' }),
    'layerNorm headStride on the device form': (e) => kernels.layerNorm(e, { x, out }, { ...params, headStride: 16 }),
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

/** Counts the device's creation calls while `during` runs: buffers, bind
 * groups, shader modules and pipelines. */
async function counting(device, during) {
  const names = ['createBuffer', 'createBindGroup', 'createShaderModule', 'createComputePipeline', 'createComputePipelineAsync'];
  const counts = Object.fromEntries(names.map((n) => [n, 0]));
  for (const n of names) {
    const original = device[n];
    device[n] = function counted(...args) {
      counts[n]++;
      return original.apply(this, args);
    };
  }
  try {
    await during();
  } finally {
    for (const n of names) delete device[n];
  }
  return counts;
}

const STORAGE_RW = () => GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;

function filled(device, bits) {
  const b = device.createBuffer({ size: Math.max(16, Math.ceil(bits.byteLength / 4) * 4), usage: STORAGE_RW(), mappedAtCreation: true });
  new Uint8Array(b.getMappedRange()).set(new Uint8Array(bits.buffer, bits.byteOffset, bits.byteLength));
  b.unmap();
  return b;
}

async function readBits(device, buffer, bytes) {
  const read = device.createBuffer({ size: Math.ceil(bytes / 4) * 4, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  const e = device.createCommandEncoder();
  e.copyBufferToBuffer(buffer, 0, read, 0, Math.ceil(bytes / 4) * 4);
  device.queue.submit([e.finish()]);
  await read.mapAsync(GPUMapMode.READ);
  const out = toBase64(new Uint8Array(read.getMappedRange().slice(0, bytes)));
  read.destroy();
  return out;
}

/**
 * Prepared calls of the device form: { x, weight (float32), x16, w16
 * (bfloat16 bits), residual16, rows, dim } in base64. A float32 rmsNorm
 * twice over (y1 from x, then y2 from y1) recorded into one caller-opened
 * compute pass, 20 times over, and a bfloat16 addRmsNorm into a command
 * encoder: returns their results, the creation calls counted while the
 * calls ran (after prepare), the progress reports and the error of a run
 * after destroy().
 */
export async function preparedCalls({ x, weight, x16, w16, residual16, rows, dim }) {
  // A device of its own: its pipelines are not yet built, so their building is reported.
  const device = await (await navigator.gpu.requestAdapter()).requestDevice();
  const { createGpuKernels } = await import('../../src/webgpu/index.js');
  const progress = [];
  const gpu = createGpuKernels(device, { onProgress: (p) => progress.push({ ...p }) });
  const xb = filled(device, fromBase64(x, 'float32'));
  const wb = filled(device, fromBase64(weight, 'float32'));
  const y1 = device.createBuffer({ size: rows * dim * 4, usage: STORAGE_RW() });
  const y2 = device.createBuffer({ size: rows * dim * 4, usage: STORAGE_RW() });
  const s2 = device.createBuffer({ size: rows * 4, usage: STORAGE_RW() });
  const x16b = filled(device, fromBase64(x16, 'uint16'));
  const w16b = filled(device, fromBase64(w16, 'uint16'));
  const r16b = filled(device, fromBase64(residual16, 'uint16'));
  const y16 = device.createBuffer({ size: Math.max(16, Math.ceil(rows * dim / 2) * 4), usage: STORAGE_RW() });
  const first = await gpu.rmsNorm.prepare({ x: xb, weight: wb, out: y1 }, { rows, dim });
  const second = await gpu.rmsNorm.prepare({ x: y1, weight: wb, out: y2, rstd: s2 }, { rows, dim });
  const fused = await gpu.addRmsNorm.prepare({ x: x16b, residual: r16b, weight: w16b, out: y16 },
    { rows, dim, dtype: 'bfloat16', castMode: 'gemma' });
  const runs = 20;
  const counts = await counting(device, async () => {
    for (let k = 0; k < runs; k++) {
      const encoder = device.createCommandEncoder();
      const pass = encoder.beginComputePass();
      first.run(pass);
      second.run(pass);
      pass.end();
      device.queue.submit([encoder.finish()]);
    }
    const encoder = device.createCommandEncoder();
    fused.run(encoder); // once: the residual is updated in place
    device.queue.submit([encoder.finish()]);
    await device.queue.onSubmittedWorkDone();
  });
  const results = {
    y2: await readBits(device, y2, rows * dim * 4), rstd: await readBits(device, s2, rows * 4),
    y16: await readBits(device, y16, rows * dim * 2), residual16: await readBits(device, r16b, rows * dim * 2),
  };
  first.destroy();
  let afterDestroy = null;
  try {
    first.run(device.createCommandEncoder());
  } catch (error) {
    afterDestroy = `${error.constructor.name}: ${error.message}`;
  }
  for (const p of [second, fused]) p.destroy();
  device.destroy();
  return { results, counts, progress, afterDestroy, runs };
}

/**
 * The array form's staging: the creation calls counted while ten like
 * calls run after a first one, and their results (base64) for the test to
 * hold to the reference.
 */
export async function arrayStaging({ x, weight, dim }) {
  const { device, arrays } = await openDevice();
  const xs = fromBase64(x, 'float32');
  const w = fromBase64(weight, 'float32');
  await arrays.rmsNorm(xs, w, { dim });
  const outs = [];
  const counts = await counting(device, async () => {
    for (let k = 0; k < 10; k++) outs.push(toBase64(await arrays.rmsNorm(xs, w, { dim })));
  });
  return { counts, outs };
}

/**
 * Mistakes WebGPU itself validates later, after the call returned: each
 * recorded and submitted in a validation error scope, its captured error
 * and whether the buffers the call writes kept their bytes.
 */
export async function deferredValidation() {
  const { device } = await openDevice();
  const { createGpuKernels } = await import('../../src/webgpu/index.js');
  const gpu = createGpuKernels(device);
  const rows = 4;
  const dim = 64;
  const sentinel = new Uint8Array(rows * dim * 4).fill(0xa5);
  const make = (d = device) => {
    const b = d.createBuffer({ size: rows * dim * 4, usage: STORAGE_RW() });
    d.queue.writeBuffer(b, 0, sentinel);
    return b;
  };
  const params = { rows, dim };
  const cases = {
    'x destroyed after prepare': async () => {
      const x = make();
      const out = make();
      const p = await gpu.rmsNorm.prepare({ x, out }, params);
      x.destroy();
      const e = device.createCommandEncoder();
      p.run(e);
      return { submit: [e], watch: [out] };
    },
    'out destroyed after prepare, rstd written beside it': async () => {
      const x = make();
      const out = make();
      const rstd = make();
      const p = await gpu.rmsNorm.prepare({ x, out, rstd }, params);
      out.destroy();
      const e = device.createCommandEncoder();
      p.run(e);
      return { submit: [e], watch: [rstd] };
    },
    "another device's buffer": async () => {
      const other = await (await navigator.gpu.requestAdapter()).requestDevice();
      const x = make(other);
      const out = make();
      const e = device.createCommandEncoder();
      gpu.rmsNorm(e, { x, out }, params);
      return { submit: [e], watch: [out], cleanup: () => other.destroy() };
    },
    'an encoder already finished': async () => {
      const x = make();
      const out = make();
      const e = device.createCommandEncoder();
      const done = e.finish();
      gpu.rmsNorm(e, { x, out }, params);
      return { submit: [], buffers: [done], watch: [out] };
    },
    'an encoder locked by an open pass': async () => {
      const x = make();
      const out = make();
      const e = device.createCommandEncoder();
      const pass = e.beginComputePass();
      gpu.rmsNorm(e, { x, out }, params);
      pass.end();
      return { submit: [e], watch: [out] };
    },
    'a pass already ended': async () => {
      const x = make();
      const out = make();
      const e = device.createCommandEncoder();
      const pass = e.beginComputePass();
      pass.end();
      const p = await gpu.rmsNorm.prepare({ x, out }, params);
      p.run(pass);
      return { submit: [e], watch: [out] };
    },
  };
  const results = {};
  for (const [name, make1] of Object.entries(cases)) {
    device.pushErrorScope('validation');
    const { submit, buffers = [], watch, cleanup } = await make1();
    const finished = [...buffers];
    for (const e of submit) finished.push(e.finish());
    device.queue.submit(finished);
    const error = await device.popErrorScope();
    await device.queue.onSubmittedWorkDone();
    let untouched = true;
    for (const b of watch) {
      const bytes = Uint8Array.from(atob(await readBits(device, b, rows * dim * 4)), (c) => c.charCodeAt(0));
      untouched &&= bytes.every((v) => v === 0xa5);
    }
    cleanup?.();
    results[name] = { error: error ? error.constructor.name : null, untouched };
  }
  return results;
}

/** The array form on a device that is lost (destroyed): before a call,
 * and while one computes. Each: the error's class and message. */
export async function lostDevice() {
  const { createArrayKernels, createGpuKernels } = await import('../../src/webgpu/index.js');
  const x = new Float32Array(256).map((_, i) => Math.sin(i));
  const w = new Float32Array(64).fill(1.5);
  const describeError = (e) => `${e.constructor.name}: ${e.message}`;
  const result = {};
  {
    const device = await (await navigator.gpu.requestAdapter()).requestDevice();
    const arrays = createArrayKernels(createGpuKernels(device));
    await arrays.rmsNorm(x, w);
    device.destroy();
    await device.lost;
    try {
      await arrays.rmsNorm(x, w);
      result.before = 'resolved';
    } catch (e) {
      result.before = describeError(e);
    }
  }
  {
    const device = await (await navigator.gpu.requestAdapter()).requestDevice();
    const arrays = createArrayKernels(createGpuKernels(device));
    await arrays.addRmsNorm(x, new Float32Array(256), w); // compiled: the next call only records
    const out = new Float32Array(256).fill(7);
    const pending = arrays.addRmsNorm(x, new Float32Array(256), w, { out });
    device.destroy();
    try {
      await pending;
      result.during = 'resolved';
    } catch (e) {
      result.during = describeError(e);
    }
    result.outUntouched = out.every((v) => v === 7);
  }
  return result;
}

/**
 * WebGPU's methods and limits replaced after the package loaded (what the
 * threat model says the package saves at load, src/webgpu/gpu.js): queue
 * writes, copies and dispatches that do nothing, a maxStorageBufferBindingSize
 * that lies, on a device of its own. Runs an array call of `x` (rows of
 * `dim`, base64 float32) and a device-form call into a buffer, and returns
 * both outputs (base64) and whether anything threw; then puts every method back.
 * Also: objects made with Object.create from WebGPU's prototypes, given
 * where the engine's own are expected, and the errors they get.
 */
export async function replacedBuiltins({ x, weight, dim }) {
  const { createArrayKernels, createGpuKernels } = await import('../../src/webgpu/index.js');
  const device = await (await navigator.gpu.requestAdapter()).requestDevice();
  const xs = fromBase64(x, 'float32');
  const w = fromBase64(weight, 'float32');
  const arrays = createArrayKernels(createGpuKernels(device));
  const kernels = createGpuKernels(device);
  const saved = [];
  const replace = (prototype, key, value, getter = false) => {
    saved.push([prototype, key, Object.getOwnPropertyDescriptor(prototype, key)]);
    Object.defineProperty(prototype, key, getter ? { get: value, configurable: true } : { value, writable: true, configurable: true });
  };
  // The test's own buffers and copies, through the methods as they were.
  const { createBuffer, createCommandEncoder } = GPUDevice.prototype;
  const { submit } = GPUQueue.prototype;
  const { copyBufferToBuffer, finish } = GPUCommandEncoder.prototype;
  const filled = (values, usage) => {
    const buffer = createBuffer.call(device, { size: values.byteLength, usage, mappedAtCreation: true });
    new Float32Array(buffer.getMappedRange()).set(values);
    buffer.unmap();
    return buffer;
  };
  const result = { errors: [] };
  const queue = device.queue;
  let lies = 0; // how often a replacement ran: 0 when the package calls only what it saved
  const lie = (value) => () => {
    lies++;
    return value;
  };
  replace(GPUQueue.prototype, 'writeBuffer', lie(undefined));
  replace(GPUQueue.prototype, 'submit', lie(undefined));
  replace(GPUCommandEncoder.prototype, 'copyBufferToBuffer', lie(undefined));
  replace(GPUComputePassEncoder.prototype, 'dispatchWorkgroups', lie(undefined));
  replace(GPUComputePassEncoder.prototype, 'setBindGroup', lie(undefined));
  replace(GPUSupportedLimits.prototype, 'maxStorageBufferBindingSize', lie(16), true);
  replace(GPUSupportedLimits.prototype, 'minStorageBufferOffsetAlignment', lie(4), true);
  replace(GPUBuffer.prototype, 'size', lie(1e9), true);
  replace(GPUBuffer.prototype, 'mapState', lie('unmapped'), true);
  replace(GPUDevice.prototype, 'queue', lie({ writeBuffer() {}, submit() {} }), true);
  try {
    // Twice: the second call runs on the first one's staging and prepared call.
    await arrays.rmsNorm(xs, w, { dim });
    result.array = toBase64(await arrays.rmsNorm(xs, w, { dim }));
    const storage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;
    const bx = filled(xs, storage);
    const bw = filled(w, storage);
    const out = filled(new Float32Array(xs.length), storage);
    const read = createBuffer.call(device, { size: xs.byteLength, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
    const prepared = await kernels.rmsNorm.prepare({ x: bx, weight: bw, out }, { rows: xs.length / dim, dim });
    const encoder = createCommandEncoder.call(device);
    prepared.run(encoder);
    copyBufferToBuffer.call(encoder, out, 0, read, 0, xs.byteLength);
    submit.call(queue, [finish.call(encoder)]);
    await read.mapAsync(GPUMapMode.READ);
    result.device = toBase64(new Float32Array(read.getMappedRange().slice(0)));
  } catch (e) {
    result.errors.push(`${e.constructor.name}: ${e.message}`);
  } finally {
    for (let i = saved.length - 1; i >= 0; i--) Object.defineProperty(saved[i][0], saved[i][1], saved[i][2]);
  }
  result.lies = lies;
  // Forged objects: WebGPU's prototypes without the engine's objects behind them.
  const forged = {
    buffer: () => kernels.rmsNorm(device.createCommandEncoder(), { x: Object.create(GPUBuffer.prototype), out: Object.create(GPUBuffer.prototype) }, { rows: 1, dim: 4 }),
    'buffer in { buffer, offset }': () => kernels.rmsNorm(device.createCommandEncoder(), { x: { buffer: Object.create(GPUBuffer.prototype), offset: 0 }, out: Object.create(GPUBuffer.prototype) }, { rows: 1, dim: 4 }),
    encoder: () => {
      const b = device.createBuffer({ size: 16, usage: GPUBufferUsage.STORAGE });
      return kernels.rmsNorm(Object.create(GPUCommandEncoder.prototype), { x: b, out: device.createBuffer({ size: 16, usage: GPUBufferUsage.STORAGE }) }, { rows: 1, dim: 4 });
    },
    pass: () => {
      const b = device.createBuffer({ size: 16, usage: GPUBufferUsage.STORAGE });
      return kernels.rmsNorm(Object.create(GPUComputePassEncoder.prototype), { x: b, out: device.createBuffer({ size: 16, usage: GPUBufferUsage.STORAGE }) }, { rows: 1, dim: 4 });
    },
    device: () => createGpuKernels(Object.create(GPUDevice.prototype)),
  };
  result.forged = {};
  for (const [what, call] of Object.entries(forged)) {
    try {
      call();
      result.forged[what] = 'no error';
    } catch (e) {
      result.forged[what] = `${e.constructor.name}: ${e.message}`;
    }
  }
  device.destroy();
  return result;
}

/**
 * Every shader variant the backend can build (tests/helpers/webgpu-variants.js),
 * generated here and compiled on this page's device: returns how many,
 * and each one whose getCompilationInfo() holds an error (its key and
 * first message).
 */
export async function compileEveryShader() {
  const { everyShader } = await import('./webgpu-variants.js');
  const { device } = await openDevice();
  const failed = [];
  let count = 0;
  let pending = [];
  const settle = async () => {
    for (const { key, module } of pending) {
      const info = await module.getCompilationInfo();
      const errors = info.messages.filter((m) => m.type === 'error');
      if (errors.length > 0) failed.push(`${key}: ${errors[0].lineNum}:${errors[0].linePos} ${errors[0].message}`);
    }
    pending = [];
  };
  for (const { key, code } of everyShader()) {
    pending.push({ key, module: device.createShaderModule({ code, label: key }) });
    count++;
    if (pending.length === 32) await settle();
  }
  await settle();
  return { count, failed };
}
