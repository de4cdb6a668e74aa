// The llama.cpp-style rows: ggml's CPU RMSNorm as wllama runs it in the
// browser (tests/bench/llamacpp/rms_norm.c, built by `make` into
// build/llamacpp-rmsnorm.wasm): a sequential double sum of squares, then
// either the fused `x·scale·w` or the older copy, scale and separate weight
// multiply. Loaded from the file in Node and fetched in a browser page.
import { standaloneExports } from './standalone.js';

const FLOAT_BYTES = 4;

function llamacppRow(id, name, exportName) {
  return {
    id,
    name,
    async setup({ x, w, rows, dim, eps }) {
      const exports = await standaloneExports('llamacpp-rmsnorm.wasm');
      const [xp, wp, yp] = [x.length, w.length, x.length].map((n) => exports.malloc(n * FLOAT_BYTES));
      // Views made after every malloc: a grown memory detaches the old buffer.
      const view = (p, n) => new Float32Array(exports.memory.buffer, p, n);
      view(xp, x.length).set(x);
      view(wp, w.length).set(w);
      const kernel = exports[exportName];
      return {
        call: () => kernel(xp, wp, yp, rows, dim, eps),
        output: () => view(yp, x.length).slice(),
        dispose: () => [xp, wp, yp].forEach((p) => exports.free(p)),
      };
    },
  };
}

export const llamacppFused = llamacppRow('llamacpp-fused',
  'llama.cpp-style (wllama): double sum, fused ·scale·w', 'llamacpp_rms_norm_mul_fused');
export const llamacppUnfused = llamacppRow('llamacpp-unfused',
  'llama.cpp-style before 2026: copy, scale, then ·w', 'llamacpp_rms_norm_then_mul');
