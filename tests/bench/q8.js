#!/usr/bin/env node
// The ggml block outputs' benchmark (issue 38): for each shape, the fused
// norm to q8_0 and q8_K against the zero-copy float32 norm alone, against
// that norm followed by the package's quantize(), and against plain JS.
// Same method as `npm run bench` (tests/bench/measure.js: checked rows,
// interleaved rounds, medians, ratios within each round; CPU time by
// default in Node; with --engine, also in a page of each browser engine, as
// `npm run bench --engine` measures its portable rows). A q8_K row runs only
// where dim is a multiple of 256.
//
//   node tests/bench/q8.js [--engine node,chromium,firefox,webkit] [--shapes 1x896,1x4096,32x1024,512x2048]
//                          [--rounds 9] [--sample-ms 25] [--clock cpu|wall]
import { parseArgs } from 'node:util';
import { makeShape } from './data.js';
import { measureShape, median } from './measure.js';
import { runBenchInBrowser } from './run.js';
import { FORMATS, Q8_ROWS } from './rows/q8.js';
import { CLOCKS, setClock } from './timing.js';

export const Q8_SHAPES = ['1x896', '1x4096', '32x1024', '512x2048'];

/** The rows that can run on a shape: every format's dim must be a multiple of its block. */
export const rowsFor = (shape) => Q8_ROWS.filter((row) => row.format === undefined || shape.dim % FORMATS[row.format].values === 0);

const fmt = (v) => (v >= 100 ? v.toFixed(0) : v.toPrecision(3));

/** The markdown table of one shape. */
export function q8Table({ shape, rows, ratio }) {
  const lines = [
    `**${shape.label}** (rows × dim)`,
    '',
    '| | µs/call | time ÷ float32 norm alone | time ÷ its export, no JS API | fused × faster |',
    '| --- | ---: | ---: | ---: | ---: |',
  ];
  for (const measured of rows) {
    // A page's rows come back as plain data: the row itself by its id.
    const row = Q8_ROWS.find((r) => r.id === measured.row.id);
    const { seconds } = measured;
    const fusedId = row.fusedId ?? null;
    const speedup = fusedId === null || row.id === fusedId ? '' : `${fmt(ratio(row.id, fusedId))}×`;
    lines.push(`| ${row.name} | ${fmt(median(seconds) * 1e6)} | ${fmt(ratio(row.id, 'simd-zero-copy'))} | ${fmt(ratio(row.id, 'simd-export'))} | ${speedup} |`);
  }
  return lines.join('\n');
}

async function main() {
  const { values } = parseArgs({
    options: {
      engine: { type: 'string', default: 'node' },
      shapes: { type: 'string', default: Q8_SHAPES.join(',') },
      rounds: { type: 'string', default: '9' },
      'sample-ms': { type: 'string', default: '25' },
      clock: { type: 'string', default: CLOCKS[0] },
    },
  });
  setClock(values.clock);
  const measure = { rounds: Number(values.rounds), sampleSeconds: Number(values['sample-ms']) / 1e3 };
  for (const engine of values.engine.split(',')) {
    let version = `Node ${process.version}, ${values.clock} time`;
    const tables = [];
    for (const label of values.shapes.split(',')) {
      const [rows, dim] = label.split('x').map(Number);
      const shape = makeShape(rows, dim);
      if (engine === 'node') {
        tables.push(q8Table(await measureShape(shape, rowsFor(shape), measure)));
      } else {
        const run = await runBenchInBrowser(engine, { ...measure, shapes: [label], rows: rowsFor(shape) });
        version = `${run.version}, wall time`;
        tables.push(q8Table(run.results[0]));
      }
    }
    console.log(`ggml block outputs, ${version}, ${values.rounds} rounds (medians)\n\n${tables.join('\n\n')}\n`);
  }
}

if (process.argv[1] && import.meta.url === new URL(`file://${process.argv[1]}`).href) await main();
