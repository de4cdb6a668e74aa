// Runs one call on every implementation: the SIMD module, the scalar module
// and the JS reference.
import { init, rmsNorm } from '../../src/index.js';
import { rmsNorm as referenceRmsNorm } from '../../src/reference/index.js';

export const WASM_BACKENDS = ['simd', 'scalar'];

/** Calls fn(rmsNorm) once per backend; returns { simd, scalar, reference }. */
export async function onEveryBackend(fn) {
  const results = {};
  for (const backend of WASM_BACKENDS) {
    await init({ backend });
    results[backend] = fn(rmsNorm);
  }
  results.reference = fn(referenceRmsNorm);
  return results;
}
