// init(): which backend runs, and the instance every kernel call goes to.
// compileModule(): the compiled module, to hand to workers.

import {
  BACKENDS, backendOf, compileBackend, instantiate, isWasmModule, simdSupported,
} from '../loader/load.js';
import { checkOptionNames, describe, optionSet } from './validate.js';

const INIT_OPTIONS = optionSet((o) => ({ backend: o.backend, module: o.module }));

const instances = new Map(); // backend -> Promise<WasmKernels>, one per backend
let active = null; // { backend, kernels } of the last init() to finish

/** 'auto' | 'simd' | 'scalar' checked, and 'auto' resolved for this engine. */
function resolveBackend(fn, name, requested) {
  if (requested !== 'auto' && !BACKENDS.includes(requested)) {
    throw new TypeError(`${fn}: ${name} must be 'auto', 'simd' or 'scalar', got ${describe(requested)}`);
  }
  const backend = requested === 'auto' ? (simdSupported() ? 'simd' : 'scalar') : requested;
  if (backend === 'simd' && !simdSupported()) {
    throw new Error(`${fn}: this engine does not support WebAssembly SIMD128; use the scalar backend`);
  }
  return backend;
}

/** The backend of a module passed as init({ module }), checked against { backend }. */
function moduleBackend(module, requested) {
  if (!isWasmModule(module)) {
    throw new TypeError(`init: options.module must be a WebAssembly.Module, got ${describe(module)}`);
  }
  const backend = backendOf(module);
  if (backend === undefined) {
    throw new TypeError('init: options.module is not an rmsnorm-wasm module; get one from compileModule()');
  }
  if (requested !== 'auto' && requested !== backend) {
    throw new RangeError(`init: options.backend is '${requested}' but options.module is the '${backend}' module`);
  }
  return backend;
}

/**
 * Loads the WebAssembly kernels. Picks the SIMD128 module when the engine
 * validates it and the scalar module otherwise; `{ backend }` forces one.
 * `{ module }` instantiates a module from compileModule() instead of
 * compiling the embedded one (compile once, instantiate in each worker); the
 * module knows its backend. Idempotent: each backend is instantiated once per
 * thread, and calling init again only switches which one the kernels use.
 * @param {{backend?: 'auto' | 'simd' | 'scalar', module?: WebAssembly.Module}} [options]
 * @returns {Promise<{backend: 'simd' | 'scalar'}>}
 */
export async function init(options) {
  const { backend: requested = 'auto', module } = checkOptionNames('init', options, INIT_OPTIONS);
  const backend = module === undefined
    ? resolveBackend('init', 'options.backend', requested)
    : moduleBackend(module, requested);
  let kernels = instances.get(backend);
  if (kernels === undefined) {
    kernels = (module === undefined ? compileBackend(backend) : Promise.resolve(module)).then(instantiate);
    instances.set(backend, kernels);
    kernels.catch(() => instances.delete(backend)); // a failed load may be retried
  }
  active = { backend, kernels: await kernels };
  return { backend };
}

/**
 * The compiled WebAssembly.Module of a backend ('auto' by default: the one
 * init() would pick), compiled once and cached. Post it to workers and pass
 * it to their init({ module }) so that each one only instantiates it.
 * @param {'auto' | 'simd' | 'scalar'} [backend]
 * @returns {Promise<WebAssembly.Module>}
 */
export async function compileModule(backend = 'auto') {
  return compileBackend(resolveBackend('compileModule', 'backend', backend));
}

/** The instance the kernels run on; throws if init() has not finished. */
export function activeKernels(fn) {
  if (active === null) {
    throw new Error(`${fn}: call \`await init()\` before using the kernels`);
  }
  return active.kernels;
}
