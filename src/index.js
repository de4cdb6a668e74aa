// rmsnorm-wasm: RMSNorm for the web, in WebAssembly SIMD128.
export {
  init, compileModule, createKernels, rmsNorm, addRmsNorm, layerNorm, rmsNormBackward, layerNormBackward, alloc,
} from './api/runtime.js';
export { bindMemory } from './api/bind.js';
export { Tensor } from './loader/tensor.js';
