// Workers: compileModule() compiles once, init({ module }) instantiates that
// module in each worker_threads worker, and the workers compute concurrently
// the same bits as the main thread.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Worker } from 'node:worker_threads';
import { compileModule, createKernels, init, rmsNorm } from '../src/index.js';
import * as reference from '../src/reference/index.js';
import { assertSameBits } from './helpers/bits.js';
import { wasmImplementations } from './helpers/implementations.js';
import { normalArray, prng, uniformArray } from './helpers/random.js';

function runWorker(workerData) {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL('./helpers/rmsnorm-worker.js', import.meta.url), { workerData });
    worker.once('message', resolve);
    worker.once('error', reject);
  });
}

test('compileModule() returns one cached WebAssembly.Module per backend', async () => {
  const simd = await compileModule('simd');
  assert.ok(simd instanceof WebAssembly.Module);
  assert.equal(await compileModule('simd'), simd);
  assert.equal(await compileModule(), simd, "'auto' is SIMD on this engine");
  const scalar = await compileModule('scalar');
  assert.notEqual(scalar, simd);
});

test('two workers per backend compute concurrently the main thread\'s bits', async () => {
  const rows = 64;
  const dim = 4096;
  for (const { name: backend, rmsNorm } of await wasmImplementations()) {
    const module = await compileModule(backend);
    const seeds = [11, 12];
    const inputs = seeds.map((seed) => {
      const rand = prng(seed);
      return { x: normalArray(rand, rows * dim, 3), weight: uniformArray(rand, dim, 0.5, 1.5) };
    });
    const results = await Promise.all(inputs.map(({ x, weight }) => runWorker({ module, x, weight, repeats: 20 })));
    results.forEach(({ backend: workerBackend, y }, i) => {
      assert.equal(workerBackend, backend);
      const expected = rmsNorm(inputs[i].x, inputs[i].weight);
      assertSameBits(y, expected, `${backend} worker ${i}: rows=${rows} dim=${dim} seed=${seeds[i]}`);
    });
  }
});

test('init({ module }) takes the backend from the module, and checks both', async () => {
  const scalar = await compileModule('scalar');
  assert.deepEqual(await init({ module: scalar }), { backend: 'scalar' });
  assert.deepEqual(await init({ module: scalar, backend: 'scalar' }), { backend: 'scalar' });
  assert.deepEqual(await init({ module: await compileModule('simd'), backend: 'auto' }), { backend: 'simd' });
  await assert.rejects(init({ module: scalar, backend: 'simd' }), {
    name: 'RangeError', message: "init: options.backend is 'simd' but options.module is the 'scalar' module",
  });
});

test('init({ module }) and compileModule() reject bad arguments', async () => {
  // A valid module that is not ours: the 8-byte empty module.
  const foreign = new WebAssembly.Module(new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0]));
  const cases = [
    [() => init({ module: new Uint8Array(8) }), TypeError, /^init: options\.module must be a WebAssembly\.Module, got Uint8Array\(8\)$/],
    [() => init({ module: null }), TypeError, /^init: options\.module must be a WebAssembly\.Module, got null$/],
    [() => init({ module: {} }), TypeError, /^init: options\.module must be a WebAssembly\.Module, got Object$/],
    [() => init({ module: foreign }), TypeError, /^init: options\.module is not an rmsnorm-wasm module/],
    [() => init({ module: foreign, backend: 'simd' }), TypeError, /^init: options\.module is not an rmsnorm-wasm module/],
    [() => init({ modul: foreign }), TypeError, /^init: unknown option 'modul' \(allowed: backend, module\)$/],
    [() => compileModule('gpu'), TypeError, /^compileModule: backend must be 'auto', 'simd' or 'scalar', got string "gpu"$/],
    [() => compileModule(null), TypeError, /^compileModule: backend must be 'auto', 'simd' or 'scalar', got null$/],
  ];
  for (const [call, name, message] of cases) {
    await assert.rejects(call(), (err) => {
      assert.ok(err instanceof name, `${err.name}: ${err.message}`);
      assert.match(err.message, message);
      return true;
    });
  }
});

test('a module that only carries the backend section is refused, and init() still works after', async () => {
  // A valid module with nothing but the custom section naming a backend.
  const name = 'rmsnorm-wasm.backend';
  const payload = [...name].map((c) => c.charCodeAt(0)).concat([...'simd'].map((c) => c.charCodeAt(0)));
  const bytes = new Uint8Array([0, 0x61, 0x73, 0x6d, 1, 0, 0, 0, 0, 1 + payload.length, name.length, ...payload]);
  const impostor = await WebAssembly.compile(bytes);
  await assert.rejects(init({ module: impostor }), { name: 'TypeError', message: /^init: options\.module is not an rmsnorm-wasm module \(it lacks memory, rmsnorm/ });
  await assert.rejects(createKernels({ module: impostor }), { name: 'TypeError', message: /^createKernels: options\.module/ });
  const x = new Float32Array([2, -4, 6, -8]);
  const expected = reference.rmsNorm(x, null, { dim: 4 });
  assert.equal((await init({ backend: 'simd' })).backend, 'simd');
  assertSameBits(rmsNorm(x, null, { dim: 4 }), expected, 'after the impostor');
  assert.equal((await init({ module: await compileModule('scalar') })).backend, 'scalar');
  assertSameBits(rmsNorm(x, null, { dim: 4 }), expected, 'a genuine module');
});
