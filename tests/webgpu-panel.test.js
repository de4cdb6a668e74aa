// The tutorial's GPU panel (web/panels/gpu.js) in each browser with WebGPU:
// it shows, runs one batch through the wasm kernel, the exact GPU kernel and
// the native-float GPU kernel, and reports no differing output for the exact
// kernel, with a clean console. (Where there is no WebGPU it stays hidden:
// tests/demo.test.js runs the page in Chromium without WebGPU.)
/* global document -- in the callbacks page.evaluate() runs in the page */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { startTestServer } from './helpers/engines.js';
import { GPU_ENGINES, launchGpuBrowser } from './helpers/webgpu-engines.js';

const server = await startTestServer();
after(() => server.close());

for (const name of GPU_ENGINES) {
  test(`the GPU panel in ${name}: the exact kernel matches the wasm kernel's bits`, async (t) => {
    const browser = await launchGpuBrowser(name);
    try {
      const page = await browser.openPage(server.url('/web/'));
      const waitFor = async (fn, ms) => {
        const deadline = Date.now() + ms;
        for (;;) {
          const value = await page.evaluate(fn);
          if (value) return value;
          if (Date.now() > deadline) throw new Error(`timed out: ${fn}`);
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      };
      await waitFor(() => document.body.dataset.ready === 'true', 60_000);
      assert.equal(await page.evaluate(() => document.getElementById('gpu').hidden), false, 'the panel is shown');
      await page.evaluate(() => document.getElementById('gpu-run').click());
      const summary = await waitFor(() => document.getElementById('gpu').dataset.exactDiffering !== undefined
        && document.getElementById('gpu-summary').textContent, 120_000);
      t.diagnostic(summary);
      assert.equal(await page.evaluate(() => document.getElementById('gpu').dataset.exactDiffering), '0');
      const rows = await page.evaluate(() => document.querySelectorAll('#gpu-table tbody tr').length);
      assert.equal(rows, 3);
      assert.deepEqual((await page.problems()).filter((p) => !/powerPreference/.test(p)), []);
    } finally {
      await browser.close();
    }
  });
}
