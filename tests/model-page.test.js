// Panel 9 of the tutorial in headless Chromium: the tiny Llama generates
// names with the package's norms, the switches and the timing work, and the
// console stays clean (tests/helpers/browser.js fails a page on any console
// error or warning, uncaught exception or failed request). With the engine
// switch on llama.cpp, the same model runs in the integrated llama.cpp
// (build/llama-run-integrated.mjs and the F32 GGUF: `make demo` or
// `make llama-cpp` builds them) and writes PyTorch's greedy names.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { launchBrowser, openCheckedPage, startDemoServer } from './helpers/browser.js';
import { fixture } from './helpers/llama-cpp.js';

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

const display = (name) => (name === '' ? '(empty)' : name[0].toUpperCase() + name.slice(1));

/** Sets a field and generates; resolves once the names list shows `engine`'s names for these settings. */
async function generateWith(page, engine, fields) {
  for (const [selector, value] of Object.entries(fields)) await page.fill(selector, value);
  await page.evaluate(() => { delete document.querySelector('#model-names').dataset.engine; });
  await page.click('#model-generate');
  await page.waitForSelector(`#model-names[data-engine="${engine}"]`);
  return names(page);
}

test('llama.cpp engine: PyTorch\'s greedy names for the fixture prompts; sampled, the JS engine\'s names', async () => {
  const { page, problems } = await openCheckedPage(browser, demo.url('/web/#inside-a-model'));
  try {
    await page.waitForSelector('#inside-a-model[data-ready]');
    await page.fill('#model-temperature', '0');
    await page.check('input[name="model-engine"][value="llama.cpp"]');
    await page.waitForSelector('#model-names[data-engine="llama.cpp"]');
    const ran = await page.textContent('#model-engine-ran');
    assert.match(ran, /llama\.cpp \(run\.cpp's "integrated" engine/, ran);
    assert.match(ran, /rmsnorm_wasm/, ran);
    assert.equal(await page.isDisabled('input[name="model-norms"][value="removed"]'), true, 'the norm switches are the JS model\'s');
    for (const c of fixture.cases) {
      const written = await generateWith(page, 'llama.cpp', { '#model-start': c.prompt });
      assert.deepEqual(written, Array(8).fill(display(c.greedy)), `prompt ${JSON.stringify(c.prompt)}`);
    }
    // Sampled: the page draws from llama.cpp's logits with the JS engine's sampler and seed.
    for (const seed of ['7', '12345']) {
      const settings = { '#model-temperature': '0.8', '#model-seed': seed, '#model-start': '' };
      const fromLlama = await generateWith(page, 'llama.cpp', settings);
      await page.check('input[name="model-engine"][value="js"]');
      await page.waitForSelector('#model-names[data-engine="js"]');
      assert.equal(await page.isDisabled('input[name="model-norms"][value="removed"]'), false);
      const fromJs = await generateWith(page, 'js', settings);
      assert.match(await page.textContent('#model-engine-ran'), /^Ran: this page's JavaScript forward pass, its norms the package's rmsNorm/);
      assert.deepEqual(fromLlama, fromJs, `seed ${seed}`);
      await page.check('input[name="model-engine"][value="llama.cpp"]');
      await page.waitForSelector('#model-names[data-engine="llama.cpp"]');
    }
    await page.fill('#model-start', 'a.b');
    await page.click('#model-generate');
    await page.waitForSelector('#inside-a-model .message:not([hidden])');
    assert.match(await page.textContent('#inside-a-model .message'), /letters a–z/);
    assert.deepEqual(problems, []);
  } finally {
    await page.context().close();
  }
});

test('llama.cpp engine not built: the switch says how to build it, the JS engine keeps writing', async () => {
  const { page, problems } = await openCheckedPage(browser, demo.url('/web/#inside-a-model'));
  try {
    await page.route('**/build/llama-run-integrated.mjs', (route) => route.fulfill({ status: 404, body: 'not found' }));
    await page.waitForSelector('#inside-a-model[data-ready]');
    const before = await names(page);
    await page.check('input[name="model-engine"][value="llama.cpp"]');
    await page.waitForSelector('#model-engine[data-missing]');
    assert.match(await page.textContent('#model-engine-ran'), /not built here: make demo .*build\/llama-run-integrated\.mjs/);
    assert.equal(await page.isDisabled('input[name="model-engine"][value="llama.cpp"]'), true);
    assert.equal(await page.isChecked('input[name="model-engine"][value="js"]'), true);
    await page.waitForSelector('#model-generate:not([disabled])');
    assert.deepEqual(await names(page), before, 'the JS engine\'s names stay');
    // The only problems are the missing file's.
    assert.ok(problems.length > 0 && problems.every((p) => /llama-run-integrated\.mjs|tiny-llama-f32\.gguf|status of 404/.test(p)), problems.join('\n'));
  } finally {
    await page.context().close();
  }
});
