// The benchmark cannot rot: every row of `npm run bench` runs here on small
// shapes and must compute RMSNorm (checked against the float64 oracle, and
// bit for bit against the JS reference for the rows built from our kernel
// source), the runner must produce a table, and a fast wrong row must be
// refused. No timing is asserted.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { makeShape } from './bench/data.js';
import { measureShape } from './bench/measure.js';
import { ROWS } from './bench/rows/index.js';
import { PORTABLE_ROWS } from './bench/rows/portable.js';
import { engineSummary, runBench, runBenchInBrowser, shapeTable } from './bench/run.js';
import { ENGINES } from './helpers/engines.js';
import { dequantize } from '../src/index.js';
import {
  fromFloat32 as referenceFromFloat32, layerNorm as referenceLayerNorm, quantize as referenceQuantize, rmsNorm as referenceRmsNorm, toFloat32 as referenceToFloat32,
} from '../src/reference/index.js';
import { q8Table, rowsFor } from './bench/q8.js';
import { assertSameBits } from './helpers/bits.js';
import { layerNorm64, rmsNorm64 } from './helpers/oracle.js';

// Rows computed by our kernel source must match the reference's bits: what
// each one computes, through the JS reference.
const F32_ROWS = ['reference', 'scalar-zero-copy', 'scalar-copying', 'simd-zero-copy', 'simd-copying', 'simd-allocating', 'simd-prepared',
  'simd-strided', 'simd-export', 'native', 'user-new-array-out', 'simd-qk-norm-heads', 'simd-qk-norm-per-head'];
function referenceOf(id, shape, expected) {
  const { x, w, eps } = shape;
  if (F32_ROWS.includes(id)) return referenceRmsNorm(x, w, { eps });
  if (id === 'simd-add-rmsnorm' || id === 'simd-add-then-rmsnorm') return referenceRmsNorm(expected.input, w, { eps });
  if (id === 'simd-layernorm') return referenceLayerNorm(x, w, null, { eps });
  const dtype = { 'simd-bf16': 'bfloat16', 'simd-f16': 'float16' }[id];
  if (dtype !== undefined) {
    const y = referenceRmsNorm(referenceFromFloat32(x, { dtype }), referenceFromFloat32(w, { dtype }), { eps, dtype, weightDtype: dtype });
    return referenceToFloat32(y, { dtype });
  }
  return null; // the peers: their own summation orders
}

async function outputOf(row, shape) {
  const instance = await row.setup(shape);
  try {
    await instance.prepare?.();
    await instance.call();
    return { y: Float32Array.from(await instance.output()), expected: instance.expected ?? {} };
  } finally {
    await instance.dispose?.();
  }
}

for (const [rows, dim] of [[3, 40], [2, 300]]) {
  test(`every bench row computes RMSNorm on ${rows}×${dim}`, async () => {
    const shape = makeShape(rows, dim);
    for (const row of ROWS) {
      const { y, expected } = await outputOf(row, shape);
      const what = `${row.id} rows=${rows} dim=${dim} seed=${shape.seed}`;
      assert.equal(y.length, rows * dim, `${what}: length`);
      if (row.expects === 'copy') {
        assertSameBits(y, shape.x, `${what} (a copy of x)`);
        continue;
      }
      if (row.expects === 'nothing') {
        assert.ok(y.every((v) => v === 0), `${what}: a new array of zeros`);
        continue;
      }
      const oracle = expected.op === 'layerNorm' ? layerNorm64 : rmsNorm64;
      const y64 = oracle(expected.input ?? shape.x, expected.weight ?? shape.w, dim, shape.eps);
      const tolerance = expected.tolerance ?? 1e-5;
      for (let i = 0; i < y.length; i++) {
        const err = Math.abs(y[i] - y64[i]);
        assert.ok(err <= tolerance * Math.abs(y64[i]) + 1e-6, `${what}: index ${i} is ${y[i]}, the oracle says ${y64[i]}`);
      }
      const ours = referenceOf(row.id, shape, expected);
      if (ours !== null) assertSameBits(y, ours, `${what} vs the JS reference`);
    }
  });
}

test('the runner times every row and prints its table and targets', async () => {
  const { results, targets } = await runBench({ shapes: ['1x896'], rows: ROWS, rounds: 2, sampleSeconds: 0.001 });
  assert.equal(results.length, 1);
  for (const { row, seconds } of results[0].rows) {
    assert.equal(seconds.length, 2, row.id);
    for (const s of seconds) assert.ok(s > 0 && Number.isFinite(s), `${row.id}: ${s} s/call`);
  }
  const table = shapeTable(results[0]);
  for (const row of ROWS) assert.ok(table.includes(`| ${row.name} |`), `table lacks ${row.name}`);
  // 1×896 is a shape of targets 1, 2 (twice), 3, 7 (twice: against the caller's own new array, and naive JS), 8 and 5.
  assert.deepEqual(targets.map((t) => t.what.split('.')[0]), ['1', '2', '2', '3', '7', '7', '8', '5']);
  for (const t of targets) assert.ok(Number.isFinite(t.value) && typeof t.met === 'boolean', t.what);
});

test('Qwen3\'s prefill QK-norm shape (168×128: 7 tokens of 24 heads) has its target: one call each against 24 per-head calls', async () => {
  const rows = ROWS.filter((row) => row.id.startsWith('simd-qk-norm'));
  assert.equal(rows.length, 2);
  const { targets } = await runBench({ shapes: ['168x128'], rows, rounds: 2, sampleSeconds: 0.001 });
  assert.equal(targets.length, 1);
  assert.match(targets[0].what, /^9\. 168×128: Qwen3 prefill QK-norm/);
  assert.ok(Number.isFinite(targets[0].value), targets[0].what);
});

test('the bench page times every portable row in every browser engine, each checked against the oracle first', async () => {
  const runs = [];
  for (const engine of ENGINES) {
    // 5 ms samples: a browser's clock is coarse, and in Firefox on a loaded machine a 1 ms
    // sample once read as 0 s, which no ratio survives.
    const run = await runBenchInBrowser(engine.name, { shapes: ['3x40'], rows: PORTABLE_ROWS, rounds: 2, sampleSeconds: 0.005 });
    const [result] = run.results;
    assert.deepEqual(result.rows.map(({ row }) => row.id), PORTABLE_ROWS.map((row) => row.id), run.version);
    for (const { row, seconds, accuracy } of result.rows) {
      for (const s of seconds) assert.ok(s >= 0 && Number.isFinite(s), `${run.version} ${row.id}: ${s} s/call`);
      if (row.id.startsWith('llamacpp')) assert.ok(accuracy.max < 4 && accuracy.mean < 1, `${run.version} ${row.id}: ${JSON.stringify(accuracy)}`);
    }
    assert.ok(Number.isFinite(result.ratio('naive-js', 'simd-zero-copy')), run.version);
    runs.push(run);
  }
  const summary = engineSummary(runs, ['3x40']);
  for (const run of runs) assert.ok(summary.includes(`| ${run.version} | 3×40 |`), `summary lacks ${run.version}`);
});

test('a row with a wrong answer is refused before it is timed', async () => {
  let calls = 0;
  const wrong = {
    id: 'wrong',
    name: 'forgets the weight',
    setup: ({ x, dim, eps }) => {
      const y = referenceRmsNorm(x, null, { dim, eps });
      return { call: () => { calls += 1; }, output: () => y };
    },
  };
  await assert.rejects(measureShape(makeShape(2, 64), [wrong], { rounds: 1, sampleSeconds: 0.001 }),
    /forgets the weight: wrong answer, 2×64 seed=\d+: index \d+ is/);
  assert.equal(calls, 1, 'only the checking call ran, no timed loop');
});

test('the ggml block rows (tests/bench/q8.js) run, and the package\'s rows write the reference\'s blocks', async () => {
  const shape = makeShape(3, 512);
  const rows = rowsFor(shape);
  assert.deepEqual(rows.map((row) => row.id), [
    'simd-zero-copy', 'simd-export', 'q8_0-fused', 'q8_0-norm-then-quantize', 'q8_0-plain-js', 'q8_K-fused', 'q8_K-norm-then-quantize', 'q8_K-plain-js',
    'q8_0-fused-prepared', 'q8_0-fused-bfloat16', 'q8_0-norm-then-quantize-bfloat16', 'q8_0-fused-float16', 'q8_0-norm-then-quantize-float16',
    'q8_0-fused-bfloat16-storage', 'q8_0-norm-then-quantize-bfloat16-storage', 'q8_0-fused-float16-storage', 'q8_0-norm-then-quantize-float16-storage',
    'q8_K-fused-float16', 'q8_K-norm-then-quantize-float16', 'q8_0-floor',
  ]);
  assert.deepEqual(rowsFor(makeShape(1, 896)).map((row) => row.id).filter((id) => id.startsWith('q8_K')), [], 'no q8_K where dim is no multiple of 256');
  for (const row of rows) {
    if (row.format === undefined) continue;
    const { y } = await outputOf(row, shape);
    // Their own quantizers: the oracle check of the measurement below.
    if (row.id.endsWith('plain-js') || row.id.endsWith('floor')) continue;
    // A 16-bit weight's or rows' values: the shape's float32 ones rounded to it, as the row rounds them.
    const weightDtype = row.weightDtype ?? 'float32';
    const storage = row.storage ?? 'float32';
    const rounded = (values, dtype) => (dtype === 'float32' ? values : referenceFromFloat32(values, { dtype }));
    const normOptions = { eps: shape.eps, weightDtype, ...(storage === 'float32' ? {} : { dtype: storage }) };
    const norm = referenceRmsNorm(rounded(shape.x, storage), rounded(shape.w, weightDtype), normOptions);
    const values = storage === 'float32' ? norm : referenceToFloat32(norm, { dtype: storage });
    const want = dequantize(referenceQuantize(values, { dtype: row.format }), { dtype: row.format });
    assertSameBits(y, want, `${row.id}: the reference's blocks`);
  }
  const result = await measureShape(shape, rows, { rounds: 2, sampleSeconds: 0.001 });
  const table = q8Table(result);
  for (const row of rows) assert.ok(table.includes(`| ${row.name} |`), `table lacks ${row.name}`);
});

test('the ggml block rows run in a page of every browser engine (tests/bench/q8.js --engine)', async () => {
  const rows = rowsFor(makeShape(1, 512));
  for (const engine of ENGINES) {
    const run = await runBenchInBrowser(engine.name, { shapes: ['1x512'], rows, rounds: 2, sampleSeconds: 0.005 });
    const [result] = run.results;
    assert.deepEqual(result.rows.map(({ row }) => row.id), rows.map((row) => row.id), run.version);
    for (const { row, seconds } of result.rows) {
      for (const s of seconds) assert.ok(s >= 0 && Number.isFinite(s), `${run.version} ${row.id}: ${s} s/call`);
    }
    const table = q8Table(result);
    for (const row of rows) assert.ok(table.includes(`| ${row.name} |`), `${run.version}: table lacks ${row.name}`);
  }
});
