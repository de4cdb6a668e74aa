// rmsnorm-wasm/webgpu: RMSNorm and addRmsNorm on WebGPU with the bits of the
// wasm kernels and the JS reference (docs/webgpu.md). A separate entry
// point: the main package imports nothing from here.
export { createGpuKernels } from './kernels.js';
export { createArrayKernels } from './arrays.js';
