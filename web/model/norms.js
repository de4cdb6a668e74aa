// What the model computes when its norms are changed: the panel's switches.
// These are deliberate departures from RMSNorm, so they cannot come from the
// package; they are written here in plain JavaScript, each as the same two
// calls the model makes of the package (rmsNorm, and addRmsNorm with the
// residual add in float32 first), so that only the normalization differs.

import { plainBuffer } from './llama.js';

const f32 = Math.fround;
const bits = new Float32Array(1);
const word = new Uint32Array(bits.buffer);

/** Rounds to the nearest bfloat16 (ties to even); NaN stays NaN. */
export function roundBfloat16(v) {
  bits[0] = v;
  if (Number.isNaN(bits[0])) return NaN;
  const w = word[0];
  word[0] = ((w + 0x7fff + ((w >>> 16) & 1)) >>> 16) << 16;
  return bits[0];
}

/** The normalizations the switches select, each y = f(x) on one row. */
const VARIANTS = {
  // Weights kept, normalization skipped: y = x · γ.
  removed(x, w, y) {
    for (let i = 0; i < x.length; i++) y[i] = f32(x[i] * w[i]);
  },
  // Every operation rounded to bfloat16, as PyTorch runs RMSNorm on bfloat16
  // tensors without the float32 upcast (the same simulation as panel 5):
  // x, each square, the mean (summed wider, then rounded), + ε, the inverse
  // root, x · inv, and · γ. The output is a bfloat16 value (in a float32).
  bfloat16(x, w, y, eps) {
    const bf = roundBfloat16;
    let sum = 0;
    for (let i = 0; i < x.length; i++) sum += bf(bf(x[i]) ** 2);
    const inv = bf(1 / Math.sqrt(bf(bf(sum / x.length) + eps)));
    for (let i = 0; i < x.length; i++) y[i] = bf(bf(bf(x[i]) * inv) * bf(w[i]));
  },
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

/** A `norms` object for TinyLlama computing `variant` in plain JS. */
export function variantNorms(variant) {
  const normalize = VARIANTS[variant];
  if (normalize === undefined) throw new RangeError(`unknown variant ${variant}`);
  return {
    label: variant,
    buffer: plainBuffer,
    rmsNorm: (x, w, y, eps) => normalize(x.array, w.array, y.array, eps),
    addRmsNorm: (h, r, w, y, eps) => {
      const residual = r.array;
      const sublayer = h.array;
      for (let i = 0; i < residual.length; i++) residual[i] = f32(sublayer[i] + residual[i]);
      normalize(residual, w.array, y.array, eps);
    },
  };
}
