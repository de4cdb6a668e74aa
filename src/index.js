// rmsnorm-wasm: RMSNorm for the web, in WebAssembly SIMD128.
export { init } from './api/runtime.js';
export { rmsNorm } from './api/rmsnorm.js';
export { layerNorm } from './api/layernorm.js';
export { rmsNormBackward, layerNormBackward } from './api/backward.js';
