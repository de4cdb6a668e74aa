// Types of rmsnorm-wasm/webgpu (docs/webgpu.md).
import type { Dtype, NormResult, OptionsArg, Storage, WeightOf } from '../index.js';

/** A GPUBuffer, or a byte offset in one (a multiple of the dtype's bytes; no other alignment). */
export type GpuBinding = GPUBuffer | { buffer: GPUBuffer; offset?: number };

export type GpuDtype = 'float32' | 'bfloat16' | 'float16';

export interface GpuRmsNormBuffers {
  /** rows * dim values of params.dtype. */
  x: GpuBinding;
  /** dim values of params.weightDtype, or null/absent for no weight. */
  weight?: GpuBinding | null;
  /** rows * dim values of params.dtype; may be x itself (in place). Absent: rstd only. */
  out?: GpuBinding | null;
  /** rows float32 values: 1/rms of each row, as the backward pass reads it. */
  rstd?: GpuBinding | null;
}

export interface GpuAddRmsNormBuffers extends GpuRmsNormBuffers {
  /** rows * dim values of params.dtype, updated in place to round(x + residual). */
  residual: GpuBinding;
}

export interface GpuRmsNormParams {
  rows: number;
  dim: number;
  eps?: number;
  dtype?: GpuDtype;
  /** Defaults to dtype. */
  weightDtype?: GpuDtype;
  castMode?: 'llama' | 'gemma';
  weightOffset?: number;
}

export interface GpuKernels {
  readonly device: GPUDevice;
  /** Records one compute pass into encoder; throws (recording nothing) on a bad argument. */
  rmsNorm(encoder: GPUCommandEncoder, buffers: GpuRmsNormBuffers, params: GpuRmsNormParams): void;
  addRmsNorm(encoder: GPUCommandEncoder, buffers: GpuAddRmsNormBuffers, params: GpuRmsNormParams): void;
}

/** The wasm API's rmsNorm and addRmsNorm (same arguments, options, results and errors) on the GPU, as promises. */
export interface ArrayKernels {
  rmsNorm<D extends Dtype = 'float32', O extends Storage<D> | undefined = undefined>(
    x: Storage<D>, weight: NoInfer<WeightOf<D>> | null, ...options: OptionsArg<D, O>): Promise<NormResult<D, O>>;
  addRmsNorm<D extends Dtype = 'float32', O extends Storage<D> | undefined = undefined>(
    x: Storage<D>, residual: Storage<D>, weight: NoInfer<WeightOf<D>> | null, ...options: OptionsArg<D, O>): Promise<NormResult<D, O>>;
}

export function createGpuKernels(device: GPUDevice): GpuKernels;
export function createArrayKernels(kernels: GpuKernels): ArrayKernels;
