// bindMemory(): the kernels running directly on an engine's own
// WebAssembly.Memory, without copying.
//
// The mechanism: a second build of the same kernels (the "imported-memory"
// modules, see the Makefile) imports its memory instead of owning one. It has
// no allocator and no data segments, so instantiating it writes nothing; the
// only bytes it ever touches besides the arguments of a call are its call
// stack, which lives in a scratch region the engine lends it.

import { BACKENDS, compileImportedMemoryBackend, simdSupported } from '../loader/load.js';
import { WasmKernels } from '../loader/kernels.js';
import { ARRAY_TYPE_OF } from './tensor.js';
import { checkOptionNames, describe, optionSet, outValue, resolveAddRmsNormArgs, resolveRmsNormArgs } from './validate.js';

const BIND_OPTIONS = optionSet((o) => ({ scratch: o.scratch, backend: o.backend }));

/** Bytes of stack the kernels need at most; the scratch region must hold them. */
export const MIN_SCRATCH_BYTES = 4096;

function checkScratch(scratch, memory) {
  if (scratch === null || typeof scratch !== 'object') {
    throw new TypeError(`bindMemory: options.scratch must be { byteOffset, byteLength }, got ${describe(scratch)}`);
  }
  const { byteOffset, byteLength } = scratch;
  if (!Number.isSafeInteger(byteOffset) || byteOffset < 0 || byteOffset % 16 !== 0) {
    throw new RangeError(`bindMemory: options.scratch.byteOffset must be a non-negative multiple of 16, got ${byteOffset}`);
  }
  if (!Number.isSafeInteger(byteLength) || byteLength < MIN_SCRATCH_BYTES) {
    throw new RangeError(`bindMemory: options.scratch.byteLength must be at least ${MIN_SCRATCH_BYTES}, got ${byteLength}`);
  }
  if (byteOffset + byteLength > memory.buffer.byteLength) {
    throw new RangeError(`bindMemory: options.scratch [${byteOffset}, ${byteOffset + byteLength}) lies outside the memory (${memory.buffer.byteLength} bytes)`);
  }
}

/**
 * Binds the kernels to an engine's WebAssembly.Memory. The returned rmsNorm
 * and addRmsNorm take the same arguments as the package's, but every array
 * must be a view of `memory.buffer` and `options.out` is required: nothing is
 * copied, nothing is allocated.
 * @param {WebAssembly.Memory} memory a non-shared memory
 * @param {{scratch: {byteOffset: number, byteLength: number}, backend?: 'auto'|'simd'|'scalar'}} options
 *   scratch: at least 4096 bytes, 16-byte aligned, that the kernels may use
 *   as their call stack and the engine does not use during a call.
 */
export async function bindMemory(memory, options) {
  if (!(memory instanceof WebAssembly.Memory)) {
    throw new TypeError(`bindMemory: memory must be a WebAssembly.Memory, got ${describe(memory)}`);
  }
  if (typeof SharedArrayBuffer !== 'undefined' && memory.buffer instanceof SharedArrayBuffer) {
    throw new TypeError('bindMemory: memory must not be shared (the kernels import a non-shared memory)');
  }
  const { scratch, backend: requested = 'auto' } = checkOptionNames('bindMemory', options, BIND_OPTIONS);
  checkScratch(scratch, memory);
  const lent = [scratch.byteOffset, scratch.byteOffset + scratch.byteLength]; // read once
  if (requested !== 'auto' && !BACKENDS.includes(requested)) {
    throw new TypeError(`bindMemory: options.backend must be 'auto', 'simd' or 'scalar', got ${describe(requested)}`);
  }
  const backend = requested === 'auto' ? (simdSupported() ? 'simd' : 'scalar') : requested;
  const instance = await WebAssembly.instantiate(await compileImportedMemoryBackend(backend), { env: { memory } });
  instance.exports._initialize?.();
  // The stack grows down from the end of the lent region.
  instance.exports.stackRestore(lent[1]);
  const kernels = new WasmKernels(instance.exports, memory);
  // The lent region is the kernels' call stack during a call: an argument in
  // it would be overwritten mid-call (and the stack by it), silently.
  const inLent = ({ array }) => array.buffer === memory.buffer
    && array.byteOffset < lent[1] && lent[0] < array.byteOffset + array.byteLength;

  const run = (fn, args, opts) => {
    if (args.out === undefined) {
      throw new TypeError(`${fn}: options.out is required on a bound memory (a view of it to write into)`);
    }
    if (args.rstd !== undefined) {
      // The bound modules export the forward kernel only, and own no memory to stage in.
      throw new TypeError(`${fn}: options.rstd is not available on a bound memory`);
    }
    for (const [name, arg] of [['x', args.x], ['weight', args.weight], ['residual', args.residual], ['options.out', args.out]]) {
      if (arg && inLent(arg)) {
        throw new RangeError(`${fn}: ${name} overlaps options.scratch [${lent[0]}, ${lent[1]}), the kernels' stack during a call`);
      }
    }
    if (args.rows > 0) kernels.rmsNorm(fn, args, args.out);
    return outValue(args.out);
  };
  return {
    backend,
    memory,
    /** rmsNorm on views of the bound memory. */
    rmsNorm: (x, weight, opts) => run('rmsNorm', resolveRmsNormArgs('rmsNorm', x, weight, opts), opts),
    /** addRmsNorm on views of the bound memory. */
    addRmsNorm: (x, residual, weight, opts) =>
      run('addRmsNorm', resolveAddRmsNormArgs('addRmsNorm', x, residual, weight, opts), opts),
  };
}

