// The GPU bench (tests/bench/rows/webgpu-page.js) run from Node in each
// browser with WebGPU, and its table: per shape, each row's time over the
// exact kernel's (median of per-round ratios) and how many of its outputs
// differ from the reference. Software adapters run on the CPU: ratios
// only, no absolute times (docs/webgpu.md).
import { fileURLToPath } from 'node:url';
import { startTestServer } from '../../helpers/engines.js';
import { launchGpuBrowser } from '../../helpers/webgpu-engines.js';

export const GPU_SHAPES = [[1, 896], [1, 4096], [32, 1024], [512, 2048]];

const median = (a) => {
  const s = [...a].sort((p, q) => p - q);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

/** Runs the GPU rows in `engine` ('chromium' or 'firefox'); returns { version, adapter, table (markdown), shapes }. */
export async function runGpuBench(engine, { shapes = GPU_SHAPES, rounds = 7, log = () => {} } = {}) {
  const server = await startTestServer();
  const browser = await launchGpuBrowser(engine);
  try {
    const page = await browser.openPage(server.url('/tests/pages/blank.html'));
    log(`${browser.version}: measuring ${shapes.map((s) => s.join('x')).join(', ')}`);
    const measured = await page.evaluate(async (arg) => (await import('/tests/bench/rows/webgpu-page.js')).measureGpu(arg), { shapes, rounds });
    const problems = (await page.problems()).filter((p) => !/powerPreference/.test(p));
    if (problems.length > 0) log(`${browser.version} console: ${problems.join('; ')}`);
    const lines = [`**WebGPU, ${browser.version}, adapter ${measured.adapter}** (time / the exact kernel's, median of ${rounds} rounds; outputs that differ from the reference)`, '',
      '| shape | row | time / exact | differing outputs |', '| --- | --- | ---: | ---: |'];
    for (const s of measured.shapes) {
      const exact = s.results.find((r) => r.id === 'webgpu-exact');
      for (const r of s.results) {
        const ratio = median(r.seconds.map((t, i) => t / exact.seconds[i]));
        lines.push(`| ${s.rows}×${s.dim} | ${r.name} | ${ratio.toFixed(3)} | ${r.differing} of ${s.values} |`);
      }
    }
    return { version: browser.version, adapter: measured.adapter, table: lines.join('\n'), shapes: measured.shapes };
  } finally {
    await browser.close();
    await server.close();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  for (const engine of (process.argv[2] ?? 'chromium,firefox').split(',')) {
    const { table } = await runGpuBench(engine, { log: (l) => process.stderr.write(`${l}\n`) });
    console.log(`${table}\n`);
  }
}
