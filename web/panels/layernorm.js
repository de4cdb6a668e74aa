// Panel 4: RMSNorm next to LayerNorm, both the package's kernels, on the same
// row with the same ε, so the only difference is LayerNorm's mean-centering;
// and the two kernels timed side by side on a shape the reader picks.

import { kernels, preferredBackend } from '../lib/kernels.js';
import { parseRow } from '../lib/parse.js';
import { float32String, micros, short, significant } from '../lib/format.js';
import { find, nextFrame, report, tableRow } from '../lib/dom.js';
import { barChart } from '../lib/svg.js';
import { normalArray, prng, uniformArray } from '../lib/random.js';
import { median, timeCalls } from '../lib/timing.js';
import { meanOf } from '../lib/stats.js';

// layerNorm's own default ε is 1e-5 (PyTorch's); one ε for both here, so
// that on a zero-mean row the two compute the same thing.
const EPS = 1e-6;
const ROUNDS = 5;

export function mountLayerNorm(section) {
  const xField = find(section, '#ln-x');
  const toggle = find(section, '#ln-toggle');
  const message = find(section, '.message');
  const table = find(section, '#ln-table');
  const summary = find(section, '#ln-summary');
  const chart = find(section, '#ln-chart');
  const caption = find(section, '#ln-caption');
  const shapeField = find(section, '#ln-shape');
  const timeButton = find(section, '#ln-time');
  const speedTable = find(section, '#ln-speed');
  let last = null; // the last good { x, rms, ln }, redrawn when the toggle flips

  function draw() {
    const { x, rms, ln } = last;
    const centering = toggle.getAttribute('aria-pressed') === 'true';
    const body = document.createElement('tbody');
    body.append(
      tableRow('x<sub>i</sub>', [...x], (td, v) => { td.textContent = float32String(v); }),
      tableRow('RMSNorm', [...rms], (td, v) => { td.textContent = short(v); }),
      tableRow('LayerNorm', [...ln], (td, v) => { td.textContent = short(v); }),
    );
    body.children[centering ? 2 : 1].classList.add('chosen');
    body.children[1].id = 'ln-rms-y';
    body.children[2].id = 'ln-ln-y';
    table.replaceChildren(body);
    let largest = 0;
    for (let i = 0; i < x.length; i++) largest = Math.max(largest, Math.abs(rms[i] - ln[i]));
    const mean = meanOf([...x]);
    summary.textContent = mean === 0
      ? `mean(x) = 0, so centering changes nothing: the largest difference between the outputs is ${largest === 0 ? '0' : significant(largest, 3)}.`
      : `mean(x) = ${significant(mean, 4)}: LayerNorm first shifts the row by it, so the outputs differ by up to ${significant(largest, 3)}. Make the row zero-mean and they agree.`;
    summary.dataset.largest = String(largest);
    const shown = centering ? ln : rms;
    caption.textContent = centering ? 'LayerNorm(x): centered, then scaled' : 'RMSNorm(x): scaled, not centered';
    barChart(chart, {
      values: shown, labels: [...x].map((_, i) => `${i + 1}`), format: short,
      label: `Bar chart of ${centering ? 'LayerNorm' : 'RMSNorm'}(x): ${[...shown].map(short).join(', ')}`,
    });
  }

  function update() {
    const parsed = parseRow(xField.value, 'x');
    if (parsed.error) {
      report(message, parsed.error, [xField]);
      return;
    }
    const x = parsed.values;
    try {
      last = {
        x,
        rms: kernels().rmsNorm(x, null, { dim: x.length, eps: EPS }),
        ln: kernels().layerNorm(x, null, null, { dim: x.length, eps: EPS }),
      };
    } catch (err) {
      report(message, err.message, [xField]);
      return;
    }
    report(message, '');
    draw();
    table.dataset.input = xField.value;
  }

  async function timeBoth() {
    const [rows, dim] = shapeField.value.split('x').map(Number);
    const rand = prng(rows + dim);
    const x = normalArray(rand, rows * dim, 3);
    const w = uniformArray(rand, dim, 0.5, 1.5);
    const b = uniformArray(rand, dim, -0.5, 0.5);
    const y = new Float32Array(x.length);
    const k = kernels();
    const runs = [
      () => k.rmsNorm(x, w, { eps: EPS, out: y }),
      () => k.layerNorm(x, w, b, { eps: EPS, out: y }),
    ];
    const times = [[], []];
    for (let round = 0; round < ROUNDS; round++) {
      // Alternate which kernel goes first, so neither always follows the other.
      const order = round % 2 === 0 ? [0, 1] : [1, 0];
      for (const i of order) times[i].push(timeCalls(runs[i]));
      await nextFrame();
    }
    const [rms, ln] = times.map(median);
    const body = document.createElement('tbody');
    body.append(
      tableRow('RMSNorm', [micros(rms)], (td, text) => { td.textContent = text; }),
      tableRow('LayerNorm', [micros(ln)], (td, text) => { td.textContent = text; }),
    );
    const head = document.createElement('thead');
    head.innerHTML = '<tr><th></th><th scope="col">time per call</th></tr>';
    speedTable.replaceChildren(head, body);
    const ratio = rms / ln;
    speedTable.dataset.ratio = String(ratio);
    return `On ${rows} × ${dim} (backend: ${preferredBackend()}), RMSNorm takes ${significant(ratio, 3)}× the time of LayerNorm` +
      ` (${significant(Math.abs(1 - ratio) * 100, 2)}% ${ratio < 1 ? 'less' : 'more'}; medians of ${ROUNDS} interleaved rounds).`;
  }

  xField.addEventListener('input', update);
  find(section, '#ln-center').addEventListener('click', () => {
    const parsed = parseRow(xField.value, 'x');
    if (parsed.error) {
      update(); // shows the message
      return;
    }
    const mean = meanOf([...parsed.values]);
    xField.value = [...parsed.values].map((v) => float32String(Math.fround(v - mean))).join(', ');
    update();
  });
  toggle.addEventListener('click', () => {
    const on = toggle.getAttribute('aria-pressed') !== 'true';
    toggle.setAttribute('aria-pressed', String(on));
    toggle.textContent = `Mean-centering: ${on ? 'on (LayerNorm)' : 'off (RMSNorm)'}`;
    if (last) draw();
  });
  timeButton.addEventListener('click', async () => {
    timeButton.disabled = true;
    shapeField.disabled = true;
    try {
      find(section, '#ln-speed-summary').textContent = await timeBoth();
      report(message, '');
    } catch (err) {
      report(message, `The timing stopped: ${err.message}`);
    } finally {
      timeButton.disabled = false;
      shapeField.disabled = false;
    }
  });
  return update();
}
