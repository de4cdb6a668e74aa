#!/usr/bin/env node
// `npm run bench`: every row on every shape, in one run. Prints markdown
// tables and the targets, writes the numbers as JSON. With --engine,
// the rows that run in a page (rows/portable.js) are measured in each browser
// engine of tests/helpers/engines.js as well, and a per-engine summary of the
// ratios that matter closes the output.
//
//   node tests/bench/run.js [--engine node,chromium,firefox,webkit]
//                           [--shapes 1x896,32x1024] [--rows simd-zero-copy,naive-js]
//                           [--rounds 9] [--sample-ms 25] [--clock cpu|wall]
//                           [--json tests/artifacts/bench.json]
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { engineNamed, startTestServer } from '../helpers/engines.js';
import { makeShape } from './data.js';
import { measureShape, median, withRatios } from './measure.js';
import { ROWS } from './rows/index.js';
import { PORTABLE_ROWS } from './rows/portable.js';
import { runGpuBench } from './rows/webgpu.js';
import { ALLOCATING_OVER_WRITTEN, evaluateTargets } from './targets.js';
import { CLOCKS, setClock } from './timing.js';

// The decode shapes first: QK-norm of one token (16 and 64 heads of 128),
// Qwen3-0.6B's prefill QK-norm (7 tokens of 16 q and 8 k heads: the qk-norm
// rows), a 0.5B model's hidden row, then batches.
export const SHAPES = ['1x128', '16x128', '64x128', '168x128', '1x896', '1x4096', '32x1024', '512x2048', '2048x4096'];
const SUMMARY_SHAPES = ['1x128', '16x128', '168x128', '1x896', '32x1024', '512x2048'];

const fmt = (v, digits) => (v >= 100 ? v.toFixed(0) : v.toPrecision(digits));
const ulps = (accuracy) => (accuracy ? `${accuracy.max.toFixed(2)} / ${accuracy.mean.toFixed(3)}` : '');

/** The markdown table of one measured shape. */
export function shapeTable(result) {
  const { shape, rows, ratio } = result;
  const has = (id) => rows.some((r) => r.row.id === id);
  const lines = [
    `**${shape.label}** (rows × dim)`,
    '',
    '| | µs/call | GB/s | × faster than naive JS | time ÷ SIMD zero-copy | ulp vs float64, max / mean |',
    '| --- | ---: | ---: | ---: | ---: | ---: |',
  ];
  for (const { row, seconds, bytes, accuracy } of rows) {
    const t = median(seconds);
    const vsNaive = has('naive-js') ? `${fmt(ratio('naive-js', row.id), 3)}×` : '';
    const vsSimd = has('simd-zero-copy') ? fmt(ratio(row.id, 'simd-zero-copy'), 3) : '';
    lines.push(`| ${row.name} | ${fmt(t * 1e6, 3)} | ${fmt(bytes / t / 1e9, 3)} | ${vsNaive} | ${vsSimd} | ${ulps(accuracy)} |`);
  }
  return lines.join('\n');
}

const SUMMARY_COLUMNS = [
  ['naive JS ÷ zero-copy', 'naive-js', 'simd-zero-copy'],
  ['copying ÷ zero-copy', 'simd-copying', 'simd-zero-copy'],
  ['allocating ÷ (new array, then the call into it)', 'simd-allocating', 'user-new-array-out'],
  ['allocating ÷ (copying + new array written)', ...ALLOCATING_OVER_WRITTEN],
  ['allocating ÷ (new array then copying)', 'simd-allocating', 'new-array-then-copying'],
  ['naive JS making its result ÷ allocating', 'naive-js-allocating', 'simd-allocating'],
  ['prepared ÷ export', 'simd-prepared', 'simd-export'],
  ['strided ÷ zero-copy', 'simd-strided', 'simd-zero-copy'],
  ['QK-norm per head ÷ heads', 'simd-qk-norm-per-head', 'simd-qk-norm-heads'],
  ['scalar ÷ SIMD', 'scalar-zero-copy', 'simd-zero-copy'],
  ['llama.cpp-style fused ÷ zero-copy', 'llamacpp-fused', 'simd-zero-copy'],
  ['llama.cpp-style unfused ÷ zero-copy', 'llamacpp-unfused', 'simd-zero-copy'],
];

/** The per-engine table: time ratios at `shapes`, and the llama.cpp-style row's accuracy. */
export function engineSummary(runs, shapes = SUMMARY_SHAPES) {
  const lines = [
    `| engine | shape | ${SUMMARY_COLUMNS.map(([title]) => title).join(' | ')} | mean ulp: zero-copy / llama.cpp-style |`,
    `| --- | --- | ${SUMMARY_COLUMNS.map(() => '---:').join(' | ')} | ---: |`,
  ];
  for (const { version, results } of runs) {
    for (const { shape, rows, ratio } of results) {
      if (!shapes.includes(`${shape.rows}x${shape.dim}`)) continue;
      const find = (id) => rows.find((r) => r.row.id === id);
      const measured = (side) => (typeof side === 'function' ? !Number.isNaN(side(Object.fromEntries(rows.map((r) => [r.row.id, 1])))) : find(side));
      const cells = SUMMARY_COLUMNS.map(([, a, b]) => (measured(a) && measured(b) ? fmt(ratio(a, b), 3) : ''));
      const mean = (id) => (find(id)?.accuracy ? find(id).accuracy.mean.toFixed(3) : '–');
      lines.push(`| ${version} | ${shape.label} | ${cells.join(' | ')} | ${mean('simd-zero-copy')} / ${mean('llamacpp-fused')} |`);
    }
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

/** The portable rows measured in a page of `engineName`, one page call per shape. */
export async function runBenchInBrowser(engineName, { shapes, rows, rounds, sampleSeconds, log = () => {} }) {
  const server = await startTestServer();
  const browser = await engineNamed(engineName).launch({ optimizedWasm: true });
  try {
    // Isolated: the engines give performance.now() its finest resolution.
    const page = await browser.openPage(server.url('/tests/pages/blank.html', { isolated: true }));
    const results = [];
    for (const shape of shapes) {
      const measured = await page.evaluate(async (arg) => (await import('/tests/bench/page.js')).measureInPage(arg),
        { shape, rowIds: rows.map((row) => row.id), rounds, sampleSeconds });
      if (!measured.isolated) throw new Error(`${browser.version}: the bench page is not cross-origin isolated`);
      log(`  ${browser.version} ${measured.shape.label}: measured`);
      results.push(withRatios(measured.shape, measured.rows));
    }
    const problems = await page.problems();
    if (problems.length > 0) throw new Error(`${browser.version}: ${problems.join('; ')}`);
    await page.close();
    return { engine: engineName, version: browser.version, clock: 'wall', results, targets: evaluateTargets(results) };
  } finally {
    await browser.close();
    await server.close();
  }
}

async function packageVersion(name) {
  const file = fileURLToPath(new URL(`../../node_modules/${name}/package.json`, import.meta.url));
  return JSON.parse(await readFile(file, 'utf8')).version;
}

async function main() {
  const { values } = parseArgs({
    options: {
      engine: { type: 'string', default: 'node' },
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
  const options = {
    shapes: values.shapes.split(','),
    rounds: Number(values.rounds),
    sampleSeconds: Number(values['sample-ms']) / 1000,
    log: (line) => process.stderr.write(`${line}\n`),
  };
  const machine = os.cpus()[0]?.model ?? 'unknown CPU';
  const runs = [];
  const gpuTables = []; // --engine webgpu-chromium,webgpu-firefox: the GPU rows (tests/bench/rows/webgpu.js)
  for (const engine of values.engine.split(',')) {
    if (engine.startsWith('webgpu-')) {
      gpuTables.push((await runGpuBench(engine.slice('webgpu-'.length), { log: options.log })).table);
    } else if (engine === 'node') {
      const rows = wanted ? ROWS.filter((row) => wanted.includes(row.id)) : ROWS;
      const { results, targets } = await runBench({ ...options, rows });
      runs.push({ engine, version: `Node ${process.version}`, clock: values.clock, results, targets });
    } else {
      const outside = wanted?.filter((id) => !PORTABLE_ROWS.some((row) => row.id === id)) ?? [];
      if (outside.length > 0) throw new Error(`--rows ${outside.join(',')}: these rows run in Node only`);
      const rows = wanted ? PORTABLE_ROWS.filter((row) => wanted.includes(row.id)) : PORTABLE_ROWS;
      runs.push(await runBenchInBrowser(engine, { ...options, rows }));
    }
  }

  const out = [];
  for (const { version, clock, results, targets } of runs) {
    out.push(
      `Machine: ${machine}, ${os.cpus().length} cores; ${version}; ` +
        `${clock === 'cpu' ? 'CPU' : 'wall'} time, median of ${values.rounds} interleaved rounds; ` +
        'ratios are per-round medians; ulps against the float64 oracle.',
      '',
      ...results.flatMap((result) => [shapeTable(result), '']),
      `**Targets** (${version})`,
      '',
      '| target | measured | goal | met |',
      '| --- | ---: | ---: | :---: |',
      ...targets.map((t) => `| ${t.what} | ${fmt(t.value, 3)} | ${t.goal} | ${t.met ? 'yes' : '**no**'} |`),
      '',
    );
  }
  if (runs.length > 1) out.push('**Per engine** (time ratios)', '', engineSummary(runs));
  out.push(...gpuTables.flatMap((table) => [table, '']));
  console.log(out.join('\n'));

  const json = {
    date: new Date().toISOString(),
    machine,
    cores: os.cpus().length,
    versions: {
      'onnxruntime-web': await packageVersion('onnxruntime-web'),
      '@tensorflow/tfjs-core': await packageVersion('@tensorflow/tfjs-core'),
      '@tensorflow/tfjs-backend-wasm': await packageVersion('@tensorflow/tfjs-backend-wasm'),
    },
    rounds: Number(values.rounds),
    engines: runs.map(({ engine, version, clock, results, targets }) => ({
      engine,
      version,
      clock,
      shapes: results.map(({ shape, rows: measured, ratio }) => ({
        shape: shape.label,
        rows: shape.rows,
        dim: shape.dim,
        results: measured.map(({ row, seconds, bytes, accuracy }) => ({
          id: row.id,
          name: row.name,
          microsecondsPerCall: median(seconds) * 1e6,
          gigabytesPerSecond: bytes / median(seconds) / 1e9,
          timesFasterThanNaiveJs: measured.some((r) => r.row.id === 'naive-js') ? ratio('naive-js', row.id) : null,
          timeOverSimdZeroCopy: measured.some((r) => r.row.id === 'simd-zero-copy') ? ratio(row.id, 'simd-zero-copy') : null,
          ulpVsFloat64: accuracy,
          secondsPerRound: seconds,
        })),
      })),
      targets,
    })),
  };
  await mkdir(path.dirname(values.json), { recursive: true });
  await writeFile(values.json, `${JSON.stringify(json, null, 2)}\n`);
  process.stderr.write(`wrote ${values.json}\n`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await main();
}
