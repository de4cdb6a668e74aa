// rmsnorm-wasm/reference: the independent JS implementation, no wasm.
export { rmsNorm, addRmsNorm } from './rmsnorm.js';
