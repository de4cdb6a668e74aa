// The llama.cpp-style rows: ggml's CPU RMSNorm as wllama runs it in the
// browser (tests/bench/llamacpp/rms_norm.c, built by `make` into
// build/llamacpp-rmsnorm.wasm): a sequential double sum of squares, then
// either the fused `x·scale·w` or the older copy, scale and separate weight
// multiply. Loaded from the file in Node and fetched in a browser page.

const WASM_URL = new URL('../../../build/llamacpp-rmsnorm.wasm', import.meta.url);
const FLOAT_BYTES = 4;

let instancePromise;
async function wasmBytes() {
  if (WASM_URL.protocol === 'file:') {
    const { readFile } = await import('node:fs/promises');
    return readFile(WASM_URL).catch((error) => {
      throw new Error(`${WASM_URL.pathname} is missing: run \`make build/llamacpp-rmsnorm.wasm\` (${error.code})`);
    });
  }
  const response = await fetch(WASM_URL);
  if (!response.ok) throw new Error(`${WASM_URL}: HTTP ${response.status}`);
  return response.arrayBuffer();
}

/** The module's instance, made once (one memory shared by both rows). */
function llamacppInstance() {
  instancePromise ??= wasmBytes().then(async (bytes) => {
    const { instance } = await WebAssembly.instantiate(bytes, { env: { emscripten_notify_memory_growth() {} } });
    instance.exports._initialize();
    return instance.exports;
  });
  return instancePromise;
}

function llamacppRow(id, name, exportName) {
  return {
    id,
    name,
    async setup({ x, w, rows, dim, eps }) {
      const exports = await llamacppInstance();
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
