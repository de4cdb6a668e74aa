// The package's ggml block outputs against ggml's own reference quantizers
// (quantize_row_q8_0_ref, quantize_row_q8_1_ref, quantize_row_q8_K_ref in
// ggml/src/ggml-quants.c), compiled natively from the pinned llama.cpp
// source (src/integrations/llama.cpp/ggml_quantize.c, models.mk): the
// same float32 rows through both, every byte compared, on the SIMD and the
// scalar module; then the tiny Llama's Q8_0 weights and the wide Llama's
// Q8_0 and Q4_K tensors against ggml's quantizer of the same values.
// tests/q8.test.js holds the package's quantizer to its own JS reference;
// this holds both to ggml's C.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { createKernels } from '../src/index.js';
import { ggmlQuantize, WIDE_CONFIG, wideLlamaTensors } from '../src/integrations/llama.cpp/models.js';
import { loadWeights } from '../web/model/llama.js';
import { readGguf } from './helpers/gguf-file.js';
import { q8EdgeWeight } from './helpers/q8-edges.js';
import { normalArray, prng } from './helpers/random.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const TOOL = `${root}/build/ggml-quantize`;
const FORMATS = { q8_0: { n: 32, bytes: 34 }, q8_1: { n: 32, bytes: 36 }, q8_K: { n: 256, bytes: 292 } };

function make(targets) {
  const made = spawnSync('nice', ['-n', '10', 'make', '--no-print-directory', '-s', ...targets], { cwd: root, encoding: 'utf8' });
  assert.equal(made.status, 0, `make ${targets.join(' ')} failed:\n${made.stdout}${made.stderr}`);
}

const backends = {};
before(async () => {
  make(['build/ggml-quantize']);
  for (const backend of ['simd', 'scalar']) backends[backend] = await createKernels({ backend });
});

/** The first byte where `got` and ggml's `want` differ, as a message naming the row, block and seed; null if none. */
function difference(got, want, format, what) {
  assert.equal(got.length, want.length, `${what}: ${got.length} bytes, ggml wrote ${want.length}`);
  const a = Buffer.from(got.buffer, got.byteOffset, got.byteLength);
  const b = Buffer.from(want.buffer, want.byteOffset, want.byteLength);
  if (a.equals(b)) return null;
  let i = 0;
  while (a[i] === b[i]) i++;
  const { bytes } = FORMATS[format];
  return `${what}: byte ${i} (block ${Math.floor(i / bytes)}, byte ${i % bytes} of it) is ${a[i]}, ggml's ${format} reference wrote ${b[i]}`;
}

const POWERS = Float64Array.from({ length: 301 }, (_, i) => 2 ** (i - 150));

/**
 * `rows` rows of `n` float32 values whose exponents vary: each row a scale
 * 2^e (e from -90 to 90), each value ±(1 + u)·2^(e - k) with k from 0 to 24
 * (so most blocks mix values that round to 0 with ones near amax); a third
 * of the rows Gaussian instead. Every block stays where ggml's C is
 * defined (1/d and -127/max finite: amax ≥ 2^-114).
 */
function variedRows(rand, rows, n) {
  const x = new Float32Array(rows * n);
  for (let r = 0; r < rows; r++) {
    const e = Math.floor(rand() * 181) - 90;
    if (r % 3 === 2) {
      const g = normalArray(rand, n, POWERS[150 + e]);
      x.set(g, r * n);
      continue;
    }
    for (let i = r * n; i < (r + 1) * n; i++) {
      const k = Math.floor(rand() * 25);
      x[i] = (rand() < 0.5 ? -1 : 1) * (1 + rand()) * POWERS[150 + e - k];
    }
  }
  return x;
}

/** Whether ggml's C is defined on a block: 1/d (q8_0, q8_1) or -127/max (q8_K) finite, every value finite. */
function ggmlDefined(block, format) {
  let amax = 0;
  let max = 0;
  for (const v of block) {
    if (!Number.isFinite(v)) return false;
    if (Math.abs(v) > amax) [amax, max] = [Math.abs(v), v];
  }
  if (amax === 0) return true;
  const scale = format === 'q8_K' ? Math.fround(-127 / max) : Math.fround(1 / Math.fround(amax / 127));
  return Number.isFinite(scale);
}

/**
 * The edge blocks of `format`: tests/helpers/q8-edges.js's (ties at d = 2^e,
 * ±amax, zeros, huge values, 3e38), where ggml's C is defined (its block of
 * subnormals alone makes 1/d overflow: the package saturates there, ggml's
 * conversion is undefined); and besides: -amax before +amax (q8_K takes the
 * first), subnormals beside a normal amax, -0 beside a tiny value, equal
 * values, the largest magnitude negative and alone, ties of every half
 * below 127.
 */
function edgeBlocks(format) {
  const { n } = FORMATS[format];
  const blocks = [];
  const edges = q8EdgeWeight(n);
  for (let b = 0; b < edges.length / n; b++) blocks.push(edges.subarray(b * n, (b + 1) * n));
  const more = [
    (j) => (j === 2 ? -127 : j === 9 ? 127 : j - 16.5),
    (j) => (j === 0 ? 1 : (j % 2 ? -1 : 1) * 2 ** -140 * (j + 1)),
    (j) => (j === n - 1 ? 2 ** -100 : -0),
    () => 0.1,
    (j) => (j === 17 % n ? -3e4 : (j % 7) * 100),
    (j) => (j === 0 ? 127 : (j % 127) + 0.5),
    (j) => (j === 0 ? -127 * 2 ** -126 : (j % 127) * 2 ** -126),
  ];
  for (const value of more) blocks.push(Float32Array.from({ length: n }, (_, j) => value(j)));
  const defined = blocks.filter((block) => ggmlDefined(block, format));
  assert.equal(defined.length, blocks.length - 1, 'only the subnormal block of q8-edges.js is left out');
  const x = new Float32Array(defined.length * n);
  defined.forEach((block, i) => x.set(block, i * n));
  return x;
}

// 10^6 rows of 32 for q8_0 and q8_1, 2.5·10^5 rows of 256 for q8_K (the same
// 32·10^6 values), in chunks of their own seeds.
const PLAN = { q8_0: { rows: 1_000_000, chunk: 100_000 }, q8_1: { rows: 1_000_000, chunk: 100_000 }, q8_K: { rows: 250_000, chunk: 25_000 } };

for (const format of Object.keys(FORMATS)) {
  const { n } = FORMATS[format];
  test(`${format}: quantize's bytes are ggml's ${format === 'q8_K' ? 'quantize_row_q8_K_ref' : `quantize_row_${format}_ref`} on ${PLAN[format].rows} random rows and the edge blocks, SIMD and scalar`, () => {
    const edges = edgeBlocks(format);
    const chunks = [{ x: edges, what: `${format} edge blocks` }];
    let rows = 0;
    for (let k = 0; rows < PLAN[format].rows; k++) {
      const seed = 4500 + 100 * Object.keys(FORMATS).indexOf(format) + k;
      chunks.push({ x: variedRows(prng(seed), PLAN[format].chunk, n), what: `${format}, seed ${seed}, ${PLAN[format].chunk} rows of ${n}` });
      rows += PLAN[format].chunk;
    }
    for (const { x, what } of chunks) {
      const ggml = ggmlQuantize(TOOL, format, x, n);
      for (const [name, kernels] of Object.entries(backends)) {
        assert.equal(difference(kernels.quantize(x, { dtype: format }), ggml, format, `${name}, ${what}`), null);
      }
    }
    assert.ok(rows >= PLAN[format].rows);
  });

  test(`${format}: rmsNorm's fused blocks are ggml's reference quantizer of its float32 output, SIMD and scalar`, () => {
    const dim = 4 * n;
    for (const [name, kernels] of Object.entries(backends)) {
      for (let k = 0; k < 4; k++) {
        const seed = 4900 + k;
        const rand = prng(seed);
        const x = variedRows(rand, 2000, dim);
        const weight = k === 3 ? null : normalArray(rand, dim);
        const y = kernels.rmsNorm(x, weight, { dim });
        const what = `${name}, seed ${seed}, ${format} of rmsNorm's 2000 rows of ${dim}`;
        assert.equal(difference(kernels.rmsNorm(x, weight, { dim, outDtype: format }), ggmlQuantize(TOOL, format, y, dim), format, what), null);
      }
    }
  });
}

test('the tiny Llama\'s Q8_0 weights are ggml\'s quantize_row_q8_0_ref of its float32 weights', () => {
  make(['build/models/tiny-llama-q8_0.gguf']);
  const read = (path) => readFileSync(new URL(path, import.meta.url));
  const bin = read('../web/model/weights.bin');
  const manifest = JSON.parse(read('../web/model/weights.json'));
  const weights = loadWeights(manifest, bin.buffer.slice(bin.byteOffset, bin.byteOffset + bin.byteLength));
  const gguf = readGguf(new Uint8Array(readFileSync(`${root}/build/models/tiny-llama-q8_0.gguf`)));
  let checked = 0;
  manifest.tensors.forEach(({ name }, i) => {
    const t = gguf.tensors[i]; // in the manifest's order (tests/gguf.test.js)
    if (t.type !== 'Q8_0') return;
    assert.equal(difference(t.data, ggmlQuantize(TOOL, 'q8_0', weights.tensors.get(name), t.dims[0]), 'q8_0', t.name), null);
    checked++;
  });
  assert.equal(checked, 26);
});

test('the wide Llama\'s Q8_0 and Q4_K tensors are ggml\'s quantizers of its generated weights', () => {
  make(['build/models/wide-llama-q8_0.gguf', 'build/models/wide-llama-q4_k.gguf']);
  const files = Object.fromEntries(['q8_0', 'q4_k'].map((format) => {
    const gguf = readGguf(new Uint8Array(readFileSync(`${root}/build/models/wide-llama-${format}.gguf`)));
    return [format, new Map(gguf.tensors.map((t) => [t.name, t]))];
  }));
  // A tensor of each shape, rows of 2048 and of 5632, and a norm: a Q4_K
  // block is ggml's choice of scales (make_qkx2_quants), made here only by
  // ggml's own code.
  const names = ['token_embd.weight', 'blk.0.attn_norm.weight', 'blk.0.attn_k.weight', 'blk.1.ffn_down.weight', 'output.weight'];
  const tensors = wideLlamaTensors(WIDE_CONFIG, (name) => names.includes(name));
  for (const { name, dims, values } of tensors) {
    for (const [format, type] of [['q8_0', 'Q8_0'], ['q4_k', 'Q4_K']]) {
      const t = files[format].get(name);
      assert.deepEqual(t.dims, dims, name);
      if (dims.length === 1) {
        assert.equal(t.type, 'F32', name);
        assert.ok(Buffer.from(t.data).equals(Buffer.from(values.buffer)), `${name}: its F32 values`);
        continue;
      }
      assert.equal(t.type, type, name);
      const ggml = ggmlQuantize(TOOL, format === 'q4_k' ? 'q4_K' : 'q8_0', values, dims[0]);
      assert.ok(Buffer.from(t.data).equals(Buffer.from(ggml)), `${name}: its ${type} bytes are not ggml's`);
    }
  }
  assert.equal(tensors.length, names.length);
});
