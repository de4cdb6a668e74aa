// Types of 'rmsnorm-wasm', written by hand beside the JS they describe
// (src/index.js). Every function checks its arguments at run time as well:
// the errors named below are thrown whatever the types said.

declare global {
  namespace WebAssembly {
    // Declared so these types also compile without the DOM lib; they merge
    // with lib.dom's (empty) interfaces where that is loaded.
    interface Module {}
    interface Memory {}
  }
}

/** Which WebAssembly module runs the kernels: SIMD128, or the scalar baseline. */
export type Backend = 'simd' | 'scalar';

/**
 * How values are stored. The kernels always compute in float32; 16-bit
 * values are widened exactly on load and rounded (to nearest even) on store.
 */
export type Dtype = 'float32' | 'bfloat16' | 'float16';

/** `Float16Array` where the TypeScript lib in use declares it (the engines that have it: Chromium, Firefox, Safari). */
export type Float16ArrayIfAny = typeof globalThis extends { Float16Array: abstract new (...args: never[]) => infer T } ? T : never;

/**
 * The typed array holding a dtype: 16-bit dtypes travel as raw bit patterns
 * in a Uint16Array; float16 may also be a Float16Array, where the engine has one.
 */
export type ArrayOf<D extends TensorDtype> = D extends 'float32' ? Float32Array
  : D extends BlockFormat ? Uint8Array : D extends 'float16' ? Uint16Array | Float16ArrayIfAny : Uint16Array;

/** What a {@link Tensor} may hold: a storage dtype's values, or a block format's bytes. */
export type TensorDtype = Dtype | BlockFormat;

/** An array argument holding `D` values: a typed array, or a tensor from {@link alloc} (zero-copy). */
export type Storage<D extends Dtype> = ArrayOf<D> | Tensor<D>;

/** A weight, whatever the storage dtype: float32, bfloat16 or float16 (say which in `weightDtype` for a Uint16Array beside float32 x). */
export type WeightOf<D extends Dtype> = Storage<'float32'> | Storage<'bfloat16'> | Storage<'float16'> | Storage<D>;

export interface InitOptions {
  /**
   * Which module to load. `'auto'` (the default) picks `'simd'` when the
   * engine validates the SIMD128 module and `'scalar'` otherwise.
   * With `module`, it may only repeat the module's own backend.
   */
  backend?: 'auto' | Backend;
  /**
   * A module from {@link compileModule}, e.g. posted to this worker by the
   * thread that compiled it: it is instantiated instead of compiling the
   * embedded module again. The module carries its backend.
   */
  module?: WebAssembly.Module;
}

export interface InitResult {
  /** The backend the kernels now run on. */
  backend: Backend;
}

/**
 * Loads the WebAssembly kernels; call (and await) it once before any kernel.
 * The modules are embedded in the JS: no file or network access.
 *
 * Idempotent: each backend is instantiated once per thread, and calling
 * `init` again only switches which one the kernels use.
 *
 * Rejects with a `TypeError` for options that are not an object, an unknown
 * option name, a `backend` other than `'auto' | 'simd' | 'scalar'`, or a
 * `module` that is not a `WebAssembly.Module` built by this package; a
 * `RangeError` when `backend` contradicts `module`; an `Error` when
 * `backend: 'simd'` is forced on an engine without SIMD128.
 *
 * @example
 * const { backend } = await init(); // 'simd' where supported, else 'scalar'
 */
export function init(options?: InitOptions): Promise<InitResult>;

/**
 * The compiled `WebAssembly.Module` of a backend (`'auto'` by default: the
 * one `init()` would pick), compiled once and cached. Post it to workers and
 * pass it to their `init({ module })`: compile once, instantiate per worker.
 *
 * Rejects with a `TypeError` for any other `backend`, and an `Error` for
 * `'simd'` on an engine without SIMD128.
 *
 * @example
 * const module = await compileModule();
 * worker.postMessage({ module });        // in the worker: await init({ module })
 */
export function compileModule(backend?: 'auto' | Backend): Promise<WebAssembly.Module>;

/** `options.dtype`: optional for float32 (the default), required for the 16-bit dtypes. */
export type DtypeOption<D extends Dtype> = [D] extends ['float32'] ? { dtype?: 'float32' } : { dtype: D };

export type RmsNormOptions<D extends Dtype = 'float32', O extends Storage<D> | undefined = Storage<D> | undefined> =
  DtypeOption<D> & {
    /**
     * Added to the mean square inside the root. Default `1e-6`; rounded to
     * float32; must be finite and >= 0 (else `RangeError`).
     */
    eps?: number;
    /**
     * The normalized (last) dimension. Defaults to `weight.length`; required
     * when `weight` is `null` (unless `shape` is given). A positive integer
     * dividing `x.length`.
     */
    dim?: number;
    /**
     * The shape of `x` (instead of `dim`): the dims from `axis` on are
     * normalized together. Its product must equal `x.length`.
     */
    shape?: readonly number[];
    /** With `shape`: the first normalized axis, negative from the end. Default `-1`. */
    axis?: number;
    /**
     * Values from the start of one row to the start of the next, in `x`,
     * the residual and `out` (an integer `>= dim`; default `dim`): rows
     * inside a larger buffer, such as each head of q or k in a fused QKV
     * projection. `x` holds `ceil(x.length / rowStride)` rows, the last of
     * which may end right after its `dim` values; only the rows' values are
     * read or written, never the ones between them. Not with `shape`.
     * With `heads`, the values from one token's start to the next's (by
     * default a token's span, `(heads - 1) * headStride + dim`).
     */
    rowStride?: number;
    /**
     * Rows a token holds (`rmsNorm`, `addRmsNorm`, `layerNorm`; a positive integer,
     * default 1): every head of q (or k) of every token in one call. Row
     * `(t, h)` starts at `t * rowStride + h * headStride`; the rows are
     * taken in that order, so `rstd` holds `tokens * heads` values, token
     * `t`'s head `h` at `t * heads + h`. The bits are those of one call per
     * head. Not with `shape`.
     */
    heads?: number;
    /**
     * With `heads`: values from one head's start to the next's within a
     * token (an integer `>= dim`, default `dim`). With two tokens or more,
     * a token's heads must end before the next token starts:
     * `(heads - 1) * headStride + dim <= rowStride`.
     */
    headStride?: number;
    /**
     * The weight's dtype, any of the three whatever the storage dtype (a
     * float32 model with bfloat16 weights, say): the same bits as with the
     * weight widened to float32 first. Defaults to what the weight's array
     * holds: a Float32Array float32, a Float16Array float16, a tensor its
     * dtype, a `Uint16Array` the storage dtype (with float32 x a
     * `Uint16Array` weight must say which).
     */
    weightDtype?: Dtype;
    /**
     * Where 16-bit results round: `'llama'` (default) rounds the normalized
     * value to storage before the weight multiply, as Llama does; `'gemma'`
     * rounds once, after it. Float32 storage gives the same bits in both.
     */
    castMode?: 'llama' | 'gemma';
    /** Added to each weight in float32 before it is applied (Gemma stores `w - 1`: offset 1). Default 0. */
    weightOffset?: number;
    /**
     * Receives the result and is returned: `x.length` values of the storage
     * dtype. May be `x` itself (in place); must not otherwise overlap `x`,
     * `weight` or the residual.
     */
    out?: O;
    /**
     * Receives each row's `1/sqrt(mean(x²) + eps)` (float32, `rows` values),
     * for {@link rmsNormBackward}. Costs one more read of `x`.
     */
    rstd?: Storage<'float32'>;
    /** The result's format: the storage dtype (the default; see {@link RmsNormBlockOptions} for ggml's blocks). */
    outDtype?: D;
  };

// Block formats: written by src/abi/block-formats.js from src/loader/abi.js.
/**
 * ggml's 8-bit block formats, the input ggml's `mul_mat` quantizes its
 * activations to:
 * - `'q8_0'`: `block_q8_0 { ggml_half d; int8_t qs[32]; }`, 32 values in 34 bytes
 * - `'q8_1'`: `block_q8_1 { ggml_half d; ggml_half s; int8_t qs[32]; }`, 32 values in 36 bytes
 * - `'q8_K'`: `block_q8_K { float d; int8_t qs[256]; int16_t bsums[16]; }`, 256 values in 292 bytes
 */
export type BlockFormat = 'q8_0' | 'q8_1' | 'q8_K';
// End of the written block formats.

/**
 * {@link rmsNorm}'s and {@link addRmsNorm}'s options for a result in ggml
 * blocks: every other option as usual, and the rows written, in the same
 * pass, as ggml's reference quantizer (`quantize_row_q8_*_ref`) makes
 * blocks of the values the storage-dtype call would store. `dim` must be a
 * multiple of the block size (the format's values a block, {@link BlockFormat}), else `RangeError`.
 */
export type RmsNormBlockOptions<D extends Dtype = 'float32', B extends BlockOut = Uint8Array> = DtypeOption<D> & Omit<RmsNormOptions<'float32', undefined>, 'dtype' | 'out' | 'outDtype'> & {
  /** The block format. */
  outDtype: BlockFormat;
  /**
   * Receives the blocks and is returned: exactly `rows × (dim / block size)
   * × block bytes` bytes, the rows packed (also with a `rowStride`). A view
   * of the instance's (or a bound) memory, or a tensor of the format
   * (`alloc(byteLength(outDtype, [rows, dim]), outDtype)`), is written in
   * place. Must not overlap `x`, `weight` or the residual, not even exactly.
   */
  out?: B;
};

/** Where blocks may be written: a `Uint8Array`, or a tensor of a block format from {@link alloc}. */
export type BlockOut = Uint8Array | Tensor<BlockFormat>;

/** What a normalization returns: `options.out` if given, else a new array of the storage dtype. */
export type NormResult<D extends Dtype, O> = undefined extends O ? ArrayOf<D> | Exclude<O, undefined> : O;

/** The options argument: optional for float32, required (it names the dtype) for 16-bit storage. */
export type OptionsArg<D extends Dtype, O extends Storage<D> | undefined> =
  [D] extends ['float32'] ? [options?: RmsNormOptions<D, O>] : [options: RmsNormOptions<D, O>];

/**
 * A call checked once by a function's `prepare` (every check the call
 * itself does, with the same errors), to be run any number of times: each
 * run reads the arrays' current values and does only what safety needs,
 * refusing with a `TypeError` (nothing written, the message saying which)
 * an array freed, detached or shrunk since. A view of wasm memory (of a
 * tensor, or of a bound memory) holds through memory growth: the run makes
 * it again on the new buffer and returns that one. It stays on the
 * instance it was prepared on.
 */
export interface PreparedCall<R> {
  /** Runs the call; returns what the function called with the prepared arguments returns (a new result array each run if it makes one). */
  run(): R;
}

/**
 * RMSNorm over the last dimension of a row-major `rows × dim` batch:
 * `y = x / sqrt(mean(x²) + eps) · weight`, computed in float32 and
 * bit-identical to the JS reference (`rmsnorm-wasm/reference`) on every
 * backend. Arguments that are tensors from {@link alloc} (or views of the
 * module's memory) are used in place; other arrays are copied in and out.
 *
 * @param x `rows × dim` values of the storage dtype, row-major; any view.
 * @param weight `dim` values, or `null` for no weight (`undefined` is an
 *   error, so a misspelled property cannot silently drop the weight).
 * @returns `options.out`, or a new array of the storage dtype.
 *
 * Throws, before writing anything, a `TypeError` for an argument of the
 * wrong type or an unknown option, and a `RangeError` for a wrong size or
 * value (`weight.length !== dim`, `x.length` not a multiple of `dim`,
 * overlapping `out`, bad `eps`). Every message starts with `rmsNorm:` and
 * names the argument. Throws an `Error` if `init()` has not finished.
 *
 * @example
 * const y = rmsNorm(new Float32Array([2, -4, 6, -8]), new Float32Array([1.5, 0.5, 1, 2]));
 * // Float32Array [0.5477, -0.3651, 1.0954, -2.9212]
 * rmsNorm(xBits, wBits, { dtype: 'bfloat16', out: xBits }); // Uint16Array bfloat16 bits, in place
 */
export function rmsNorm<D extends Dtype = 'float32', B extends BlockOut = Uint8Array>(
  x: Storage<D>,
  weight: NoInfer<WeightOf<D>> | null,
  options: RmsNormBlockOptions<D, B>,
): B;
export function rmsNorm<D extends Dtype = 'float32', O extends Storage<D> | undefined = undefined>(
  x: Storage<D>,
  weight: NoInfer<WeightOf<D>> | null,
  ...options: OptionsArg<D, O>
): NormResult<D, O>;
export declare namespace rmsNorm {
  /**
   * The call `rmsNorm(x, weight, options)`, checked now and run by
   * `.run()`, as often as needed (a decode loop's every token).
   *
   * @example
   * const norm = rmsNorm.prepare(hidden, gamma, { eps: 1e-5, out: normed });
   * for (const token of tokens) { ...; norm.run(); ... }
   */
  function prepare<D extends Dtype = 'float32', B extends BlockOut = Uint8Array>(
    x: Storage<D>,
    weight: NoInfer<WeightOf<D>> | null,
    options: RmsNormBlockOptions<D, B>,
  ): PreparedCall<B>;
  function prepare<D extends Dtype = 'float32', O extends Storage<D> | undefined = undefined>(
    x: Storage<D>,
    weight: NoInfer<WeightOf<D>> | null,
    ...options: OptionsArg<D, O>
  ): PreparedCall<NormResult<D, O>>;
}

/**
 * Fused residual add and RMSNorm, as a transformer block does it:
 * `residual ← round(x + residual)` in place, then
 * `y = rmsNorm(residual, weight, options)`. Bit-identical to the two steps
 * done apart. Same options, result and errors as {@link rmsNorm}; `residual`
 * holds `x.length` values of the storage dtype and must not overlap `x`,
 * `weight` or `out`.
 *
 * @example
 * const y = addRmsNorm(attentionOut, hidden, gamma); // hidden += attentionOut; y = rmsNorm(hidden, gamma)
 */
export function addRmsNorm<D extends Dtype = 'float32', B extends BlockOut = Uint8Array>(
  x: Storage<D>,
  residual: Storage<D>,
  weight: NoInfer<WeightOf<D>> | null,
  options: RmsNormBlockOptions<D, B>,
): B;
export function addRmsNorm<D extends Dtype = 'float32', O extends Storage<D> | undefined = undefined>(
  x: Storage<D>,
  residual: Storage<D>,
  weight: NoInfer<WeightOf<D>> | null,
  ...options: OptionsArg<D, O>
): NormResult<D, O>;
export declare namespace addRmsNorm {
  /** The call `addRmsNorm(x, residual, weight, options)`, checked now and run by `.run()` (each run updates the residual again). */
  function prepare<D extends Dtype = 'float32', B extends BlockOut = Uint8Array>(
    x: Storage<D>,
    residual: Storage<D>,
    weight: NoInfer<WeightOf<D>> | null,
    options: RmsNormBlockOptions<D, B>,
  ): PreparedCall<B>;
  function prepare<D extends Dtype = 'float32', O extends Storage<D> | undefined = undefined>(
    x: Storage<D>,
    residual: Storage<D>,
    weight: NoInfer<WeightOf<D>> | null,
    ...options: OptionsArg<D, O>
  ): PreparedCall<NormResult<D, O>>;
}

/** The shape options every LayerNorm and backward function shares with {@link rmsNorm}. */
export interface ShapeOptions {
  /** The normalized (last) dimension; defaults to the length of the first parameter given. */
  dim?: number;
  /** The shape of `x` (instead of `dim`): the dims from `axis` on are normalized together. */
  shape?: readonly number[];
  /** With `shape`: the first normalized axis, negative from the end. Default `-1`. */
  axis?: number;
  /** Values from one row's start to the next's in the per-row arrays (`>= dim`, default `dim`), as in {@link RmsNormOptions.rowStride}. */
  rowStride?: number;
}

export interface LayerNormOptions<O extends Storage<'float32'> | undefined = Storage<'float32'> | undefined>
  extends ShapeOptions {
  /** Added to the variance inside the root. **Default `1e-5`** (PyTorch's and ONNX's), not rmsNorm's 1e-6. */
  eps?: number;
  /** Receives the result and is returned; may be `x` itself. */
  out?: O;
  /** Rows a token holds, as in {@link RmsNormOptions.heads}: `mean` and `rstd` then hold `tokens * heads` values. */
  heads?: number;
  /** With `heads`: values from one head's start to the next's, as in {@link RmsNormOptions.headStride}. */
  headStride?: number;
  /** Receives each row's mean (`rows` values), for {@link layerNormBackward}. */
  mean?: Storage<'float32'>;
  /** Receives each row's `1/sqrt(var + eps)` (`rows` values), for {@link layerNormBackward}. */
  rstd?: Storage<'float32'>;
}

/** What a float32 function returns: `out` (or `dx`) if given, else a new Float32Array. */
export type Float32Result<O> = undefined extends O ? Float32Array | Exclude<O, undefined> : O;

/**
 * LayerNorm over the last dimension, float32 only:
 * `y = (x − mean) / sqrt(var + eps) · weight + bias`, with the biased
 * variance (divide by `dim`), as PyTorch's `nn.LayerNorm` and ONNX's
 * `LayerNormalization`. The mean is carried in two float32 parts, so rows far
 * from zero keep their accuracy.
 *
 * @param weight `dim` values, or `null`; `bias` likewise. `dim` defaults to
 *   `weight.length`, else `bias.length`.
 *
 * Throws, before writing anything, a `TypeError` for a wrong type and a
 * `RangeError` for a wrong size or value, as {@link rmsNorm} does (messages
 * start with `layerNorm:`); an `Error` if `init()` has not finished.
 *
 * @example
 * const y = layerNorm(x, weight, bias);             // eps 1e-5
 */
export function layerNorm<O extends Storage<'float32'> | undefined = undefined>(
  x: Storage<'float32'>,
  weight: Storage<'float32'> | null,
  bias: Storage<'float32'> | null,
  options?: LayerNormOptions<O>,
): Float32Result<O>;
export declare namespace layerNorm {
  /** The call `layerNorm(x, weight, bias, options)`, checked now and run by `.run()`. */
  function prepare<O extends Storage<'float32'> | undefined = undefined>(
    x: Storage<'float32'>,
    weight: Storage<'float32'> | null,
    bias: Storage<'float32'> | null,
    options?: LayerNormOptions<O>,
  ): PreparedCall<Float32Result<O>>;
}

export interface RmsNormBackwardOptions<DX extends Storage<'float32'> | undefined = Storage<'float32'> | undefined>
  extends ShapeOptions {
  /** The forward call's eps. Default `1e-6`. */
  eps?: number;
  /** The forward's per-row `rstd` (rmsNorm's `rstd` option); recomputed to the same bits when absent. */
  rstd?: Storage<'float32'>;
  /** Receives dx and is returned as `dx`; may be `dy` itself. */
  dx?: DX;
}

/** The gradients of a weight or bias: `dim` values, or `null` when the parameter was `null`. */
export type ParameterGradient<W> = W extends null ? null : Float32Array;

/**
 * The gradients of `y = rmsNorm(x, weight, { eps })` given `dy = ∂loss/∂y`,
 * float32 only: with `r = rstd`, `x̂ = x·r` and `g = dy·weight`,
 * `dx = r·(g − x̂·mean(g·x̂))` and `dweight = Σ_rows dy·x̂` (summed in row
 * order; `null` when `weight` is `null`).
 *
 * Throws like {@link rmsNorm} (messages start with `rmsNormBackward:`).
 *
 * @example
 * const rstd = new Float32Array(rows);
 * const y = rmsNorm(x, weight, { rstd });
 * const { dx, dweight } = rmsNormBackward(dy, x, weight, { rstd });
 */
export function rmsNormBackward<
  W extends Storage<'float32'> | null,
  DX extends Storage<'float32'> | undefined = undefined,
>(
  dy: Storage<'float32'>,
  x: Storage<'float32'>,
  weight: W,
  options?: RmsNormBackwardOptions<DX>,
): { dx: Float32Result<DX>; dweight: ParameterGradient<W> };
export declare namespace rmsNormBackward {
  /** The call `rmsNormBackward(dy, x, weight, options)`, checked now and run by `.run()` (new gradients each run unless `dx` is given; `dweight` always new). */
  function prepare<W extends Storage<'float32'> | null, DX extends Storage<'float32'> | undefined = undefined>(
    dy: Storage<'float32'>,
    x: Storage<'float32'>,
    weight: W,
    options?: RmsNormBackwardOptions<DX>,
  ): PreparedCall<{ dx: Float32Result<DX>; dweight: ParameterGradient<W> }>;
}

/** The forward's per-row statistics: both, or neither (then recomputed). */
export type LayerNormStatistics =
  | { mean?: undefined; rstd?: undefined }
  | { mean: Storage<'float32'>; rstd: Storage<'float32'> };

export type LayerNormBackwardOptions<DX extends Storage<'float32'> | undefined = Storage<'float32'> | undefined> =
  ShapeOptions & LayerNormStatistics & {
    /** The forward call's eps. Default `1e-5`. */
    eps?: number;
    /** Receives dx and is returned as `dx`; may be `dy` itself. */
    dx?: DX;
  };

/**
 * The gradients of `y = layerNorm(x, weight, bias, { eps })` given
 * `dy = ∂loss/∂y`, float32 only: with `x̂ = (x − mean)·rstd` and
 * `g = dy·weight`, `dx = rstd·(g − mean(g) − x̂·mean(g·x̂))`,
 * `dweight = Σ_rows dy·x̂`, `dbias = Σ_rows dy` (each `null` when its
 * parameter is).
 *
 * Throws like {@link layerNorm} (messages start with `layerNormBackward:`),
 * and a `TypeError` when only one of `mean` and `rstd` is given.
 */
export function layerNormBackward<
  W extends Storage<'float32'> | null,
  B extends Storage<'float32'> | null,
  DX extends Storage<'float32'> | undefined = undefined,
>(
  dy: Storage<'float32'>,
  x: Storage<'float32'>,
  weight: W,
  bias: B,
  options?: LayerNormBackwardOptions<DX>,
): { dx: Float32Result<DX>; dweight: ParameterGradient<W>; dbias: ParameterGradient<B> };
export declare namespace layerNormBackward {
  /** The call `layerNormBackward(dy, x, weight, bias, options)`, checked now and run by `.run()`. */
  function prepare<
    W extends Storage<'float32'> | null,
    B extends Storage<'float32'> | null,
    DX extends Storage<'float32'> | undefined = undefined,
  >(
    dy: Storage<'float32'>,
    x: Storage<'float32'>,
    weight: W,
    bias: B,
    options?: LayerNormBackwardOptions<DX>,
  ): PreparedCall<{ dx: Float32Result<DX>; dweight: ParameterGradient<W>; dbias: ParameterGradient<B> }>;
}

/** The 16-bit dtypes, the converters' `dtype`. */
export type Dtype16 = 'bfloat16' | 'float16';

/** The converters' options: the 16-bit format, and where the result goes. */
export interface ConvertOptions<D extends Dtype16, O> {
  /** The 16-bit format: required, except that a `Float16Array`'s is `'float16'`. */
  dtype: D;
  /** Receives the result (as many values as the input) and is returned. */
  out?: O;
}

/**
 * 16-bit bit patterns widened to float32 (exactly; a NaN stays a NaN):
 * `bits` holds bfloat16 or float16 patterns (`options.dtype`), or is a
 * `Float16Array`. Returns `options.out`, or a new `Float32Array`.
 *
 * @example
 * const weights = toFloat32(checkpointBits, { dtype: 'bfloat16' });
 */
export function toFloat32<D extends Dtype16, O extends Storage<'float32'> | undefined = undefined>(
  bits: Storage<D>,
  options: ConvertOptions<D, O>,
): Float32Result<O>;
export function toFloat32<O extends Storage<'float32'> | undefined = undefined>(
  bits: Float16ArrayIfAny,
  options?: { dtype?: 'float16'; out?: O },
): Float32Result<O>;
export declare namespace toFloat32 {
  /** The conversion, checked now and run by `.run()`. */
  function prepare<D extends Dtype16, O extends Storage<'float32'> | undefined = undefined>(
    bits: Storage<D>,
    options: ConvertOptions<D, O>,
  ): PreparedCall<Float32Result<O>>;
}

/**
 * float32 values rounded to bfloat16 or float16 bit patterns
 * (`options.dtype`): to nearest, ties to even; beyond the format's range to
 * infinity; every NaN to one pattern (bfloat16 `0x7FC0`, float16 `0x7E00`),
 * as the kernels round their 16-bit results. Returns `options.out`, or a
 * new `Uint16Array` (float16: a `Float16Array` where the engine has one).
 *
 * @example
 * const bits = fromFloat32(weights, { dtype: 'bfloat16' }); // Uint16Array
 */
export function fromFloat32<D extends Dtype16, O extends Storage<D> | undefined = undefined>(
  values: Storage<'float32'>,
  options: ConvertOptions<D, O>,
): NormResult<D, O>;
export declare namespace fromFloat32 {
  /** The conversion, checked now and run by `.run()`. */
  function prepare<D extends Dtype16, O extends Storage<D> | undefined = undefined>(
    values: Storage<'float32'>,
    options: ConvertOptions<D, O>,
  ): PreparedCall<NormResult<D, O>>;
}

/**
 * `length` values of `dtype` (default float32) in the active module's
 * WebAssembly memory, holding zeros: kernels given tensors read and write
 * them in place, with no copy. Free it with `tensor.free()`. A block
 * format ({@link BlockFormat}) makes a tensor of `length` bytes,
 * whole blocks ({@link byteLength} gives them), for a block output's or
 * {@link quantize}'s `out`; its `array` is a `Uint8Array`.
 *
 * Throws a `TypeError` for a non-number length or an unknown dtype, a
 * `RangeError` for a length that is not a non-negative integer (for a block
 * format, a whole number of blocks) or does not fit in wasm memory, an
 * `Error` if `init()` has not finished.
 *
 * @example
 * const x = alloc(4096);
 * x.array.set(hidden);
 * rmsNorm(x, gamma, { out: x });
 * x.free();
 */
export function alloc<D extends TensorDtype = 'float32'>(length: number, dtype?: D): Tensor<D>;

/** A tensor in the module's WebAssembly memory, from {@link alloc}. */
export class Tensor<D extends TensorDtype = Dtype> {
  /** Tensors come from alloc(). */
  private constructor();
  /**
   * A typed-array view of the tensor, rebuilt after the memory grows (which
   * detaches every earlier view): read it again after kernel calls or
   * allocations rather than keeping it. Throws a `TypeError` once freed.
   */
  get array(): ArrayOf<D>;
  get dtype(): D;
  get length(): number;
  /** Byte address in the module's memory. */
  get byteOffset(): number;
  get freed(): boolean;
  /** Returns the memory to the module; using the tensor afterwards throws. Idempotent. */
  free(): void;
}

export interface BindMemoryOptions {
  /**
   * A region of the memory the kernels may use during a call, as their
   * call stack (the top 4096 bytes) and to stage what they allocate:
   * `byteOffset` a multiple of 16, at least 4096 bytes, not used by the
   * engine during a call. Take it from the engine's allocator, not a fixed
   * address (Emscripten: `aligned_alloc(16, n)`; its `malloc` returns
   * 8-byte-aligned blocks). A typed array view of the memory names its own range.
   */
  scratch: { byteOffset: number; byteLength: number } | ArrayBufferView;
  /** As in {@link init}. */
  backend?: 'auto' | Backend;
  /**
   * Shared memories: the `lockId` of a binding of this region that will
   * never run again (a worker terminated mid-call, which left the region
   * locked). Its lock is freed if it holds it; a lock held by any other
   * binding is a `RangeError`, never freed.
   */
  recover?: number;
}

/** An instance of the kernels: its own WebAssembly instance, memory and tensors. */
export interface Kernels {
  backend: Backend;
  rmsNorm: typeof rmsNorm;
  addRmsNorm: typeof addRmsNorm;
  layerNorm: typeof layerNorm;
  rmsNormBackward: typeof rmsNormBackward;
  layerNormBackward: typeof layerNormBackward;
  toFloat32: typeof toFloat32;
  fromFloat32: typeof fromFloat32;
  quantize: typeof quantize;
  /** Tensors of this instance's memory; another instance's functions refuse them. */
  alloc: typeof alloc;
}

/**
 * A new, independent instance of the kernels, with the same functions as the
 * package's top level bound to its own WebAssembly instance and memory. Two
 * libraries in one app that each create their own never switch each other's
 * backend or see each other's tensors; instances of different backends work
 * side by side. Takes the options of {@link init} and rejects as it does.
 *
 * @example
 * const kernels = await createKernels({ backend: 'simd' });
 * const y = kernels.rmsNorm(x, weight);
 */
export function createKernels(options?: InitOptions): Promise<Kernels>;

/** Kernels bound to an engine's memory by {@link bindMemory}. */
export interface BoundKernels {
  backend: Backend;
  memory: WebAssembly.Memory;
  /** Whether the memory is shared (a threaded engine's). */
  shared: boolean;
  /**
   * On a shared memory, what this binding's calls hold in the scratch
   * region's lock word while they run (0 on a memory that is not shared):
   * pass it to `bindMemory`'s `recover` once the thread is gone.
   */
  lockId: number;
  /**
   * The package's functions, on views of the bound memory: every array the
   * caller passes must be a view of `memory.buffer` (tensors are refused).
   * A result array the call makes itself (no `out`, the parameter
   * gradients) is staged through the scratch region, which must then hold
   * a chunk of rows besides the 4096-byte stack.
   */
  rmsNorm: typeof rmsNorm;
  addRmsNorm: typeof addRmsNorm;
  layerNorm: typeof layerNorm;
  rmsNormBackward: typeof rmsNormBackward;
  layerNormBackward: typeof layerNormBackward;
  toFloat32: typeof toFloat32;
  fromFloat32: typeof fromFloat32;
  quantize: typeof quantize;
}

/**
 * Binds the kernels to an engine's own `WebAssembly.Memory`, shared or not,
 * e.g. the memory of an inference engine's wasm module: every array is a
 * view of `memory.buffer`, nothing is copied in. On a shared memory each of
 * the engine's threads binds it with a scratch region of its own, and the
 * threads may run their shares of one call's rows at the same time.
 *
 * Rejects with a `TypeError` for a memory that is not a
 * `WebAssembly.Memory`, an unknown option or backend, and a `RangeError` for
 * a scratch region that is misaligned, too small or outside the memory.
 */
export function bindMemory(memory: WebAssembly.Memory, options: BindMemoryOptions): Promise<BoundKernels>;

/**
 * float32 values as ggml blocks of `options.dtype`, by the rule of the
 * norms' block outputs (ggml's `quantize_row_q8_*_ref`; NaN to 0 and
 * saturation where its C is undefined): `options.out`, or a new
 * `Uint8Array` of `x.length / block size` blocks. The quantizer for
 * activations no norm writes (an attention output before its projection).
 * `TypeError` for an `x` that is no `Float32Array` (or float32 tensor) or a
 * missing or unknown dtype, `RangeError` for a length that is not a
 * multiple of the block size, a wrong `out` length or an overlapping `out`.
 *
 * @example
 * const src1 = quantize(attnOut, { dtype: 'q8_0' }); // 34 bytes per 32 values
 */
export function quantize<B extends BlockOut = Uint8Array>(x: Storage<'float32'>, options: { dtype: BlockFormat; out?: B }): B;
export declare namespace quantize {
  /** The call `quantize(x, options)`, checked now and run by `.run()`. */
  function prepare<B extends BlockOut = Uint8Array>(x: Storage<'float32'>, options: { dtype: BlockFormat; out?: B }): PreparedCall<B>;
}

/**
 * ggml blocks of `options.dtype` back to float32, as ggml's
 * `dequantize_row_*` (`qs · d`, one float32 product each): a new
 * `Float32Array` of `(bytes.length / block bytes) × block size` values.
 * Plain JS: needs no `init()`. `TypeError` for bytes that are no
 * `Uint8Array` or a missing or unknown dtype, `RangeError` for a length
 * that is not a whole number of blocks.
 *
 * @example
 * dequantize(rmsNorm(x, w, { outDtype: 'q8_0' }), { dtype: 'q8_0' }); // ≈ rmsNorm(x, w)
 */
export function dequantize(bytes: Uint8Array | Tensor<BlockFormat>, options: { dtype: BlockFormat }): Float32Array;

/**
 * The bytes values of `shape` take as `dtype`: `shape` a count of values,
 * or dims whose last is a row's. A block format's rows are whole blocks
 * (`rows × dim / block size × block bytes`: what a block output or
 * {@link quantize} writes, and the length to {@link alloc} for it); a
 * storage dtype's, values × bytes a value. Plain JS: needs no `init()`.
 * `TypeError` for an unknown dtype or a shape that is neither,
 * `RangeError` for a row that is not a multiple of the block size or a
 * size of 2^53 bytes or more.
 *
 * @example
 * byteLength('q8_0', [4, 4096]); // 17408: 4 rows of 128 blocks of 34 bytes
 * const out = alloc(byteLength('q8_0', [4, 4096]), 'q8_0');
 * rmsNorm(hidden, gamma, { outDtype: 'q8_0', out }); // the blocks written in wasm memory, zero-copy
 */
export function byteLength(dtype: TensorDtype, shape: number | readonly number[]): number;
