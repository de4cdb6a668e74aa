// What the model computes when its norms are changed: the panel's switches.
// These are deliberate departures from RMSNorm, so they cannot come from the
// package; they are written here in plain JavaScript, each as the same two
// calls the model makes of the package (rmsNorm, and addRmsNorm: the
// residual add, then the norm of the sum), so that only the normalization
// differs. (The bfloat16-storage model, with the package's float32 upcast,
// is packageBfloat16Norms in llama.js.)

import { plainBuffer } from './llama.js';
import { bfloat16RmsNorm, roundBfloat16 } from '../lib/bfloat16.js';

const f32 = Math.fround;

/** The normalizations the switches select, each y = f(x) on one row. */
const VARIANTS = {
  // Weights kept, normalization skipped: y = x · γ.
  removed(x, w, y) {
    for (let i = 0; i < x.length; i++) y[i] = f32(x[i] * w[i]);
  },
  // Every operation rounded to bfloat16 (panel 5's simulation). The stream
  // is stored in bfloat16 as in packageBfloat16Norms (see STORAGE), so that
  // the two differ only in the norm's arithmetic.
  bfloat16: bfloat16RmsNorm,
  // ε added to the root instead of under it: y = x / (sqrt(mean(x²)) + ε) · γ,
  // in float32 like the package.
  epsOutside(x, w, y, eps) {
    let sum = 0;
    for (let i = 0; i < x.length; i++) sum = f32(sum + f32(x[i] * x[i]));
    const inv = f32(1 / f32(f32(Math.sqrt(f32(sum / x.length))) + f32(eps)));
    for (let i = 0; i < x.length; i++) y[i] = f32(f32(x[i] * inv) * w[i]);
  },
};

export const VARIANT_NAMES = Object.keys(VARIANTS);

// Where a variant keeps the residual stream: float32, or bfloat16 (each
// sublayer's output and the sum rounded, as the package's addRmsNorm does
// with dtype 'bfloat16').
const STORAGE = { removed: f32, bfloat16: roundBfloat16, epsOutside: f32 };

/** A `norms` object for TinyLlama computing `variant` in plain JS. */
export function variantNorms(variant) {
  const normalize = VARIANTS[variant];
  if (normalize === undefined) throw new RangeError(`unknown variant ${variant}`);
  const store = STORAGE[variant];
  return {
    label: variant,
    buffer: plainBuffer,
    rmsNorm: (x, w, y, eps) => {
      const row = x.array;
      for (let i = 0; i < row.length; i++) row[i] = store(row[i]);
      normalize(row, w.array, y.array, eps);
    },
    addRmsNorm: (h, r, w, y, eps) => {
      const residual = r.array;
      const sublayer = h.array;
      for (let i = 0; i < residual.length; i++) residual[i] = store(f32(store(sublayer[i]) + residual[i]));
      normalize(residual, w.array, y.array, eps);
    },
  };
}
