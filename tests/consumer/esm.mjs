// A Node ESM consumer of the installed package: imports every entry of its
// exports map, calls what Node can call, and prints what it got.
import { init, rmsNorm } from 'rmsnorm-wasm';
import * as api from 'rmsnorm-wasm';
import * as referenceApi from 'rmsnorm-wasm/reference';
import { rmsNorm as referenceRmsNorm } from 'rmsnorm-wasm/reference';
import * as webgpuApi from 'rmsnorm-wasm/webgpu';
import manifest from 'rmsnorm-wasm/package.json' with { type: 'json' };
import { weight, x } from './example.mjs';

const { backend } = await init();
const deepImport = await import('rmsnorm-wasm/src/index.js').then(() => 'allowed', (err) => err.code);
// Node has no WebGPU: each function is called, and refuses with its own message.
const webgpuCalls = {};
for (const name of ['createGpuKernels', 'createArrayKernels']) {
  try {
    webgpuApi[name]({});
    webgpuCalls[name] = 'returned';
  } catch (err) {
    webgpuCalls[name] = `${err.constructor.name}: ${err.message}`;
  }
}
console.log(JSON.stringify({
  backend,
  wasm: Array.from(rmsNorm(x, weight)),
  reference: Array.from(referenceRmsNorm(x, weight)),
  exports: { '.': Object.keys(api).sort(), './reference': Object.keys(referenceApi).sort(), './webgpu': Object.keys(webgpuApi).sort() },
  webgpuCalls,
  version: manifest.version,
  header: import.meta.resolve('rmsnorm-wasm/c/rmsnorm_wasm.h'),
  deepImport,
}));
