// init(): which backend runs, and the instance every kernel call goes to.

import { BACKENDS, compileBackend, instantiate, simdSupported } from '../loader/load.js';
import { checkOptionNames, describe } from './validate.js';

const instances = new Map(); // backend -> Promise<WasmKernels>, one per backend
let active = null; // { backend, kernels } of the last init() to finish

/**
 * Loads the WebAssembly kernels. Picks the SIMD128 module when the engine
 * validates it and the scalar module otherwise; `{ backend }` forces one.
 * Idempotent: each backend is instantiated once, and calling init again only
 * switches which one the kernels use.
 * @param {{backend?: 'auto' | 'simd' | 'scalar'}} [options]
 * @returns {Promise<{backend: 'simd' | 'scalar'}>}
 */
export async function init(options) {
  const { backend: requested = 'auto' } = checkOptionNames('init', options, ['backend']);
  if (requested !== 'auto' && !BACKENDS.includes(requested)) {
    throw new TypeError(`init: options.backend must be 'auto', 'simd' or 'scalar', got ${describe(requested)}`);
  }
  const backend = requested === 'auto' ? (simdSupported() ? 'simd' : 'scalar') : requested;
  if (backend === 'simd' && !simdSupported()) {
    throw new Error('init: this engine does not support WebAssembly SIMD128; use the scalar backend');
  }
  let kernels = instances.get(backend);
  if (kernels === undefined) {
    kernels = compileBackend(backend).then(instantiate);
    instances.set(backend, kernels);
    kernels.catch(() => instances.delete(backend)); // a failed load may be retried
  }
  active = { backend, kernels: await kernels };
  return { backend };
}

/** The instance the kernels run on; throws if init() has not finished. */
export function activeKernels(fn) {
  if (active === null) {
    throw new Error(`${fn}: call \`await init()\` before using the kernels`);
  }
  return active.kernels;
}
