// The convenience form of the WebGPU backend: rmsNorm and addRmsNorm on
// typed arrays, with the wasm API's arguments, options, results and errors
// (the same checks: src/api/args.js), computed by the device kernels and read
// back; each returns a promise of what the wasm function returns.
import {
  bitsOf, copyInto, newOutput, readRmsNormOptions, resolveLayerNorm, resolveRmsNorm,
} from '../api/args.js';

const { STORAGE, COPY_SRC, COPY_DST } = globalThis.GPUBufferUsage ?? {};

/** A storage buffer holding a copy of the argument's bits (4-byte padded). */
function upload(device, arg) {
  const bits = bitsOf(arg);
  const buffer = device.createBuffer({
    size: Math.max(4, Math.ceil(bits.byteLength / 4) * 4),
    usage: STORAGE | COPY_SRC | COPY_DST,
    mappedAtCreation: true,
  });
  new Uint8Array(buffer.getMappedRange()).set(new Uint8Array(bits.buffer, bits.byteOffset, bits.byteLength));
  buffer.unmap();
  return buffer;
}

function storage(device, byteLength) {
  return device.createBuffer({ size: Math.max(4, Math.ceil(byteLength / 4) * 4), usage: STORAGE | COPY_SRC });
}

/** The array form over `kernels` (createGpuKernels). */
export function createArrayKernels(kernels) {
  const { device } = kernels;

  async function run(call) {
    const { rows, dim, dtype } = call;
    const created = [];
    const keep = (b) => (created.push(b), b);
    const elementBytes = dtype === 'float32' ? 4 : 2;
    const n = rows * dim;
    const buffers = { x: keep(upload(device, call.x)) };
    if (call.residual !== undefined) buffers.residual = keep(upload(device, call.residual));
    buffers.weight = call.weight === null ? null : keep(upload(device, call.weight));
    buffers.out = keep(storage(device, n * elementBytes));
    if (call.rstd !== undefined) buffers.rstd = keep(storage(device, rows * 4));
    const params = {
      rows, dim, eps: call.eps, dtype, castMode: call.castMode,
      ...(call.weight === null ? {} : { weightDtype: call.weightDtype, weightOffset: call.weightOffset }),
    };
    const encoder = device.createCommandEncoder();
    if (call.residual === undefined) kernels.rmsNorm(encoder, buffers, params);
    else kernels.addRmsNorm(encoder, buffers, params);
    // Every result into one buffer to map: out, then residual, then rstd.
    const parts = [['out', n * elementBytes]];
    if (call.residual !== undefined) parts.push(['residual', n * elementBytes]);
    if (call.rstd !== undefined) parts.push(['rstd', rows * 4]);
    let total = 0;
    const at = parts.map(([, bytes]) => {
      const start = total;
      total += Math.ceil(bytes / 4) * 4;
      return start;
    });
    const read = keep(device.createBuffer({ size: Math.max(4, total), usage: GPUBufferUsage.MAP_READ | COPY_DST }));
    parts.forEach(([role, bytes], i) => {
      const size = Math.ceil(bytes / 4) * 4;
      if (size > 0) encoder.copyBufferToBuffer(buffers[role], 0, read, at[i], size);
    });
    device.queue.submit([encoder.finish()]);
    try {
      await read.mapAsync(GPUMapMode.READ);
      const bytes = new Uint8Array(read.getMappedRange().slice(0));
      const view = (i, bits) => (bits === 4
        ? new Float32Array(bytes.buffer, at[i], parts[i][1] / 4)
        : new Uint16Array(bytes.buffer, at[i], parts[i][1] / 2));
      const out = call.out ?? newOutput('options.out', dtype, n);
      copyInto(bitsOf(out), view(0, elementBytes), 0);
      if (call.residual !== undefined) copyInto(bitsOf(call.residual), view(1, elementBytes), 0);
      if (call.rstd !== undefined) copyInto(bitsOf(call.rstd), view(parts.length - 1, 4), 0);
      return out.value;
    } finally {
      for (const b of created) b.destroy();
    }
  }

  async function runLayerNorm(call) {
    const { rows, dim } = call;
    const created = [];
    const keep = (b) => (created.push(b), b);
    const n = rows * dim;
    const buffers = {
      x: keep(upload(device, call.x)),
      weight: call.weight === null ? null : keep(upload(device, call.weight)),
      bias: call.bias === null ? null : keep(upload(device, call.bias)),
      out: keep(storage(device, n * 4)),
      mean: call.mean === undefined ? null : keep(storage(device, rows * 4)),
      rstd: call.rstd === undefined ? null : keep(storage(device, rows * 4)),
    };
    const encoder = device.createCommandEncoder();
    kernels.layerNorm(encoder, buffers, { rows, dim, eps: call.eps });
    const parts = [['out', n], ['mean', rows], ['rstd', rows]].filter(([role]) => buffers[role] !== null);
    let total = 0;
    const at = parts.map(([, count]) => ((total += count * 4), total - count * 4));
    const read = keep(device.createBuffer({ size: Math.max(4, total), usage: GPUBufferUsage.MAP_READ | COPY_DST }));
    parts.forEach(([role, count], i) => {
      if (count > 0) encoder.copyBufferToBuffer(buffers[role], 0, read, at[i], count * 4);
    });
    device.queue.submit([encoder.finish()]);
    try {
      await read.mapAsync(GPUMapMode.READ);
      const bytes = read.getMappedRange().slice(0);
      const out = call.out ?? newOutput('options.out', 'float32', n);
      parts.forEach(([role, count], i) => {
        const target = role === 'out' ? out : call[role];
        copyInto(bitsOf(target), new Float32Array(bytes, at[i], count), 0);
      });
      return out.value;
    } finally {
      for (const b of created) b.destroy();
    }
  }

  return Object.freeze({
    /** layerNorm(x, weight, bias, options) of 'rmsnorm-wasm' (float32), on the GPU. */
    layerNorm: async (x, weight, bias, options) => runLayerNorm(resolveLayerNorm('layerNorm', x, weight, bias, options)),
    /** rmsNorm(x, weight, options) of 'rmsnorm-wasm', on the GPU: a promise of its result. */
    rmsNorm: async (x, weight, options) => run(resolveRmsNorm('rmsNorm', x, undefined, weight, readRmsNormOptions('rmsNorm', options))),
    /** addRmsNorm(x, residual, weight, options) of 'rmsnorm-wasm', on the GPU. */
    async addRmsNorm(x, residual, weight, options) {
      const opts = readRmsNormOptions('addRmsNorm', options);
      if (residual === undefined) throw new TypeError('addRmsNorm: residual must be an array of x\'s dtype, got undefined');
      return run(resolveRmsNorm('addRmsNorm', x, residual, weight, opts));
    },
  });
}
