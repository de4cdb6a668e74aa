// Wasm memory: grows for large inputs, stays bounded for huge batches,
// refuses what wasm32 cannot address, and does not leak across calls.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createKernels } from '../src/index.js';
import { CHUNK_BYTES } from '../src/api/run.js';
import { rmsNorm as referenceRmsNorm } from '../src/reference/index.js';
import { assertSameBits } from './helpers/bits.js';
import { WASM_BACKENDS } from './helpers/implementations.js';
import { normalArray, prng, uniformArray } from './helpers/random.js';

/** A fresh instance of `backend`, and the size of its memory (seen through a tensor's view, which follows growth). */
async function instance(backend) {
  const kernels = await createKernels({ backend });
  const probe = kernels.alloc(1);
  return { ...kernels, memoryBytes: () => probe.array.buffer.byteLength };
}

for (const backend of WASM_BACKENDS) {
  test(`${backend}: 100 000 calls leave wasm memory unchanged after the first`, async () => {
    const { rmsNorm, memoryBytes } = await instance(backend);
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
    const { rmsNorm, memoryBytes } = await instance(backend);
    const before = memoryBytes();
    const dim = 2 ** 23; // one 32 MiB row, bigger than the memory so far
    assert.ok(dim * 4 > before);
    const x = normalArray(prng(2), dim, 3);
    const y = rmsNorm(x, null, { dim });
    assert.ok(memoryBytes() > dim * 4, 'memory grew to hold the row');
    assertSameBits(y, referenceRmsNorm(x, null, { dim }), `rows=1 dim=${dim} seed=2`);
  });

  test(`${backend}: a large batch goes through in chunks, without growing memory to its size`, async () => {
    const { rmsNorm, memoryBytes } = await instance(backend);
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
    const { rmsNorm, memoryBytes } = await instance(backend);
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

test('allocating until wasm memory runs out gives RangeErrors, never a block past the end', async () => {
  const k = await createKernels({ backend: 'scalar' });
  const rand = prng(7);
  const x = normalArray(rand, 3 * 16, 2);
  const w = uniformArray(rand, 16, 0.5, 1.5);
  const expected = referenceRmsNorm(x, w, { eps: 1e-5 });
  const values = 1 << 20; // 4 MiB tensors
  const tensors = [];
  let error;
  for (;;) {
    try {
      const t = k.alloc(values);
      assert.ok(t.byteOffset + 4 * values <= 2 ** 32, `a block ends at ${t.byteOffset + 4 * values}, past the address space`);
      t.array[0] = tensors.length;
      t.array[values - 1] = -tensors.length;
      tensors.push(t);
    } catch (err) {
      error = err;
      break;
    }
  }
  assert.ok(error instanceof RangeError, `expected a RangeError, got ${error}`);
  assert.match(error.message, /^alloc: /);
  assert.ok(tensors.length > 500, `only ${tensors.length} tensors of 4 MiB`);
  // Everything still works: a copying call takes scratch from what is left, or says it cannot.
  try {
    assertSameBits(k.rmsNorm(x, w, { eps: 1e-5 }), expected, 'a copying call after the allocator ran out');
  } catch (err) {
    assert.ok(err instanceof RangeError, `a copying call: ${err}`);
  }
  tensors.forEach((t, i) => assert.ok(t.array[0] === i && t.array[values - 1] === -i, `tensor ${i} intact`));
  for (const t of tensors.splice(0, 4)) t.free();
  assertSameBits(k.rmsNorm(x, w, { eps: 1e-5 }), expected, 'a copying call after some were freed');
  for (const t of tensors) t.free();
});
