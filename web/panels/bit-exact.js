// Panel 6: the book's check. One random (2, 9, 32) batch through the SIMD
// module, the scalar module and the JS reference; the largest disagreement
// must read exactly 0.

import { rmsNorm as referenceRmsNorm } from '../../src/reference/index.js';
import { kernels, loadedBackends } from '../lib/kernels.js';
import { newSeed, normalArray, prng, uniformArray } from '../lib/random.js';
import { short } from '../lib/format.js';
import { cell, find, report } from '../lib/dom.js';

const SHAPE = [2, 9, 32];
const DIM = SHAPE[2];
const SIZE = SHAPE.reduce((a, b) => a * b);
const SAMPLE = 4;
const MODULE_NAMES = { simd: 'SIMD128 module', scalar: 'scalar module' };

/** Largest |a − b| and how many elements differ in their bits (NaN matching NaN counts as equal). */
function compare(a, b) {
  const ua = new Uint32Array(a.buffer, a.byteOffset, a.length);
  const ub = new Uint32Array(b.buffer, b.byteOffset, b.length);
  let largest = 0;
  let differing = 0;
  for (let i = 0; i < a.length; i++) {
    if (ua[i] !== ub[i] && !(Number.isNaN(a[i]) && Number.isNaN(b[i]))) {
      differing++;
      largest = Math.max(largest, Number.isNaN(a[i] - b[i]) ? Infinity : Math.abs(a[i] - b[i]));
    }
  }
  return { largest, differing };
}

export function mountBitExact(section) {
  const button = find(section, '#bit-exact-new');
  const table = find(section, '#bit-exact-table');
  const pairTable = find(section, '#bit-exact-pairs');
  const summary = find(section, '#bit-exact-summary');
  const message = find(section, '.message');
  let batches = 0;

  function runBatch() {
    const seed = newSeed();
    const rand = prng(seed);
    const x = normalArray(rand, SIZE, 3);
    const w = uniformArray(rand, DIM, 0.5, 1.5);
    const outputs = [...loadedBackends()].reverse().map((backend) => [MODULE_NAMES[backend], kernels(backend).rmsNorm(x, w)]);
    outputs.push(['JS reference', referenceRmsNorm(x, w)]);
    return { seed, outputs };
  }

  function draw({ seed, outputs }) {
    const head = document.createElement('thead');
    const headRow = document.createElement('tr');
    headRow.append(cell('th', 'implementation', 'left'), cell('th', `y[0, 0, 0…${SAMPLE - 1}]`, 'left'));
    head.append(headRow);
    const body = document.createElement('tbody');
    for (const [name, y] of outputs) {
      const tr = document.createElement('tr');
      tr.append(cell('th', name), cell('td', [...y.subarray(0, SAMPLE)].map(short).join(', ') + ', …', 'left'));
      tr.firstChild.scope = 'row';
      body.append(tr);
    }
    const pairs = [];
    for (let i = 0; i < outputs.length; i++) {
      for (let j = i + 1; j < outputs.length; j++) {
        pairs.push([`${outputs[i][0]} vs ${outputs[j][0]}`, compare(outputs[i][1], outputs[j][1])]);
      }
    }
    table.replaceChildren(head, body);
    const pairHead = document.createElement('thead');
    const pairTitles = document.createElement('tr');
    pairTitles.append(cell('th', 'pair', 'left'), cell('th', 'largest |difference|'), cell('th', 'elements differing'));
    pairHead.append(pairTitles);
    const pairBody = document.createElement('tbody');
    for (const [name, { largest, differing }] of pairs) {
      const tr = document.createElement('tr');
      const verdict = largest === 0 && differing === 0 ? 'zero' : 'bad';
      tr.append(cell('th', name), cell('td', largest === 0 ? '0' : largest.toExponential(2), verdict),
        cell('td', `${differing} of ${SIZE}`, verdict));
      tr.firstChild.scope = 'row';
      pairBody.append(tr);
    }
    pairTable.replaceChildren(pairHead, pairBody);
    const worst = Math.max(...pairs.map(([, c]) => c.largest));
    const differing = Math.max(...pairs.map(([, c]) => c.differing));
    batches++;
    const exact = worst === 0 && differing === 0;
    summary.replaceChildren(
      'Largest disagreement: ',
      Object.assign(cell('strong', exact ? '0' : worst.toExponential(2), exact ? '' : 'bad'), { id: 'bit-exact-max' }),
      ` over ${SIZE} values (batch ${batches}, seed ${seed}, x ~ N(0, 9), γ ~ U(0.5, 1.5)). `,
      exact ? 'Not near zero: zero.' : 'The implementations disagree: that is a bug, please report it with the seed.',
    );
    summary.dataset.batch = String(batches);
  }

  function update() {
    button.disabled = true;
    try {
      draw(runBatch());
      report(message, '');
    } catch (err) {
      report(message, err.message);
    } finally {
      button.disabled = false;
    }
  }

  button.addEventListener('click', update);
  return update();
}
