// bindMemory(): the kernels running directly on an engine's own
// WebAssembly.Memory, shared (threaded engines) or not, without copying.
//
// The mechanism: a second build of the same kernels (the "imported-memory"
// modules, see the Makefile) imports its memory instead of owning one. It has
// no allocator and no data segments, so instantiating it writes nothing; the
// only bytes it touches besides the arguments of a call are in a scratch
// region the engine lends it: its call stack at the top, and below that the
// staging of whatever the package allocates itself (a new result array, the
// parameter gradients, recomputed statistics).

import { compileImportedMemoryBackend } from '../loader/load.js';
import { memoryBufferOf } from '../loader/intrinsics.js';
import { STACK_BYTES, WasmKernels } from '../loader/kernels.js';
import { describe, isSharedBuffer, optionReader, viewRange } from './args.js';
import { kernelFunctions } from './functions.js';
import { resolveBackend } from './runtime.js';

const { isView } = ArrayBuffer;
const readBindOptions = optionReader(class BindOptions { scratch; backend; });
const readScratch = optionReader(class Scratch { byteOffset; byteLength; });

/** options.scratch read once and checked: the lent region [start, end). */
function lentRegion(scratch, buffer) {
  if (scratch === undefined) {
    throw new TypeError('bindMemory: options.scratch is required: { byteOffset, byteLength } of a region the kernels may use during a call');
  }
  // A view of the memory names its own range; any other object, by its own properties.
  if (scratch === null || typeof scratch !== 'object') {
    throw new TypeError(`bindMemory: options.scratch must be { byteOffset, byteLength }, got ${describe(scratch)}`);
  }
  const { byteOffset, byteLength } = isView(scratch)
    ? viewRange('bindMemory', 'options.scratch', scratch, buffer)
    : readScratch('bindMemory: options.scratch', scratch);
  if (!Number.isSafeInteger(byteOffset) || byteOffset < 0 || byteOffset % 16 !== 0) {
    throw new RangeError(`bindMemory: options.scratch.byteOffset must be a non-negative multiple of 16, got ${typeof byteOffset === 'number' ? byteOffset : describe(byteOffset)}`);
  }
  if (!Number.isSafeInteger(byteLength) || byteLength < STACK_BYTES) {
    throw new RangeError(`bindMemory: options.scratch.byteLength must be at least ${STACK_BYTES}, got ${typeof byteLength === 'number' ? byteLength : describe(byteLength)}`);
  }
  if (byteOffset + byteLength > buffer.byteLength) {
    throw new RangeError(`bindMemory: options.scratch [${byteOffset}, ${byteOffset + byteLength}) lies outside the memory (${buffer.byteLength} bytes)`);
  }
  return [byteOffset, byteOffset + byteLength];
}

/**
 * Binds the kernels to an engine's WebAssembly.Memory. The functions returned
 * take the same arguments and options as the package's, but every array the
 * caller passes must be a view of `memory`'s buffer: nothing is copied in.
 * On a shared memory, each thread binds it with a scratch region of its own
 * and may run its share of the rows of one call at the same time as others.
 * @param {WebAssembly.Memory} memory shared or not
 * @param {{scratch: {byteOffset: number, byteLength: number}, backend?: 'auto'|'simd'|'scalar'}} options
 */
export async function bindMemory(memory, options) {
  let buffer;
  try {
    buffer = memoryBufferOf(memory);
  } catch {
    throw new TypeError(`bindMemory: memory must be a WebAssembly.Memory, got ${describe(memory)}`);
  }
  if (options === undefined) {
    throw new TypeError('bindMemory: options with a scratch region are required: bindMemory(memory, { scratch: { byteOffset, byteLength } })');
  }
  const { scratch, backend: requested = 'auto' } = readBindOptions('bindMemory', options);
  const lent = lentRegion(scratch, buffer);
  const backend = resolveBackend('bindMemory', 'options.backend', requested);
  // A shared memory is told apart by its buffer, not by the
  // SharedArrayBuffer global, which pages without cross-origin isolation lack.
  const shared = isSharedBuffer(buffer);
  const module = await compileImportedMemoryBackend(backend, shared);
  const instance = await WebAssembly.instantiate(module, { env: { memory } });
  instance.exports._initialize?.();
  instance.exports.stackRestore(lent[1]); // the stack grows down from the end of the lent region
  const kernels = new WasmKernels(instance.exports, memory, lent);
  const f = kernelFunctions(() => kernels);
  return {
    backend, memory, shared,
    rmsNorm: f.rmsNorm, addRmsNorm: f.addRmsNorm, layerNorm: f.layerNorm,
    rmsNormBackward: f.rmsNormBackward, layerNormBackward: f.layerNormBackward,
  };
}
