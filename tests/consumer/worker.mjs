// The page's Web Worker: instantiates the module it is posted (it must not
// compile anything itself) and normalizes the batch.
import { init, rmsNorm } from 'rmsnorm-wasm';

for (const name of ['compile', 'compileStreaming', 'validate']) {
  WebAssembly[name] = () => { throw new Error(`worker called WebAssembly.${name}`); };
}

self.onmessage = async ({ data: { module, x, weight } }) => {
  const { backend } = await init({ module });
  self.postMessage({ backend, y: Array.from(rmsNorm(x, weight)) });
};
