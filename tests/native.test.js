// The C kernels built for the host under AddressSanitizer and UBSan, with
// their asserts live (tests/fuzz/known_answers_host.c): the seeds' known
// answers and the contract's edge cases, checked bit for bit against the JS
// reference. The harness itself aborts if the kernels disagree, write outside
// their output, or differ in place.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { rmsNorm as referenceRmsNorm } from '../src/reference/index.js';
import { assertSameBits } from './helpers/bits.js';
import { normalArray, prng, uniformArray } from './helpers/random.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const HARNESS = 'build/known-answers-host';

function buildHarness() {
  const made = spawnSync('make', ['--no-print-directory', '-s', HARNESS], { cwd: root, encoding: 'utf8' });
  assert.equal(made.status, 0, `make ${HARNESS} failed:\n${made.stdout}${made.stderr}`);
}

/** Runs every case through the harness; returns [{ simd, scalar }] per case. */
function runHarness(cases) {
  const parts = [];
  for (const { x, weight, dim, eps } of cases) {
    const header = new DataView(new ArrayBuffer(16));
    header.setUint32(0, x.length / dim, true);
    header.setUint32(4, dim, true);
    header.setFloat32(8, eps, true);
    header.setUint32(12, weight === null ? 0 : 1, true);
    parts.push(new Uint8Array(header.buffer), new Uint8Array(x.buffer, x.byteOffset, x.byteLength));
    if (weight !== null) parts.push(new Uint8Array(weight.buffer, weight.byteOffset, weight.byteLength));
  }
  const run = spawnSync(`${root}/${HARNESS}`, { input: Buffer.concat(parts), maxBuffer: 2 ** 28 });
  assert.equal(run.status, 0, `${HARNESS} exited with ${run.status} ${run.signal ?? ''}:\n${run.stderr}`);
  const out = run.stdout;
  const floats = new Float32Array(out.buffer.slice(out.byteOffset, out.byteOffset + out.byteLength));
  let at = 0;
  return cases.map(({ x }) => {
    const simd = floats.subarray(at, at + x.length);
    const scalar = floats.subarray(at + x.length, at + 2 * x.length);
    at += 2 * x.length;
    return { simd, scalar };
  });
}

function knownAnswerCases() {
  const cases = [];
  const add = (name, x, weight, dim, eps = Math.fround(1e-6)) => cases.push({
    name, x: Float32Array.from(x), weight: weight === null ? null : Float32Array.from(weight), dim, eps,
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
  return cases;
}

test('host build under ASan + UBSan: known answers and edge cases, bit for bit with the reference', () => {
  buildHarness();
  const cases = knownAnswerCases();
  const results = runHarness(cases);
  cases.forEach(({ name, x, weight, dim, eps }, i) => {
    const expected = referenceRmsNorm(x, weight, { dim, eps });
    const rows = x.length / dim;
    assertSameBits(results[i].simd, expected, `${name} (rows=${rows} dim=${dim}): host wasmsimd vs reference`);
    assertSameBits(results[i].scalar, expected, `${name} (rows=${rows} dim=${dim}): host scalar vs reference`);
  });
  // The blog's worked answer, to its two decimals.
  assert.deepEqual(Array.from(results[0].simd, (v) => v.toFixed(2)), ['0.55', '-0.37', '1.10', '-2.92']);
});
