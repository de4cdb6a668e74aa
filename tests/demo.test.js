// The tutorial page (web/) in a real browser: Debian's Chromium, headless,
// driven by playwright-core, against the demo server on a free port. Every
// page load fails on a console error or warning, an uncaught exception or a
// failed request (tests/helpers/browser.js).
import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { init, layerNorm, rmsNorm } from '../src/index.js';
import { launchBrowser, openCheckedPage, startDemoServer } from './helpers/browser.js';
import { precisionBatch } from '../web/panels/precision.js';

const ARTIFACTS = fileURLToPath(new URL('./artifacts/', import.meta.url));
const DESKTOP = { width: 1280, height: 900 };
const PHONE = { width: 390, height: 844 };

let browser;
let demo;
before(async () => {
  await init();
  demo = await startDemoServer();
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
  demo?.server.close();
});

/**
 * Opens the tutorial at `viewport`, waits until every panel has drawn its
 * first result, runs `check(page)`, then asserts that the page logged no
 * error or warning and no request failed. The page is closed whatever happens.
 */
async function onTutorial(check, viewport = DESKTOP) {
  const { page, problems } = await openCheckedPage(browser, demo.url(), viewport);
  try {
    await page.waitForSelector('body[data-ready]');
    await check(page);
    assert.deepEqual(problems, []);
  } finally {
    await page.context().close();
  }
}

const cellTexts = (page, selector) => page.$$eval(selector, (cells) => cells.map((c) => c.textContent));

test('the worked example shows the blog\'s output, computed by the SIMD module', async () => {
  await onTutorial(async (page) => {
    assert.deepEqual(await cellTexts(page, '#formula-y td'), ['0.55', '-0.37', '1.10', '-2.92']);
    assert.equal(await page.getAttribute('#status', 'data-backend'), 'simd');
    assert.equal(await page.locator('.math .katex').count(), 2, 'both formulas typeset by KaTeX');
    const steps = await cellTexts(page, '#formula-steps li');
    assert.equal(steps[1], 'Average the squares: mean(x²) = 30');
    assert.equal(steps[3], 'Take the root: RMS = √30.000001 ≈ 5.477226');
  });
});

test('editing x updates the output to what rmsNorm computes in Node, bit for bit', async () => {
  await onTutorial(async (page) => {
    const text = '3, -1.5, 0.25, 7';
    await page.fill('#formula-x', text);
    await page.waitForSelector(`#formula-table[data-input^="${text}|"]`);
    const expected = rmsNorm(new Float32Array([3, -1.5, 0.25, 7]), new Float32Array([1.5, 0.5, 1, 2]));
    const shown = await page.$$eval('#formula-y td', (cells) => cells.map((c) => c.dataset.value));
    shown.forEach((value, i) => {
      assert.equal(Math.fround(Number(value)), expected[i], `x = (${text}), γ = (1.5, 0.5, 1, 2): y[${i}]`);
    });
    assert.deepEqual(await cellTexts(page, '#formula-y td'), [...expected].map((v) => v.toFixed(2)));

    await page.click('#formula-ones');
    await page.waitForSelector('#formula-table[data-input*="|1, 1, 1, 1|"]');
    assert.match(await page.textContent('#formula-rms'), /RMS\(y\) = 1\.000000 ≈ 1\./);
  });
});

test('bad input shows an inline message and keeps the last good result', async () => {
  await onTutorial(async (page) => {
    const message = page.locator('#formula .message');
    const good = await cellTexts(page, '#formula-y td');
    assert.equal(await message.isHidden(), true);
    const cases = [
      ['#formula-x', 'two, -4, 6, -8', /x, value 1: “two” is not a number/],
      ['#formula-x', '2, -4, 6', /x has 3 values but γ has 4/],
      ['#formula-x', '', /x is empty/],
      ['#formula-w', '1.5, 0.5, 1, abc', /γ, value 4: “abc” is not a number/],
      ['#formula-eps', '-1', /ε must be at least 0/],
    ];
    for (const [field, text, expected] of cases) {
      await page.fill(field, text);
      await page.waitForFunction(() => !document.querySelector('#formula .message').hidden);
      assert.match(await message.textContent(), expected, `${field} = "${text}"`);
      assert.equal(await page.getAttribute(field, 'aria-invalid'), 'true', `${field} = "${text}" is marked invalid`);
      assert.deepEqual(await cellTexts(page, '#formula-y td'), good, `${field} = "${text}" keeps the last result`);
      await page.click('#formula-reset');
      await page.waitForFunction(() => document.querySelector('#formula .message').hidden);
    }
    assert.deepEqual(await cellTexts(page, '#formula-y td'), good);
  });
});

test('the precision panel: bfloat16 throughout misses the float64 oracle far more than the upcast; cast modes differ', async () => {
  await onTutorial(async (page) => {
    for (const dim of [896, 64]) {
      if (dim !== 896) {
        await page.selectOption('#precision-dim', String(dim));
        await page.waitForFunction((d) => document.getElementById('precision-summary').textContent.includes(`× ${d},`), dim);
      }
      const total = 8 * dim;
      const wrong = await page.$$eval('#precision-table tbody tr', (rows) => rows.map((r) => Number(r.dataset.wrong)));
      assert.equal(wrong.length, 3);
      assert.ok(wrong[0] > 0.1 * total, `dim ${dim}: bfloat16 throughout misses ${wrong[0]} of ${total}`);
      assert.ok(wrong[1] < 0.01 * total && wrong[2] < 0.01 * total, `dim ${dim}: the upcast misses ${wrong[1]} and ${wrong[2]} of ${total}`);

      const seed = Number(await page.getAttribute('#precision-summary', 'data-seed'));
      const { x, w } = precisionBatch(seed, dim);
      const [llama, gemma] = ['llama', 'gemma'].map((castMode) => rmsNorm(x, w, { dtype: 'bfloat16', castMode, eps: 1e-6 }));
      const differing = llama.filter((bits, i) => bits !== gemma[i]).length;
      assert.ok(differing > 0.1 * total, `dim ${dim}, seed ${seed}: the cast modes differ in ${differing} of ${total}`);
      assert.equal(Number(await page.getAttribute('#precision-summary', 'data-modes')), differing, `dim ${dim}, seed ${seed}`);
    }
  });
});

test('the LayerNorm panel: both kernels side by side, identical on a zero-mean row, timed on a picked shape', async () => {
  await onTutorial(async (page) => {
    const both = (values) => {
      const x = new Float32Array(values);
      return [rmsNorm(x, null, { dim: x.length, eps: 1e-6 }), layerNorm(x, null, null, { dim: x.length, eps: 1e-6 })]
        .map((y) => [...y].map((v) => v.toFixed(2)));
    };
    const [rms, ln] = both([2, -4, 6, -8]);
    assert.deepEqual(await cellTexts(page, '#ln-rms-y td'), rms);
    assert.deepEqual(await cellTexts(page, '#ln-ln-y td'), ln);
    assert.ok(Number(await page.getAttribute('#ln-summary', 'data-largest')) > 0.1, 'mean -1: the outputs differ');

    await page.click('#ln-toggle');
    assert.equal(await page.getAttribute('#ln-toggle', 'aria-pressed'), 'true');
    assert.match(await page.textContent('#ln-caption'), /LayerNorm/);

    await page.click('#ln-center');
    await page.waitForSelector('#ln-table[data-input="3, -3, 7, -7"]');
    const [rms0, ln0] = both([3, -3, 7, -7]);
    assert.deepEqual(rms0, ln0);
    assert.deepEqual(await cellTexts(page, '#ln-ln-y td'), ln0);
    assert.equal(await page.getAttribute('#ln-summary', 'data-largest'), '0', 'zero-mean row: identical outputs');

    await page.selectOption('#ln-shape', '32x1024');
    await page.click('#ln-time');
    await page.waitForSelector('#ln-speed[data-ratio]', { timeout: 60_000 });
    assert.equal(await page.locator('#ln-speed tbody tr').count(), 2);
    assert.match(await page.textContent('#ln-speed-summary'), /RMSNorm takes [\d.]+× the time of LayerNorm/);
  });
});

test('the bit-exactness panel reads 0 after each new batch, on the page\'s own instances', async () => {
  await onTutorial(async (page) => {
    const seeds = new Set();
    for (let batch = 2; batch <= 5; batch++) {
      if (batch === 5) {
        await page.focus('#bit-exact-new'); // the last press from the keyboard
        await page.keyboard.press('Enter');
      } else {
        await page.click('#bit-exact-new');
      }
      await page.waitForSelector(`#bit-exact-summary[data-batch="${batch}"]`);
      assert.equal(await page.textContent('#bit-exact-max'), '0', `batch ${batch}`);
      const summary = await page.textContent('#bit-exact-summary');
      seeds.add(summary.match(/seed (\d+)/)[1]);
      // SIMD vs scalar, SIMD vs reference, scalar vs reference: 0 of 576 each.
      assert.deepEqual(await cellTexts(page, '#bit-exact-pairs tbody td:last-child'), Array(3).fill('0 of 576'));
    }
    assert.equal(seeds.size, 4, 'every press draws a new batch');
    // The SIMD and scalar rows come from createKernels() instances: nothing
    // on the page switched (or even loaded) the package's default instance.
    const untouched = await page.evaluate(async () => {
      const { rmsNorm } = await import('/src/index.js');
      try {
        rmsNorm(new Float32Array(4), null, { dim: 4 });
        return 'the default instance ran';
      } catch (err) {
        return err.message;
      }
    });
    assert.match(untouched, /init\(\)/);
  });
});

test('the drift panel: RMSNorm keeps the residual stream\'s scale; the slider works by keyboard', async () => {
  await onTutorial(async (page) => {
    const summary = page.locator('#drift-summary');
    const plain = Number(await summary.getAttribute('data-plain'));
    const normed = Number(await summary.getAttribute('data-normed'));
    assert.ok(plain > 1000 * normed, `after 28 blocks: ${plain} without vs ${normed} with RMSNorm`);
    assert.ok(normed > 1 && normed < 20, `with RMSNorm the RMS grows slowly: ${normed}`);
    assert.equal(await page.locator('#drift-chart polyline').count(), 2);

    await page.focus('#drift-blocks');
    await page.keyboard.press('ArrowLeft');
    await page.waitForFunction(() => document.getElementById('drift-summary').textContent.includes('After 27 blocks'));
    assert.equal(await page.textContent('#drift-blocks-out'), '27');
  });
});

test('the square-and-eps panel: NaN from the raw mean, zeros with eps inside, NaN with eps = 0', async () => {
  await onTutorial(async (page) => {
    const x = new Float32Array([0.5, -1.25, 0.25, 0.375]);
    const y = rmsNorm(x, null, { dim: 4 });
    assert.equal(await page.textContent('#square-kernel-y'), [...y].map((v) => v.toFixed(2)).join(', '));
    assert.match(await page.textContent('#square-table'), /NaN, NaN, NaN, NaN/);
    assert.equal(await page.textContent('#eps-inside-y'), '0, 0, 0, 0');
    assert.equal(await page.textContent('#eps-none-y'), 'NaN, NaN, NaN, NaN');

    await page.selectOption('#eps-scale', '1');
    await page.waitForSelector('#eps-table[data-scale="1"]');
    const ones = rmsNorm(new Float32Array([1, -1, 1, -1]), null, { dim: 4 });
    assert.equal(await page.textContent('#eps-inside-y'), [...ones].map((v) => v.toFixed(2)).join(', '));
  });
});

test('the benchmark on its smallest setting draws a bar per contender, each checked first', async () => {
  await onTutorial(async (page) => {
    await page.selectOption('#speed-shape', '1x896');
    await page.click('#speed-run');
    await page.waitForSelector('#speed-chart rect', { timeout: 60_000 });
    const bars = await page.locator('#speed-chart rect.bar').count();
    assert.ok(bars >= 3, `${bars} bars`);
    const checks = await cellTexts(page, '#speed-table tbody td:last-child');
    assert.deepEqual(checks, ['within 1e-5', 'bit-exact', 'bit-exact', 'bit-exact', 'bit-exact']);
    assert.equal(await page.$eval('#speed-progress', (p) => p.value === p.max), true);
    assert.match(await page.textContent('#speed-summary'), /backend: simd/);
  });
});

/**
 * The median brightness (0 black .. 1 white) of the pixel columns 2 px inside
 * the left and right edges of `locator`'s screenshot, decoded in the page.
 */
async function edgeBrightness(page, locator) {
  const png = (await locator.screenshot()).toString('base64');
  return page.evaluate(async (data) => {
    const image = new Image();
    image.src = `data:image/png;base64,${data}`;
    await image.decode();
    const canvas = Object.assign(document.createElement('canvas'), { width: image.width, height: image.height });
    const context = canvas.getContext('2d', { willReadFrequently: true });
    context.drawImage(image, 0, 0);
    const column = (x) => {
      const { data: rgba } = context.getImageData(x, 0, 1, image.height);
      const values = [];
      for (let i = 0; i < rgba.length; i += 4) values.push((rgba[i] + rgba[i + 1] + rgba[i + 2]) / (3 * 255));
      return values.sort((a, b) => a - b)[values.length >> 1];
    };
    return { left: column(2), right: column(image.width - 3) };
  }, png);
}

test('panel 1\'s table at phone width scrolls sideways and shows it: a shadow on each side with more table', async (t) => {
  await onTutorial(async (page) => {
    const box = page.locator('#formula .table-scroll');
    const [scrollWidth, clientWidth] = await box.evaluate((el) => [el.scrollWidth, el.clientWidth]);
    assert.ok(scrollWidth > clientWidth, `at 390 px the table is ${scrollWidth} px in ${clientWidth} px`);
    const shadowed = (v) => v < 0.9;
    const start = await edgeBrightness(page, box);
    assert.ok(!shadowed(start.left) && shadowed(start.right), `scrolled to the start: ${JSON.stringify(start)}`);
    await box.evaluate((el) => { el.scrollLeft = el.scrollWidth; });
    const end = await edgeBrightness(page, box);
    assert.ok(shadowed(end.left) && !shadowed(end.right), `scrolled to the end: ${JSON.stringify(end)}`);
    t.diagnostic(`median brightness at the edges: start ${JSON.stringify(start)}, end ${JSON.stringify(end)}`);
    const [cell, view] = await Promise.all([page.locator('#formula-y td').nth(3).boundingBox(), box.boundingBox()]);
    assert.ok(cell.x + cell.width <= view.x + view.width, 'the fourth column is in view at the end');
  }, PHONE);
  await onTutorial(async (page) => {
    const edges = await edgeBrightness(page, page.locator('#formula .table-scroll'));
    assert.ok(edges.left > 0.9 && edges.right > 0.9, `a table that fits has no shadow: ${JSON.stringify(edges)}`);
  });
});

test('full-page screenshots at desktop and phone width, with nothing wider than the screen', async () => {
  await mkdir(ARTIFACTS, { recursive: true });
  for (const [name, viewport] of [['desktop', DESKTOP], ['phone', PHONE]]) {
    await onTutorial(async (page) => {
      await page.click('#speed-run');
      await page.waitForSelector('#speed-chart rect', { timeout: 60_000 });
      const [scrollWidth, innerWidth] = await page.evaluate(() => [document.documentElement.scrollWidth, window.innerWidth]);
      assert.ok(scrollWidth <= innerWidth, `${name}: page is ${scrollWidth}px wide on a ${innerWidth}px screen`);
      await page.screenshot({ path: `${ARTIFACTS}tutorial-${name}.png`, fullPage: true });
    }, viewport);
  }
});
