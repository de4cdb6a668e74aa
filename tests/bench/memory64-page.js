// What memory64 costs, measured where it runs (a browser page; Node 20 cannot
// compile the wasm64 kernels): RMSNorm of the same rows by the SIMD kernels
// in three builds, each called directly (the export, no JS layer) on its own
// memory, and through bindMemory on a 32-bit and a memory64 memory.
//   wasm32, emcc     the shipped bindMemory build (Emscripten 3.1.6, clang 14)
//   wasm32, clang 19 the same sources built as the memory64 ones are: the
//                    control that separates the address size from the compiler
//   memory64         the wasm64 build (clang 19), addresses as f64
// Every build must give the same bytes first. Rounds interleave the rows,
// rotated each round; a ratio is the median of its per-round ratios.
import { bindMemory } from '/src/index.js';
import { median } from './measure.js';

const BUILDS = [
  { id: 'wasm32-emcc', file: '/build/rmsnorm-simd-imported.wasm', memory64: false },
  { id: 'wasm32-clang19', file: '/build/rmsnorm-simd-wasm32-clang19.wasm', memory64: false },
  { id: 'memory64', file: '/build/rmsnorm-simd-memory64.wasm', memory64: true },
];
const PAGE = 65536;
const SCRATCH = { byteOffset: PAGE, byteLength: PAGE };
const X_AT = 4 * PAGE;
const WARM_UP = 1; // seconds a row
const SAMPLE = 0.05; // seconds a sample

function timeLoop(call, iters) {
  const t0 = performance.now();
  for (let i = 0; i < iters; i++) call();
  return (performance.now() - t0) / 1e3;
}

/** { builds, rows: [{ id, seconds (median), ratios }], sameBits } at rows × dim. */
export async function measureMemory64({ rows, dim, rounds }) {
  const n = rows * dim;
  const pages = Math.ceil((X_AT + 3 * n * 4 + 3 * PAGE) / PAGE);
  const x = Float32Array.from({ length: n }, (_, i) => Math.sin(i) * 3);
  const w = Float32Array.from({ length: dim }, (_, i) => 1 + Math.cos(i) / 4);
  const eps = Math.fround(1e-6);
  const calls = {};
  const outputs = {};
  const addresses = { x: X_AT, w: X_AT + n * 4 + 64, y: X_AT + n * 4 + 64 + dim * 4 + 64 };
  for (const build of BUILDS) {
    const memory = new WebAssembly.Memory(build.memory64 ? { initial: BigInt(pages), address: 'i64' } : { initial: pages });
    const { instance } = await WebAssembly.instantiateStreaming(fetch(build.file), { env: { memory } });
    const { rmsnorm, stackRestore } = instance.exports;
    if (stackRestore !== undefined) stackRestore(SCRATCH.byteOffset + SCRATCH.byteLength);
    else instance.exports._initialize?.();
    new Float32Array(memory.buffer, addresses.x, n).set(x);
    new Float32Array(memory.buffer, addresses.w, dim).set(w);
    const { x: xp, w: wp, y: yp } = addresses;
    calls[`${build.id}: export`] = () => rmsnorm(xp, 0, wp, yp, 0, rows, dim, dim, eps, 0, 0, 0, 0);
    outputs[`${build.id}: export`] = () => new Uint32Array(memory.buffer, yp, n).slice();
    if (build.id !== 'wasm32-clang19') {
      const bound = await bindMemory(memory, { scratch: SCRATCH, backend: 'simd' });
      const views = [new Float32Array(memory.buffer, xp, n), new Float32Array(memory.buffer, wp, dim)];
      const out = new Float32Array(memory.buffer, yp + n * 4 + 64, n);
      calls[`${build.memory64 ? 'memory64' : 'wasm32'}: bindMemory rmsNorm`] = () => bound.rmsNorm(views[0], views[1], { out });
      outputs[`${build.memory64 ? 'memory64' : 'wasm32'}: bindMemory rmsNorm`] = () => new Uint32Array(out.buffer, out.byteOffset, n).slice();
    }
  }
  const ids = Object.keys(calls);
  // Same bits from every build and path, before anything is timed.
  const bits = ids.map((id) => {
    calls[id]();
    return outputs[id]();
  });
  const sameBits = bits.every((b) => b.every((v, i) => v === bits[0][i]));
  // Warm-up: about WARM_UP seconds a row, so that the engines' optimizing
  // tiers (V8's TurboFan, SpiderMonkey's Ion) have replaced the baseline code
  // of every build before a sample is taken; then SAMPLE seconds a sample.
  for (const id of ids) {
    const t0 = performance.now();
    while (performance.now() - t0 < WARM_UP * 1e3) timeLoop(calls[id], 64);
  }
  const iters = ids.map((id) => {
    let i = 1;
    while (timeLoop(calls[id], i) < SAMPLE) i *= 2;
    return i;
  });
  const seconds = ids.map(() => []);
  for (let r = 0; r < rounds; r++) {
    for (let j = 0; j < ids.length; j++) {
      const k = (j + r) % ids.length;
      seconds[k].push(timeLoop(calls[ids[k]], iters[k]) / iters[k]);
    }
  }
  const ratio = (a, b) => median(seconds[ids.indexOf(a)].map((t, r) => t / seconds[ids.indexOf(b)][r]));
  return {
    sameBits,
    isolated: globalThis.crossOriginIsolated,
    times: Object.fromEntries(ids.map((id, k) => [id, median(seconds[k])])),
    ratios: {
      'memory64 ÷ wasm32 clang 19 (export)': ratio('memory64: export', 'wasm32-clang19: export'),
      'memory64 ÷ wasm32 emcc (export)': ratio('memory64: export', 'wasm32-emcc: export'),
      'wasm32 clang 19 ÷ wasm32 emcc (export)': ratio('wasm32-clang19: export', 'wasm32-emcc: export'),
      'memory64 ÷ wasm32 (bindMemory rmsNorm)': ratio('memory64: bindMemory rmsNorm', 'wasm32: bindMemory rmsNorm'),
    },
  };
}
