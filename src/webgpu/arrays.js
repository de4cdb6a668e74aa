// The convenience form of the WebGPU backend: rmsNorm, addRmsNorm and
// layerNorm on typed arrays, with the wasm API's arguments, options, results and errors:
// resolved from the same descriptions (src/ops/), computed by the device
// kernels and read back; each returns a promise of what the wasm function
// returns. Inputs are read before the first await; outputs are written, in
// slot order, only if every array is still what was measured (the caller's
// code can run while the GPU computes).
import { bufferOf, byteLengthOf, ceil, copyInto, Float32Array, lengthOf, List, max, TypeError, Uint16Array, Uint8Array } from '../loader/intrinsics.js';
import { readIn, stillHolds, writeOut } from '../ops/arrays.js';
import { addRmsNorm as ADD_RMSNORM, layerNorm as LAYERNORM, rmsNorm as RMSNORM } from '../ops/descriptions.js';
import { makeResults, resolve, returnValue } from '../ops/resolve.js';
import { COPY_DST, COPY_SRC, MAP_MODE_READ, MAP_READ, sequence, STORAGE } from './kernels.js';

const words = (bytes) => max(4, ceil(bytes / 4) * 4);

/** A storage buffer holding a copy of `bits` (4-byte padded). */
function upload(device, bits) {
  const byteLength = byteLengthOf(bits);
  const buffer = device.createBuffer({ __proto__: null, size: words(byteLength), usage: STORAGE | COPY_SRC | COPY_DST, mappedAtCreation: true });
  copyInto(new Uint8Array(buffer.getMappedRange()), new Uint8Array(bufferOf(bits), 0, byteLength), 0);
  buffer.unmap();
  return buffer;
}

/** The array form over `kernels` (createGpuKernels). */
export function createArrayKernels(kernels) {
  const { device } = kernels;

  async function run(call) {
    const { rows, dim, dtype, fn, op } = call;
    const created = new List();
    const keep = (b) => {
      created[created.length] = b;
      return b;
    };
    const n = rows * dim;
    const elementBytes = dtype === 'float32' ? 4 : 2;
    // Every array read, uploaded; every result, a buffer of its own (the residual is both).
    const buffers = { __proto__: null }; // inherits nothing: every key is set below
    for (let i = 0; i < op.slots.length; i++) {
      const { key, reads, writes } = op.slots[i];
      if (call.records[i] !== null && reads) buffers[key] = keep(upload(device, readIn(call.records[i])));
      else if (writes && (key === 'out' || call.records[i] !== null)) {
        const bytes = key === 'out' ? n * elementBytes : rows * 4;
        buffers[key] = keep(device.createBuffer({ __proto__: null, size: words(bytes), usage: STORAGE | COPY_SRC }));
      } else buffers[key] = null;
    }
    // Literals define their properties: no setter on Object.prototype runs.
    let params = { rows, dim, eps: call.eps };
    if (op.hasDtype && buffers.weight === null) params = { rows, dim, eps: call.eps, dtype, castMode: call.castMode };
    else if (op.hasDtype) {
      params = { rows, dim, eps: call.eps, dtype, castMode: call.castMode, weightDtype: call.weightDtype, weightOffset: call.weightOffset };
    }
    const encoder = device.createCommandEncoder();
    kernels[op.name](encoder, buffers, params);
    // Every result into one buffer to map, in slot order.
    const parts = new List();
    let total = 0;
    for (let i = 0; i < op.slots.length; i++) {
      const { key, writes } = op.slots[i];
      if (!writes || buffers[key] === null) continue;
      const bytes = key === 'out' || key === 'residual' ? n * elementBytes : rows * 4;
      parts[parts.length] = { key, at: total, bytes, slot: i }; // a literal: defined, not set
      total += ceil(bytes / 4) * 4;
    }
    const read = keep(device.createBuffer({ __proto__: null, size: max(4, total), usage: MAP_READ | COPY_DST }));
    for (let i = 0; i < parts.length; i++) {
      if (parts[i].bytes > 0) encoder.copyBufferToBuffer(buffers[parts[i].key], 0, read, parts[i].at, ceil(parts[i].bytes / 4) * 4);
    }
    device.queue.submit(sequence([encoder.finish()]));
    try {
      await read.mapAsync(MAP_MODE_READ);
      const mapped = new Uint8Array(read.getMappedRange());
      const bytes = new Uint8Array(lengthOf(mapped)); // a copy: the mapping ends with the buffer
      copyInto(bytes, mapped, 0);
      for (let i = 0; i < call.records.length; i++) {
        const record = call.records[i];
        if (record !== null && !stillHolds(record)) {
          throw new TypeError(`${fn}: ${op.slots[i].name} was detached, shrunk or freed while the GPU computed; nothing was written`);
        }
      }
      makeResults(call);
      for (let i = 0; i < parts.length; i++) {
        const { key, at, bytes: size, slot } = parts[i];
        const wide = (key !== 'out' && key !== 'residual') || elementBytes === 4;
        const bits = wide ? new Float32Array(bufferOf(bytes), at, size / 4) : new Uint16Array(bufferOf(bytes), at, size / 2);
        writeOut(call.records[slot], bits);
      }
      return returnValue(call);
    } finally {
      for (let i = 0; i < created.length; i++) created[i].destroy();
    }
  }

  return Object.freeze({
    /** rmsNorm(x, weight, options) of 'rmsnorm-wasm', on the GPU: a promise of its result. */
    rmsNorm: async (x, weight, options) => run(resolve(RMSNORM, 'rmsNorm', undefined, x, weight, options)),
    /** addRmsNorm(x, residual, weight, options) of 'rmsnorm-wasm', on the GPU. */
    addRmsNorm: async (x, residual, weight, options) => run(resolve(ADD_RMSNORM, 'addRmsNorm', undefined, x, residual, weight, options)),
    /** layerNorm(x, weight, bias, options) of 'rmsnorm-wasm' (float32), on the GPU. */
    layerNorm: async (x, weight, bias, options) => run(resolve(LAYERNORM, 'layerNorm', undefined, x, weight, bias, options)),
  });
}
