// The demo page in a real browser: it loads the package without a bundler and
// shows the worked example computed by the wasm kernel.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { launchBrowser, openCheckedPage, startDemoServer } from './helpers/browser.js';

let browser;
let demo;
before(async () => {
  demo = await startDemoServer();
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
  demo?.server.close();
});

test('the demo page shows the worked example computed by the SIMD module', async () => {
  const { page, problems } = await openCheckedPage(browser, demo.url());
  await page.waitForSelector('#status[data-backend]');
  const y = await Promise.all([0, 1, 2, 3].map((i) => page.textContent(`#y${i}`)));
  assert.deepEqual(y, ['0.55', '-0.37', '1.10', '-2.92']);
  assert.equal(await page.getAttribute('#status', 'data-backend'), 'simd');
  assert.deepEqual(problems, []);
});
