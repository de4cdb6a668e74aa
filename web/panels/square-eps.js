// Panel 3: what goes wrong without the square (a negative mean under the
// root) and without ε inside the root. The broken variants are written out
// here in JS on purpose, labelled as such; the working column is the kernel.

import { kernels } from '../lib/kernels.js';
import { parseRow } from '../lib/parse.js';
import { short, significant } from '../lib/format.js';
import { cell, find, report } from '../lib/dom.js';
import { meanOf } from '../lib/stats.js';

const EPS = 1e-6;

function row(header, ...cells) {
  const tr = document.createElement('tr');
  tr.append(Object.assign(cell('th', header), { scope: 'row' }), ...cells);
  return tr;
}

/** A cell for one number or a row of numbers; NaN shows in red. */
function valueCell(v) {
  const values = typeof v === 'number' ? [v] : [...v];
  const format = typeof v === 'number' ? (u) => significant(u, 5) : short;
  return cell('td', values.map(format).join(', '), values.some(Number.isNaN) ? 'bad' : '');
}

export function mountSquareEps(section) {
  const xField = find(section, '#square-x');
  const message = find(section, '.message');
  const squareTable = find(section, '#square-table');
  const scaleField = find(section, '#eps-scale');
  const epsTable = find(section, '#eps-table');

  function updateSquare() {
    const parsed = parseRow(xField.value, 'x');
    if (parsed.error) {
      report(message, parsed.error, [xField]);
      return;
    }
    const x = parsed.values;
    let y;
    try {
      y = kernels().rmsNorm(x, null, { dim: x.length, eps: EPS });
    } catch (err) {
      report(message, err.message, [xField]);
      return;
    }
    report(message, '');
    const raw = meanOf([...x]);
    const squares = meanOf([...x].map((v) => v * v));
    const inverse = (m) => 1 / Math.sqrt(m + EPS);
    const head = document.createElement('thead');
    const headRow = document.createElement('tr');
    headRow.append(cell('th', ''), cell('th', 'mean of raw x (broken, in JS)'), cell('th', 'mean of x² (RMSNorm)'));
    head.append(headRow);
    const body = document.createElement('tbody');
    body.append(
      row('mean', valueCell(raw), valueCell(squares)),
      row('1/√(mean + ε)', valueCell(inverse(raw)), valueCell(inverse(squares))),
      row('output row', valueCell(x.map((v) => v * inverse(raw))), valueCell(y)),
    );
    body.lastChild.lastChild.id = 'square-kernel-y';
    squareTable.replaceChildren(head, body);
    squareTable.dataset.input = xField.value;
    squareTable.dataset.rawMean = String(raw);
    if (raw >= 0) {
      const hint = document.createElement('caption');
      hint.textContent = 'This row’s raw mean is not negative, so the broken formula happens to return numbers. Make it negative.';
      squareTable.prepend(hint);
    }
  }

  function updateEps() {
    const s = Number(scaleField.value);
    const x = new Float32Array([s, -s, s, -s]);
    let inside;
    let none;
    try {
      inside = kernels().rmsNorm(x, null, { dim: 4, eps: EPS });
      none = kernels().rmsNorm(x, null, { dim: 4, eps: 0 });
    } catch (err) {
      report(message, err.message);
      return;
    }
    const outsideDenominator = Math.sqrt(meanOf([...x].map((v) => v * v))) + EPS;
    const outside = x.map((v) => v / outsideDenominator);
    const head = document.createElement('thead');
    const headRow = document.createElement('tr');
    headRow.append(cell('th', ''), cell('th', 'y'));
    head.append(headRow);
    const body = document.createElement('tbody');
    body.append(
      row('ε = 10⁻⁶ inside the root (this package)', valueCell(inside)),
      row('ε = 0 (this package, eps: 0)', valueCell(none)),
      row('ε = 10⁻⁶ outside the root (not used; in JS)', valueCell(outside)),
    );
    body.children[0].lastChild.id = 'eps-inside-y';
    body.children[1].lastChild.id = 'eps-none-y';
    epsTable.replaceChildren(head, body);
    epsTable.dataset.scale = scaleField.value;
  }

  xField.addEventListener('input', updateSquare);
  scaleField.addEventListener('change', updateEps);
  updateSquare();
  updateEps();
}
