// rmsnorm-wasm: RMSNorm for the web, in WebAssembly SIMD128.
import { defaultFunctions } from './api/runtime.js';

export { init, compileModule, createKernels } from './api/runtime.js';
export { bindMemory } from './api/bind.js';
export { Tensor } from './loader/tensor.js';
// ggml blocks back to float32: plain JS (the reference's), no wasm and no init() needed.
export { dequantize } from './reference/q8.js';
// The bytes of a dtype's values, a block format's blocks too: plain JS, no init() needed.
export { byteLength } from './ops/arrays.js';
// The one list of the public functions' names (each described in src/ops/descriptions.js).
export const { rmsNorm, addRmsNorm, layerNorm, rmsNormBackward, layerNormBackward, toFloat32, fromFloat32, quantize, alloc } = defaultFunctions;
