// Runs one call on every implementation: the SIMD module, the scalar module
// and the JS reference.
import * as wasm from '../../src/index.js';
import * as reference from '../../src/reference/index.js';

export const WASM_BACKENDS = ['simd', 'scalar'];

/** Calls fn(impl.rmsNorm, impl) once per implementation; returns { simd, scalar, reference }. */
export async function onEveryBackend(fn) {
  const results = {};
  for (const backend of WASM_BACKENDS) {
    await wasm.init({ backend });
    results[backend] = fn(wasm.rmsNorm, wasm);
  }
  results.reference = fn(reference.rmsNorm, reference);
  return results;
}
