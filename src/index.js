// rmsnorm-wasm: RMSNorm for the web, in WebAssembly SIMD128.
export { compileModule, init } from './api/runtime.js';
export { rmsNorm } from './api/rmsnorm.js';
