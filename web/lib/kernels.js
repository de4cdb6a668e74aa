// The page's only door to the kernels. init() switches one global backend,
// and the bit-exactness and speed panels switch it back and forth, so every
// kernel call goes through one queue: a job runs on the backend it asked for,
// with no other job's init() in between.

import { alloc, init, rmsNorm } from '../../src/index.js';

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
 * The zero-copy path: x, weight and the output as tensors in the active
 * module's memory (the package's alloc()), so rmsNorm copies nothing. Call
 * inside an onBackend job, run it on the same backend, free() when done.
 */
export function zeroCopyRmsNorm(x, weight, eps) {
  const tensors = [alloc(x.length), alloc(weight.length), alloc(x.length)];
  const [xt, wt, yt] = tensors;
  xt.array.set(x);
  wt.array.set(weight);
  return {
    run: () => rmsNorm(xt, wt, { eps, out: yt }),
    result: () => yt.array.slice(),
    free: () => tensors.forEach((t) => t.free()),
  };
}
