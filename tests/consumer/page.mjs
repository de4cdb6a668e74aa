// A browser page bundled by esbuild from the installed package: computes the
// worked example on the main thread, then hands the compiled module to a Web
// Worker, and reports both in document.body.dataset.report.
import { compileModule, init, rmsNorm } from 'rmsnorm-wasm';
import { rmsNorm as referenceRmsNorm } from 'rmsnorm-wasm/reference';
import { batch, weight, x } from './example.mjs';

function inWorker(message) {
  const worker = new Worker(new URL('./worker.js', import.meta.url), { type: 'module' });
  return new Promise((resolve, reject) => {
    worker.onmessage = (event) => resolve(event.data);
    worker.onerror = (event) => reject(new Error(`worker: ${event.message}`));
    worker.postMessage(message);
  });
}

const report = {};
try {
  report.backend = (await init()).backend;
  report.wasm = Array.from(rmsNorm(x, weight));
  report.reference = Array.from(referenceRmsNorm(x, weight));
  const long = batch();
  report.long = Array.from(rmsNorm(long.x, long.weight));
  report.worker = await inWorker({ module: await compileModule(), ...long });
} catch (err) {
  report.error = String(err?.stack ?? err);
}
document.body.dataset.report = JSON.stringify(report);
