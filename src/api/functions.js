// The public functions of an instance, made from the descriptions
// (src/ops/descriptions.js): each resolves its call against the instance's
// memory and runs it (./run.js). init()'s top-level functions,
// createKernels() and bindMemory() all hand out functions made here.

import { BLOCK_FORMAT, TENSOR_DTYPES } from '../loader/abi.js';
import { defineProperty, holds, join, RangeError, TypeError } from '../loader/intrinsics.js';
import { OP_NAMES, OPS } from '../ops/descriptions.js';
import { countOf, describe } from '../ops/options.js';
import { PreparedCall } from '../ops/prepared.js';
import { resolve, resolveOnce } from '../ops/resolve.js';
import { directOf, run } from './run.js';

/** The function `op` describes, on the memory `memoryFor(name)` gives at each call
 * (the default instance looks it up every time: init() may switch it). It
 * takes as many parameters as the function has, options included: an
 * engine calls with fewer arguments than a function declares through a
 * slower path (SpiderMonkey's arguments rectifier). Its `prepare` method
 * takes the same arguments and returns a PreparedCall on the memory of that
 * moment (src/ops/prepared.js). */
function kernelFunction(op, memoryFor, runner) {
  const { name } = op;
  const byArity = {
    1: {
      [name](x, options) {
        const memory = memoryFor(name);
        return runner(memory, resolve(op, name, memory, x, options, undefined, undefined, undefined));
      },
    },
    2: {
      [name](x, p, options) {
        const memory = memoryFor(name);
        return runner(memory, resolve(op, name, memory, x, p, options, undefined, undefined));
      },
    },
    3: {
      [name](x, p, q, options) {
        const memory = memoryFor(name);
        return runner(memory, resolve(op, name, memory, x, p, q, options, undefined));
      },
    },
    4: {
      [name](x, p, q, r, options) {
        const memory = memoryFor(name);
        return runner(memory, resolve(op, name, memory, x, p, q, r, options));
      },
    },
  };
  const fn = byArity[op.params.length][name];
  function prepare(a, b, c, d, e) {
    const memory = memoryFor(name);
    const call = resolveOnce(op, name, memory, a, b, c, d, e);
    return new PreparedCall(call, (prepared) => runner(memory, prepared), directOf(memory, call, runner));
  }
  defineProperty(fn, 'prepare', { __proto__: null, value: prepare, enumerable: false, writable: true, configurable: true });
  return fn;
}

/** rmsNorm, addRmsNorm, layerNorm and the backward passes on an instance's
 * memory, each call run by `runner` (./run.js: run, or runLocked for a shared lent region). */
export function kernelFunctions(memoryFor, runner = run) {
  const functions = {};
  for (let i = 0; i < OP_NAMES.length; i++) {
    const value = kernelFunction(OPS[OP_NAMES[i]], memoryFor, runner);
    // A descriptor of no prototype: defineProperty reads `get` and `set` too, where a page may have put them.
    defineProperty(functions, OP_NAMES[i], { __proto__: null, value, enumerable: true, writable: true, configurable: true });
  }
  return functions;
}

/**
 * A tensor of `length` values of `dtype` in the instance's memory, zeroed:
 * pass it to any kernel and nothing is copied. Free it with `.free()`. A
 * block format's tensor holds bytes, a whole number of its blocks: the
 * `out` of a block output or of quantize, written in place.
 */
export function allocFunction(memoryFor) {
  return function alloc(length, dtype = 'float32') {
    const memory = memoryFor('alloc');
    countOf('alloc', 'length', length);
    if (!holds(TENSOR_DTYPES, dtype)) throw new TypeError(`alloc: dtype must be ${join(TENSOR_DTYPES, ' or ', "'")}, got ${describe(dtype)}`);
    const format = BLOCK_FORMAT[dtype];
    if (format !== undefined && length % format.bytes !== 0) {
      throw new RangeError(`alloc: length (${length}) must be a whole number of ${dtype} blocks, a multiple of ${format.bytes} bytes: byteLength('${dtype}', [rows, dim]) gives a shape's`);
    }
    return memory.alloc('alloc', length, dtype);
  };
}
