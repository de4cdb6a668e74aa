// A TypeScript consumer of rmsnorm-wasm/webgpu, compiled by
// tests/tarball.test.js under every TypeScript the docs name: 6.0 and
// later as it is (their DOM lib has the WebGPU types), 5.4 to 5.9 with
// @webgpu/types (docs/engines.md, "The GPU"). Type-level only.
import { createArrayKernels, createGpuKernels } from 'rmsnorm-wasm/webgpu';

declare const device: GPUDevice;
declare const buffer: GPUBuffer;
const gpu = createGpuKernels(device);
const encoder = device.createCommandEncoder();
gpu.rmsNorm(encoder, { x: buffer, weight: null, out: { buffer, offset: 256 } }, { rows: 1, dim: 4 });
const arrays = createArrayKernels(gpu);
export const y: Promise<Float32Array> = arrays.rmsNorm(new Float32Array(4), null, { dim: 4 });
// @ts-expect-error: params.rows is required
gpu.rmsNorm(encoder, { x: buffer }, { dim: 4 });
