// The C kernels built for the host under AddressSanitizer and UBSan, with
// their asserts live (tests/fuzz/known_answers_host.c): the seeds' known
// answers and the contract's edge cases, checked bit for bit against the JS
// reference, y and the per-row rstd. The harness runs every case packed and
// with its rows `stride` apart (each array alone, in place, and the per-row
// arrays interleaved in one buffer), and aborts if the kernels disagree,
// write outside their outputs or into a gap between rows, differ in place or
// strided, or if asking for rstd changes y, or asking for y changes rstd.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { CAST_MODE, DTYPE } from '../src/loader/abi.js';
import { addRmsNorm as referenceAddRmsNorm, rmsNorm as referenceRmsNorm } from '../src/reference/index.js';
import { numberToBfloat16, numberToFloat16, widen } from '../src/reference/float16.js';
import { assertSameBitsAs } from './helpers/bits.js';
import { normalArray, prng, uniformArray } from './helpers/random.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const HARNESS = 'build/known-answers-host';

function buildHarness() {
  const made = spawnSync('make', ['--no-print-directory', '-s', HARNESS], { cwd: root, encoding: 'utf8' });
  assert.equal(made.status, 0, `make ${HARNESS} failed:\n${made.stdout}${made.stderr}`);
}

const bytesOf = (a) => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
const ARRAY_OF = { float32: Float32Array, bfloat16: Uint16Array, float16: Uint16Array };

/** The weight's dtype: as the options say, else the storage dtype for 16-bit patterns. */
const weightDtypeOf = (weight, options) =>
  options.weightDtype ?? (weight instanceof Uint16Array ? options.dtype : 'float32');

/** Runs every case through the harness; returns [{ simd, scalar, residual?, rstdSimd, rstdScalar }] per case. */
function runHarness(cases) {
  const parts = [];
  for (const { x, weight, residual, dim, stride, eps, options } of cases) {
    assert.ok(x instanceof ARRAY_OF[options.dtype ?? 'float32'], 'x is stored as its dtype');
    const header = new DataView(new ArrayBuffer(36));
    header.setUint32(0, x.length / dim, true);
    header.setUint32(4, dim, true);
    header.setFloat32(8, eps, true);
    header.setUint32(12, (weight === null ? 0 : 1) | (residual === undefined ? 0 : 2), true);
    header.setInt32(16, DTYPE[options.dtype ?? 'float32'].code, true);
    header.setInt32(20, DTYPE[weightDtypeOf(weight, options)].code, true);
    header.setInt32(24, CAST_MODE[options.castMode ?? 'llama'], true);
    header.setFloat32(28, options.weightOffset ?? 0, true);
    header.setUint32(32, stride, true);
    parts.push(new Uint8Array(header.buffer), bytesOf(x));
    if (weight !== null) parts.push(bytesOf(weight));
    if (residual !== undefined) parts.push(bytesOf(residual));
  }
  const run = spawnSync(`${root}/${HARNESS}`, { input: Buffer.concat(parts), maxBuffer: 2 ** 28 });
  assert.equal(run.status, 0, `${HARNESS} exited with ${run.status} ${run.signal ?? ''}:\n${run.stderr}`);
  const out = run.stdout;
  let at = 0;
  const next = (dtype, length) => {
    const bytes = out.buffer.slice(out.byteOffset + at, out.byteOffset + at + length * ARRAY_OF[dtype].BYTES_PER_ELEMENT);
    at += bytes.byteLength;
    return new ARRAY_OF[dtype](bytes);
  };
  const results = cases.map(({ x, residual, dim, options }) => {
    const dtype = options.dtype ?? 'float32';
    const result = { simd: next(dtype, x.length), scalar: next(dtype, x.length) };
    if (residual !== undefined) Object.assign(result, { residualSimd: next(dtype, x.length), residualScalar: next(dtype, x.length) });
    const rows = x.length / dim;
    return Object.assign(result, { rstdSimd: next('float32', rows), rstdScalar: next('float32', rows) });
  });
  assert.equal(at, out.byteLength, 'the harness wrote exactly the expected outputs');
  return results;
}

// The strided runs' row stride, by case: small gaps (rows at every
// alignment) and room for x, the residual and y interleaved in one buffer.
const STRIDES = [(dim) => dim + 1, (dim) => dim + 3, (dim) => 2 * dim + 1, (dim) => 3 * dim + 2, (dim) => dim + 16];

function knownAnswerCases() {
  const cases = [];
  const add = (name, x, weight, dim, eps = Math.fround(1e-6), options = {}, residual = undefined) => cases.push({
    name, dim, eps, options, residual, stride: STRIDES[cases.length % STRIDES.length](dim),
    x: x instanceof Uint16Array ? x : Float32Array.from(x),
    weight: weight === null || weight instanceof Uint16Array ? weight : Float32Array.from(weight),
  });
  add('blog example', [2, -4, 6, -8], [1.5, 0.5, 1, 2], 4);
  add('PyTorch overflow example', [3e19, -4e19, 1e19, 2e19], null, 4);
  add('near FLT_MAX', [3.4e38, -3.0e38, 1e38, -3.4028234e38, 2e37], null, 5);
  add('near 1e-30, eps = 0', [1e-30, -3e-30, 2e-30, 5e-31], null, 4, 0);
  add('subnormals, eps = 0', [1e-45, -3e-45, 1e-40, 7e-42, -2e-39], null, 5, 0);
  add('tiny with a tinier eps', [1e-25, -3e-25, 2e-25, 5e-26], null, 4, Math.fround(1e-45));
  add('all zero, eps = 0', new Float32Array(40), null, 20, 0);
  add('all zero', new Float32Array(34), null, 17);
  add('-0 and NaN and Inf rows', [-0, 1, -0, -1, NaN, 1, 2, 3, Infinity, 1, -2, 3], [1, 2, 3, 4], 4);
  add('eps = FLT_MAX', [1, 2, 3, 4, 5], null, 5, 3.4028234663852886e38);
  const rand = prng(7);
  // Every lane count and tail, then block edges and long rows, at many scales.
  for (let dim = 1; dim <= 40; dim++) {
    add(`dim ${dim} seed 7`, normalArray(rand, 3 * dim, 2), uniformArray(rand, dim, 0.5, 1.5), dim);
  }
  for (const dim of [255, 256, 257, 511, 512, 513, 768, 4097, 16384]) {
    add(`dim ${dim} seed 7`, normalArray(rand, 2 * dim), normalArray(rand, dim), dim);
  }
  for (const scale of [1e-38, 1e-30, 1e-20, 1e-10, 1e10, 1e20, 1e30, 1e38]) {
    add(`scale ${scale} seed 7`, normalArray(rand, 2 * 100, scale), null, 100, 0);
  }
  // 16-bit storage, both cast modes, weights of either type, a weight offset,
  // and the fused residual add, at tails and block edges.
  const narrowTo = { bfloat16: numberToBfloat16, float16: numberToFloat16 };
  for (const dtype of ['bfloat16', 'float16']) {
    const to16 = (a) => Uint16Array.from(a, narrowTo[dtype]);
    for (const dim of [1, 7, 16, 33, 256, 257, 1000]) {
      for (const castMode of ['llama', 'gemma']) {
        const x = to16(normalArray(rand, 2 * dim, 2));
        const w = uniformArray(rand, dim, 0.5, 1.5);
        add(`${dtype} ${castMode} float32 weight dim ${dim} seed 7`, x, w, dim, undefined, { dtype, castMode });
        add(`${dtype} ${castMode} ${dtype} weight dim ${dim} seed 7`, x, to16(w), dim, undefined, { dtype, castMode });
        add(`${dtype} ${castMode} weight offset 1 dim ${dim} seed 7`, x, to16(normalArray(rand, dim, 0.1)), dim, undefined,
          { dtype, castMode, weightOffset: 1 });
        add(`${dtype} ${castMode} residual dim ${dim} seed 7`, x, w, dim, undefined, { dtype, castMode },
          to16(normalArray(rand, 2 * dim, 1)));
      }
      add(`${dtype} no weight dim ${dim} seed 7`, to16(normalArray(rand, dim, 3)), null, dim, undefined, { dtype });
    }
    add(`${dtype} special values`, Uint16Array.from([0x0000, 0x8000, 0x7c00, 0xfc00, 0x7e00, 0x0001, 0x3c00, 0xbc00]),
      null, 4, undefined, { dtype });
    add(`${dtype} huge rows`, to16(normalArray(rand, 64, dtype === 'float16' ? 2e4 : 1e37)), null, 32, 0, { dtype });
    add(`${dtype} tiny rows`, to16(normalArray(rand, 64, dtype === 'float16' ? 1e-6 : 1e-37)), null, 32, 0, { dtype });
  }
  // Any weight dtype with any storage dtype: the kernels widen the weight as
  // the reference does, in every specialization (offset, cast mode, fused rows).
  for (const dtype of ['float32', 'bfloat16', 'float16']) {
    for (const weightDtype of ['bfloat16', 'float16']) {
      if (weightDtype === dtype) continue;
      const w16 = (a) => Uint16Array.from(a, narrowTo[weightDtype]);
      const xOf = (n) => (dtype === 'float32' ? normalArray(rand, n, 2) : Uint16Array.from(normalArray(rand, n, 2), narrowTo[dtype]));
      for (const dim of [1, 7, 16, 33, 256, 257, 1000]) {
        for (const castMode of ['llama', 'gemma']) {
          const what = `${dtype} x ${weightDtype} weight ${castMode} dim ${dim} seed 7`;
          add(what, xOf(3 * dim), w16(uniformArray(rand, dim, 0.5, 1.5)), dim, undefined, { dtype, weightDtype, castMode });
          add(`${what} offset 1`, xOf(2 * dim), w16(normalArray(rand, dim, 0.1)), dim, undefined,
            { dtype, weightDtype, castMode, weightOffset: 1 });
        }
      }
    }
  }
  add('float32 residual', normalArray(rand, 3 * 300, 1), uniformArray(rand, 300, 0.5, 1.5), 300, undefined, {},
    normalArray(rand, 3 * 300, 1));
  add('float32 weight offset', normalArray(rand, 2 * 64, 1), normalArray(rand, 64, 0.1), 64, undefined, { weightOffset: 1 });
  return cases;
}

test('host build under ASan + UBSan: known answers and edge cases, packed and strided, bit for bit with the reference', () => {
  buildHarness();
  const cases = knownAnswerCases();
  const results = runHarness(cases);
  cases.forEach(({ name, x, weight, residual, dim, stride, eps, options }, i) => {
    const dtype = options.dtype ?? 'float32';
    // A weight of a third dtype is checked against the contract's rule: the
    // bits of the same weight widened to float32 first.
    const weightDtype = weight === null ? undefined : weightDtypeOf(weight, options);
    const mixed = weightDtype !== undefined && weightDtype !== 'float32' && weightDtype !== dtype;
    const refWeight = mixed ? Float32Array.from(weight, (_, i) => widen(weight, i, weightDtype)) : weight;
    const opts = { dim, eps, ...options, ...(weight !== null && { weightDtype: mixed ? 'float32' : weightDtype }) };
    const what = `${name} (rows=${x.length / dim} dim=${dim}, also stride=${stride})`;
    const same = (a, b, label) => assertSameBitsAs(dtype, a, b, label);
    const rstd = new Float32Array(x.length / dim);
    if (residual === undefined) {
      const expected = referenceRmsNorm(x, refWeight, { ...opts, rstd });
      same(results[i].simd, expected, `${what}: host wasmsimd vs reference`);
      same(results[i].scalar, expected, `${what}: host scalar vs reference`);
    } else {
      const updated = residual.slice();
      const expected = referenceAddRmsNorm(x, updated, refWeight, { ...opts, rstd });
      same(results[i].simd, expected, `${what}: host wasmsimd vs reference`);
      same(results[i].scalar, expected, `${what}: host scalar vs reference`);
      same(results[i].residualSimd, updated, `${what}: host wasmsimd residual vs reference`);
      same(results[i].residualScalar, updated, `${what}: host scalar residual vs reference`);
    }
    assertSameBitsAs('float32', results[i].rstdSimd, rstd, `${what}: host wasmsimd rstd vs reference`);
    assertSameBitsAs('float32', results[i].rstdScalar, rstd, `${what}: host scalar rstd vs reference`);
  });
  // The blog's worked answer, to its two decimals.
  assert.deepEqual(Array.from(results[0].simd, (v) => v.toFixed(2)), ['0.55', '-0.37', '1.10', '-2.92']);
});
