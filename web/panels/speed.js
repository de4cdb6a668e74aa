// Panel 7: a live benchmark in the reader's browser. Naive JS (the baseline,
// the formula written by hand on purpose), then the
// scalar and SIMD modules through the copying API and on data already in
// wasm memory. Each row is checked against the JS reference before timing.

import { rmsNorm as referenceRmsNorm } from '../../src/reference/index.js';
import { kernels, loadedBackends, preferredBackend, zeroCopyRmsNorm } from '../lib/kernels.js';
import { normalArray, prng, uniformArray } from '../lib/random.js';
import { micros, significant } from '../lib/format.js';
import { find, nextFrame, report } from '../lib/dom.js';
import { median, timeCalls } from '../lib/timing.js';
import { hbarChart } from '../lib/svg.js';

const EPS = 1e-6;
const ROUNDS = 3;

/** The loop a reader would write by hand: the baseline every row is compared with. */
function naiveRmsNorm(x, w, y, rows, dim, eps) {
  for (let r = 0; r < rows; r++) {
    const o = r * dim;
    let sum = 0;
    for (let i = 0; i < dim; i++) sum += x[o + i] * x[o + i];
    const inv = 1 / Math.sqrt(sum / dim + eps);
    for (let i = 0; i < dim; i++) y[o + i] = x[o + i] * inv * w[i];
  }
}

/** The rows of the benchmark, each on the instance of its backend. */
function contenders(x, w, rows, dim) {
  const list = [{
    name: 'naive JS', className: 'js', exact: false,
    make() {
      const y = new Float32Array(x.length);
      return { run: () => naiveRmsNorm(x, w, y, rows, dim, EPS), result: () => y, free() {} };
    },
  }];
  for (const backend of loadedBackends()) {
    const k = kernels(backend);
    const label = backend === 'simd' ? 'SIMD wasm' : 'scalar wasm';
    list.push({
      name: `${label}, copying`, className: backend, exact: true,
      make() {
        const y = new Float32Array(x.length);
        return { run: () => k.rmsNorm(x, w, { eps: EPS, out: y }), result: () => y, free() {} };
      },
    }, {
      name: `${label}, zero-copy`, className: backend, exact: true,
      make: () => zeroCopyRmsNorm(backend, x, w, EPS),
    });
  }
  return list;
}

/** Whether a row's output is right: bit-exact with the reference for the kernels, within 1e-5 for naive JS. */
function check(y, expected, exact) {
  for (let i = 0; i < y.length; i++) {
    const ok = exact
      ? Object.is(y[i], expected[i])
      : Math.abs(y[i] - expected[i]) <= 1e-5 * Math.max(1, Math.abs(expected[i]));
    if (!ok) return false;
  }
  return true;
}

export function mountSpeed(section) {
  const shapeField = find(section, '#speed-shape');
  const button = find(section, '#speed-run');
  const progress = find(section, '#speed-progress');
  const chart = find(section, '#speed-chart');
  const table = find(section, '#speed-table');
  const summary = find(section, '#speed-summary');
  const message = find(section, '.message');
  summary.textContent = `Your browser runs the ${preferredBackend()} backend. Pick a shape and press “Run the benchmark”.`;

  async function run() {
    const [rows, dim] = shapeField.value.split('x').map(Number);
    const rand = prng(rows * 31 + dim);
    const x = normalArray(rand, rows * dim, 3);
    const w = uniformArray(rand, dim, 0.5, 1.5);
    const expected = referenceRmsNorm(x, w, { eps: EPS });
    const list = contenders(x, w, rows, dim);
    const jobs = list.length * (ROUNDS + 1);
    progress.max = jobs;
    progress.value = 0;
    const step = async () => {
      progress.value += 1;
      await nextFrame(); // let the progress bar paint between timings
    };

    // Set up and check every row once (this is also the warm-up).
    const runners = [];
    for (const c of list) {
      const runner = c.make();
      runner.run();
      runner.ok = check(runner.result(), expected, c.exact);
      timeCalls(runner.run);
      runners.push(runner);
      await step();
    }
    // Interleaved rounds in rotating order, so a slow moment of the machine
    // does not land on one row only.
    const times = list.map(() => []);
    for (let round = 0; round < ROUNDS; round++) {
      for (let k = 0; k < list.length; k++) {
        const i = (k + round) % list.length;
        times[i].push(timeCalls(runners[i].run));
        await step();
      }
    }
    runners.forEach((r) => r.free());

    const bytes = (2 * rows * dim + dim) * 4;
    const results = list.map((c, i) => {
      const us = median(times[i]);
      return { ...c, us, gbps: bytes / us / 1000, ok: runners[i].ok };
    });
    draw(results, rows, dim);
  }

  function draw(results, rows, dim) {
    const naive = results[0].us;
    hbarChart(chart, {
      rows: results.map((r) => ({
        label: r.name, value: r.us, className: r.className, text: `${micros(r.us)} · ${significant(r.gbps, 3)} GB/s`,
      })),
      label: `Bar chart, time per call on ${rows} × ${dim}: ` + results.map((r) => `${r.name} ${micros(r.us)}`).join(', '),
    });
    const head = document.createElement('tr');
    for (const title of ['', 'µs per call', 'GB/s', 'vs naive JS', 'checked']) {
      head.append(Object.assign(document.createElement('th'), { textContent: title, scope: 'col' }));
    }
    const body = results.map((r) => {
      const tr = document.createElement('tr');
      const th = Object.assign(document.createElement('th'), { textContent: r.name, scope: 'row' });
      const cells = [significant(r.us, 3), significant(r.gbps, 3), `${significant(naive / r.us, 3)}×`,
        r.ok ? (r.exact ? 'bit-exact' : 'within 1e-5') : 'WRONG'];
      tr.append(th, ...cells.map((text) => Object.assign(document.createElement('td'), { textContent: text })));
      if (!r.ok) tr.lastChild.className = 'bad';
      return tr;
    });
    const thead = document.createElement('thead');
    const tbody = document.createElement('tbody');
    thead.append(head);
    tbody.append(...body);
    table.replaceChildren(thead, tbody);
    const fastest = results.reduce((a, b) => (b.us < a.us ? b : a));
    summary.textContent = `On ${rows} × ${dim}, in this browser (backend: ${preferredBackend()}): ` +
      `${fastest.name} is ${significant(naive / fastest.us, 3)}× faster than naive JS. ` +
      'Timings from one run on a shared machine: compare the rows with each other, not with other runs.';
  }

  button.addEventListener('click', async () => {
    button.disabled = true;
    shapeField.disabled = true;
    report(message, '');
    try {
      await run();
    } catch (err) {
      report(message, `The benchmark stopped: ${err.message}`);
    } finally {
      button.disabled = false;
      shapeField.disabled = false;
    }
  });
}
