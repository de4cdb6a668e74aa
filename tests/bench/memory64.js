#!/usr/bin/env node
// What memory64 costs against wasm32, per engine: the measurement of
// tests/bench/memory64-page.js in each engine that runs wasm64 code, on an
// isolated page, at 512×2048 and 1×896 (docs/benchmarks.md, memory64).
// Node 20 is listed with the reason it measures nothing: even behind
// --experimental-wasm-memory64 it cannot compile the wasm64 kernels.
//
//   make bench-memory64        (builds the clang-19 wasm32 control first)
//   node tests/bench/memory64.js [--engine chromium,firefox,node] [--rounds 15] [--shapes 512x2048,1x896]
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { engineNamed, startTestServer } from '../helpers/engines.js';

const { values } = parseArgs({
  options: {
    engine: { type: 'string', default: 'chromium,firefox,node' },
    rounds: { type: 'string', default: '15' },
    shapes: { type: 'string', default: '512x2048,1x896' },
  },
});
const rounds = Number(values.rounds);
const shapes = values.shapes.split(',').map((s) => s.split('x').map(Number));

/** Why this Node cannot measure memory64, or '' if it can. */
async function nodeMemory64() {
  const bytes = await readFile(new URL('../../build/rmsnorm-simd-memory64.wasm', import.meta.url));
  try {
    new WebAssembly.Module(bytes);
    return '';
  } catch (error) {
    return `Node ${process.version}${process.execArgv.length > 0 ? ` ${process.execArgv.join(' ')}` : ''}: ${error.message}`;
  }
}

const server = await startTestServer();
const fmt = (s) => (s * 1e6 < 10 ? (s * 1e6).toFixed(3) : (s * 1e6).toFixed(1));
try {
  for (const name of values.engine.split(',')) {
    if (name === 'node') {
      const why = await nodeMemory64();
      console.log(why === '' ? 'Node compiles the memory64 kernels: measure it in a page-less run (not written)' : `${why}: not measured`);
      continue;
    }
    const browser = await engineNamed(name).launch({ optimizedWasm: true });
    try {
      for (const [rows, dim] of shapes) {
        const page = await browser.openPage(server.url('/tests/pages/blank.html', { isolated: true }));
        try {
          const result = await page.evaluate(async (arg) => {
            const { measureMemory64 } = await import('/tests/bench/memory64-page.js');
            return measureMemory64(arg);
          }, { rows, dim, rounds });
          if (!result.sameBits) throw new Error(`${browser.version} ${rows}x${dim}: the builds disagree`);
          console.log(`\n${browser.version}, ${rows}×${dim} (${rounds} rounds, same bits: ${result.sameBits}, isolated: ${result.isolated})`);
          for (const [id, seconds] of Object.entries(result.times)) console.log(`  ${id.padEnd(36)} ${fmt(seconds)} µs`);
          for (const [what, ratio] of Object.entries(result.ratios)) console.log(`  ${what.padEnd(44)} ${ratio.toFixed(3)}`);
        } finally {
          await page.close();
        }
      }
    } finally {
      await browser.close();
    }
  }
} finally {
  await server.close();
}
