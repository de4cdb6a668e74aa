// A Node ESM consumer of the installed package: prints what it computed.
import { init, rmsNorm } from 'rmsnorm-wasm';
import * as api from 'rmsnorm-wasm';
import * as referenceApi from 'rmsnorm-wasm/reference';
import { rmsNorm as referenceRmsNorm } from 'rmsnorm-wasm/reference';
import { weight, x } from './example.mjs';

const { backend } = await init();
const deepImport = await import('rmsnorm-wasm/src/index.js').then(() => 'allowed', (err) => err.code);
console.log(JSON.stringify({
  backend,
  wasm: Array.from(rmsNorm(x, weight)),
  reference: Array.from(referenceRmsNorm(x, weight)),
  exports: { '.': Object.keys(api).sort(), './reference': Object.keys(referenceApi).sort() },
  deepImport,
}));
