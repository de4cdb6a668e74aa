#!/usr/bin/env node
// Two threads against one on a shared memory (bindMemory, as a threaded
// engine runs it): each of `threads` workers normalizes its share of the
// rows of one call, all at once. Wall time from posting the job to the last
// reply, median of several rounds; a part of `npm run bench`.
//
//   node tests/bench/threads.js [--rounds 7]
import { parseArgs } from 'node:util';
import { normalArray, prng, uniformArray } from '../helpers/random.js';
import { sharedLayout, startThreads } from '../helpers/shared-memory.js';

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '7' } } });
const SHAPES = [[512, 2048], [2048, 4096]];
const median = (a) => a.slice().sort((p, q) => p - q)[a.length >> 1];

async function timeThreads(layout, rows, dim, threads, repeat) {
  const pool = await startThreads(layout, threads, 'simd');
  try {
    const job = { op: 'rmsNorm', dim, eps: 1e-5, repeat, ...layout.at };
    await pool.run({ ...job, repeat: 2 }, rows); // warm-up
    const times = [];
    for (let round = 0; round < Number(values.rounds); round++) {
      const start = performance.now();
      await pool.run(job, rows);
      times.push((performance.now() - start) / 1e3 / repeat);
    }
    return median(times);
  } finally {
    await pool.stop();
  }
}

console.log('\n**Threads on one shared memory** (bindMemory, SIMD; µs per call, median)\n');
console.log('| rows × dim | 1 thread | 2 threads | speed-up |');
console.log('| --- | ---: | ---: | ---: |');
for (const [rows, dim] of SHAPES) {
  const layout = sharedLayout(rows, dim, 2);
  layout.view('x').set(normalArray(prng(41), rows * dim, 1));
  layout.view('weight', dim).set(uniformArray(prng(42), dim, 0.5, 1.5));
  const repeat = Math.max(2, Math.round(2e7 / (rows * dim)));
  const one = await timeThreads(layout, rows, dim, 1, repeat);
  const two = await timeThreads(layout, rows, dim, 2, repeat);
  console.log(`| ${rows}×${dim} | ${(one * 1e6).toFixed(0)} | ${(two * 1e6).toFixed(0)} | ${(one / two).toFixed(2)}× |`);
}
