// A thread of a threaded engine: binds the kernels to the engine's shared
// WebAssembly.Memory with a scratch region of its own, then runs its share
// of the rows of each job it is posted (tests/shared-memory.test.js and the
// two-worker benchmark, tests/bench/threads.js).
import { parentPort, workerData } from 'node:worker_threads';
import { bindMemory } from '../../src/index.js';

const { memory, scratch, backend } = workerData;
const kernels = await bindMemory(memory, { scratch, backend });

// job: { op: 'rmsNorm' | 'addRmsNorm', dim, eps, from, to (rows), x, residual,
// weight, out (byte addresses), repeat }. Replies with the seconds it took.
parentPort.on('message', (job) => {
  const view = (at, n) => new Float32Array(memory.buffer, at, n);
  const { dim, from, to, repeat = 1 } = job;
  const rows = (at) => view(at + 4 * from * dim, (to - from) * dim);
  const x = rows(job.x);
  const out = rows(job.out);
  const weight = view(job.weight, dim);
  const residual = job.residual === undefined ? undefined : rows(job.residual);
  const start = performance.now();
  for (let i = 0; i < repeat; i++) {
    if (job.op === 'rmsNorm') kernels.rmsNorm(x, weight, { eps: job.eps, out });
    else kernels.addRmsNorm(x, residual, weight, { eps: job.eps, out });
  }
  parentPort.postMessage({ shared: kernels.shared, seconds: (performance.now() - start) / 1e3 });
});
parentPort.postMessage({ ready: true });
