// Panel 8 of the tutorial in headless Chromium: the tiny Llama generates
// names with the package's norms, the switches and the timing work, and the
// console stays clean (tests/helpers/browser.js fails a page on any console
// error or warning, uncaught exception or failed request).
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

const names = (page) => page.$$eval('#model-names li', (items) => items.map((li) => li.textContent));

test('Generate writes names with the package\'s norms; a switch changes them; a decode step is timed', async () => {
  const { page, problems } = await openCheckedPage(browser, demo.url('/web/#inside-a-model'));
  try {
    await page.waitForSelector('#inside-a-model[data-ready]');
    const first = await names(page);
    assert.equal(first.length, 8, 'names written when the panel opens');

    await page.fill('#model-seed', '12345');
    await page.click('#model-generate');
    await page.waitForFunction((before) => {
      const now = [...document.querySelectorAll('#model-names li')].map((li) => li.textContent);
      return now.join() !== before;
    }, first.join());
    const written = await names(page);
    assert.equal(written.length, 8);
    for (const name of written) assert.match(name, /^[A-Z][a-z-]*$|^\(empty\)$/, name);
    assert.equal(await page.locator('#model-rms-chart svg').count(), 1, 'the RMS chart is drawn');

    const removed = await page.getAttribute('#model-switches tr[data-variant="removed"]', 'data-agreement');
    assert.ok(Number(removed) < 1, `top-1 agreement without norms: ${removed}`);
    // The sentence under the table quotes the two bfloat16 rows as this browser measures them.
    const agreement = (variant) => page.textContent(`#model-switches tr[data-variant="${variant}"] td`);
    const note = await page.textContent('#model-top1-note');
    const quoted = `upcast agrees on ${await agreement('bfloat16Upcast')} and bfloat16 throughout on ${await agreement('bfloat16')}`;
    assert.ok(note.replace(/\s+/g, ' ').includes(quoted), `${quoted}\n${note}`);

    await page.check('input[name="model-norms"][value="removed"]');
    await page.waitForSelector('#model-names[data-variant="removed"]');
    assert.notDeepEqual(await names(page), written, 'without norms the same seed writes other names');

    await page.click('#model-time');
    await page.waitForSelector('#model-timing[data-share]');
    const share = Number(await page.getAttribute('#model-timing', 'data-share'));
    assert.ok(share > 0 && share < 1, `norm share of a decode step: ${share}`);
    // The table's shares, as shown, add up to its 100% (web/lib/format.js, percentages).
    const shown = await page.$$eval('#model-timing tbody tr', (rows) => rows.map((r) => r.lastElementChild.textContent));
    assert.equal(shown.length, 3, shown.join());
    assert.equal(shown[2], '100%');
    const hundredths = shown.slice(0, 2).map((s) => Math.round(Number(s.replace('%', '')) * 1e4));
    assert.equal(hundredths[0] + hundredths[1], 100e4, `the norms ${shown[0]} and the rest ${shown[1]} add up to 100%`);
    assert.deepEqual(problems, []);
  } finally {
    await page.context().close();
  }
});
