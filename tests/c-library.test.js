// The C library as C engines get it: from the packed tarball, the header and
// each static library (c/), a C program (tests/c-library/example.c) built by
// emcc with nothing else, run in Node; its results replayed through the JS
// API must be the same bits. The same program built natively against the
// SIMD kernels through SIMDe (as the fuzzer builds them) prints the same text.
// The wasm64 libraries: a freestanding wasm64 program
// (tests/c-library/freestanding64.c) built by clang-19 and wasm-ld-19 against
// them, run in Chromium and Firefox (Node 20 cannot compile wasm64 code with
// function pointers), its results replayed the same way.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, symlink } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import * as api from '../src/index.js';
import { CAST_MODES, DTYPES } from '../src/loader/abi.js';
import { bfloat16ToNumber, float16ToNumber, numberToBfloat16, numberToFloat16, widen } from '../src/reference/float16.js';
import { dequantize, quantize } from '../src/reference/index.js';
import { assertSameBits, assertSameBitsAs } from './helpers/bits.js';
import { ENGINES, startTestServer } from './helpers/engines.js';

const run = promisify(execFile);
const repo = fileURLToPath(new URL('..', import.meta.url));
const example = join(repo, 'tests', 'c-library', 'example.c');
const env = { ...process.env, NODE_PATH: '/usr/share/nodejs' }; // Debian's emcc
const LIBRARIES = { simd: 'librmsnorm_wasm_simd.a', scalar: 'librmsnorm_wasm_scalar.a' };
const LIBRARIES_64 = { simd: 'librmsnorm_wasm_simd64.a', scalar: 'librmsnorm_wasm_scalar64.a' };
const freestanding64 = join(repo, 'tests', 'c-library', 'freestanding64.c');
const headsProgram = join(repo, 'tests', 'c-library', 'heads.c');
const quantizeProgram = join(repo, 'tests', 'c-library', 'quantize.c');

let work;
let packageDir; // the tarball, extracted
const printed = {}; // backend -> the example's output, as text
before(async () => {
  work = await mkdtemp(join(tmpdir(), 'rmsnorm-wasm-c-'));
  // The libraries `make build` made (make test builds before it tests): no
  // prepack here, whose `make build` could race package.test.js's when test
  // files run in parallel.
  const { stdout } = await run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', work],
    { cwd: repo, maxBuffer: 2 ** 26 });
  const [{ filename }] = JSON.parse(stdout);
  await run('tar', ['-xzf', join(work, filename), '-C', work]);
  packageDir = join(work, 'package');
  for (const [backend, library] of Object.entries(LIBRARIES)) {
    const out = join(work, `example-${backend}.js`);
    // The two-line command of docs/c-library.md.
    await run('emcc', ['-O2', ...(backend === 'simd' ? ['-msimd128'] : []), '-I', join(packageDir, 'c'), example,
      join(packageDir, 'c', library), '-sSINGLE_FILE=1', '-sENVIRONMENT=node', '-o', out], { env });
    printed[backend] = (await run(process.execPath, [out], { maxBuffer: 2 ** 26 })).stdout;
  }
  // The wasm64 program: compiled freestanding, linked with each wasm64
  // library, a memory that may grow to 16 GiB (the most Chromium allows).
  for (const [backend, library] of Object.entries(LIBRARIES_64)) {
    const object = join(work, `freestanding64-${backend}.o`);
    await run('clang-19', ['--target=wasm64', '-O2', '-std=c11', '-Wall', '-Wextra', '-Werror', '-ffreestanding', '-nostdlib',
      '-mbulk-memory', backend === 'simd' ? '-msimd128' : '-mno-simd128', '-I', join(packageDir, 'c'), '-c', freestanding64, '-o', object]);
    await run('wasm-ld-19', ['-mwasm64', '--no-entry', `--max-memory=${2 ** 34}`, object, join(packageDir, 'c', library),
      '-o', join(work, `freestanding64-${backend}.wasm`)]);
  }
});
after(() => rm(work, { recursive: true, force: true }));

test('the package ships the header and both libraries in c/, reachable through exports', async () => {
  for (const file of ['rmsnorm_wasm.h', ...Object.values(LIBRARIES)]) {
    assert.ok((await stat(join(packageDir, 'c', file))).size > 0, file);
  }
  const app = join(work, 'app');
  await mkdir(join(app, 'node_modules'), { recursive: true });
  await symlink(packageDir, join(app, 'node_modules', 'rmsnorm-wasm'));
  const require = createRequire(join(app, 'index.js'));
  for (const file of ['rmsnorm_wasm.h', ...Object.values(LIBRARIES)]) {
    assert.equal(await readFile(require.resolve(`rmsnorm-wasm/c/${file}`), 'utf8').then((s) => s.length > 0), true);
  }
  const header = await readFile(join(packageDir, 'c', 'rmsnorm_wasm.h'), 'utf8');
  assert.match(header, /rmsnorm_wasm_status rmsnorm_wasm_f32\(const float\* x, const float\* weight, float\* y, size_t rows,\s+size_t dim, float eps\);/);
});

test('the scalar library and the SIMD one print the same bits', () => {
  assert.equal(printed.scalar, printed.simd);
});

/** Every kernel family: the folders of src/kernels that have a SIMD file (the Makefile's KERNEL_DIRS). */
async function kernelFamilies() {
  const entries = await readdir(join(repo, 'src', 'kernels'), { withFileTypes: true });
  const families = [];
  for (const entry of entries.filter((e) => e.isDirectory())) {
    if ((await readdir(join(repo, 'src', 'kernels', entry.name))).includes('wasmsimd.c')) families.push(entry.name);
  }
  return families;
}

test('the same C program built natively (SIMD kernels through SIMDe) prints the same bits', async () => {
  const native = join(work, 'example-native');
  await run('clang-14', ['-O2', '-std=c11', '-Wall', '-Wextra', '-Werror', '-ffp-contract=off', '-DRMSNORM_WASM_SIMDE',
    '-I', join(repo, 'src', 'abi'), example, join(repo, 'src', 'abi', 'rmsnorm_wasm.c'),
    ...(await kernelFamilies()).map((op) => join(repo, 'src', 'kernels', op, 'wasmsimd.c')),
    '-lm', '-o', native]);
  const { stdout } = await run(native, [], { maxBuffer: 2 ** 26 });
  assert.equal(stdout, printed.simd);
});

const f32Of = (hex) => new Float32Array(new Uint32Array(hex.map((h) => parseInt(h, 16))).buffer);
const u16Of = (hex) => Uint16Array.from(hex, (h) => parseInt(h, 16));
const arrayOf = (hex, dtype) => (dtype === 'float32' ? f32Of(hex) : u16Of(hex));

/** One printed RMSNorm call through the JS API. A weight of a third dtype
 * (neither float32 nor the storage dtype) goes in widened to float32: the
 * contract says that gives the same bits. */
function replayRmsNorm(c) {
  const dtype = DTYPES[c.dtype];
  let weightDtype = DTYPES[c.weightDtype];
  let weight = arrayOf(c.weight, weightDtype);
  if (weightDtype !== 'float32' && weightDtype !== dtype) {
    weight = Float32Array.from(weight, (_, i) => widen(weight, i, weightDtype));
    weightDtype = 'float32';
  }
  const x = arrayOf(c.x, dtype);
  const rstd = new Float32Array(c.rstd.length);
  const options = { dtype, weightDtype, dim: c.dim, eps: c.eps, castMode: CAST_MODES[c.castMode], weightOffset: c.weightOffset, rstd };
  if (c.op === 'addRmsNorm') {
    const residual = arrayOf(c.residual, dtype);
    const y = api.addRmsNorm(x, residual, weight, options);
    return { y, residualOut: residual, rstd };
  }
  return { y: api.rmsNorm(x, weight, options), rstd };
}

function replay(c) {
  switch (c.op) {
    case 'rmsNormF32':
      return { y: api.rmsNorm(f32Of(c.x), c.weight ? f32Of(c.weight) : null, { dim: c.dim, eps: c.eps }) };
    case 'rmsNorm':
    case 'addRmsNorm':
      return replayRmsNorm(c);
    case 'layerNorm': {
      const rows = c.x.length / c.dim;
      const mean = new Float32Array(rows);
      const rstd = new Float32Array(rows);
      const y = api.layerNorm(f32Of(c.x), f32Of(c.weight), f32Of(c.bias), { eps: c.eps, mean, rstd });
      return { y, mean, rstd };
    }
    case 'rmsNormBackward': {
      const { dx, dweight } = api.rmsNormBackward(f32Of(c.dy), f32Of(c.x), f32Of(c.weight), { eps: c.eps });
      return { dx, dweight };
    }
    case 'layerNormBackward': {
      // A bias only asks for dbias (the sums of dy): its values play no part.
      const bias = new Float32Array(c.dim);
      const { dx, dweight, dbias } = api.layerNormBackward(f32Of(c.dy), f32Of(c.x), f32Of(c.weight), bias, { eps: c.eps });
      return { dx, dweight, dbias };
    }
    default:
      throw new Error(`unknown op ${c.op}`);
  }
}

for (const backend of Object.keys(LIBRARIES)) {
  test(`every C call on the ${backend} library gives the JS API's bits (${backend} backend)`, async () => {
    await api.init({ backend });
    const cases = JSON.parse(printed[backend]);
    let compared = 0;
    let strided = 0;
    for (const c of cases.filter((k) => !['errors', 'topOfMemory', 'convert', 'qkNorm', 'prepared', 'stridedOverlap', 'oneRow', 'rmsNormQ8', 'q8Errors'].includes(k.op))) {
      assert.equal(c.status, 0, `${c.op}: status`);
      // Strided calls print their rows packed: the JS API's packed call must give their bits.
      if (c.rowStride !== undefined) {
        strided++;
        assert.equal(c.gapsUntouched, 1, `${c.op} row stride ${c.rowStride}: every byte between rows kept`);
        if (c.xKept !== undefined) assert.equal(c.xKept, 1, `${c.op} row stride ${c.rowStride}: x kept`);
      }
      // dweight and dbias accumulate: row by row from zeros is the one call's bits.
      if (c.op.endsWith('Backward')) assert.equal(c.rowByRowSame, 1, `${c.op}: row by row`);
      const expected = replay(c);
      const dtype = c.dtype === undefined ? 'float32' : DTYPES[c.dtype];
      for (const [name, values] of Object.entries(expected)) {
        const outputDtype = name === 'y' || name === 'residualOut' ? dtype : 'float32';
        assertSameBitsAs(outputDtype, arrayOf(c[name], outputDtype), values,
          `${backend} ${c.op} dim ${c.dim} dtype ${dtype} weight ${DTYPES[c.weightDtype] ?? 'float32'}: ${name}`);
        compared++;
      }
    }
    assert.ok(compared >= 25, `${compared} outputs compared`);
    assert.ok(strided >= 9, `${strided} strided calls compared`);
  });
}

const FORMAT_NAMES = [null, 'q8_0', 'q8_1', 'q8_K'];
const bytesOf = (hex) => Uint8Array.from(hex.match(/../g), (h) => parseInt(h, 16));

test('block outputs: the C library\'s ggml blocks are the JS API\'s, and the reference quantizer\'s of the JS float output', async () => {
  for (const backend of Object.keys(LIBRARIES)) {
    await api.init({ backend });
    const cases = JSON.parse(printed[backend]).filter((k) => k.op === 'rmsNormQ8');
    assert.equal(cases.length, 4);
    for (const c of cases) {
      const format = FORMAT_NAMES[c.format];
      const context = `${backend} ${format} dim ${c.dim} stride ${c.rowStride} dtype ${DTYPES[c.dtype]}`;
      assert.equal(c.status, 0, `${context}: status`);
      assert.equal(c.gapsUntouched, 1, `${context}: the bytes between rows kept`);
      const dtype = DTYPES[c.dtype];
      const weightDtype = DTYPES[c.weightDtype];
      const x = arrayOf(c.x, dtype);
      const weight = arrayOf(c.weight, weightDtype);
      const options = { dtype, weightDtype, dim: c.dim, castMode: CAST_MODES[c.castMode], weightOffset: c.weightOffset };
      const residual = c.add ? arrayOf(c.residual, dtype) : null;
      const plainResidual = residual?.slice();
      const fused = c.add ? api.addRmsNorm(x, residual, weight, { ...options, outDtype: format }) : api.rmsNorm(x, weight, { ...options, outDtype: format });
      const plain = c.add ? api.addRmsNorm(x, plainResidual, weight, options) : api.rmsNorm(x, weight, options);
      const blocks = bytesOf(c.blocks);
      assert.deepEqual(blocks, fused, `${context}: the JS API's blocks`);
      const values = dtype === 'float32' ? plain : api.toFloat32(plain, { dtype });
      assert.deepEqual(blocks, quantize(values, { dtype: format }), `${context}: the reference quantizer's`);
      if (c.add) assertSameBitsAs(dtype, arrayOf(c.residualOut, dtype), residual, `${context}: residual`);
      const rstd = new Float32Array(c.rstd.length);
      api.rmsNorm(c.add ? residual : x, weight, { ...options, rstd });
      assertSameBitsAs('float32', f32Of(c.rstd), rstd, `${context}: rstd`);
    }
    const errors = JSON.parse(printed[backend]).find((k) => k.op === 'q8Errors');
    assert.deepEqual(
      [errors.notAMultiple, errors.kNotAMultiple, errors.unknownFormat, errors.overX, errors.inPlace, errors.nullOut],
      [8, 8, 10, 5, 5, 1], `${backend}: ERROR_BLOCK, ERROR_BLOCK, ERROR_FORMAT, ERROR_OVERLAP twice, ERROR_NULL`);
    assert.equal(errors.rowBytes, 2 * 292);
    assert.equal(errors.rowBytesNotAMultiple, 0);
    assert.equal(errors.kept, 1, `${backend}: refused calls wrote nothing`);
  }
});

/** A float16 pattern's value, decoded here from its fields (not by the reference's float16.js). */
function halfValue(h) {
  const sign = h & 0x8000 ? -1 : 1;
  const exponent = (h >> 10) & 31;
  const mantissa = h & 1023;
  if (exponent === 31) return mantissa === 0 ? sign * Infinity : NaN;
  return exponent === 0 ? sign * mantissa * 2 ** -24 : sign * (1024 + mantissa) * 2 ** (exponent - 25);
}

/** ggml's dequantize_row_*, written here from the block layout: qs_j · d, one float32 product. */
function dequantizedBy(bytes, format) {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.length);
  const [values, blockBytes, qsAt] = { q8_0: [32, 34, 2], q8_1: [32, 36, 4], q8_K: [256, 292, 4] }[format];
  const out = new Float32Array((bytes.length / blockBytes) * values);
  for (let b = 0; b < bytes.length / blockBytes; b++) {
    const at = b * blockBytes;
    const d = format === 'q8_K' ? view.getFloat32(at, true) : halfValue(view.getUint16(at, true));
    for (let j = 0; j < values; j++) out[b * values + j] = Math.fround(view.getInt8(at + qsAt + j) * d);
  }
  return out;
}

// rmsnorm_wasm_quantize / _dequantize (tests/c-library/quantize.c): random
// rows at scales 2^-24..2^23 and edge blocks, each format, against the
// reference's quantize (independent code) and a dequantizer written here.
test('quantize and dequantize: the reference\'s blocks to the byte, ggml\'s dequantize_row_* to the bit, strided rows, each wrong argument its status', async () => {
  for (const [backend, library] of Object.entries(LIBRARIES)) {
    const out = join(work, `quantize-${backend}.cjs`);
    await run('emcc', ['-O2', ...(backend === 'simd' ? ['-msimd128'] : []), '-Wall', '-Wextra', '-Werror', '-I', join(packageDir, 'c'), quantizeProgram,
      join(packageDir, 'c', library), '-sSINGLE_FILE=1', '-sENVIRONMENT=node', '-o', out], { env });
    const c = JSON.parse((await run(process.execPath, [out], { maxBuffer: 2 ** 28 })).stdout);
    const x = f32Of(c.x);
    assert.ok(x.some((v) => v !== v) && x.some((v) => v === Infinity) && x.some((v) => v !== 0 && Math.abs(v) < 2 ** -126), `${backend}: NaN, Inf and subnormal rows`);
    await api.init({ backend });
    assert.equal(c.formats.length, 3);
    for (const f of c.formats) {
      const format = FORMAT_NAMES[f.format];
      const context = `${backend} ${format}`;
      assert.equal(f.status, 0, `${context}: status`);
      assert.equal(f.rowBytes, api.quantize(new Float32Array(c.dim), { dtype: format }).length, `${context}: rmsnorm_wasm_block_row_bytes`);
      assert.equal(f.tailKept, 1, `${context}: nothing written past the blocks`);
      assert.equal(f.stridedSame, 1, `${context}: prepared calls on strided rows = the packed calls, gaps kept`);
      const blocks = bytesOf(f.blocks);
      const want = quantize(x, { dtype: format });
      const differing = want.reduce((n, byte, i) => n + (byte !== blocks[i]), 0);
      assert.equal(differing, 0, `${context}: bytes differing from the reference's quantize, of ${want.length}`);
      assert.equal(blocks.length, want.length);
      assert.deepEqual(blocks, api.quantize(x, { dtype: format }), `${context}: the JS API's quantize`);
      assertSameBits(f32Of(f.y), dequantizedBy(blocks, format), `${context}: dequantize`);
      assertSameBits(f32Of(f.y), dequantize(blocks, { dtype: format }), `${context}: the JS dequantize`);
      const noise = bytesOf(f.noise);
      assertSameBits(f32Of(f.noiseY), dequantizedBy(noise, format), `${context}: dequantize of random bytes`);
    }
    assert.deepEqual(c.errors.statuses, {
      'format 0': 10, 'format 4': 10, 'dequantize format 4': 10, 'dim 0': 2, 'dim 48 for q8_0': 8, 'dim 32 for q8_K': 8,
      'dequantize dim 48 for q8_1': 8, 'rows 0, NULL arrays': 0, 'x NULL': 1, 'blocks NULL': 1, 'dequantize y NULL': 1,
      "x's bytes overflow size_t": 12, 'blocks run past the top': 6, 'dequantize y runs past the top': 6, 'blocks overlap x': 5,
      'dequantize y overlaps blocks': 5, 'dequantize in place': 5, 'null call': 1, 'row_stride below dim': 7,
      'one row takes any row_stride': 0, 'blocks in a gap of strided x': 0, "blocks across a gap onto x's second row": 5,
      "dequantize y's rows around the blocks": 0, end: 0,
    }, `${backend}: statuses`);
    assert.equal(c.errors.kept, 1, `${backend}: refused calls wrote nothing`);
  }
});

// Issue 46's measure on the C side: mistakes an engine author makes
// (tests/c-library/mistakes.c), each its own status and a message that
// names the fix; every cause a status of its own, every message different.
test('mistakes with the C library: a status per cause, a message that names the fix', async () => {
  const out = join(work, 'mistakes.cjs');
  await run('emcc', ['-O2', '-Wall', '-Wextra', '-Werror', '-I', join(packageDir, 'c'), join(repo, 'tests', 'c-library', 'mistakes.c'),
    join(packageDir, 'c', LIBRARIES.scalar), '-sSINGLE_FILE=1', '-sENVIRONMENT=node', '-o', out], { env });
  const reports = JSON.parse((await run(process.execPath, [out])).stdout);
  const FIXES = {
    'q8_0 blocks of a row of 48': [8, 'pick a format whose block divides dim, or write the rows unquantized'],
    'q8_K blocks of rows of 64': [8, '256 for RMSNORM_WASM_Q8_K'],
    'the format left 0': [10, 'use RMSNORM_WASM_Q8_0, RMSNORM_WASM_Q8_1 or RMSNORM_WASM_Q8_K'],
    "ggml's type number for q8_0 (8) as the format": [10, 'use RMSNORM_WASM_Q8_0'],
    'blocks written over x': [5, 'give each output its own memory'],
    'dtype 7': [4, 'use RMSNORM_WASM_FLOAT32, RMSNORM_WASM_BFLOAT16 or RMSNORM_WASM_FLOAT16'],
    'a cast mode of 2': [9, 'use RMSNORM_WASM_CAST_LLAMA or RMSNORM_WASM_CAST_GEMMA'],
    'weight_offset NaN': [11, "pass 0 for none, 1 for Gemma's"],
    'eps -1': [3, "pass the model's epsilon"],
    'rows -1 (a negative count)': [12, 'a negative count converted to size_t'],
    'row_stride below dim': [7, 'pass the distance in values from one row'],
    'dequantize into NULL': [1, 'pass x and the output'],
    'dim 0': [2, 'pass the number of values a row holds'],
    'a float32 converter call': [4, 'the converters take RMSNORM_WASM_BFLOAT16 or RMSNORM_WASM_FLOAT16'],
  };
  assert.deepEqual(reports.map((r) => r.mistake), Object.keys(FIXES));
  for (const { mistake, status, message } of reports) {
    const [want, fix] = FIXES[mistake];
    assert.equal(status, want, `${mistake}: status`);
    assert.ok(message.includes(fix), `${mistake}: "${message}" does not name the fix "${fix}"`);
  }
  const messages = new Map(reports.map((r) => [r.status, r.message]));
  assert.equal(new Set(messages.values()).size, messages.size, 'one message per status');
  assert.equal(messages.size, 11, 'every cause but ERROR_RANGE among the mistakes');
});

test('QK-norm over the q and k heads inside one fused QKV buffer: the packed rows\' bits, v untouched to the byte', async () => {
  for (const backend of Object.keys(LIBRARIES)) {
    await api.init({ backend });
    const cases = JSON.parse(printed[backend]).filter((k) => k.op === 'qkNorm');
    assert.equal(cases.length, 2);
    for (const c of cases) {
      const dtype = DTYPES[c.dtype];
      assert.equal(c.status, 0);
      assert.equal(c.vUntouched, 1, `${backend} ${dtype}: v kept every byte`);
      assert.equal(c.perTokenSame, 1, `${backend} ${dtype}: a head per call across tokens = a token per call`);
      for (const part of ['q', 'k']) {
        const expected = api.rmsNorm(arrayOf(c[part], dtype), f32Of(c[`${part}Weight`]), { dim: c.dim, eps: c.eps, dtype });
        assertSameBitsAs(dtype, arrayOf(c[`${part}Out`], dtype), expected, `${backend} QK-norm ${dtype}: ${part}`);
      }
    }
  }
});

// rmsnorm_wasm_prepare_rmsnorm_heads (tests/c-library/heads.c): one call for
// the q heads and one for the k heads give the bits of the 24 per-head
// prepared calls, which the JS API's heads calls (SIMD, scalar) and the
// reference give too; heads with gaps fused with a residual; every status.
test('heads: one C call for q and one for k give the 24 per-head calls\' bits, the JS API\'s and the reference\'s; each wrong argument its status', async () => {
  const reference = await import('../src/reference/index.js');
  const bits = (a) => Array.from(new Uint32Array(a.buffer, a.byteOffset, a.length), (u) => u.toString(16).padStart(8, '0'));
  const [TOKENS, Q, K, D] = [7, 16, 8, 128];
  const WIDTH = (Q + 2 * K) * D;
  const STATUSES = {
    'null call': 1, 'unknown dtype': 4, 'heads 0': 2, 'dim 0': 2, 'head_stride below dim': 7, 'heads past the next token': 7,
    'one token: row_stride unused': 0, 'token span overflows': 12, 'eps negative': 3, 'no tokens, no arrays': 0, 'y NULL': 1,
    'in place': 0, "y in the gaps between x's heads": 0, 'y one value after x': 5, "y over x's second head": 5,
    'rstd in a gap between heads': 0, 'rstd across a head': 5, 'residual is x': 5, end: 0,
  };
  const kernels = { simd: await api.createKernels({ backend: 'simd' }), scalar: await api.createKernels({ backend: 'scalar' }), reference };
  for (const [backend, library] of Object.entries(LIBRARIES)) {
    const out = join(work, `heads-${backend}.cjs`);
    await run('emcc', ['-O2', ...(backend === 'simd' ? ['-msimd128'] : []), '-Wall', '-Wextra', '-Werror', '-I', join(packageDir, 'c'), headsProgram,
      join(packageDir, 'c', library), '-sSINGLE_FILE=1', '-sENVIRONMENT=node', '-o', out], { env });
    const c = JSON.parse((await run(process.execPath, [out], { maxBuffer: 2 ** 26 })).stdout);
    assert.deepEqual(Object.fromEntries(c.statuses.map((k) => [k.case, k.status])), STATUSES, `${backend}: statuses`);
    // The aliasing rule head by head, placement by placement, against heads.c's byte model.
    const { placements, refused, wrong } = c.overlapGrid;
    assert.ok(placements > 10000 && refused > 2000 && placements - refused > 2000, `${backend}: ${placements} placements, ${refused} refused`);
    assert.equal(wrong, 0, `${backend}: placements with another status than the byte model's`);
    assert.deepEqual(c.heads, c.perHead, `${backend}: one call each = the per-head calls, v and every byte between included`);
    const interleaved = (first, count) => {
      const r = [];
      for (let t = 0; t < TOKENS; t++) for (let h = 0; h < count; h++) r.push(c.perHeadRstd[(first + h) * TOKENS + t]);
      return r;
    };
    assert.deepEqual(c.qRstd, interleaved(0, Q), `${backend}: q's rstd, t * heads + h`);
    assert.deepEqual(c.kRstd, interleaved(Q, K), `${backend}: k's rstd`);
    assert.notDeepEqual(c.heads, c.input, `${backend}: the call wrote`);
    const qNorm = Float32Array.from({ length: D }, (_, i) => 0.5 + (i % 8) / 8);
    const kNorm = Float32Array.from({ length: D }, (_, i) => 1.5 - (i % 4) / 4);
    const w = Float32Array.from({ length: 8 }, (_, i) => 0.75 + i / 16);
    for (const [name, k] of Object.entries(kernels)) {
      const qkv = f32Of(c.input);
      k.rmsNorm(qkv, qNorm, { eps: 1e-6, rowStride: WIDTH, heads: Q, out: qkv });
      const kView = qkv.subarray(Q * D);
      k.rmsNorm(kView, kNorm, { eps: 1e-6, rowStride: WIDTH, heads: K, out: kView });
      assert.deepEqual(bits(qkv), c.heads, `${backend} C library = ${name}: QK-norm`);
      const residual = f32Of(c.gapsResidualIn);
      const y = f32Of(c.gapsY).fill(-7);
      k.addRmsNorm(f32Of(c.gapsX), residual, w, { eps: 1e-6, rowStride: 40, heads: 3, headStride: 11, out: y });
      assert.deepEqual(bits(y), c.gapsY, `${backend} C library = ${name}: heads with gaps, y`);
      assert.deepEqual(bits(residual), c.gapsResidual, `${backend} C library = ${name}: heads with gaps, residual`);
    }
    // Heads to ggml blocks: the per-head calls' blocks (in C), and the JS API's and the reference's heads calls'.
    assert.equal(c.q8.same, 1, `${backend}: heads to blocks = the per-head block calls, rstd and residual included`);
    assert.deepEqual(c.q8.statuses, {
      'unknown format': 10, 'dim 8 for q8_0': 8, 'dim 128 for q8_K': 8, 'out NULL': 1, 'out is x: blocks are never in place': 5,
      "out over x's second head": 5, "out in the gap between x's heads": 0, 'rstd over the blocks': 5, end: 0,
    }, `${backend}: heads to blocks, statuses`);
    const w256 = Float32Array.from({ length: 256 }, (_, i) => 0.75 + (i % 16) / 16);
    for (const [name, k] of Object.entries(kernels)) {
      const rstd = new Float32Array(TOKENS * Q);
      const qBlocks = k.rmsNorm(f32Of(c.input), qNorm, { eps: 1e-6, rowStride: WIDTH, heads: Q, outDtype: 'q8_0', rstd });
      assert.deepEqual(qBlocks, bytesOf(c.q8.qBlocks), `${backend} C library = ${name}: QK-norm to q8_0`);
      assert.deepEqual(bits(rstd), c.q8.qRstd, `${backend} C library = ${name}: QK-norm to q8_0, rstd`);
      const residual = f32Of(c.q8.gapsResidualIn);
      const kBlocks = k.addRmsNorm(f32Of(c.q8.gapsX), residual, w256, { eps: 1e-6, rowStride: 700, heads: 2, headStride: 300, outDtype: 'q8_K' });
      assert.deepEqual(kBlocks, bytesOf(c.q8.gapsBlocks), `${backend} C library = ${name}: heads with gaps to q8_K`);
      assert.deepEqual(bits(residual), c.q8.gapsResidual, `${backend} C library = ${name}: heads with gaps to q8_K, residual`);
    }
    assert.deepEqual(c.gapsY, c.gapsPerHeadY, `${backend}: heads with gaps = per head, y`);
    assert.deepEqual(c.gapsResidual, c.gapsPerHeadResidual, `${backend}: heads with gaps = per head, residual`);
  }
});

test('prepared calls: run on new contents of the same arrays gives the one-shot bits; a refused prepare runs as nothing', () => {
  for (const backend of Object.keys(LIBRARIES)) {
    const c = JSON.parse(printed[backend]).find((k) => k.op === 'prepared');
    assert.equal(c.status, 0, `${backend}: status`);
    assert.equal(c.same, 1, `${backend}: every run has the one-shot call's bits`);
    assert.equal(c.refusedStatus, 3, `${backend}: eps -1 refused`);
    assert.equal(c.refusedRunUntouched, 1, `${backend}: running a refused call wrote nothing`);
    assert.equal(c.nullCall, 1, `${backend}: a NULL call is ERROR_NULL`);
  }
});

test('one row takes any row_stride: every prepare accepts 2^30 and SIZE_MAX, and runs with the packed call\'s bits', () => {
  for (const backend of Object.keys(LIBRARIES)) {
    const c = JSON.parse(printed[backend]).find((k) => k.op === 'oneRow');
    assert.equal(c.statuses, 0, `${backend}: every prepare returned OK`);
    assert.equal(c.same, 1, `${backend}: every run gave the packed call's bits`);
  }
});

test('strided spans: prepare refuses exactly the placements where an output shares a byte with another array\'s values', () => {
  for (const backend of Object.keys(LIBRARIES)) {
    const { placements, refused, wrong } = JSON.parse(printed[backend]).find((c) => c.op === 'stridedOverlap');
    assert.ok(placements > 2000, `${backend}: ${placements} placements`);
    assert.ok(refused > 500 && refused < placements - 500, `${backend}: ${refused} refused, the rest accepted`);
    assert.equal(wrong, 0, `${backend}: placements with another status than the byte model's`);
  }
});

test('wrong arguments get their documented status and write nothing', () => {
  const { statuses, untouched } = JSON.parse(printed.simd).find((c) => c.op === 'errors');
  const code = Object.fromEntries(Object.entries(statuses).map(([what, [status]]) => [what, status]));
  assert.deepEqual(code, {
    'dim 0': 2,
    'size overflow': 12,
    'eps -1': 3,
    'eps NaN': 3,
    'eps Inf': 3,
    'x NULL': 1,
    'dtype 3': 4,
    'weight offset Inf': 11,
    'y overlaps x': 5,
    'y overlaps the weight': 5,
    'rstd overlaps x': 5,
    'layerNorm mean NULL is fine, dim 0 is not': 2,
    'backward dweight without weight': 1,
    'backward dx overlaps x': 5,
    'rstd bytes overflow size_t': 12,
    'rmsnorm_rstd bytes overflow size_t': 12,
    'y and rstd overlap at the top of memory': 5,
    'y runs past the top': 6,
    'weight runs past the top': 6,
    'layerNorm y and mean overlap at the top of memory': 5,
    'layerNorm rstd runs past the top': 6,
    'backward dx runs past the top': 6,
    'backward dweight and dbias overlap at the top of memory': 5,
    'rmsnorm_wasm_f32 eps -1': 3,
    'rmsnorm_wasm_f32 dim 0': 2,
    'rows 0 touches nothing': 0,
    'to_f32 dtype float32': 4,
    'from_f32 dtype 3': 4,
    'to_f32 n 0 touches nothing': 0,
    'from_f32 dst NULL': 1,
    'to_f32 dst bytes overflow size_t': 12,
    'from_f32 dst runs past the top': 6,
    'to_f32 dst overlaps src': 5,
    'from_f32 dst overlaps src': 5,
    'row_stride below dim': 7,
    'row_stride below dim, rows 0': 7,
    'backward row_stride below dim': 7,
    'rows row_stride apart overflow size_t': 12,
    '16-bit rows row_stride apart overflow size_t': 12,
    'strided rows run past the top': 6,
    'y in the gaps of x is fine': 0,
    'y on x exactly, strided, is fine': 0,
    'y half a row into x': 5,
    'y\'s first row on x\'s second through the stride': 5,
    'residual in the gaps of x, y after both, is fine': 0,
    'residual on x through the stride': 5,
    'rstd in a gap of y is fine': 0,
    'rstd across a gap onto y\'s second row': 5,
    'weight in a gap of y is fine': 0,
    'weight across a gap onto y\'s second row': 5,
    'layerNorm mean in a gap of y is fine': 0,
    'backward dx in the gaps of dy and x is fine': 0,
    'backward dx on x through the stride': 5,
    'backward dweight in a gap of dx is fine': 0,
  });
  assert.equal(untouched, 1, 'every rejected call left y as it was');
});

test('the converters: every 16-bit pattern widened, and edge and random float32 values narrowed, as the reference does', () => {
  const f32Bits = (v) => new Uint32Array(Float32Array.of(v).buffer)[0];
  for (const backend of Object.keys(LIBRARIES)) {
    const c = JSON.parse(printed[backend]).find((k) => k.op === 'convert');
    assert.equal(c.status, 0, `${backend}: status`);
    const floats = f32Of(c.floats);
    const formats = [['Bfloat16', bfloat16ToNumber, numberToBfloat16], ['Float16', float16ToNumber, numberToFloat16]];
    for (const [name, toNumber, fromNumber] of formats) {
      const widened = new Uint32Array(f32Of(c[`widened${name}`]).buffer);
      assert.equal(widened.length, 0x10000);
      for (let h = 0; h < 0x10000; h++) {
        const value = toNumber(h);
        // A NaN pattern widens to the float32 NaN with its sign and payload,
        // which a JS number cannot carry: its bits are the pattern moved up.
        const want = value === value ? f32Bits(value) : name === 'Bfloat16' ? h << 16 >>> 0
          : (((h & 0x8000) << 16) | 0x7f800000 | ((h & 0x3ff) << 13)) >>> 0;
        if (widened[h] !== want) assert.fail(`${backend} to_f32 ${name} 0x${h.toString(16)}: 0x${widened[h].toString(16)}, want 0x${want.toString(16)}`);
      }
      const narrowed = u16Of(c[`narrowed${name}`]);
      assert.equal(narrowed.length, floats.length);
      for (let i = 0; i < floats.length; i++) {
        const want = fromNumber(floats[i]);
        if (narrowed[i] !== want) assert.fail(`${backend} from_f32 ${name} ${c.floats[i]}: 0x${narrowed[i].toString(16)}, want 0x${want.toString(16)}`);
      }
    }
  }
});

test('arrays near the top of the address space: every placement that runs past it or overlaps is refused', () => {
  for (const backend of Object.keys(LIBRARIES)) {
    const { refused, wrong } = JSON.parse(printed[backend]).find((c) => c.op === 'topOfMemory');
    assert.ok(refused > 10000, `${backend}: ${refused} placements refused`);
    assert.equal(wrong, 0, `${backend}: placements with another status than the model's`);
  }
});

/** A freestanding64.c case in example.c's form: eps and the weight offset from their bits. */
const fromBits = (c) => ({
  ...c,
  eps: f32Of([c.epsBits])[0],
  ...(c.weightOffsetBits !== undefined && { weightOffset: f32Of([c.weightOffsetBits])[0] }),
});

for (const engine of ENGINES.filter((e) => e.name !== 'webkit')) {
  test(`the wasm64 libraries in a freestanding wasm64 C program, in ${engine.name}: the JS API's bits, strided, prepared, above 4 GiB`, async (t) => {
    const server = await startTestServer(work);
    const browser = await engine.launch();
    const outputs = {};
    try {
      for (const backend of Object.keys(LIBRARIES_64)) {
        const page = await browser.openPage(server.url('/package/package.json'));
        try {
          outputs[backend] = JSON.parse(await page.evaluate(async (file) => {
            const { instance } = await WebAssembly.instantiateStreaming(fetch(file));
            const at = Number(instance.exports.run());
            const length = Number(instance.exports.run_length());
            return new TextDecoder().decode(new Uint8Array(instance.exports.memory.buffer, at, length));
          }, `/freestanding64-${backend}.wasm`));
        } finally {
          await page.close();
        }
      }
      t.diagnostic(browser.version);
    } finally {
      await browser.close();
      await server.close();
    }
    for (const backend of Object.keys(LIBRARIES_64)) {
      await api.init({ backend });
      const cases = outputs[backend];
      let compared = 0;
      for (const c of cases.filter((k) => !['errors', 'convert', 'rmsNormQ8', 'quantize'].includes(k.op)).map(fromBits)) {
        assert.equal(c.status, 0, `${backend} ${c.op}: status`);
        if (c.above4GiB !== undefined) {
          assert.equal(c.above4GiB, 1, `${backend}: the program's memory grew to 5 GiB`);
          assert.ok(c.address >= 2 ** 32, `${backend}: x at ${c.address}`);
        }
        assert.equal(c.gapsUntouched, 1, `${backend} ${c.op}: every byte between rows kept`);
        for (const [name, values] of Object.entries(replay(c))) {
          const outputDtype = (name === 'y' || name === 'residualOut') && c.dtype !== undefined ? DTYPES[c.dtype] : 'float32';
          assertSameBitsAs(outputDtype, arrayOf(c[name], outputDtype), values, `wasm64 ${backend} ${c.op} dim ${c.dim}: ${name}`);
          compared++;
        }
      }
      assert.ok(compared >= 18, `${backend}: ${compared} outputs compared`);
      // Block outputs: the JS API's blocks of the same call.
      const q8 = cases.filter((k) => k.op === 'rmsNormQ8');
      assert.equal(q8.length, 3);
      for (const c of q8) {
        const [dtype, weightDtype, format] = [DTYPES[c.dtype], DTYPES[c.weightDtype], FORMAT_NAMES[c.format]];
        assert.equal(c.status, 0, `wasm64 ${backend} ${format}: status`);
        assert.equal(c.gapsUntouched, 1, `wasm64 ${backend} ${format}: gaps`);
        const options = { dtype, weightDtype, dim: c.dim, outDtype: format };
        const x = arrayOf(c.x, dtype);
        const weight = arrayOf(c.weight, weightDtype);
        const want = c.add ? api.addRmsNorm(x, arrayOf(c.residual, dtype), weight, options) : api.rmsNorm(x, weight, options);
        assert.deepEqual(bytesOf(c.blocks), want, `wasm64 ${backend} ${format} dim ${c.dim}: blocks`);
      }
      // The quantizer and the dequantizer alone: the reference's blocks, ggml's dequantize_row_*.
      const quantized = cases.filter((k) => k.op === 'quantize');
      assert.equal(quantized.length, 3);
      for (const c of quantized) {
        const format = FORMAT_NAMES[c.format];
        assert.equal(c.status, 0, `wasm64 ${backend} quantize ${format}: status`);
        assert.equal(c.gapsUntouched, 1, `wasm64 ${backend} quantize ${format}: gaps`);
        const blocks = bytesOf(c.blocks);
        assert.deepEqual(blocks, quantize(f32Of(c.x), { dtype: format }), `wasm64 ${backend} quantize ${format}: blocks`);
        assertSameBits(f32Of(c.y), dequantizedBy(blocks, format), `wasm64 ${backend} dequantize ${format}`);
      }
      // The converters: the wasm32 library's widenings (held to the reference above), the reference's narrowings.
      const convert = cases.find((k) => k.op === 'convert');
      assert.equal(convert.status, 0);
      const wasm32 = JSON.parse(printed[backend]).find((k) => k.op === 'convert');
      assert.deepEqual(convert.widenedBfloat16, wasm32.widenedBfloat16, `${backend}: every bfloat16 pattern widened`);
      assert.deepEqual(convert.widenedFloat16, wasm32.widenedFloat16, `${backend}: every float16 pattern widened`);
      for (const [name, fromNumber] of [['narrowedBfloat16', numberToBfloat16], ['narrowedFloat16', numberToFloat16]]) {
        const floats = f32Of(convert.floats);
        u16Of(convert[name]).forEach((got, i) => assert.equal(got, fromNumber(floats[i]), `${backend} ${name} ${convert.floats[i]}`));
      }
      const { statuses, untouched } = cases.find((k) => k.op === 'errors');
      // stride < dim, overlap through the stride, interleaved (fine), stride overflow, past the 64-bit top, converter overlap, dim 0
      assert.deepEqual(statuses, [7, 5, 0, 12, 6, 5, 2], backend);
      assert.equal(untouched, 1);
    }
  });
}
