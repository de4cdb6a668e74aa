// The reference converters: float32 to and from bfloat16 and float16 with
// the reference's own conversions (./float16.js), a value at a time.

import { Float32Array, Uint16Array } from '../loader/intrinsics.js';
import { fromFloat32 as FROM_FLOAT32, toFloat32 as TO_FLOAT32 } from '../ops/descriptions.js';
import { referenceFunction } from './calls.js';
import { narrow, widen } from './float16.js';

/** 16-bit bit patterns widened to float32 (exact); same signature, options and errors as `toFloat32`. */
export const toFloat32 = referenceFunction(TO_FLOAT32, (call, { x }) => {
  const out = new Float32Array(call.rows);
  for (let i = 0; i < call.rows; i++) out[i] = widen(x, i, call.dtype);
  return { out };
});

/** float32 values rounded to 16-bit bit patterns (nearest even; NaN to the fixed pattern); as `fromFloat32`. */
export const fromFloat32 = referenceFunction(FROM_FLOAT32, (call, { x }) => {
  const out = new Uint16Array(call.rows);
  for (let i = 0; i < call.rows; i++) out[i] = narrow(x[i], call.dtype);
  return { out };
});
