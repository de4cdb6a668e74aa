// Types of rmsnorm-wasm/webgpu (docs/webgpu.md).
import type { Dtype, LayerNormOptions, NormResult, OptionsArg, Storage, WeightOf } from '../index.js';

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

export interface GpuLayerNormBuffers {
  /** rows * dim float32 values. */
  x: GpuBinding;
  /** dim float32 values each, or null/absent. */
  weight?: GpuBinding | null;
  bias?: GpuBinding | null;
  /** rows * dim float32 values; may be x itself. At least one of out, mean, rstd. */
  out?: GpuBinding | null;
  /** rows float32 values each: the statistics the backward pass reads. */
  mean?: GpuBinding | null;
  rstd?: GpuBinding | null;
}

export interface GpuLayerNormParams {
  rows: number;
  dim: number;
  /** Default 1e-5. */
  eps?: number;
}

export interface GpuKernels {
  readonly device: GPUDevice;
  /** Records one compute pass into encoder; throws (recording nothing) on a bad argument. */
  rmsNorm(encoder: GPUCommandEncoder, buffers: GpuRmsNormBuffers, params: GpuRmsNormParams): void;
  addRmsNorm(encoder: GPUCommandEncoder, buffers: GpuAddRmsNormBuffers, params: GpuRmsNormParams): void;
  /** LayerNorm, float32 storage, one invocation a row. */
  layerNorm(encoder: GPUCommandEncoder, buffers: GpuLayerNormBuffers, params: GpuLayerNormParams): void;
}

/** The wasm API's rmsNorm and addRmsNorm (same arguments, options, results and errors) on the GPU, as promises. */
export interface ArrayKernels {
  rmsNorm<D extends Dtype = 'float32', O extends Storage<D> | undefined = undefined>(
    x: Storage<D>, weight: NoInfer<WeightOf<D>> | null, ...options: OptionsArg<D, O>): Promise<NormResult<D, O>>;
  addRmsNorm<D extends Dtype = 'float32', O extends Storage<D> | undefined = undefined>(
    x: Storage<D>, residual: Storage<D>, weight: NoInfer<WeightOf<D>> | null, ...options: OptionsArg<D, O>): Promise<NormResult<D, O>>;
  layerNorm(x: Storage<'float32'>, weight: Storage<'float32'> | null, bias: Storage<'float32'> | null,
    options?: LayerNormOptions): Promise<Float32Array>;
}

export function createGpuKernels(device: GPUDevice): GpuKernels;
export function createArrayKernels(kernels: GpuKernels): ArrayKernels;
