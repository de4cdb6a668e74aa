// An engine's shared WebAssembly.Memory laid out for one call of rows × dim
// (x, residual, weight, out, and a scratch region per thread), and the
// threads that share its rows (tests/helpers/shared-memory-worker.js).
import { Worker } from 'node:worker_threads';

const PAGE = 65536;
const SCRATCH_BYTES = 65536;

export function sharedLayout(rows, dim, threads) {
  const bytes = 4 * rows * dim;
  const at = { x: PAGE, residual: PAGE + bytes, out: PAGE + 2 * bytes, weight: PAGE + 3 * bytes };
  const scratchAt = Math.ceil((at.weight + 4 * dim) / PAGE) * PAGE;
  const pages = (scratchAt + threads * SCRATCH_BYTES) / PAGE;
  const memory = new WebAssembly.Memory({ initial: pages, maximum: pages, shared: true });
  const scratch = (t) => ({ byteOffset: scratchAt + t * SCRATCH_BYTES, byteLength: SCRATCH_BYTES });
  const view = (name, n = rows * dim) => new Float32Array(memory.buffer, at[name], n);
  return { memory, at, scratch, view };
}

/** `threads` workers bound to layout.memory, each with its own scratch; resolves once all are ready. */
export async function startThreads(layout, threads, backend = 'auto') {
  const workers = await Promise.all(Array.from({ length: threads }, (_, t) => new Promise((resolve, reject) => {
    const worker = new Worker(new URL('./shared-memory-worker.js', import.meta.url), {
      workerData: { memory: layout.memory, scratch: layout.scratch(t), backend },
    });
    worker.once('message', () => resolve(worker));
    worker.once('error', reject);
  })));
  /** Runs `job` on every thread, each on its share of `rows`; resolves with their replies. */
  const run = (job, rows) => Promise.all(workers.map((worker, t) => new Promise((resolve, reject) => {
    const from = Math.floor((rows * t) / threads);
    const to = Math.floor((rows * (t + 1)) / threads);
    const fail = (error) => reject(error);
    worker.once('error', fail);
    worker.once('message', (reply) => {
      worker.off('error', fail);
      resolve(reply);
    });
    worker.postMessage({ ...job, from, to });
  })));
  const stop = () => Promise.all(workers.map((w) => w.terminate()));
  return { run, stop };
}
