// alloc(): tensors in the active module's memory, for zero-copy calls.
import { activeKernels } from './runtime.js';
import { DTYPES } from './tensor.js';
import { describe } from './validate.js';

/**
 * A tensor of `length` values of `dtype` living in wasm memory. Pass it (or
 * its `.array`) to any kernel: nothing is copied. Free it with `.free()`.
 * @param {number} length
 * @param {'float32'|'bfloat16'|'float16'} [dtype]
 */
export function alloc(length, dtype = 'float32') {
  const kernels = activeKernels('alloc');
  if (typeof length !== 'number') throw new TypeError(`alloc: length must be a number, got ${describe(length)}`);
  if (!Number.isSafeInteger(length) || length < 0) {
    throw new RangeError(`alloc: length must be a non-negative integer, got ${length}`);
  }
  if (!DTYPES.includes(dtype)) {
    throw new TypeError(`alloc: dtype must be ${DTYPES.map((d) => `'${d}'`).join(' or ')}, got ${describe(dtype)}`);
  }
  return kernels.alloc('alloc', length, dtype);
}
