// QK-norm at prefill, as a Qwen3 engine runs it: every head of q and of k
// normalized inside the fused QKV projection, a tensor whose
// token rows are [q heads | k heads | v heads]. The shape's rows are laid
// out as tokens of 24 heads (16 q, 8 k; 168×128 is Qwen3-0.6B's 7-token
// prefill, rowStride = (16 + 8 + 8)·128), or for a row count 24 does not
// divide, as one token of them all (two thirds q); q and k have weights of
// their own (both the shape's w). Zero-copy: one call for the q heads and
// one for the k heads (options.heads), against one call per head. Into a
// second tensor of the same layout, not in place: normalizing the same
// rows again and again drifts them into subnormals, which time otherwise.
import { alloc, init, rmsNorm } from '../../../src/index.js';

/** Where the shape's rows go: tokens of `heads` rows, `q` of them q heads, and the fused row's width. */
function layout(rows, dim) {
  const heads = rows % 24 === 0 ? 24 : rows;
  const q = rows % 24 === 0 ? 16 : Math.ceil((2 * heads) / 3);
  const k = heads - q;
  return { tokens: rows / heads, heads, q, k, width: (q + 2 * k) * dim };
}

/** The fused QKV tensor with the shape's rows in it, q's and k's weights, and the packed output. */
async function qkvTensors({ x, w, rows, dim }) {
  await init({ backend: 'simd' });
  const { tokens, heads, q, k, width } = layout(rows, dim);
  const qkv = alloc(tokens * width);
  const normed = alloc(tokens * width);
  const [qw, kw] = [alloc(dim), alloc(dim)];
  qw.array.set(w);
  kw.array.set(w);
  const at = (r) => Math.floor(r / heads) * width + (r % heads) * dim; // row r = (t, h): t·width + h·dim
  for (let r = 0; r < rows; r++) qkv.array.set(x.subarray(r * dim, (r + 1) * dim), at(r));
  const output = () => {
    const y = new Float32Array(rows * dim);
    for (let r = 0; r < rows; r++) y.set(normed.array.subarray(at(r), at(r) + dim), r * dim);
    return y;
  };
  return { qkv, normed, qw, kw, tokens, q, k, width, output, dispose: () => [qkv, normed, qw, kw].forEach((t) => t.free()) };
}

export const simdQkNormHeads = {
  id: 'simd-qk-norm-heads',
  name: 'SIMD wasm, zero-copy, QK-norm: one call for q, one for k (heads)',
  async setup(shape) {
    const { qkv, normed, qw, kw, q, k, width, output, dispose } = await qkvTensors(shape);
    const { dim, eps } = shape;
    let calls;
    // (Views are made again before each timed round: another row's alloc may have grown the memory.)
    const prepare = async () => {
      await init({ backend: 'simd' });
      const kView = qkv.array.subarray(q * dim);
      const qOptions = { eps, rowStride: width, heads: q, headStride: dim, out: normed };
      const kOptions = { eps, rowStride: width, heads: k, headStride: dim, out: normed.array.subarray(q * dim) };
      calls = k === 0 ? () => rmsNorm(qkv, qw, qOptions) : () => {
        rmsNorm(qkv, qw, qOptions);
        rmsNorm(kView, kw, kOptions);
      };
    };
    await prepare();
    return { call: () => calls(), output, prepare, dispose };
  },
};

export const simdQkNormPerHead = {
  id: 'simd-qk-norm-per-head',
  name: 'SIMD wasm, zero-copy, QK-norm: one call per head (rowStride)',
  async setup(shape) {
    const { qkv, normed, qw, kw, tokens, q, k, width, output, dispose } = await qkvTensors(shape);
    const { dim, eps } = shape;
    let views;
    let options;
    const prepare = async () => {
      await init({ backend: 'simd' });
      views = [];
      options = [];
      for (let h = 0; h < q + k; h++) {
        const span = (t) => t.array.subarray(h * dim, h * dim + (tokens - 1) * width + dim);
        views.push(span(qkv));
        options.push({ eps, rowStride: width, out: span(normed) });
      }
    };
    await prepare();
    return {
      call: () => {
        for (let h = 0; h < q + k; h++) rmsNorm(views[h], h < q ? qw : kw, options[h]);
      },
      output,
      prepare,
      dispose,
    };
  },
};
