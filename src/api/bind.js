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

import { compileImportedMemoryBackend, SHARED_MAXIMUM_PAGES_64 } from '../loader/load.js';
import {
  bufferOf, byteLengthOf, byteOffsetOf, instanceExportsOf, instantiate, isSafeInteger, isSharedBuffer, isView, kindOf,
  LinkError, memoryBufferOf, RangeError, TypeError, Uint8Array, lengthOf,
} from '../loader/intrinsics.js';
import { LentMemory, STACK_BYTES } from '../loader/memory.js';
import { describe, optionReader } from '../ops/options.js';
import { kernelFunctions } from './functions.js';
import { run, runLocked } from './run.js';
import { resolveBackend } from './runtime.js';

const readBindOptions = optionReader({ scratch: undefined, backend: 'auto', recover: undefined });
const readScratch = optionReader({ byteOffset: undefined, byteLength: undefined });

/** options.scratch read once: { byteOffset, byteLength } (a view of the memory names its own). */
function readRegion(scratch) {
  if (scratch === undefined) {
    throw new TypeError('bindMemory: options.scratch is required: { byteOffset, byteLength } of a region the kernels may use during a call');
  }
  if (scratch === null || typeof scratch !== 'object') {
    throw new TypeError(`bindMemory: options.scratch must be { byteOffset, byteLength }, got ${describe(scratch)}`);
  }
  if (isView(scratch)) {
    if (kindOf(scratch) === undefined) throw new TypeError('bindMemory: options.scratch must be a typed array view of the memory, or { byteOffset, byteLength }');
    return { byteOffset: byteOffsetOf(scratch), byteLength: byteLengthOf(scratch), buffer: bufferOf(scratch) };
  }
  const { byteOffset, byteLength } = readScratch('bindMemory', scratch, 'options.scratch');
  const numeric = (name, value) => {
    if (typeof value !== 'number') throw new TypeError(`bindMemory: options.scratch.${name} must be a number, got ${describe(value)}`);
  };
  numeric('byteOffset', byteOffset);
  numeric('byteLength', byteLength);
  return { byteOffset, byteLength, buffer: undefined };
}

const scratchOfOther = () => new TypeError('bindMemory: options.scratch must be a view of the memory\'s buffer, or { byteOffset, byteLength }');

/** The lent region [start, end) checked against the memory as it is now. */
function lentRegion({ byteOffset, byteLength }, buffer) {
  if (!isSafeInteger(byteOffset) || byteOffset < 16 || byteOffset % 16 !== 0) {
    throw new RangeError(`bindMemory: options.scratch.byteOffset must be a positive multiple of 16 (address 0 is the null pointer), got ${byteOffset}`);
  }
  if (!isSafeInteger(byteLength) || byteLength < STACK_BYTES) {
    throw new RangeError(`bindMemory: options.scratch.byteLength must be an integer of at least ${STACK_BYTES}, got ${byteLength}`);
  }
  const size = lengthOf(new Uint8Array(buffer));
  if (byteOffset + byteLength > size) {
    throw new RangeError(`bindMemory: options.scratch [${byteOffset}, ${byteOffset + byteLength}) lies outside the memory (${size} bytes)`);
  }
  return [byteOffset, byteOffset + byteLength];
}

/** The wasm64 kernels on a memory64 memory. An engine that makes such a
 * memory but cannot compile them (Node 20's flagged memory64 predates the
 * 64-bit tables of clang's wasm64 code) gets a TypeError that says so. */
async function instantiateMemory64(backend, shared, memory) {
  let module;
  try {
    module = await compileImportedMemoryBackend(backend, shared, true);
  } catch (error) {
    throw new TypeError(`bindMemory: memory is a memory64 memory (address: 'i64'), and this engine cannot compile the memory64 kernels (${error?.message})`);
  }
  try {
    return await instantiate(module, { env: { memory } });
  } catch (error) {
    if (!(error instanceof LinkError)) throw error;
    throw new TypeError(shared
      ? `bindMemory: a shared memory64 memory must have a maximum of at most ${SHARED_MAXIMUM_PAGES_64} pages (16 GiB), the most the kernels can declare in every engine`
      : `bindMemory: memory cannot be imported by the kernels, as a 32-bit or a memory64 memory (${error?.message})`);
  }
}

/**
 * Binds the kernels to an engine's WebAssembly.Memory. The functions returned
 * take the same arguments and options as the package's, but every array the
 * caller passes must be a view of `memory`'s buffer: nothing is copied in.
 * On a shared memory, each thread binds it with a scratch region of its own
 * and may run its share of the rows of one call at the same time as others.
 * A memory64 memory (address: 'i64') gets the wasm64 build of the kernels,
 * with the same bits.
 * @param {WebAssembly.Memory} memory shared or not
 * @param {{scratch: {byteOffset: number, byteLength: number}, backend?: 'auto'|'simd'|'scalar'}} options
 */
export async function bindMemory(memory, options) {
  try {
    memoryBufferOf(memory);
  } catch {
    throw new TypeError(`bindMemory: memory must be a WebAssembly.Memory, got ${describe(memory)}`);
  }
  if (options === undefined) {
    throw new TypeError('bindMemory: options with a scratch region are required: bindMemory(memory, { scratch: { byteOffset, byteLength } })');
  }
  // Every option is read before the memory is measured: a getter may grow it.
  const { scratch, backend: requested = 'auto', recover } = readBindOptions('bindMemory', options);
  const region = readRegion(scratch);
  if (recover !== undefined && typeof recover !== 'number') {
    throw new TypeError(`bindMemory: options.recover must be the lockId of a binding that will never run again, got ${describe(recover)}`);
  }
  if (recover !== undefined && (!isSafeInteger(recover) || recover <= 0)) {
    throw new RangeError(`bindMemory: options.recover must be a binding's lockId (a positive integer), got ${recover}`);
  }
  const backend = resolveBackend('bindMemory', 'options.backend', requested);
  const buffer = memoryBufferOf(memory);
  const lent = lentRegion(region, buffer);
  // A shared memory is told apart by its buffer, not by the
  // SharedArrayBuffer global, which pages without cross-origin isolation lack.
  const shared = isSharedBuffer(buffer);
  if (recover !== undefined && !shared) {
    throw new TypeError('bindMemory: options.recover frees the lock of a shared memory\'s region; this memory is not shared, and its regions have no lock');
  }
  const module = await compileImportedMemoryBackend(backend, shared);
  let instance;
  try {
    instance = await instantiate(module, { env: { memory } });
  } catch (error) {
    // The only memories the wasm32 kernels cannot import are memory64 ones
    // (address: 'i64'): the wasm64 build imports those.
    if (!(error instanceof LinkError)) throw error;
    instance = await instantiateMemory64(backend, shared, memory);
  }
  const exports = instanceExportsOf(instance);
  exports._initialize?.();
  // The stack grows down from the end of the lent region (both builds
  // export stackRestore; the wasm64 one takes the address as an f64).
  exports.stackRestore(lent[1]);
  // A view given as the scratch must be of this memory: of its buffer, or, for
  // a shared memory another thread grew since the view was made, of an
  // earlier buffer object over the same bytes (proven as an argument's is,
  // by a probe in the region, once its header is made).
  const viewOfOther = region.buffer !== undefined && region.buffer !== buffer;
  if (viewOfOther && !(shared && isSharedBuffer(region.buffer))) throw scratchOfOther();
  const lentMemory = new LentMemory(exports, memory, lent, shared);
  if (viewOfOther && !lentMemory.holds(region.buffer, 'bindMemory')) throw scratchOfOther();
  if (recover !== undefined) lentMemory.recover(recover);
  const { lockId } = lentMemory;
  return { backend, memory, shared, lockId, ...kernelFunctions(() => lentMemory, shared ? runLocked : run) };
}
