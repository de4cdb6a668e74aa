// The page's only door to the kernels. init() switches one global backend,
// and the bit-exactness and speed panels switch it back and forth, so every
// kernel call goes through one queue: a job runs on the backend it asked for,
// with no other job's init() in between.

import { init } from '../../src/index.js';
import { activeKernels } from '../../src/api/runtime.js';

let tail = Promise.resolve();
let preferred = null;

/** Loads both modules the engine supports; returns the backend `init()` picks by itself. */
export async function loadKernels() {
  const { backend } = await init();
  preferred = backend;
  return backend;
}

/** The backend the engine got: 'simd' or 'scalar'. */
export function preferredBackend() {
  return preferred;
}

/**
 * Runs `job()` (synchronous) on `backend` (default: the preferred one) after
 * every job queued before it. Resolves to what the job returns.
 */
export function onBackend(job, backend = preferred) {
  const run = tail.then(async () => {
    await init({ backend });
    return job();
  });
  tail = run.catch(() => {});
  return run;
}

/**
 * Data already inside the active module's memory, and its raw kernel: the
 * speed panel's zero-copy rows, which time the kernel without the copying
 * API's staging. Call inside an onBackend job; free() when done.
 */
export function zeroCopyRmsNorm(x, weight, dim, eps) {
  const kernels = activeKernels('zeroCopyRmsNorm');
  const { malloc, free, rmsnorm_f32: kernel } = kernels.exports;
  const rows = x.length / dim;
  const xPtr = malloc(x.byteLength) >>> 0;
  const wPtr = malloc(weight.byteLength) >>> 0;
  const yPtr = malloc(x.byteLength) >>> 0;
  if (xPtr === 0 || wPtr === 0 || yPtr === 0) throw new RangeError('zeroCopyRmsNorm: out of wasm memory');
  const heap = kernels.heap; // after every malloc, which may grow memory
  heap.set(x, xPtr / 4);
  heap.set(weight, wPtr / 4);
  return {
    run: () => kernel(xPtr, wPtr, yPtr, rows, dim, eps),
    result: () => kernels.heap.slice(yPtr / 4, yPtr / 4 + x.length),
    free: () => { free(yPtr); free(wPtr); free(xPtr); },
  };
}
