// Wasm memory: grows for large inputs, stays bounded for huge batches,
// refuses what wasm32 cannot address, and does not leak across calls.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { init, rmsNorm } from '../src/index.js';
import { activeKernels } from '../src/api/runtime.js';
import { CHUNK_BYTES } from '../src/api/run.js';
import { rmsNorm as referenceRmsNorm } from '../src/reference/index.js';
import { assertSameBits } from './helpers/bits.js';
import { normalArray, prng, uniformArray } from './helpers/random.js';

const memoryBytes = () => activeKernels('test').memory.buffer.byteLength;

for (const backend of ['simd', 'scalar']) {
  test(`${backend}: 100 000 calls leave wasm memory unchanged after the first`, async () => {
    await init({ backend });
    const rand = prng(1);
    const shapes = [[1, 896], [3, 17], [2, 64], [1, 4096]];
    const inputs = shapes.map(([rows, dim]) => [normalArray(rand, rows * dim), uniformArray(rand, dim, 0.5, 1.5)]);
    for (const [x, w] of inputs) rmsNorm(x, w); // first calls: scratch sized here
    const after = memoryBytes();
    for (let i = 0; i < 100_000; i++) {
      const [x, w] = inputs[i % inputs.length];
      rmsNorm(x, w);
    }
    assert.equal(memoryBytes(), after);
  });

  test(`${backend}: a row far larger than wasm memory grows it, with exact results`, async () => {
    await init({ backend });
    const before = memoryBytes();
    const dim = 2 ** 23; // one 32 MiB row, bigger than the memory so far
    assert.ok(dim * 4 > before);
    const x = normalArray(prng(2), dim, 3);
    const y = rmsNorm(x, null, { dim });
    assert.ok(memoryBytes() > dim * 4, 'memory grew to hold the row');
    assertSameBits(y, referenceRmsNorm(x, null, { dim }), `rows=1 dim=${dim} seed=2`);
  });

  test(`${backend}: a large batch goes through in chunks, without growing memory to its size`, async () => {
    await init({ backend });
    const dim = 4096;
    const rows = 2048; // 32 MiB
    const rand = prng(3);
    const x = normalArray(rand, rows * dim, 2);
    const w = uniformArray(rand, dim, 0.5, 1.5);
    const before = memoryBytes();
    const y = rmsNorm(x, w);
    assert.ok(memoryBytes() <= Math.max(before, 2 * CHUNK_BYTES + 2 ** 20), 'memory stays near one chunk');
    const rows0 = y.subarray(0, 3 * dim);
    assertSameBits(rows0, referenceRmsNorm(x.subarray(0, 3 * dim), w), 'first rows');
    const last = y.subarray((rows - 2) * dim);
    assertSameBits(last, referenceRmsNorm(x.subarray((rows - 2) * dim), w), 'last rows');
  });

  test(`${backend}: a row beyond what wasm32 can address is a RangeError, and nothing breaks`, async () => {
    await init({ backend });
    const dim = 2 ** 30; // 4 GiB of float32: the whole wasm32 address space
    const x = new Float32Array(dim); // zero pages, never touched
    const before = memoryBytes();
    assert.throws(() => rmsNorm(x, null, { dim }), {
      name: 'RangeError', message: /rmsNorm: needs 4294967296 bytes of wasm memory, more than wasm32 can address/,
    });
    assert.equal(memoryBytes(), before);
    const small = new Float32Array([2, -4, 6, -8]);
    assertSameBits(rmsNorm(small, null, { dim: 4 }), referenceRmsNorm(small, null, { dim: 4 }), 'after the RangeError');
  });
}
