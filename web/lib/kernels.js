// The page's kernels: instances of its own from createKernels(), one for
// the backend the engine prefers and the scalar one beside it for the panels
// that compare or time both. Each instance has its own memory and tensors,
// so a panel calls the one it wants directly; none switches the package's
// default instance, and calls need no ordering between panels.

import { createKernels } from '../../src/index.js';

let instances = null; // backend -> the kernels of that backend
let preferred = null;

/** Creates the instances; returns the backend the engine prefers ('simd' or 'scalar'). */
export async function loadKernels() {
  const first = await createKernels();
  preferred = first.backend;
  instances = new Map([[preferred, first]]);
  if (preferred !== 'scalar') instances.set('scalar', await createKernels({ backend: 'scalar' }));
  return preferred;
}

/** The backend the engine got: 'simd' or 'scalar'. */
export function preferredBackend() {
  return preferred;
}

/** The backends with an instance: the preferred one last, as the panels list them. */
export function loadedBackends() {
  return preferred === 'simd' ? ['scalar', 'simd'] : ['scalar'];
}

/** The kernels of `backend` (default: the preferred one), with the package's functions and alloc(). */
export function kernels(backend = preferred) {
  const instance = instances?.get(backend);
  if (instance === undefined) throw new Error(`no ${backend} kernels loaded (loadKernels() first)`);
  return instance;
}

/**
 * The zero-copy path: x, weight and the output as tensors in the memory of
 * `backend`'s instance (its alloc()), so rmsNorm copies nothing. free()
 * when done.
 */
export function zeroCopyRmsNorm(backend, x, weight, eps) {
  const k = kernels(backend);
  const tensors = [k.alloc(x.length), k.alloc(weight.length), k.alloc(x.length)];
  const [xt, wt, yt] = tensors;
  xt.array.set(x);
  wt.array.set(weight);
  return {
    run: () => k.rmsNorm(xt, wt, { eps, out: yt }),
    result: () => yt.array.slice(),
    free: () => tensors.forEach((t) => t.free()),
  };
}
