// The benchmark inside a browser page: tests/bench/run.js --engine opens an
// isolated blank page in that engine (tests/helpers/engines.js) and calls
// measureInPage once per shape. The same measurement as in Node (measure.js)
// on the portable rows and the ggml block rows (tests/bench/q8.js --engine),
// with the page's only clock, performance.now(); the result travels back as
// plain data (withRatios rebuilds the ratios).
import { makeShape } from './data.js';
import { measureShape } from './measure.js';
import { PORTABLE_ROWS } from './rows/portable.js';
import { Q8_ROWS } from './rows/q8.js';

const PAGE_ROWS = [...new Set([...PORTABLE_ROWS, ...Q8_ROWS])];

export async function measureInPage({ shape: label, rowIds, rounds, sampleSeconds }) {
  const rows = PAGE_ROWS.filter((row) => rowIds.includes(row.id));
  const [r, d] = label.split('x').map(Number);
  const { shape, rows: measured } = await measureShape(makeShape(r, d), rows, { rounds, sampleSeconds });
  return {
    shape: { rows: shape.rows, dim: shape.dim, label: shape.label, seed: shape.seed },
    rows: measured.map(({ row, seconds, bytes, accuracy }) => ({ row: { id: row.id, name: row.name }, seconds, bytes, accuracy })),
    isolated: self.crossOriginIsolated,
  };
}
