// The calls tests/bench/versus.js compares between builds, measured wherever
// the package runs: in Node, and in a browser page that imports every build
// (each its own module graph, so each its own default instance). Rounds
// alternate the builds; each ratio is the median of the per-round ratios.
import { median } from './measure.js';
import { timeSync } from './timing.js';

/**
 * The calls of one build on a rows × dim shape. `kernels` is the build's
 * default instance (src/api/runtime.js activeKernels), for the two rows
 * that skip the JS layer: the export called directly, and the allocator's
 * own malloc + free (alloc() also zeroes and makes a tensor).
 */
function cases(api, kernels, rows, dim) {
  const n = rows * dim;
  const x = new Float32Array(n).map((_, i) => Math.sin(i) * 3);
  const w = new Float32Array(dim).map((_, i) => 1 + Math.cos(i) / 4);
  const tx = api.alloc(n);
  const tw = api.alloc(dim);
  const tout = api.alloc(n);
  const tres = api.alloc(n);
  tx.array.set(x);
  tw.array.set(w);
  const bx = api.alloc(n, 'bfloat16');
  const bw = api.alloc(dim, 'bfloat16');
  const bout = api.alloc(n, 'bfloat16');
  bw.array.fill(0x3f80);
  const tw2 = api.alloc(dim);
  tw2.array.set(w);
  const out = new Float32Array(n);
  const { rmsnorm, malloc, free } = kernels.exports;
  const [xp, wp, yp] = [tx.byteOffset, tw.byteOffset, tout.byteOffset];
  const eps = Math.fround(1e-6);
  // The export's signature before the kernel wrote rstd (11 parameters, llama = 1), after (12, llama = 0),
  // and with the row stride after dim (13).
  const direct = {
    11: () => rmsnorm(xp, 0, wp, yp, rows, dim, eps, 0, 0, 1, 0),
    12: () => rmsnorm(xp, 0, wp, yp, 0, rows, dim, eps, 0, 0, 0, 0),
    13: () => rmsnorm(xp, 0, wp, yp, 0, rows, dim, dim, eps, 0, 0, 0, 0),
  }[rmsnorm.length];
  // A build with prepared calls (rmsNorm.prepare) times the prepared run too.
  const prepared = typeof api.rmsNorm.prepare === 'function' ? api.rmsNorm.prepare(tx, tw, { out: tout }) : null;
  return {
    'export called directly (no JS API)': direct,
    'zero-copy rmsNorm (tensors)': () => api.rmsNorm(tx, tw, { out: tout }),
    ...(prepared === null ? {} : { 'zero-copy prepared run (tensors)': () => prepared.run() }),
    'copying rmsNorm (Float32Arrays, out)': () => api.rmsNorm(x, w, { out }),
    'allocating rmsNorm (no out)': () => api.rmsNorm(x, w),
    // A layer stack's decode loop: every layer's norm has its own weight.
    'zero-copy rmsNorm, two weights in turn (two calls)': () => {
      api.rmsNorm(tx, tw, { out: tout });
      api.rmsNorm(tx, tw2, { out: tout });
    },
    'zero-copy addRmsNorm (tensors)': () => api.addRmsNorm(tx, tres, tw, { out: tout }),
    'zero-copy bfloat16 rmsNorm (tensors)': () => api.rmsNorm(bx, bw, { out: bout, dtype: 'bfloat16' }),
    'alloc + free (float32 tensor)': () => api.alloc(n).free(),
    'export malloc + free (no zeroing, no tensor)': () => free(malloc(4 * n)),
  };
}

function calibrate(call) {
  let iters = 1;
  while (timeSync(call, iters) < 0.02) iters *= 2;
  return iters;
}

/**
 * Every case of every build on each shape: builds = [[name, url of its
 * src/], ...]. Returns, per shape, per case, each build's median µs a call
 * and the median per-round ratio of the first build to each other one.
 */
export async function measureVersus(builds, { shapes, rounds }) {
  const apis = [];
  for (const [name, src] of builds) {
    const api = await import(`${src}index.js`);
    const runtime = await import(`${src}api/runtime.js`);
    await api.init({ backend: 'simd' });
    apis.push({ name, api, kernels: runtime.activeKernels('versus') });
  }
  const results = [];
  for (const label of shapes) {
    const [rows, dim] = label.split('x').map(Number);
    const runs = apis.map(({ name, api, kernels }) => {
      const calls = cases(api, kernels, rows, dim);
      return { name, calls, iters: Object.fromEntries(Object.entries(calls).map(([k, f]) => [k, calibrate(f)])) };
    });
    const keys = Object.keys(runs[0].calls);
    const seconds = runs.map(() => Object.fromEntries(keys.map((k) => [k, []])));
    for (let round = 0; round < rounds; round++) {
      for (const key of keys) {
        for (let b = 0; b < runs.length; b++) {
          const i = (b + round) % runs.length;
          // A case a build cannot make (an older one's missing function) is NaN for it.
          seconds[i][key].push(key in runs[i].calls ? timeSync(runs[i].calls[key], runs[i].iters[key]) / runs[i].iters[key] : NaN);
        }
      }
    }
    results.push({
      label,
      builds: runs.map((r) => r.name),
      rows: keys.map((key) => ({
        key,
        micros: seconds.map((s) => median(s[key]) * 1e6),
        ratios: seconds.slice(1).map((s) => median(seconds[0][key].map((t, r) => t / s[key][r]))),
      })),
    });
  }
  return results;
}
