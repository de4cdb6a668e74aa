// The tutorial's GPU panel (web/panels/gpu.js), panel 7 of web/index.html:
// in each browser with WebGPU it runs one batch through the wasm kernel,
// the exact GPU kernel and the native-float GPU kernel, says what it is
// doing meanwhile, reports no differing output for the exact kernel and
// shows the native kernel's differences as values, with a clean console;
// where the browser has WebGPU but no adapter (Chromium without
// --enable-unsafe-webgpu) and where it has none (WebKitGTK), it says so.
/* global document -- in the callbacks page.evaluate() runs in the page */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { engineNamed, startTestServer } from './helpers/engines.js';
import { GPU_ENGINES, launchGpuBrowser } from './helpers/webgpu-engines.js';

const server = await startTestServer();
after(() => server.close());

/** Polls `fn` in the page until it returns something truthy. */
const waitFor = async (page, fn, ms) => {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await page.evaluate(fn);
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out: ${fn}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
};

for (const name of GPU_ENGINES) {
  test(`the GPU panel in ${name}: the exact kernel matches the wasm kernel's bits`, async (t) => {
    const browser = await launchGpuBrowser(name);
    try {
      const page = await browser.openPage(server.url('/web/'));
      await waitFor(page, () => document.body.dataset.ready === 'true', 60_000);
      const shown = await page.evaluate(() => ({
        hidden: document.getElementById('gpu').hidden,
        heading: document.getElementById('gpu-h').textContent,
        listed: [...document.querySelectorAll('nav .toc a')].map((a) => a.getAttribute('href')).indexOf('#gpu'),
      }));
      assert.deepEqual(shown, { hidden: false, heading: '7. The same bits on the GPU', listed: 6 }, 'numbered and in the contents');
      await page.evaluate(() => document.getElementById('gpu-run').click());
      const summary = await waitFor(page, () => document.getElementById('gpu').dataset.exactDiffering !== undefined
        && document.getElementById('gpu-summary').textContent, 120_000);
      t.diagnostic(summary);
      const state = await page.evaluate(() => ({
        exact: document.getElementById('gpu').dataset.exactDiffering,
        reports: Number(document.getElementById('gpu').dataset.compileReports),
        status: document.getElementById('gpu-status').textContent,
        rows: [...document.querySelectorAll('#gpu-table tbody tr')].map((tr) => tr.lastElementChild.textContent),
      }));
      assert.equal(state.exact, '0');
      assert.ok(state.reports >= 2, `the pipeline's compilation reported as it started and finished (${state.reports})`);
      assert.match(state.status, /^Ran on .+; this run took \d+\.\d\d s, the first one including the pipeline's compilation\.$/);
      assert.equal(state.rows.length, 3);
      assert.equal(state.rows[1], '—', 'the exact kernel: no differing output');
      // The native kernel's differences, as values: index, both values, ulps apart, then the bits.
      assert.match(state.rows[2], /^y\[\d+\] = -?[\d.]+(e[+-]\d+)? vs -?[\d.]+(e[+-]\d+)?, \d+ ulp apart \(0x[0-9a-f]{8} vs 0x[0-9a-f]{8}\)/);
      assert.deepEqual((await page.problems()).filter((p) => !/powerPreference/.test(p)), []);
    } finally {
      await browser.close();
    }
  });
}

test('the GPU panel in Chromium without an adapter (WebGPU, no --enable-unsafe-webgpu): it says so, nothing runs', async () => {
  const browser = await engineNamed('chromium').launch();
  try {
    const page = await browser.openPage(server.url('/web/'));
    await waitFor(page, () => document.body.dataset.ready === 'true', 60_000);
    await page.evaluate(() => document.getElementById('gpu-run').click());
    const text = await waitFor(page, () => document.getElementById('gpu').dataset.state === 'no-adapter'
      && !document.querySelector('#gpu .message').hidden && document.querySelector('#gpu .message').textContent, 30_000);
    assert.equal(text, 'The GPU run failed: this browser has WebGPU (navigator.gpu) but gave this page no adapter: '
      + 'it found no GPU it will use, and offers no software one. Nothing ran on the GPU.');
    assert.equal(await page.evaluate(() => document.querySelectorAll('#gpu-table tr').length), 0);
  } finally {
    await browser.close();
  }
});

test('the GPU panel in WebKitGTK (no navigator.gpu): it says so, its button disabled', async () => {
  const browser = await engineNamed('webkit').launch();
  try {
    const page = await browser.openPage(server.url('/web/'));
    await waitFor(page, () => document.body.dataset.ready === 'true', 60_000);
    const got = await page.evaluate(() => ({
      state: document.getElementById('gpu').dataset.state,
      disabled: document.getElementById('gpu-run').disabled,
      status: document.getElementById('gpu-status').textContent,
    }));
    assert.deepEqual(got, {
      state: 'no-webgpu', disabled: true,
      status: 'This browser has no WebGPU (navigator.gpu is undefined), so this panel cannot run here. The kernels above are WebAssembly and need no GPU.',
    });
  } finally {
    await browser.close();
  }
});
