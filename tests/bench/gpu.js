#!/usr/bin/env node
// The GPU rows of the bench on whatever adapter this machine's headless
// Chromium gets: its GPU where it has one (Vulkan on, blocklist ignored),
// else SwiftShader (those flags give no adapter at all on a machine
// without a GPU, so the plain launch is tried next). Prints the adapter,
// the table of tests/bench/rows/webgpu.js and the set-up times;
// docs/webgpu.md says what to expect on a GPU.
//
//   node tests/bench/gpu.js [--shapes 1x896,512x2048] [--rounds 7]
import { parseArgs } from 'node:util';
import { startTestServer } from '../helpers/engines.js';
import { launchGpuBrowser } from '../helpers/webgpu-engines.js';
import { GPU_SHAPES, runGpuBench } from './rows/webgpu.js';

const { values } = parseArgs({
  options: {
    shapes: { type: 'string', default: GPU_SHAPES.map((s) => s.join('x')).join(',') },
    rounds: { type: 'string', default: '7' },
  },
});
const log = (l) => process.stderr.write(`${l}\n`);

/** The adapter `engine` gets, described, or null for none. */
async function adapterOf(engine) {
  const server = await startTestServer();
  const browser = await launchGpuBrowser(engine, { optimizedWasm: true });
  try {
    const page = await browser.openPage(server.url('/tests/pages/blank.html'));
    return await page.evaluate(async () => {
      const adapter = await navigator.gpu?.requestAdapter();
      if (!adapter) return null;
      const { vendor, architecture, device, description } = adapter.info ?? {};
      return [vendor, architecture, device, description].filter(Boolean).join(' ') || 'unnamed adapter';
    });
  } finally {
    await browser.close();
    await server.close();
  }
}

let engine = 'chromium-gpu';
const found = await adapterOf(engine);
if (found === null) {
  log('Chromium with its GPU flags finds no adapter: no GPU here; measuring SwiftShader');
  engine = 'chromium';
} else log(`adapter: ${found}`);
const shapes = values.shapes.split(',').map((s) => s.split('x').map(Number));
const { table } = await runGpuBench(engine, { shapes, rounds: Number(values.rounds), log });
console.log(table);
