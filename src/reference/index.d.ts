// Types of 'rmsnorm-wasm/reference' (src/reference/index.js): the
// independent JS reference, no wasm and no init(). Same signatures as the
// wasm API's, `prepare` included.

import type {
  addRmsNorm as wasmAddRmsNorm,
  BlockFormat,
  byteLength as wasmByteLength,
  dequantize as wasmDequantize,
  quantize as wasmQuantize,
  fromFloat32 as wasmFromFloat32,
  layerNorm as wasmLayerNorm,
  layerNormBackward as wasmLayerNormBackward,
  rmsNorm as wasmRmsNorm,
  rmsNormBackward as wasmRmsNormBackward,
  toFloat32 as wasmToFloat32,
} from '../index.js';

export type {
  ArrayOf, BlockFormat, BlockOut, ConvertOptions, Dtype, Dtype16, LayerNormBackwardOptions, LayerNormOptions, NormResult, PreparedCall,
  RmsNormBackwardOptions, RmsNormBlockOptions, RmsNormOptions, Storage, TensorDtype, WeightOf,
} from '../index.js';

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

/** LayerNorm in plain JavaScript, bit-identical to `layerNorm` from `'rmsnorm-wasm'`. */
export declare const layerNorm: typeof wasmLayerNorm;

/** The RMSNorm backward pass in plain JavaScript, bit-identical to `rmsNormBackward` from `'rmsnorm-wasm'`. */
export declare const rmsNormBackward: typeof wasmRmsNormBackward;

/** The LayerNorm backward pass in plain JavaScript, bit-identical to `layerNormBackward` from `'rmsnorm-wasm'`. */
export declare const layerNormBackward: typeof wasmLayerNormBackward;

/** 16-bit patterns widened to float32 in plain JavaScript, bit-identical to `toFloat32` from `'rmsnorm-wasm'`. */
export declare const toFloat32: typeof wasmToFloat32;

/** float32 rounded to 16-bit patterns in plain JavaScript, bit-identical to `fromFloat32` from `'rmsnorm-wasm'`. */
export declare const fromFloat32: typeof wasmFromFloat32;

/** float32 values to ggml blocks in plain JavaScript, bit-identical to `quantize` from `'rmsnorm-wasm'`. */
export declare const quantize: typeof wasmQuantize;

/** ggml blocks back to float32, the same function as `dequantize` from `'rmsnorm-wasm'`. */
export declare const dequantize: typeof wasmDequantize;

/** The bytes of a dtype's values for a shape, a block format's blocks too: the same function as `byteLength` from `'rmsnorm-wasm'`. */
export declare const byteLength: typeof wasmByteLength;
