#!/usr/bin/env node
// This build against another build of the package (a checkout, built), side
// by side in one run: the calls an engine makes on every token, and what
// alloc() costs. Rounds alternate the two builds; each ratio is the median
// of the per-round ratios.
//
//   node tests/bench/versus.js --baseline /path/to/other/checkout [--rounds 15] [--shapes 1x896]
import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';
import path from 'node:path';
import { median } from './measure.js';
import { timeSync } from './timing.js';

const { values: args } = parseArgs({
  options: { baseline: { type: 'string' }, rounds: { type: 'string', default: '15' }, shapes: { type: 'string', default: '1x896' } },
});
const here = path.resolve(new URL('../..', import.meta.url).pathname);
const builds = [['this', here]];
if (args.baseline) builds.push(['baseline', path.resolve(args.baseline)]);

function cases(api, rows, dim) {
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
  const out = new Float32Array(n);
  return {
    'zero-copy rmsNorm (tensors)': () => api.rmsNorm(tx, tw, { out: tout }),
    'copying rmsNorm (Float32Arrays, out)': () => api.rmsNorm(x, w, { out }),
    'allocating rmsNorm (no out)': () => api.rmsNorm(x, w),
    'zero-copy addRmsNorm (tensors)': () => api.addRmsNorm(tx, tres, tw, { out: tout }),
    'zero-copy bfloat16 rmsNorm (tensors)': () => api.rmsNorm(bx, bw, { out: bout, dtype: 'bfloat16' }),
    'alloc + free (float32 tensor)': () => api.alloc(n).free(),
  };
}

function calibrate(call) {
  let iters = 1;
  while (timeSync(call, iters) < 0.02) iters *= 2;
  return iters;
}

for (const label of args.shapes.split(',')) {
  const [rows, dim] = label.split('x').map(Number);
  const runs = [];
  for (const [name, dir] of builds) {
    const api = await import(pathToFileURL(path.join(dir, 'src/index.js')).href);
    await api.init({ backend: 'simd' });
    const calls = cases(api, rows, dim);
    runs.push({ name, calls, iters: Object.fromEntries(Object.entries(calls).map(([k, f]) => [k, calibrate(f)])) });
  }
  const seconds = runs.map(() => ({}));
  for (let round = 0; round < Number(args.rounds); round++) {
    for (const key of Object.keys(runs[0].calls)) {
      for (let b = 0; b < runs.length; b++) {
        const r = runs[(b + round) % runs.length];
        const i = runs.indexOf(r);
        (seconds[i][key] ??= []).push(timeSync(r.calls[key], r.iters[key]) / r.iters[key]);
      }
    }
  }
  console.log(`\n**${label}** (rows × dim), Node ${process.version}, µs per call (median of ${args.rounds} rounds)\n`);
  console.log(`| call | ${runs.map((r) => r.name).join(' | ')} |${runs.length > 1 ? ' this ÷ baseline |' : ''}`);
  console.log(`| --- | ${runs.map(() => '---:').join(' | ')} |${runs.length > 1 ? ' ---: |' : ''}`);
  for (const key of Object.keys(runs[0].calls)) {
    const ts = seconds.map((s) => median(s[key]) * 1e6);
    const ratio = runs.length > 1 ? ` ${median(seconds[0][key].map((t, k) => t / seconds[1][key][k])).toFixed(3)} |` : '';
    console.log(`| ${key} | ${ts.map((t) => t.toFixed(3)).join(' | ')} |${ratio}`);
  }
}
