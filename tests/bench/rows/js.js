// The JS rows: what a user would hand-write, and the package's JS reference.
import { rmsNorm as referenceRmsNorm } from '../../../src/reference/index.js';

/** Plain loops in float64 arithmetic on Float32Arrays: the baseline. */
function naiveRmsNorm(x, w, y, rows, dim, eps) {
  for (let r = 0, o = 0; r < rows; r++, o += dim) {
    let sum = 0;
    for (let i = 0; i < dim; i++) sum += x[o + i] * x[o + i];
    const inv = 1 / Math.sqrt(sum / dim + eps);
    for (let i = 0; i < dim; i++) y[o + i] = x[o + i] * inv * w[i];
  }
}

export const naiveJs = {
  id: 'naive-js',
  name: 'naive JS (plain loops)',
  setup({ x, w, rows, dim, eps }) {
    const y = new Float32Array(x.length);
    const call = () => naiveRmsNorm(x, w, y, rows, dim, eps);
    return { call, output: () => y };
  },
};

// The same loops making their result, as `y = rmsNorm(x, w)` does: what
// a user would write instead of the package's allocating call.
export const naiveJsAllocating = {
  id: 'naive-js-allocating',
  name: 'naive JS, a new result per call',
  setup({ x, w, rows, dim, eps }) {
    let y;
    const call = () => {
      y = new Float32Array(x.length);
      naiveRmsNorm(x, w, y, rows, dim, eps);
    };
    return { call, output: () => y };
  },
};

export const reference = {
  id: 'reference',
  name: 'rmsnorm-wasm JS reference',
  setup({ x, w, eps }) {
    const y = new Float32Array(x.length);
    const call = () => referenceRmsNorm(x, w, { eps, out: y });
    return { call, output: () => y };
  },
};
