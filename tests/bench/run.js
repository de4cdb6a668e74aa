#!/usr/bin/env node
// `npm run bench`: every row on every shape, in one run. Prints markdown
// tables and the targets, writes the numbers as JSON.
//
//   node tests/bench/run.js [--shapes 1x896,32x1024] [--rows simd-zero-copy,naive-js]
//                           [--rounds 9] [--sample-ms 25] [--clock cpu|wall]
//                           [--json tests/artifacts/bench.json]
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { makeShape } from './data.js';
import { measureShape, median } from './measure.js';
import { ROWS } from './rows/index.js';
import { evaluateTargets } from './targets.js';
import { CLOCKS, setClock } from './timing.js';

export const SHAPES = ['1x896', '1x4096', '32x1024', '512x2048', '2048x4096'];

const fmt = (v, digits) => (v >= 100 ? v.toFixed(0) : v.toPrecision(digits));

/** The markdown table of one measured shape. */
export function shapeTable(result) {
  const { shape, rows, ratio } = result;
  const has = (id) => rows.some((r) => r.row.id === id);
  const lines = [
    `**${shape.label}** (rows × dim)`,
    '',
    '| | µs/call | GB/s | × faster than naive JS | time ÷ SIMD zero-copy |',
    '| --- | ---: | ---: | ---: | ---: |',
  ];
  for (const { row, seconds, bytes } of rows) {
    const t = median(seconds);
    const vsNaive = has('naive-js') ? `${fmt(ratio('naive-js', row.id), 3)}×` : '';
    const vsSimd = has('simd-zero-copy') ? fmt(ratio(row.id, 'simd-zero-copy'), 3) : '';
    lines.push(`| ${row.name} | ${fmt(t * 1e6, 3)} | ${fmt(bytes / t / 1e9, 3)} | ${vsNaive} | ${vsSimd} |`);
  }
  return lines.join('\n');
}

export async function runBench({ shapes, rows, rounds, sampleSeconds, log }) {
  const results = [];
  for (const label of shapes) {
    const [r, d] = label.split('x').map(Number);
    results.push(await measureShape(makeShape(r, d), rows, { rounds, sampleSeconds, log }));
  }
  return { results, targets: evaluateTargets(results) };
}

async function packageVersion(name) {
  const file = fileURLToPath(new URL(`../../node_modules/${name}/package.json`, import.meta.url));
  return JSON.parse(await readFile(file, 'utf8')).version;
}

async function main() {
  const { values } = parseArgs({
    options: {
      shapes: { type: 'string', default: SHAPES.join(',') },
      rows: { type: 'string' },
      rounds: { type: 'string', default: '9' },
      'sample-ms': { type: 'string', default: '25' },
      clock: { type: 'string', default: CLOCKS[0] },
      json: { type: 'string', default: 'tests/artifacts/bench.json' },
    },
  });
  setClock(values.clock);
  const wanted = values.rows?.split(',');
  const rows = wanted ? ROWS.filter((row) => wanted.includes(row.id)) : ROWS;
  const machine = os.cpus()[0]?.model ?? 'unknown CPU';
  const { results, targets } = await runBench({
    shapes: values.shapes.split(','),
    rows,
    rounds: Number(values.rounds),
    sampleSeconds: Number(values['sample-ms']) / 1000,
    log: (line) => process.stderr.write(`${line}\n`),
  });

  const out = [
    `Machine: ${machine}, ${os.cpus().length} cores; Node ${process.version}; ` +
      `${values.clock === 'cpu' ? 'CPU' : 'wall'} time, median of ${values.rounds} interleaved rounds; ` +
      'ratios are per-round medians.',
    '',
    ...results.flatMap((result) => [shapeTable(result), '']),
    '**Targets**',
    '',
    '| target | measured | goal | met |',
    '| --- | ---: | ---: | :---: |',
    ...targets.map((t) => `| ${t.what} | ${fmt(t.value, 3)} | ${t.goal} | ${t.met ? 'yes' : '**no**'} |`),
  ];
  console.log(out.join('\n'));

  const json = {
    date: new Date().toISOString(),
    machine,
    cores: os.cpus().length,
    node: process.version,
    versions: {
      'onnxruntime-web': await packageVersion('onnxruntime-web'),
      '@tensorflow/tfjs-core': await packageVersion('@tensorflow/tfjs-core'),
      '@tensorflow/tfjs-backend-wasm': await packageVersion('@tensorflow/tfjs-backend-wasm'),
    },
    rounds: Number(values.rounds),
    clock: values.clock,
    shapes: results.map(({ shape, rows: measured, ratio }) => ({
      shape: shape.label,
      rows: shape.rows,
      dim: shape.dim,
      results: measured.map(({ row, seconds, bytes }) => ({
        id: row.id,
        name: row.name,
        microsecondsPerCall: median(seconds) * 1e6,
        gigabytesPerSecond: bytes / median(seconds) / 1e9,
        timesFasterThanNaiveJs: rows.some((r) => r.id === 'naive-js') ? ratio('naive-js', row.id) : null,
        timeOverSimdZeroCopy: rows.some((r) => r.id === 'simd-zero-copy') ? ratio(row.id, 'simd-zero-copy') : null,
        secondsPerRound: seconds,
      })),
    })),
    targets,
  };
  await mkdir(path.dirname(values.json), { recursive: true });
  await writeFile(values.json, `${JSON.stringify(json, null, 2)}\n`);
  process.stderr.write(`wrote ${values.json}\n`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await main();
}
