// Instances of the kernels. createKernels() makes an independent one (its own
// module instance, memory and tensors); init() chooses the default instance
// that the top-level functions run on; compileModule() hands the compiled
// module to workers.

import {
  BACKENDS, backendOf, compileBackend, instantiate, isWasmModule, missingExports, simdSupported,
} from '../loader/load.js';
import { describe, optionReader } from './args.js';
import { kernelFunctions } from './functions.js';

const readInstanceOptions = optionReader(class InstanceOptions { backend; module; });

/** 'auto' | 'simd' | 'scalar' checked, and 'auto' resolved for this engine. */
export function resolveBackend(fn, name, requested) {
  if (requested !== 'auto' && !BACKENDS.includes(requested)) {
    throw new TypeError(`${fn}: ${name} must be 'auto', 'simd' or 'scalar', got ${describe(requested)}`);
  }
  const backend = requested === 'auto' ? (simdSupported() ? 'simd' : 'scalar') : requested;
  if (backend === 'simd' && !simdSupported()) {
    throw new Error(`${fn}: this engine does not support WebAssembly SIMD128; use the scalar backend`);
  }
  return backend;
}

/** { backend, module } read and checked: the module to instantiate (a
 * promise of it) and its backend. A precompiled module must be one of ours,
 * whole: its backend section and every export the kernels call. */
function resolveInstanceOptions(fn, options) {
  const { backend: requested = 'auto', module } = readInstanceOptions(fn, options);
  if (module === undefined) {
    const backend = resolveBackend(fn, 'options.backend', requested);
    return { backend, module: compileBackend(backend) };
  }
  if (!isWasmModule(module)) {
    throw new TypeError(`${fn}: options.module must be a WebAssembly.Module, got ${describe(module)}`);
  }
  const backend = backendOf(module);
  const missing = missingExports(module);
  if (backend === undefined || missing.length > 0) {
    throw new TypeError(`${fn}: options.module is not an rmsnorm-wasm module${missing.length > 0
      ? ` (it lacks ${missing.join(', ')})` : ''}; get one from compileModule()`);
  }
  if (requested !== 'auto' && requested !== backend) {
    throw new RangeError(`${fn}: options.backend is '${requested}' but options.module is the '${backend}' module`);
  }
  return { backend, module: Promise.resolve(module) };
}

/**
 * An independent instance of the kernels: its own module instance, memory
 * and tensors, with the same functions as the package's top level. Two
 * libraries in one app each create their own and never see each other's
 * backend or tensors.
 * @param {{backend?: 'auto'|'simd'|'scalar', module?: WebAssembly.Module}} [options]
 */
export async function createKernels(options) {
  const { backend, module } = resolveInstanceOptions('createKernels', options);
  const kernels = await instantiate(await module);
  return { backend, ...kernelFunctions(() => kernels) };
}

// The default instance: one per backend and thread, instantiated on first
// use; init() says which one the top-level functions use.
const defaults = new Map(); // backend -> Promise<WasmKernels>
let active = null;
let latestRequest = 0;

/**
 * Loads the kernels of the default instance: the SIMD128 module where the
 * engine validates it, else the scalar one; `{ backend }` forces one and
 * `{ module }` instantiates a module from compileModule(). Calling it again
 * switches the top-level functions to that backend's instance; when calls
 * overlap, the one asked for last wins, whichever finishes compiling last.
 * @returns {Promise<{backend: 'simd' | 'scalar'}>}
 */
export async function init(options) {
  const request = ++latestRequest;
  const { backend, module } = resolveInstanceOptions('init', options);
  let instance = defaults.get(backend);
  if (instance === undefined) {
    instance = module.then(instantiate);
    defaults.set(backend, instance);
    instance.catch(() => defaults.delete(backend)); // a failed load may be retried
  }
  const kernels = await instance;
  if (request === latestRequest) active = kernels;
  return { backend };
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

/** The default instance's kernels; throws if init() has not finished. */
export function activeKernels(fn) {
  if (active === null) throw new Error(`${fn}: call \`await init()\` before using the kernels`);
  return active;
}

export const {
  rmsNorm, addRmsNorm, layerNorm, rmsNormBackward, layerNormBackward, alloc,
} = kernelFunctions(activeKernels);
