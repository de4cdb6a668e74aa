// Types of rmsnorm-wasm/webgpu (docs/webgpu.md).
import type { BlockFormat, Dtype, LayerNormOptions, NormResult, OptionsArg, RmsNormBlockOptions, Storage, WeightOf } from '../index.js';

/** A GPUBuffer, or a byte offset in one (a multiple of the dtype's bytes; no other alignment). */
export type GpuBinding = GPUBuffer | { buffer: GPUBuffer; offset?: number };

export type GpuDtype = 'float32' | 'bfloat16' | 'float16';

/** Where a call records: a command encoder (a compute pass of its own), or
 * the caller's open compute pass (whose pipeline and bind group 0 it then
 * leaves set to its own). */
export type GpuEncoder = GPUCommandEncoder | GPUComputePassEncoder;

export interface GpuRmsNormBuffers {
  /** rows values of params.dtype, params.rowStride apart (rows of dim values). */
  x: GpuBinding;
  /** dim values of params.weightDtype, or null/absent for no weight. */
  weight?: GpuBinding | null;
  /** Laid out as x; may be x itself (in place). Absent: rstd only. With
   * params.outDtype a block format: rows × (dim / block size) × block bytes
   * of ggml blocks from its byte offset (any), the rows packed whatever
   * the row stride, over no other buffer's bytes. */
  out?: GpuBinding | null;
  /** rows float32 values: 1/rms of each row, as the backward pass reads it. */
  rstd?: GpuBinding | null;
}

export interface GpuAddRmsNormBuffers extends GpuRmsNormBuffers {
  /** Laid out as x, updated in place to round(x + residual). */
  residual: GpuBinding;
}

export interface GpuRmsNormParams {
  /** Rows; with heads, tokens of `heads` rows each. */
  rows: number;
  dim: number;
  /** Values between the starts of consecutive rows (with heads, tokens) of x, residual and out; default dim (with heads, a token's span). */
  rowStride?: number;
  /** Rows a token holds, headStride apart (QK-norm's heads); rstd then holds rows × heads values, (t, h) at t·heads + h. Default 1. */
  heads?: number;
  /** Values between the starts of a token's consecutive heads; default dim. */
  headStride?: number;
  eps?: number;
  dtype?: GpuDtype;
  /** Defaults to dtype. */
  weightDtype?: GpuDtype;
  castMode?: 'llama' | 'gemma';
  weightOffset?: number;
  /** The storage dtype (the default), or ggml's blocks (dim a multiple of the block size; buffers.out required). */
  outDtype?: GpuDtype | BlockFormat;
}

export interface GpuLayerNormBuffers {
  /** rows float32 values, params.rowStride apart. */
  x: GpuBinding;
  /** dim float32 values each, or null/absent. */
  weight?: GpuBinding | null;
  bias?: GpuBinding | null;
  /** Laid out as x; may be x itself. At least one of out, mean, rstd. */
  out?: GpuBinding | null;
  /** rows float32 values each: the statistics the backward pass reads. */
  mean?: GpuBinding | null;
  rstd?: GpuBinding | null;
}

export interface GpuLayerNormParams {
  rows: number;
  dim: number;
  rowStride?: number;
  /** Default 1e-5. */
  eps?: number;
}

/** A call checked, laid out and bound once (`fn.prepare`). */
export interface GpuPreparedCall {
  /** Records the call, creating nothing: no buffer, no bind group, no pipeline. */
  run(encoder: GpuEncoder): void;
  /** Frees the uniform and scratch buffers it made (after the last submit that uses them); run() then throws. */
  destroy(): void;
}

/** A device-form function: records at once (building its pipelines the
 * first time, synchronously), or prepares a call to record many times. */
export interface GpuFunction<B, P> {
  /** Records into encoder; throws (recording nothing) on a bad argument. */
  (encoder: GpuEncoder, buffers: B, params: P): void;
  /** Checks and lays out the call, compiles its pipelines asynchronously and binds them. */
  prepare(buffers: B, params: P): Promise<GpuPreparedCall>;
}

export interface GpuKernels {
  readonly device: GPUDevice;
  rmsNorm: GpuFunction<GpuRmsNormBuffers, GpuRmsNormParams>;
  addRmsNorm: GpuFunction<GpuAddRmsNormBuffers, GpuRmsNormParams>;
  /** LayerNorm, float32 storage. */
  layerNorm: GpuFunction<GpuLayerNormBuffers, GpuLayerNormParams>;
}

/** Reported as pipelines start (total grows) and finish (compiled grows) building. */
export interface GpuProgress {
  compiled: number;
  total: number;
  /** The pipeline's variant. */
  label: string;
}

export interface GpuKernelsOptions {
  onProgress?: (progress: GpuProgress) => void;
  /** Invocations sharing a row: 'auto' (the default) chooses by adapter and shape. Bits are the same whatever it is. */
  invocationsPerRow?: 'auto' | 1 | 4 | 16 | 64;
}

/** The wasm API's rmsNorm, addRmsNorm and layerNorm (same arguments, options, results and errors) on the GPU, as promises. */
export interface ArrayKernels {
  rmsNorm<D extends Dtype = 'float32'>(x: Storage<D>, weight: NoInfer<WeightOf<D>> | null, options: RmsNormBlockOptions<D>): Promise<Uint8Array>;
  rmsNorm<D extends Dtype = 'float32', O extends Storage<D> | undefined = undefined>(
    x: Storage<D>, weight: NoInfer<WeightOf<D>> | null, ...options: OptionsArg<D, O>): Promise<NormResult<D, O>>;
  addRmsNorm<D extends Dtype = 'float32'>(
    x: Storage<D>, residual: Storage<D>, weight: NoInfer<WeightOf<D>> | null, options: RmsNormBlockOptions<D>): Promise<Uint8Array>;
  addRmsNorm<D extends Dtype = 'float32', O extends Storage<D> | undefined = undefined>(
    x: Storage<D>, residual: Storage<D>, weight: NoInfer<WeightOf<D>> | null, ...options: OptionsArg<D, O>): Promise<NormResult<D, O>>;
  layerNorm(x: Storage<'float32'>, weight: Storage<'float32'> | null, bias: Storage<'float32'> | null,
    options?: LayerNormOptions): Promise<Float32Array>;
}

export function createGpuKernels(device: GPUDevice, options?: GpuKernelsOptions): GpuKernels;
export function createArrayKernels(kernels: GpuKernels): ArrayKernels;
