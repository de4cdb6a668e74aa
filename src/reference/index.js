// rmsnorm-wasm/reference: the independent JS implementation, no wasm.
export { rmsNorm, addRmsNorm } from './rmsnorm.js';
export { layerNorm } from './layernorm.js';
export { rmsNormBackward, layerNormBackward } from './backward.js';
export { toFloat32, fromFloat32 } from './convert.js';
export { quantize, dequantize } from './q8.js';
export { byteLength } from '../ops/arrays.js';
