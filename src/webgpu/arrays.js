// The convenience form of the WebGPU backend: rmsNorm, addRmsNorm and
// layerNorm on typed arrays, with the wasm API's arguments, options, results and errors:
// resolved from the same descriptions (src/ops/), computed by the device
// kernels and read back; each returns a promise of what the wasm function
// returns. Inputs are read before the first await; outputs are written, in
// slot order, only if every array is still what was measured (the caller's
// code can run while the GPU computes).
//
// A call of a shape and options seen before runs on the staging of the
// last one: its GPU buffers, its read-back buffer and its prepared call,
// so a loop of like calls creates nothing on the GPU after the first.
import { DTYPE, ELEMENT_BYTES } from '../loader/abi.js';
import {
  bufferOf, byteLengthOf, ceil, copyInto, defineProperty, Error, Float32Array, freeze, lengthOf, List, max, promiseThen, setPrototypeOf, TypeError,
  Uint16Array, Uint8Array,
} from '../loader/intrinsics.js';
import { readIn, readRows, stillHolds, writeOut, writeRows } from '../ops/arrays.js';
import { makeResults, resolve, returnValue, zeroRowResult } from '../ops/resolve.js';
import {
  copyBufferToBuffer, createBuffer, createCommandEncoder, destroyBuffer, finish, getMappedRange, lostOf, mapAsync, queueOf, submit, unmap, writeBuffer,
} from './gpu.js';
import { COPY_DST, COPY_SRC, MAP_MODE_READ, MAP_READ, sequence, STORAGE } from './kernels.js';
import { FORM_NAMES, FORMS } from './programs/index.js';

const words = (bytes) => max(4, ceil(bytes / 4) * 4);

/** Calls' staging kept for reuse; the least recently used free one goes first. */
const KEPT = 8;

/** The staging of a call's shape: buffers by slot key, the read-back
 * buffer and its parts, the prepared call. */
class Staging {
  constructor(key) {
    this.key = key;
    this.busy = false;
    this.used = 0;
    this.buffers = { __proto__: null };
    this.owned = new List();
    this.parts = new List();
    this.read = null;
    this.prepared = null;
  }
}
setPrototypeOf(Staging.prototype, null);

/** What makes two calls' staging the same: the description, the shape,
 * the options the kernels see, and which slots were given. */
function keyOf(call) {
  let key = `${call.op.name} ${call.rows} ${call.dim} ${call.eps} ${call.dtype} ${call.weightDtype} ${call.castMode} ${call.weightOffset} ${call.outDtype}`;
  for (let i = 0; i < call.records.length; i++) key += call.records[i] === null ? ' -' : ' +';
  return key;
}

/** The array form over `kernels` (createGpuKernels). */
export function createArrayKernels(kernels) {
  const { device } = kernels;
  const queue = queueOf(device);
  let lost = null; // the GPUDeviceLostInfo, once the device is lost
  promiseThen(lostOf(device), (info) => {
    lost = info;
  });
  const kept = new List();
  let clock = 0;
  const lostError = (fn) => new Error(`${fn}: the GPUDevice was lost (${lost.reason}: ${lost.message}); nothing was written`);

  function release(staging) {
    for (let i = 0; i < staging.owned.length; i++) destroyBuffer(staging.owned[i]);
    staging.prepared?.destroy();
  }

  /** The staging for a call: a free one of its key, else a new one (the
   * oldest free one beyond KEPT released). */
  async function stagingFor(call) {
    const key = keyOf(call);
    for (let i = 0; i < kept.length; i++) {
      if (!kept[i].busy && kept[i].key === key) {
        kept[i].busy = true;
        return kept[i];
      }
    }
    const staging = new Staging(key);
    staging.busy = true;
    const { rows, dim, dtype, op } = call;
    const n = rows * dim;
    const elementBytes = DTYPE[dtype].bytes;
    const outBytes = call.outDtype === null ? n * elementBytes : rows * call.blockRowBytes; // blocks: packed rows
    const buffers = { __proto__: null }; // inherits nothing: every key is set below
    for (let i = 0; i < op.slots.length; i++) {
      const { key: name, reads, writes, row } = op.slots[i];
      const record = call.records[i];
      if ((record !== null && reads) || (writes && (name === 'out' || record !== null))) {
        // A per-row array's rows are staged packed, whatever its rowStride.
        const bytes = name === 'out' ? outBytes : record === null || row ? n * elementBytes : record.length * ELEMENT_BYTES[record.dtype];
        const buffer = createBuffer(device, { __proto__: null, size: words(bytes), usage: STORAGE | COPY_SRC | COPY_DST });
        staging.owned[staging.owned.length] = buffer;
        buffers[name] = buffer;
      } else buffers[name] = null;
    }
    // Every result into one buffer to map, in slot order.
    let total = 0;
    for (let i = 0; i < op.slots.length; i++) {
      const { key: name, writes } = op.slots[i];
      if (!writes || buffers[name] === null) continue;
      const bytes = name === 'out' ? outBytes : name === 'residual' ? n * elementBytes : rows * 4;
      staging.parts[staging.parts.length] = { __proto__: null, key: name, at: total, bytes, slot: i };
      total += ceil(bytes / 4) * 4;
    }
    staging.read = createBuffer(device, { __proto__: null, size: max(4, total), usage: MAP_READ | COPY_DST });
    staging.owned[staging.owned.length] = staging.read;
    staging.buffers = buffers;
    // Literals define their properties: no setter on Object.prototype runs.
    let params = { rows, dim, eps: call.eps };
    const outDtype = call.outDtype ?? undefined;
    if (op.hasDtype && buffers.weight === null) params = { rows, dim, eps: call.eps, dtype, castMode: call.castMode, outDtype };
    else if (op.hasDtype) {
      params = { rows, dim, eps: call.eps, dtype, castMode: call.castMode, weightDtype: call.weightDtype, weightOffset: call.weightOffset, outDtype };
    }
    try {
      staging.prepared = await kernels[op.name].prepare(buffers, params);
    } catch (error) {
      release(staging);
      throw error;
    }
    let oldest = null;
    for (let i = 0; i < kept.length; i++) if (!kept[i].busy && (oldest === null || kept[i].used < oldest.used)) oldest = kept[i];
    if (kept.length >= KEPT && oldest !== null) {
      const rest = new List();
      for (let i = 0; i < kept.length; i++) if (kept[i] !== oldest) rest[rest.length] = kept[i];
      kept.length = 0;
      for (let i = 0; i < rest.length; i++) kept[i] = rest[i];
      release(oldest);
    }
    kept[kept.length] = staging;
    return staging;
  }

  async function run(call) {
    const { fn, op } = call;
    if (lost !== null) throw lostError(fn);
    const none = zeroRowResult(call);
    if (none !== null) return none;
    // Every array read now, before the first await.
    const inputs = new List(op.slots.length);
    for (let i = 0; i < op.slots.length; i++) {
      const record = call.records[i];
      if (record === null || !op.slots[i].reads) inputs[i] = null;
      // A per-row array's rows are staged packed, in the call's row order (with heads, (t, h) at t·heads + h,
      // as its statistics are): the GPU call is then plain rows of dim, with the bits of a call per head.
      else inputs[i] = op.slots[i].row ? readRows(record, call) : readIn(record);
    }
    const staging = await stagingFor(call);
    staging.used = ++clock;
    try {
      for (let i = 0; i < op.slots.length; i++) {
        if (inputs[i] === null) continue;
        const bytes = byteLengthOf(inputs[i]);
        let data = new Uint8Array(bufferOf(inputs[i]), 0, bytes);
        if (bytes % 4 !== 0) {
          const padded = new Uint8Array(words(bytes));
          copyInto(padded, data, 0);
          data = padded;
        }
        writeBuffer(queue, staging.buffers[op.slots[i].key], 0, data);
      }
      const encoder = createCommandEncoder(device);
      staging.prepared.run(encoder);
      const { parts, read } = staging;
      for (let i = 0; i < parts.length; i++) {
        if (parts[i].bytes > 0) copyBufferToBuffer(encoder, staging.buffers[parts[i].key], 0, read, parts[i].at, ceil(parts[i].bytes / 4) * 4);
      }
      submit(queue, sequence([finish(encoder)]));
      try {
        await mapAsync(read, MAP_MODE_READ);
      } catch (error) {
        // A device lost while the GPU computed (its lost promise may settle later).
        if (lost !== null) throw lostError(fn);
        throw new Error(`${fn}: reading the result back failed (${error?.name}: ${error?.message}); nothing was written`);
      }
      const mapped = new Uint8Array(getMappedRange(read));
      const bytes = new Uint8Array(lengthOf(mapped)); // a copy: the mapping ends at unmap
      copyInto(bytes, mapped, 0);
      unmap(read);
      for (let i = 0; i < call.records.length; i++) {
        const record = call.records[i];
        if (record !== null && !stillHolds(record)) {
          throw new TypeError(`${fn}: ${op.slots[i].name} was detached, shrunk or freed while the GPU computed; nothing was written`);
        }
      }
      makeResults(call);
      const elementBytes = DTYPE[call.dtype].bytes;
      for (let i = 0; i < parts.length; i++) {
        const { key, at, bytes: size, slot } = parts[i];
        const wide = (key !== 'out' && key !== 'residual') || elementBytes === 4;
        const bits = key === 'out' && call.outDtype !== null ? new Uint8Array(bufferOf(bytes), at, size)
          : wide ? new Float32Array(bufferOf(bytes), at, size / 4) : new Uint16Array(bufferOf(bytes), at, size / 2);
        if (op.slots[slot].row) writeRows(call.records[slot], bits, call);
        else writeOut(call.records[slot], bits);
      }
      return returnValue(call);
    } finally {
      staging.busy = false;
    }
  }

  // Each form of every program (./programs/), with the wasm function's
  // parameters: rmsNorm(x, weight, options), addRmsNorm(x, residual,
  // weight, options), layerNorm(x, weight, bias, options); each a promise of
  // what the wasm function returns.
  const forms = { __proto__: null };
  for (let i = 0; i < FORM_NAMES.length; i++) {
    const fn = FORM_NAMES[i];
    const { op } = FORMS[fn];
    const form = { [fn]: async (a, b, c, d) => run(resolve(op, fn, undefined, a, b, c, d)) }[fn];
    defineProperty(form, 'length', { __proto__: null, value: op.params.length + 1 });
    forms[fn] = form;
  }
  return freeze(forms);
}
