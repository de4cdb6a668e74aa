// The rows of the other entry points, each on SIMD zero-copy tensors:
// bfloat16 and float16 storage (x, weight and y in the dtype) against float32, and the
// fused residual add (addRmsNorm) against an add in JS followed by rmsNorm,
// and LayerNorm (no bias, the same eps) against RMSNorm.
import { addRmsNorm, alloc, init, layerNorm, rmsNorm } from '../../../src/index.js';
import { narrow, widen } from '../../../src/reference/float16.js';
import { normalArray, prng } from '../../helpers/random.js';

/** Tensors of the SIMD backend holding `arrays`, plus `extra` empty ones of `dtype`. */
async function simdTensors(dtype, arrays, extra) {
  await init({ backend: 'simd' });
  const filled = arrays.map((a) => {
    const t = alloc(a.length, dtype);
    t.array.set(a);
    return t;
  });
  const empty = extra.map((length) => alloc(length, dtype));
  return { tensors: [...filled, ...empty], free: () => [...filled, ...empty].forEach((t) => t.free()) };
}

/** x, weight and y in a 16-bit storage dtype (`bits`: the significant bits it keeps of a value). */
function simdStorage16(id, dtype, bits) {
  const to16 = (a) => Uint16Array.from(a, (v) => narrow(v, dtype));
  const from16 = (a) => Float32Array.from(a, (_, i) => widen(a, i, dtype));
  return {
    id,
    name: `SIMD wasm, zero-copy, ${dtype} x/w/y`,
    bytes: ({ rows, dim }) => 2 * (2 * rows * dim + dim),
    async setup({ x, w, eps }) {
      const x16 = to16(x);
      const w16 = to16(w);
      const { tensors: [xt, wt, yt], free } = await simdTensors(dtype, [x16, w16], [x.length]);
      const options = { eps, dtype, weightDtype: dtype, out: yt };
      return {
        call: () => rmsNorm(xt, wt, options),
        output: () => from16(yt.array),
        // The output is within a rounding of the storage dtype of its value.
        expected: { input: from16(x16), weight: from16(w16), tolerance: 2 ** (1 - bits) },
        prepare: () => init({ backend: 'simd' }),
        dispose: free,
      };
    },
  };
}
export const simdBfloat16 = simdStorage16('simd-bf16', 'bfloat16', 8);
export const simdFloat16 = simdStorage16('simd-f16', 'float16', 11);

/** The residual stream the add rows start from, seeded by the shape. */
function residualOf({ x, seed }) {
  return normalArray(prng(seed + 1), x.length, 3);
}
// x and residual read, residual and y written, w read once.
const addBytes = ({ rows, dim }) => 4 * (4 * rows * dim + dim);

function addRow(id, name, fused) {
  return {
    id,
    name,
    bytes: addBytes,
    async setup(shape) {
      const { x, w, eps } = shape;
      const r0 = residualOf(shape);
      const { tensors: [xt, rt, wt, yt], free } = await simdTensors('float32', [x, r0, w], [x.length]);
      const options = { eps, out: yt };
      // Each call adds x to the residual again: the values drift, the work does not.
      const call = fused
        ? () => addRmsNorm(xt, rt, wt, options)
        : () => {
          const r = rt.array;
          const xa = xt.array;
          for (let i = 0; i < r.length; i++) r[i] += xa[i];
          rmsNorm(rt, wt, options);
        };
      return {
        call,
        output: () => yt.array.slice(),
        expected: { input: Float32Array.from(x, (v, i) => v + r0[i]) },
        prepare: () => init({ backend: 'simd' }),
        dispose: free,
      };
    },
  };
}

export const simdAddRmsNorm = addRow('simd-add-rmsnorm', 'SIMD wasm, zero-copy, addRmsNorm (fused)', true);
export const simdAddThenRmsNorm = addRow('simd-add-then-rmsnorm',
  'SIMD wasm, zero-copy, add in JS then rmsNorm', false);

export const simdLayerNorm = {
  id: 'simd-layernorm',
  name: 'SIMD wasm, zero-copy, layerNorm (no bias)',
  async setup({ x, w, eps }) {
    const { tensors: [xt, wt, yt], free } = await simdTensors('float32', [x, w], [x.length]);
    const options = { eps, out: yt };
    return {
      call: () => layerNorm(xt, wt, null, options),
      output: () => yt.array.slice(),
      expected: { op: 'layerNorm' },
      prepare: () => init({ backend: 'simd' }),
      dispose: free,
    };
  },
};
