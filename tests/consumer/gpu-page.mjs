// A browser page on all three entry points of the installed package, as
// the import-map page loads it and as esbuild bundles it: the worked
// example from rmsnorm-wasm and from rmsnorm-wasm/reference, then the same
// call on the GPU through rmsnorm-wasm/webgpu (the README's quick start).
// Reports in document.body.dataset.report.
import { init, rmsNorm } from 'rmsnorm-wasm';
import { rmsNorm as referenceRmsNorm } from 'rmsnorm-wasm/reference';
import { createArrayKernels, createGpuKernels } from 'rmsnorm-wasm/webgpu';
import { weight, x } from './example.mjs';

const report = {};
try {
  report.backend = (await init()).backend;
  report.wasm = Array.from(rmsNorm(x, weight));
  report.reference = Array.from(referenceRmsNorm(x, weight));
  const adapter = await navigator.gpu?.requestAdapter();
  if (!adapter) throw new Error(`no WebGPU adapter (navigator.gpu: ${typeof navigator.gpu})`);
  const device = await adapter.requestDevice();
  const gpu = createArrayKernels(createGpuKernels(device));
  report.gpu = Array.from(await gpu.rmsNorm(x, weight));
} catch (err) {
  report.error = String(err?.stack ?? err);
}
document.body.dataset.report = JSON.stringify(report);
