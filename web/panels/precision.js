// Panel 5: bfloat16. The same bfloat16 batch three ways: every operation
// rounded to bfloat16 (what a model computes without the float32 upcast;
// written here in JS on purpose, to show the failure), and this package's
// kernels, which upcast to float32, in both cast modes. Each is compared with
// a float64 oracle that rounds to bfloat16 at the same places.

import { bfloat16ToNumber as widen, numberToBfloat16 as narrow } from '../../src/reference/float16.js';
import { bfloat16RmsNorm, roundBfloat16 as bf, widenInto } from '../lib/bfloat16.js';
import { kernels } from '../lib/kernels.js';
import { newSeed, normalArray, prng, uniformArray } from '../lib/random.js';
import { significant } from '../lib/format.js';
import { find, report } from '../lib/dom.js';
import { hbarChart } from '../lib/svg.js';

const ROWS = 8;
const EPS = 1e-6;

/** The batch of a seed: x ~ N(0, 1) and γ ~ U(0.5, 1.5), stored as bfloat16 bit patterns. */
export function precisionBatch(seed, dim) {
  const rand = prng(seed);
  const x = Uint16Array.from(normalArray(rand, ROWS * dim, 1), narrow);
  const w = Uint16Array.from(uniformArray(rand, dim, 0.5, 1.5), narrow);
  return { x, w };
}

/** The batch's rows with every operation rounded to bfloat16 (bfloat16RmsNorm), as bit patterns. */
function bfloat16Throughout(x, w, dim) {
  const xs = widenInto(new Float32Array(x.length), x);
  const ws = widenInto(new Float32Array(dim), w);
  const ys = new Float32Array(x.length);
  for (let r = 0; r < x.length / dim; r++) {
    bfloat16RmsNorm(xs.subarray(r * dim, (r + 1) * dim), ws, ys.subarray(r * dim, (r + 1) * dim), EPS);
  }
  return Uint16Array.from(ys, narrow);
}

/** The float64 result, rounded to bfloat16 once ('gemma') or also before the weight ('llama'). */
function oracle(x, w, dim, castMode) {
  const y = new Uint16Array(x.length);
  for (let r = 0; r < x.length / dim; r++) {
    let sum = 0;
    for (let i = 0; i < dim; i++) sum += widen(x[r * dim + i]) ** 2;
    const inv = 1 / Math.sqrt(sum / dim + EPS);
    for (let i = 0; i < dim; i++) {
      const v = widen(x[r * dim + i]) * inv;
      y[r * dim + i] = narrow((castMode === 'llama' ? bf(v) : v) * widen(w[i]));
    }
  }
  return y;
}

function countDifferent(a, b) {
  let n = 0;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) n++;
  return n;
}

const percent = (n, total) => `${((100 * n) / total).toFixed(n === 0 ? 0 : 1)}%`;

export function mountPrecision(section) {
  const dimField = find(section, '#precision-dim');
  const table = find(section, '#precision-table');
  const chart = find(section, '#precision-chart');
  const summary = find(section, '#precision-summary');
  const message = find(section, '.message');
  let seed = 1;

  function update() {
    const dim = Number(dimField.value);
    const { x, w } = precisionBatch(seed, dim);
    let kernel;
    try {
      const k = kernels();
      kernel = {
        gemma: k.rmsNorm(x, w, { dtype: 'bfloat16', castMode: 'gemma', eps: EPS }),
        llama: k.rmsNorm(x, w, { dtype: 'bfloat16', castMode: 'llama', eps: EPS }),
      };
    } catch (err) {
      report(message, err.message);
      return;
    }
    report(message, '');
    const oracles = { gemma: oracle(x, w, dim, 'gemma'), llama: oracle(x, w, dim, 'llama') };
    const rows = [
      { name: 'bfloat16 throughout (JS)', y: bfloat16Throughout(x, w, dim), mode: 'llama', className: 'js' },
      { name: "float32 upcast, 'llama'", y: kernel.llama, mode: 'llama', className: 'scalar' },
      { name: "float32 upcast, 'gemma'", y: kernel.gemma, mode: 'gemma', className: 'simd' },
    ].map((row) => ({ ...row, wrong: countDifferent(row.y, oracles[row.mode]) }));
    const total = x.length;

    const head = document.createElement('thead');
    head.innerHTML = '<tr><th scope="col" class="left">computed as</th><th scope="col">y[0, 0…3]</th>' +
      '<th scope="col">differ from the oracle</th></tr>';
    const body = document.createElement('tbody');
    for (const row of rows) {
      const tr = document.createElement('tr');
      const th = Object.assign(document.createElement('th'), { scope: 'row', textContent: row.name });
      const sample = [...row.y.subarray(0, 4)].map((b) => significant(widen(b), 3)).join(', ');
      tr.append(th, ...[sample, `${row.wrong} of ${total} (${percent(row.wrong, total)})`]
        .map((text) => Object.assign(document.createElement('td'), { textContent: text })));
      tr.dataset.wrong = String(row.wrong);
      body.append(tr);
    }
    table.replaceChildren(head, body);
    hbarChart(chart, {
      rows: rows.map((row) => ({
        label: row.name, value: Math.max(row.wrong, total / 1000), className: row.className,
        text: percent(row.wrong, total),
      })),
      label: `Bar chart of elements that differ from the float64 oracle: ${rows.map((r) => `${r.name} ${percent(r.wrong, total)}`).join(', ')}`,
    });
    const modes = countDifferent(kernel.llama, kernel.gemma);
    summary.textContent = `${ROWS} rows × ${dim}, seed ${seed}. The two cast modes, on the same bfloat16 input and weights, ` +
      `give different bits in ${modes} of ${total} elements (${percent(modes, total)}): pick the one your model was trained with.`;
    summary.dataset.modes = String(modes);
    summary.dataset.seed = String(seed);
  }

  dimField.addEventListener('change', update);
  find(section, '#precision-new').addEventListener('click', () => {
    seed = newSeed();
    update();
  });
  return update();
}
