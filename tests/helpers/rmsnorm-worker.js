// A worker_threads worker: instantiates the module it is handed (it must not
// compile anything itself) and normalizes the batch it is given.
import { parentPort, workerData } from 'node:worker_threads';
import { init, rmsNorm } from '../../src/index.js';

// Compiling here would defeat "compile once": make any attempt fail loudly.
for (const name of ['compile', 'compileStreaming', 'validate']) {
  WebAssembly[name] = () => { throw new Error(`worker called WebAssembly.${name}`); };
}

const { module, x, weight, repeats } = workerData;
const { backend } = await init({ module });
let y;
for (let i = 0; i < repeats; i++) y = rmsNorm(x, weight);
parentPort.postMessage({ backend, y });
