// The demo page: the worked example from the seeds, computed by this
// package's wasm kernel in the browser.
import { init, rmsNorm } from '../src/index.js';

const status = document.getElementById('status');
try {
  const { backend } = await init();
  const y = rmsNorm(new Float32Array([2, -4, 6, -8]), new Float32Array([1.5, 0.5, 1, 2]));
  y.forEach((v, i) => { document.getElementById(`y${i}`).textContent = v.toFixed(2); });
  status.textContent = `Computed by the ${backend === 'simd' ? 'SIMD128' : 'scalar'} WebAssembly module (backend: ${backend}).`;
  status.dataset.backend = backend;
} catch (err) {
  status.textContent = `Could not run the kernel: ${err.message}`;
}
