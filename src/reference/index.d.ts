// Types of 'rmsnorm-wasm/reference' (src/reference/index.js): the
// independent JS reference, no wasm and no init().

import type { RmsNormOptions } from '../index.js';

export type { RmsNormOptions };

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
export function rmsNorm(
  x: Float32Array,
  weight: Float32Array | null,
  options?: RmsNormOptions,
): Float32Array;
