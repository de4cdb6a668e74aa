// rmsnorm-wasm: RMSNorm for the web, in WebAssembly SIMD128.
export { compileModule, init } from './api/runtime.js';
export { rmsNorm, addRmsNorm } from './api/rmsnorm.js';
export { layerNorm } from './api/layernorm.js';
export { rmsNormBackward, layerNormBackward } from './api/backward.js';
export { alloc } from './api/alloc.js';
export { Tensor } from './api/tensor.js';
export { bindMemory } from './api/bind.js';
