// Instances of the kernels. createKernels() makes an independent one (its own
// module instance, memory and tensors); init() chooses the default instance
// that the top-level functions run on; compileModule() hands the compiled
// module to workers.

import {
  BACKENDS, backendOf, compileBackend, instantiate, isWasmModule, notOurs, simdSupported,
} from '../loader/load.js';
import { Error, holds, List, Map, mapDelete, mapGet, mapSet, promiseThen, RangeError, TypeError } from '../loader/intrinsics.js';
import { KERNEL_EXPORTS } from '../ops/descriptions.js';
import { describe, optionReader } from '../ops/options.js';
import { allocFunction, kernelFunctions } from './functions.js';

const readInstanceOptions = optionReader({ backend: 'auto', module: undefined });


/** 'auto' | 'simd' | 'scalar' checked, and 'auto' resolved for this engine. */
export function resolveBackend(fn, name, requested) {
  if (requested !== 'auto' && !holds(BACKENDS, requested)) {
    throw new TypeError(`${fn}: ${name} must be 'auto', 'simd' or 'scalar', got ${describe(requested)}`);
  }
  const backend = requested === 'auto' ? (simdSupported() ? 'simd' : 'scalar') : requested;
  if (backend === 'simd' && !simdSupported()) {
    throw new Error(`${fn}: this engine does not support WebAssembly SIMD128; use the scalar backend`);
  }
  return backend;
}

/** { backend, module } read and checked: the backend, and the module to
 * instantiate (a promise of it), or a caller's precompiled one. */
function resolveInstanceOptions(fn, options) {
  const { backend: requested = 'auto', module } = readInstanceOptions(fn, options);
  if (module === undefined) {
    const backend = resolveBackend(fn, 'options.backend', requested);
    return { backend, module: compileBackend(backend), given: false };
  }
  if (!isWasmModule(module)) throw new TypeError(`${fn}: options.module must be a WebAssembly.Module, got ${describe(module)}`);
  const reason = notOurs(module, KERNEL_EXPORTS);
  if (reason !== '') throw new TypeError(`${fn}: options.module is not an rmsnorm-wasm module (${reason}); get one from compileModule()`);
  const backend = backendOf(module);
  if (requested !== 'auto' && requested !== backend) {
    throw new RangeError(`${fn}: options.backend is '${requested}' but options.module is the '${backend}' module`);
  }
  return { backend, module, given: true };
}

/** An instance of `module`, refused (a TypeError) when it fails the self-test. */
async function instanceOf(fn, module, given) {
  let memory;
  try {
    memory = await instantiate(await module);
  } catch (error) {
    // A caller's module whose start traps, say: said as the module's fault, naming the function.
    if (given) throw new TypeError(`${fn}: options.module is not an rmsnorm-wasm module (instantiating it failed: ${error?.message})`);
    throw error;
  }
  if (memory === null) {
    throw new TypeError(`${fn}: options.module is not an rmsnorm-wasm module (it fails the known-answer self-test); get one from compileModule()`);
  }
  return memory;
}

/** The functions of an instance whose memory `memoryFor(fn)` gives. */
function instanceFunctions(memoryFor) {
  return { ...kernelFunctions(memoryFor), alloc: allocFunction(memoryFor) };
}

/**
 * An independent instance of the kernels: its own module instance, memory
 * and tensors, with the same functions as the package's top level. Two
 * libraries in one app each create their own and never see each other's
 * backend or tensors.
 * @param {{backend?: 'auto'|'simd'|'scalar', module?: WebAssembly.Module}} [options]
 */
export async function createKernels(options) {
  const { backend, module, given } = resolveInstanceOptions('createKernels', options);
  const memory = await instanceOf('createKernels', module, given);
  return { backend, ...instanceFunctions(() => memory) };
}

// The default instance: one per backend and thread, of the package's own
// modules, instantiated on first use; init() says which one the top-level
// functions use. An instance of a caller's module is never cached here.
const defaults = new Map(); // backend -> Promise<OwnMemory>
let active = null;
// The init() calls not refused, in the order asked, each with its instance
// once it has one: the last of them wins.
let standing = new List();

/**
 * Loads the kernels of the default instance: the SIMD128 module where the
 * engine validates it, else the scalar one; `{ backend }` forces one and
 * `{ module }` instantiates a module from compileModule(). Calling it again
 * switches the top-level functions to that backend's instance; when calls
 * overlap, the one asked for last wins, whichever finishes compiling last.
 * A call that fails changes nothing.
 * @returns {Promise<{backend: 'simd' | 'scalar'}>}
 */
export async function init(options) {
  const { backend, module, given } = resolveInstanceOptions('init', options);
  const request = { memory: null };
  standing[standing.length] = request;
  let instance = given ? undefined : mapGet(defaults, backend);
  if (instance === undefined) {
    instance = instanceOf('init', module, given);
    if (!given) {
      mapSet(defaults, backend, instance);
      promiseThen(instance, undefined, () => mapDelete(defaults, backend)); // a failed load may be retried
    }
  }
  try {
    request.memory = await instance;
  } catch (error) {
    // A refused request leaves no trace: an earlier one may win after all.
    const rest = new List();
    for (let i = 0; i < standing.length; i++) if (standing[i] !== request) rest[rest.length] = standing[i];
    standing = rest;
    settle();
    throw error;
  }
  settle();
  return { backend };
}

/** The last request standing becomes the default instance once it has one. */
function settle() {
  const last = standing[standing.length - 1];
  if (last !== undefined && last.memory !== null) {
    active = last.memory;
    standing = [last];
  }
}

/**
 * The compiled WebAssembly.Module of a backend ('auto' by default: the one
 * init() would pick), compiled once and cached, to post to workers.
 * @param {'auto' | 'simd' | 'scalar'} [backend]
 * @returns {Promise<WebAssembly.Module>}
 */
export async function compileModule(backend = 'auto') {
  return compileBackend(resolveBackend('compileModule', 'backend', backend));
}

/** The default instance (its memory); throws if init() has not finished. */
export function activeKernels(fn) {
  if (active === null) throw new Error(`${fn}: call \`await init()\` before using the kernels`);
  return active;
}

/** The top-level functions: those of the default instance, whichever init() chose. */
export const defaultFunctions = instanceFunctions(activeKernels);
