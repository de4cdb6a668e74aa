// Memory soak: a million calls of mixed shapes, options and backends must
// not grow wasm memory after warm-up nor the JS heap; memory growth in the
// middle of a sequence keeps every result exact; independent instances in
// one process do not interfere. The figures are printed as diagnostics.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import v8 from 'node:v8';
import vm from 'node:vm';
import { init, rmsNorm } from '../src/index.js';
import { activeKernels } from '../src/api/runtime.js';
import { compileBackend, instantiate } from '../src/loader/load.js';
import { rmsNorm as referenceRmsNorm } from '../src/reference/index.js';
import { assertSameBits } from './helpers/bits.js';
import { normalArray, prng, uniformArray } from './helpers/random.js';

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc');
const MiB = 2 ** 20;
const mib = (bytes) => `${(bytes / MiB).toFixed(2)} MiB`;

function settledHeap() {
  gc();
  gc();
  const { heapUsed, external, arrayBuffers } = process.memoryUsage();
  return { heapUsed, external, arrayBuffers };
}

// [rows, dim, weighted, output]: tails, lanes, blocks, a model's hidden size.
const SHAPES = [
  [1, 1, true, 'new'], [3, 17, true, 'out'], [2, 64, false, 'in place'], [1, 896, true, 'out'],
  [4, 37, true, 'new'], [1, 300, false, 'out'], [8, 16, true, 'in place'], [1, 2048, true, 'out'],
];

function makeCalls(seed) {
  const rand = prng(seed);
  return SHAPES.map(([rows, dim, weighted, output]) => {
    const x = normalArray(rand, rows * dim, 2);
    const weight = weighted ? uniformArray(rand, dim, 0.5, 1.5) : null;
    return { rows, dim, x, weight, output, out: new Float32Array(x.length), expected: referenceRmsNorm(x, weight, { dim }) };
  });
}

function callOnce(call) {
  const { x, weight, dim, output, out } = call;
  if (output === 'new') return rmsNorm(x, weight, { dim });
  if (output === 'out') return rmsNorm(x, weight, { dim, out });
  out.set(x); // in place on a copy, so x stays the input for the next round
  return rmsNorm(out, weight, { dim, out });
}

const CALLS = 1_000_000;
const WARM_UP = 20_000;
const CHECK_EVERY = 50_003; // a prime, so every shape and backend gets checked

test(`${CALLS} mixed calls: wasm memory and the JS heap stay flat after warm-up`, async (t) => {
  const calls = makeCalls(80);
  const backends = ['simd', 'scalar'];
  const memoryOf = {};
  for (const backend of backends) {
    await init({ backend });
    memoryOf[backend] = activeKernels('soak').memory;
  }
  const wasmBytes = () => backends.map((b) => memoryOf[b].buffer.byteLength);
  let afterWarmUp = null;
  let heapAfterWarmUp = null;
  const started = performance.now();
  for (let i = 0; i < CALLS; i++) {
    // Switch backends in runs of 1000 calls: init() after the first time
    // only switches, and both instances are exercised all along.
    if (i % 1000 === 0) await init({ backend: backends[(i / 1000) % 2] });
    const call = calls[i % calls.length];
    const y = callOnce(call);
    if (i % CHECK_EVERY === 0) {
      assertSameBits(y, call.expected, `call ${i}: rows=${call.rows} dim=${call.dim} ${call.output} seed=80`);
    }
    if (i === WARM_UP) {
      afterWarmUp = wasmBytes();
      heapAfterWarmUp = settledHeap();
    }
  }
  const seconds = (performance.now() - started) / 1000;
  const end = wasmBytes();
  const heapEnd = settledHeap();
  t.diagnostic(`${CALLS} calls in ${seconds.toFixed(1)} s; wasm memory (simd, scalar) after ${WARM_UP} calls: `
    + `${afterWarmUp.map(mib).join(', ')}; at the end: ${end.map(mib).join(', ')}`);
  t.diagnostic(`JS heapUsed after warm-up ${mib(heapAfterWarmUp.heapUsed)}, at the end ${mib(heapEnd.heapUsed)}; `
    + `external ${mib(heapAfterWarmUp.external)} -> ${mib(heapEnd.external)}; `
    + `arrayBuffers ${mib(heapAfterWarmUp.arrayBuffers)} -> ${mib(heapEnd.arrayBuffers)}`);
  assert.deepEqual(end, afterWarmUp, 'wasm memory grew after warm-up');
  // Flat: a leak of even 2 bytes per call would show as 2 MB here.
  assert.ok(heapEnd.heapUsed - heapAfterWarmUp.heapUsed < 1 * MiB, 'the JS heap grew');
  assert.ok(heapEnd.external - heapAfterWarmUp.external < 1 * MiB, 'external memory grew');
  for (const call of calls) {
    assertSameBits(callOnce(call), call.expected, `last call: rows=${call.rows} dim=${call.dim} ${call.output}`);
  }
});

for (const backend of ['simd', 'scalar']) {
  test(`${backend}: memory growth in the middle of a sequence, with live views, keeps every result exact`, async () => {
    await init({ backend });
    const kernels = activeKernels('soak');
    const calls = makeCalls(81);
    const heapBefore = kernels.heap; // the loader's view of wasm memory
    for (const call of calls) assertSameBits(callOnce(call), call.expected, `before growth: dim=${call.dim}`);
    // Growth caused from outside the call sequence (as another function or a
    // zero-copy tensor would): every old view on wasm memory is detached.
    const bytesBefore = kernels.memory.buffer.byteLength;
    kernels.memory.grow(16);
    assert.equal(heapBefore.length, 0, 'the old view is detached by growth');
    for (const call of calls) assertSameBits(callOnce(call), call.expected, `after memory.grow: dim=${call.dim}`);
    // Growth caused by a call: a row larger than the scratch space so far.
    const dim = 2 ** 20;
    const big = normalArray(prng(82), dim, 1);
    assertSameBits(rmsNorm(big, null, { dim }), referenceRmsNorm(big, null, { dim }), `growing call dim=${dim} seed=82`);
    assert.ok(kernels.memory.buffer.byteLength > bytesBefore + 16 * 65536, 'memory grew');
    for (const call of calls) assertSameBits(callOnce(call), call.expected, `after the growing call: dim=${call.dim}`);
  });
}

test('independent instances in one process do not interfere', async () => {
  const instances = await Promise.all(['simd', 'simd', 'scalar'].map(async (b) => instantiate(await compileBackend(b))));
  assert.notEqual(instances[0].memory, instances[1].memory);
  const runOn = (kernels, { x, weight, dim, rows }) => {
    const y = new Float32Array(x.length);
    kernels.runRowsCopying('rmsNorm', x, weight, y, rows, dim,
      (xPtr, wPtr, yPtr, n, d) => kernels.exports.rmsnorm_f32(xPtr, wPtr, yPtr, n, d, Math.fround(1e-6)));
    return y;
  };
  const calls = makeCalls(83);
  // Interleave: each instance gets a different shape on every round, and one
  // of them grows its memory half-way; none may see another's data.
  for (let round = 0; round < 40; round++) {
    if (round === 20) {
      const sizes = instances.map((k) => k.memory.buffer.byteLength);
      instances[1].memory.grow(64);
      assert.deepEqual(instances.map((k) => k.memory.buffer.byteLength),
        [sizes[0], sizes[1] + 64 * 65536, sizes[2]], 'growing one instance grew only that one');
    }
    instances.forEach((kernels, k) => {
      const call = calls[(round + 3 * k) % calls.length];
      assertSameBits(runOn(kernels, call), call.expected, `instance ${k} round ${round}: rows=${call.rows} dim=${call.dim}`);
    });
  }
  // The package's own instance is another one again, and still exact.
  await init();
  for (const call of calls) assertSameBits(callOnce(call), call.expected, `package instance: dim=${call.dim}`);
});
