// Counts V8's garbage collections over many calls of one call shape, in a
// process of its own (tests/no-garbage.test.js, tests/bench/garbage.js): a
// call that allocates even a few bytes each time collects at least once in
// 200,000 calls, one that allocates nothing never does. Prints
// { shape, calls, collections }; with no shape, the shapes' names.
//
//   node tests/helpers/gc-probe.js [<shape> [calls]]
import { PerformanceObserver } from 'node:perf_hooks';
// A namespace import: an older build (tests/bench/garbage.js --probe) may
// lack an export some shape uses.
import * as api from '../../src/index.js';

const { alloc, bindMemory, init, addRmsNorm, rmsNorm } = api;

const shape = process.argv[2];
const calls = Number(process.argv[3] ?? 200000);
await init({ backend: 'simd' });

const dim = 896;
const x = new Float32Array(dim).map((_, i) => Math.sin(i) * 3);
const w = new Float32Array(dim).map((_, i) => 1 + Math.cos(i) / 4);
const out = new Float32Array(dim);
const residual = new Float32Array(dim);
const [tx, tw, ty, tr] = [alloc(dim), alloc(dim), alloc(dim), alloc(dim)];
tx.array.set(x);
tw.array.set(w);
const bits = new Uint16Array(dim);
const widened = new Float32Array(dim);
// QK-norm's layout: 16 rows of 128, 256 apart.
const strided = new Float32Array(15 * 256 + 128).map((_, i) => Math.sin(i));
const stridedOut = new Float32Array(strided.length);
const qNorm = w.subarray(0, 128);
// QK-norm at prefill with heads: 3 tokens of 4 heads of 128, tokens 1024 apart.
const heads = { rowStride: 1024, heads: 4, headStride: 128 };
const qkv = new Float32Array(2 * 1024 + 512).map((_, i) => Math.sin(i));
const qkvOut = new Float32Array(qkv.length);
const [tqkv, tqkvOut, tqNorm] = [alloc(qkv.length), alloc(qkv.length), alloc(128)];
tqkv.array.set(qkv);
tqNorm.array.set(qNorm);
const memory = new WebAssembly.Memory({ initial: 4 });
const bound = await bindMemory(memory, { scratch: { byteOffset: 65536, byteLength: 65536 } });
const [bx, bw, by] = [2, 2.25, 2.5].map((at) => new Float32Array(memory.buffer, at * 65536, dim).fill(1.5));

// Each shape's call, made only when asked for (an older build may lack
// what another shape uses); each options object made once, as a decode
// loop keeps its own.
const shapes = {
  'new Float32Array(896) alone': () => () => new Float32Array(dim),
  'allocating: rmsNorm(x, w, { eps })': () => ((o) => () => rmsNorm(x, w, o))({ eps: 1e-6 }),
  'copying: rmsNorm(x, w, { out })': () => ((o) => () => rmsNorm(x, w, o))({ out }),
  'copying: rmsNorm(x, w, { eps, out })': () => ((o) => () => rmsNorm(x, w, o))({ eps: 1e-5, out }),
  'copying: addRmsNorm(x, residual, w, { eps, out })': () => ((o) => () => addRmsNorm(x, residual, w, o))({ eps: 1e-5, out }),
  'copying, strided: rmsNorm(qkv, qNorm, { rowStride, out })': () => ((o) => () => rmsNorm(strided, qNorm, o))({ rowStride: 256, out: stridedOut }),
  'copying, heads: rmsNorm(qkv, qNorm, { rowStride, heads, headStride, out })': () => ((o) => () => rmsNorm(qkv, qNorm, o))({ ...heads, out: qkvOut }),
  'zero-copy, heads: rmsNorm(tqkv, tqNorm, { rowStride, heads, headStride, out })': () => ((o) => () => rmsNorm(tqkv, tqNorm, o))({ ...heads, out: tqkvOut }),
  'prepared, heads, zero-copy': () => ((p) => () => p.run())(rmsNorm.prepare(tqkv, tqNorm, { ...heads, out: tqkvOut })),
  'zero-copy: rmsNorm(tx, tw, { out: ty })': () => ((o) => () => rmsNorm(tx, tw, o))({ out: ty }),
  'zero-copy: rmsNorm(tx, tw, { eps, out: ty })': () => ((o) => () => rmsNorm(tx, tw, o))({ eps: 1e-6, out: ty }),
  'zero-copy: addRmsNorm(tx, tr, tw, { eps, out: ty })': () => ((o) => () => addRmsNorm(tx, tr, tw, o))({ eps: 1e-6, out: ty }),
  'zero-copy, bound memory: rmsNorm(bx, bw, { eps, out: by })': () => ((o) => () => bound.rmsNorm(bx, bw, o))({ eps: 1e-6, out: by }),
  'prepared, zero-copy': () => ((p) => () => p.run())(rmsNorm.prepare(tx, tw, { eps: 1e-6, out: ty })),
  'prepared, copying': () => ((p) => () => p.run())(rmsNorm.prepare(x, w, { eps: 1e-6, out })),
  'prepared, bound memory': () => ((p) => () => p.run())(bound.rmsNorm.prepare(bx, bw, { eps: 1e-6, out: by })),
  'converter into out: toFloat32(bits, { dtype, out })': () => ((o) => () => api.toFloat32(bits, o))({ dtype: 'bfloat16', out: widened }),
};
if (shape === undefined) {
  process.stdout.write(`${JSON.stringify(Object.keys(shapes))}\n`);
  process.exit(0);
}
if (!(shape in shapes)) {
  process.stderr.write(`gc-probe: unknown shape ${JSON.stringify(shape)}; one of ${Object.keys(shapes).join(' | ')}\n`);
  process.exit(2);
}
const call = shapes[shape]();
let collections = 0;
const observer = new PerformanceObserver((list) => { collections += list.getEntries().length; });
for (let i = 0; i < 50000; i++) call(); // warm-up: optimized, every view and record made
await new Promise((resolve) => { setTimeout(resolve, 20); });
observer.observe({ entryTypes: ['gc'] });
for (let i = 0; i < calls; i++) call();
await new Promise((resolve) => { setTimeout(resolve, 20); }); // the observer's entries arrive asynchronously
observer.disconnect();
process.stdout.write(`${JSON.stringify({ shape, calls, collections })}\n`);
