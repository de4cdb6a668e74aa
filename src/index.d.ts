// Types of 'rmsnorm-wasm', written by hand beside the JS they describe
// (src/index.js). Every function checks its arguments at run time as well:
// the errors named below are thrown whatever the types said.

declare global {
  namespace WebAssembly {
    // Declared so these types also compile without the DOM lib; merges with
    // lib.dom's (empty) interface where that is loaded.
    interface Module {}
  }
}

/** Which WebAssembly module runs the kernels: SIMD128, or the scalar baseline. */
export type Backend = 'simd' | 'scalar';

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

export interface RmsNormOptions {
  /**
   * Added to the mean square inside the root. Default `1e-6`; rounded to
   * float32; must be finite and >= 0 (else `RangeError`).
   */
  eps?: number;
  /**
   * The normalized (last) dimension. Defaults to `weight.length`; required
   * when `weight` is `null`. A positive integer dividing `x.length`.
   */
  dim?: number;
  /**
   * Receives the result and is returned: `x.length` floats. May be `x`
   * itself (in place); must not otherwise overlap `x` or `weight`.
   */
  out?: Float32Array;
}

/**
 * RMSNorm over the last dimension of a row-major `rows × dim` batch:
 * `y = x / sqrt(mean(x²) + eps) · weight`, in float32, bit-identical to the
 * JS reference (`rmsnorm-wasm/reference`) on every backend.
 *
 * @param x `rows × dim` values, row-major; any view, at any byteOffset.
 * @param weight `dim` values, or `null` for no weight (`undefined` is an
 *   error, so a misspelled property cannot silently drop the weight).
 * @returns `options.out`, or a new `Float32Array` of `x.length`.
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
 */
export function rmsNorm(
  x: Float32Array,
  weight: Float32Array | null,
  options?: RmsNormOptions,
): Float32Array;
