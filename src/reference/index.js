// rmsnorm-wasm/reference: the independent JS implementation, no wasm.
export { rmsNorm } from './rmsnorm.js';
