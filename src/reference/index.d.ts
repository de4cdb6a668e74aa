// Types of 'rmsnorm-wasm/reference' (src/reference/index.js): the
// independent JS reference, no wasm and no init(). Same signatures as the
// wasm API's.

import type { addRmsNorm as wasmAddRmsNorm, rmsNorm as wasmRmsNorm } from '../index.js';

export type { ArrayOf, Dtype, NormResult, RmsNormOptions, Storage, WeightOf } from '../index.js';

/**
 * RMSNorm in plain JavaScript, `Math.fround` after every float32 operation:
 * bit-identical to `rmsNorm` from `'rmsnorm-wasm'`, with the same signature,
 * options and errors (`TypeError` for a wrong type, `RangeError` for a wrong
 * size or value, thrown before anything is written). Needs no `init()`.
 *
 * @example
 * import { rmsNorm } from 'rmsnorm-wasm/reference';
 * rmsNorm(new Float32Array([2, -4, 6, -8]), new Float32Array([1.5, 0.5, 1, 2]));
 */
export declare const rmsNorm: typeof wasmRmsNorm;

/**
 * The fused residual add and RMSNorm in plain JavaScript, bit-identical to
 * `addRmsNorm` from `'rmsnorm-wasm'`: `residual ← round(x + residual)` in
 * place, then RMSNorm of it. Needs no `init()`.
 */
export declare const addRmsNorm: typeof wasmAddRmsNorm;
