// Panel 1: the formula worked step by step on the blog's example. The steps
// are written out in float64 for the reader to follow; x/RMS and y are the
// kernel's own output.

import { kernels } from '../lib/kernels.js';
import { parseNumber, parseRow } from '../lib/parse.js';
import { float32String, short, significant } from '../lib/format.js';
import { find, report, tableRow } from '../lib/dom.js';
import { rmsOf } from '../lib/stats.js';
import { barChart } from '../lib/svg.js';

const EXAMPLE = { x: '2, -4, 6, -8', w: '1.5, 0.5, 1, 2', eps: '1e-6' };
const SHOWN_TERMS = 8;

function list(values, format) {
  const shown = [...values].slice(0, SHOWN_TERMS).map(format);
  return `(${shown.join(', ')}${values.length > SHOWN_TERMS ? ', …' : ''})`;
}

export function mountFormula(section) {
  const xField = find(section, '#formula-x');
  const wField = find(section, '#formula-w');
  const epsField = find(section, '#formula-eps');
  const message = find(section, '.message');
  const steps = find(section, '#formula-steps');
  const table = find(section, '#formula-table');
  const rmsNote = find(section, '#formula-rms');
  const chartX = find(section, '#formula-chart-x');
  const chartY = find(section, '#formula-chart-y');

  function drawSteps(x, eps) {
    const squares = [...x].map((v) => v * v);
    const meanSquare = squares.reduce((a, b) => a + b, 0) / x.length;
    const rms = Math.sqrt(meanSquare + eps);
    const items = [
      `Square each value: x² = ${list(squares, (v) => significant(v, 6))}`,
      `Average the squares: mean(x²) = ${significant(meanSquare, 7)}`,
      `Add ε inside the root: ${significant(meanSquare, 7)} + ${significant(eps, 4)} = ${significant(meanSquare + eps, 10)}`,
      `Take the root: RMS = √${significant(meanSquare + eps, 10)} ≈ ${significant(rms, 7)}`,
      `Invert it: 1/RMS ≈ ${significant(1 / rms, 7)}`,
      `Multiply: yᵢ = xᵢ · ${significant(1 / rms, 7)} · γᵢ — the table below is what the kernel returned.`,
    ];
    steps.replaceChildren(...items.map((text) => Object.assign(document.createElement('li'), { textContent: text })));
  }

  function drawTable(x, w, normalized, y) {
    const head = document.createElement('thead');
    head.append(tableRow('<var>i</var>', [...x], (td, _, i) => { td.textContent = String(i + 1); }));
    const body = document.createElement('tbody');
    body.append(
      tableRow('x<sub>i</sub>', [...x], (td, v) => { td.textContent = float32String(v); }),
      tableRow('x<sub>i</sub> / RMS', [...normalized], (td, v) => { td.textContent = short(v); }),
      tableRow('γ<sub>i</sub>', [...w], (td, v) => { td.textContent = float32String(v); }),
    );
    const yRow = tableRow('y<sub>i</sub>', [...y], (td, v) => {
      td.textContent = short(v);
      td.dataset.value = float32String(v);
    });
    yRow.id = 'formula-y';
    const exactRow = tableRow('y<sub>i</sub>, all digits', [...y], (td, v) => { td.textContent = float32String(v); });
    exactRow.className = 'note';
    body.append(yRow, exactRow);
    table.replaceChildren(head, body);
  }

  function drawRmsNote(w, normalized, y) {
    const onesWeight = [...w].every((v) => v === 1);
    const rmsY = rmsOf(y);
    if (!onesWeight) {
      rmsNote.textContent = `The normalized row x/RMS has RMS ${rmsOf(normalized).toFixed(6)}; after the weights, ` +
        `RMS(y) = ${significant(rmsY, 6)}. Set γ to all ones to see y itself land at RMS 1.`;
    } else if (Math.abs(rmsY - 1) < 1e-3) {
      rmsNote.textContent = `γ is all ones, so y is the normalized row: RMS(y) = ${rmsY.toFixed(6)} ≈ 1.`;
    } else {
      rmsNote.textContent = `γ is all ones, so y is the normalized row: RMS(y) = ${significant(rmsY, 6)}, ` +
        'below 1 because this row is so small that ε dominates the root.';
    }
  }

  function update() {
    const x = parseRow(xField.value, 'x');
    const w = parseRow(wField.value, 'γ');
    const eps = parseNumber(epsField.value, 'ε', 0);
    const bad = [[x, xField], [w, wField], [eps, epsField]].filter(([r]) => r.error !== undefined);
    if (bad.length > 0) {
      report(message, bad.map(([r]) => r.error).join(' '), bad.map(([, field]) => field));
      return;
    }
    if (x.values.length !== w.values.length) {
      report(message, `x has ${x.values.length} values but γ has ${w.values.length}: give one weight per value.`, [xField, wField]);
      return;
    }
    const k = kernels();
    let result;
    try {
      result = {
        normalized: k.rmsNorm(x.values, null, { eps: eps.value, dim: x.values.length }),
        y: k.rmsNorm(x.values, w.values, { eps: eps.value }),
      };
    } catch (err) {
      report(message, err.message, [xField, wField, epsField]);
      return;
    }
    report(message, '');
    drawSteps(x.values, eps.value);
    drawTable(x.values, w.values, result.normalized, result.y);
    drawRmsNote(w.values, result.normalized, result.y);
    const labels = [...x.values].map((_, i) => `${i + 1}`);
    barChart(chartX, { values: x.values, labels, format: float32String, label: `Bar chart of x: ${[...x.values].map(short).join(', ')}` });
    barChart(chartY, { values: result.y, labels, format: short, label: `Bar chart of y: ${[...result.y].map(short).join(', ')}` });
    table.dataset.input = `${xField.value}|${wField.value}|${epsField.value}`;
  }

  for (const field of [xField, wField, epsField]) field.addEventListener('input', update);
  find(section, '#formula-ones').addEventListener('click', () => {
    const n = parseRow(xField.value, 'x').values?.length ?? 4;
    wField.value = Array(n).fill('1').join(', ');
    update();
  });
  find(section, '#formula-reset').addEventListener('click', () => {
    xField.value = EXAMPLE.x;
    wField.value = EXAMPLE.w;
    epsField.value = EXAMPLE.eps;
    update();
  });
  return update();
}
