// The GPU bench (tests/bench/rows/webgpu-page.js) run from Node in each
// browser with WebGPU, and its table: per shape, each row's time over the
// exact kernel's (median of per-round ratios) and how many of its outputs
// differ from the reference; then what an engine waits for at load (a page
// of its own, no pipeline built yet). Software adapters run on the CPU:
// ratios only, no absolute times (docs/webgpu.md).
//
// Then the block outputs (params.outDtype) against a float32 out, the same
// prepared call otherwise (issue 47's measure: ≤ 1.3 at both shapes).
//
//   node tests/bench/rows/webgpu.js [chromium,firefox,chromium-gpu] [--blocks-only]
import { fileURLToPath } from 'node:url';
import { startTestServer } from '../../helpers/engines.js';
import { launchGpuBrowser } from '../../helpers/webgpu-engines.js';
import { faultsOf, freshPageMicroseconds } from '../page-faults.js';

export const GPU_SHAPES = [[1, 896], [1, 4096], [32, 1024], [512, 2048]];
/** The shape whose set-up is timed: a small model's decode step. */
export const SETUP_SHAPE = [1, 896];
/** The shapes of the block outputs' rows: a decode step and a prefill's batch of a 4096-wide model. */
export const BLOCK_SHAPES = [[1, 4096], [128, 4096]];

const median = (a) => {
  const s = [...a].sort((p, q) => p - q);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

/** Runs the GPU rows in `engine` (see tests/helpers/webgpu-engines.js);
 * returns { version, adapter, table (markdown), shapes, blocks, setup }
 * (`shapes` or `blockShapes` empty: those rows left out). */
export async function runGpuBench(engine, { shapes = GPU_SHAPES, blockShapes = BLOCK_SHAPES, rounds = 7, log = () => {} } = {}) {
  const server = await startTestServer();
  const browser = await launchGpuBrowser(engine, { optimizedWasm: true });
  try {
    const lines = [];
    let measured = { adapter: null, shapes: [] };
    let setup = null;
    if (shapes.length > 0) {
      // Set-up first, in a page of its own, before any pipeline is built in
      // this browser; then again on a second device, which compiles the same
      // pipeline anew in a GPU process whose memory the first has touched.
      const fresh = await browser.openPage(server.url('/tests/pages/blank.html'));
      const measureSetup = () => fresh.evaluate(async (arg) => (await import('/tests/bench/rows/webgpu-page.js')).measureSetup(arg),
        { rows: SETUP_SHAPE[0], dim: SETUP_SHAPE[1] });
      // Chromium compiles in its GPU process; for Firefox, whose WebGPU runs
      // in its GPU process or its parent as its prefs say, every process counts.
      const [program, type, where] = engine.startsWith('chromium') ? ['chromium', 'gpu-process', 'Chromium\'s GPU process'] : ['firefox', null, 'Firefox\'s processes'];
      const faultsBefore = faultsOf(program, type);
      setup = await measureSetup();
      setup.faults = faultsBefore === null ? null : faultsOf(program, type) - faultsBefore;
      setup.pageMicroseconds = freshPageMicroseconds();
      setup.again = (await measureSetup()).setup;
      await fresh.close();
      const page = await browser.openPage(server.url('/tests/pages/blank.html'));
      log(`${browser.version}: measuring ${shapes.map((s) => s.join('x')).join(', ')}`);
      measured = await page.evaluate(async (arg) => (await import('/tests/bench/rows/webgpu-page.js')).measureGpu(arg), { shapes, rounds });
      const problems = (await page.problems()).filter((p) => !/powerPreference/.test(p));
      if (problems.length > 0) log(`${browser.version} console: ${problems.join('; ')}`);
      lines.push(`**WebGPU, ${browser.version}, adapter ${measured.adapter}** (a call's time / the exact kernel's, median of ${rounds} rounds; `
        + `outputs that differ from the reference; calls a batch)`, '',
      '| shape | row | time / exact | differing outputs | batch |', '| --- | --- | ---: | ---: | ---: |');
      for (const s of measured.shapes) {
        const exact = s.results.find((r) => r.id === 'webgpu-exact');
        for (const r of s.results) {
          const ratio = median(r.seconds.map((t, i) => t / exact.seconds[i]));
          lines.push(`| ${s.rows}×${s.dim} | ${r.name} | ${ratio.toFixed(3)} | ${r.differing} of ${s.values} | ${r.batch} |`);
        }
      }
      lines.push('', `Set-up at ${SETUP_SHAPE.join('×')} (a new device): createGpuKernels to the first result read back ${setup.setup.toFixed(0)} ms; `
        + `a call after it (run, submit, read back) ${setup.after.toFixed(1)} ms; ${setup.differing} differing outputs; `
        + `the same on a second device ${setup.again.toFixed(0)} ms. `
        + (setup.faults === null ? '' : `The first set-up, its device included, took ${setup.faults} page faults in ${where}; `
          + `a fresh page costs ${setup.pageMicroseconds.toFixed(2)} µs here on its first write (tests/bench/page-faults.js). `)
        + `The queue's wait: ${measured.wait.toFixed(1)} ms.`);
    }
    let blocks = null;
    if (blockShapes.length > 0) {
      const page = await browser.openPage(server.url('/tests/pages/blank.html'));
      log(`${browser.version}: measuring block outputs at ${blockShapes.map((s) => s.join('x')).join(', ')}`);
      blocks = await page.evaluate(async (arg) => (await import('/tests/bench/rows/webgpu-page.js')).measureBlocks(arg), { shapes: blockShapes, rounds });
      if (lines.length > 0) lines.push('');
      lines.push(`**WebGPU block outputs, ${browser.version}, adapter ${blocks.adapter}** (prepared rmsNorm calls, float32 x and weight: `
        + `a call's time with params.outDtype / with a float32 out, median of ${rounds} rounds; bytes that differ from the reference's; calls a batch)`, '',
      '| shape | out | time / float32 out | differing bytes | batch |', '| --- | --- | ---: | ---: | ---: |');
      for (const s of blocks.shapes) {
        const base = s.results.find((r) => r.id === 'float32');
        for (const r of s.results) {
          const ratio = median(r.seconds.map((t, i) => t / base.seconds[i]));
          lines.push(`| ${s.rows}×${s.dim} | ${r.id} | ${ratio.toFixed(3)} | ${r.differing} | ${r.batch} |`);
        }
      }
    }
    return { version: browser.version, adapter: measured.adapter ?? blocks?.adapter, table: lines.join('\n'), shapes: measured.shapes, blocks, setup };
  } finally {
    await browser.close();
    await server.close();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const only = args.includes('--blocks-only') ? { shapes: [] } : {};
  for (const engine of (args.find((a) => !a.startsWith('--')) ?? 'chromium,firefox').split(',')) {
    const { table } = await runGpuBench(engine, { ...only, log: (l) => process.stderr.write(`${l}\n`) });
    console.log(`${table}\n`);
  }
}
