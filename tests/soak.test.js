// Memory soak: a million calls of mixed shapes, options and backends must
// not grow wasm memory after warm-up nor the JS heap; memory growth in the
// middle of a sequence keeps every result exact; independent instances in
// one process do not interfere. The figures are printed as diagnostics.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import v8 from 'node:v8';
import vm from 'node:vm';
import {
  addRmsNorm, alloc, bindMemory, init, layerNorm, layerNormBackward, rmsNorm, rmsNormBackward,
} from '../src/index.js';
import { activeKernels } from '../src/api/runtime.js';
import { compileBackend, instantiate } from '../src/loader/load.js';
import { kernelFunctions } from '../src/api/functions.js';
import {
  addRmsNorm as referenceAddRmsNorm, layerNorm as referenceLayerNorm, layerNormBackward as referenceLayerNormBackward,
  rmsNorm as referenceRmsNorm, rmsNormBackward as referenceRmsNormBackward,
} from '../src/reference/index.js';
import { numberToBfloat16, numberToFloat16 } from '../src/reference/float16.js';
import { assertSameBits, assertSameBitsAs } from './helpers/bits.js';
import { WASM_BACKENDS } from './helpers/implementations.js';
import { normalArray, prng, uniformArray } from './helpers/random.js';

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc');
const MiB = 2 ** 20;
const mib = (bytes) => `${(bytes / MiB).toFixed(2)} MiB`;

// The heap after full collections, each given a turn of the event loop:
// V8 sweeps concurrently, and on a loaded machine (CI runs two test files
// at once on two cores) pages not yet swept after one gc() counted as used.
async function settledHeap() {
  for (let i = 0; i < 3; i++) {
    gc();
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const { heapUsed, external, arrayBuffers } = process.memoryUsage();
  return { heapUsed, external, arrayBuffers };
}

// Mixed calls: shapes with tails, lanes, blocks and a model's hidden size;
// float32, bfloat16 and float16 storage, both cast modes, a weight offset,
// the fused residual add, and zero-copy tensors. Each call knows its
// expected bits (from the reference, computed once) and checks itself.
const sameBits = (a, b, what, dtype = 'float32') => assertSameBitsAs(dtype, a, b, what);
const toBf16 = (v) => numberToBfloat16(v);
const toF16 = (v) => numberToFloat16(v);

function makeCalls(seed) {
  const rand = prng(seed);
  const calls = [];
  const float32 = (rows, dim, weighted, output) => {
    const x = normalArray(rand, rows * dim, 2);
    const weight = weighted ? uniformArray(rand, dim, 0.5, 1.5) : null;
    const out = new Float32Array(x.length);
    calls.push({
      what: `float32 rows=${rows} dim=${dim} ${output}`,
      expected: referenceRmsNorm(x, weight, { dim }),
      run: () => {
        if (output === 'new') return rmsNorm(x, weight, { dim });
        if (output === 'out') return rmsNorm(x, weight, { dim, out });
        out.set(x); // in place on a copy, so x stays the input for the next round
        return rmsNorm(out, weight, { dim, out });
      },
    });
  };
  const sixteen = (rows, dim, options, weightKind) => {
    const narrow = options.dtype === 'bfloat16' ? toBf16 : toF16;
    const x = Uint16Array.from(normalArray(rand, rows * dim, 2), narrow);
    const w = uniformArray(rand, dim, 0.5, 1.5);
    const weight = weightKind === 'none' ? null : weightKind === 'float32' ? w : Uint16Array.from(w, narrow);
    const opts = { dim, ...options };
    calls.push({
      dtype: options.dtype,
      what: `${options.dtype} rows=${rows} dim=${dim} ${JSON.stringify(options)} weight ${weightKind}`,
      expected: referenceRmsNorm(x, weight, opts),
      run: () => rmsNorm(x, weight, opts),
    });
  };
  const fusedAdd = (rows, dim, dtype) => {
    const narrow = dtype === 'float32' ? (v) => v : dtype === 'bfloat16' ? toBf16 : toF16;
    const Array = dtype === 'float32' ? Float32Array : Uint16Array;
    const x = Array.from(normalArray(rand, rows * dim, 1), narrow);
    const residual0 = Array.from(normalArray(rand, rows * dim, 1), narrow);
    const weight = uniformArray(rand, dim, 0.5, 1.5);
    const residual = residual0.slice();
    const refResidual = residual0.slice();
    const y = referenceAddRmsNorm(x, refResidual, weight, { dtype, weightDtype: 'float32' });
    calls.push({
      dtype,
      what: `addRmsNorm ${dtype} rows=${rows} dim=${dim}`,
      expected: y,
      run: () => {
        residual.set(residual0);
        const out = addRmsNorm(x, residual, weight, { dtype, weightDtype: 'float32' });
        sameBits(residual, refResidual, `addRmsNorm ${dtype} rows=${rows} dim=${dim}: the updated residual`, dtype);
        return out;
      },
    });
  };
  const norms = (rows, dim) => {
    const x = normalArray(rand, rows * dim, 2);
    const dy = normalArray(rand, rows * dim, 1);
    const w = uniformArray(rand, dim, 0.5, 1.5);
    const b = uniformArray(rand, dim, -0.5, 0.5);
    const out = new Float32Array(x.length);
    const mean = new Float32Array(rows);
    const rstd = new Float32Array(rows);
    const refLayer = referenceLayerNorm(x, w, b, { mean: mean.slice(), rstd: rstd.slice() });
    const refRms = referenceRmsNormBackward(dy, x, w);
    const refLayerBack = referenceLayerNormBackward(dy, x, w, b);
    calls.push({
      what: `layerNorm rows=${rows} dim=${dim}`, expected: refLayer,
      run: () => layerNorm(x, w, b, { out, mean, rstd }),
    }, {
      what: `rmsNormBackward rows=${rows} dim=${dim}`, expected: refRms.dx,
      run: () => {
        const { dx, dweight } = rmsNormBackward(dy, x, w);
        assertSameBits(dweight, refRms.dweight, `rmsNormBackward rows=${rows} dim=${dim}: dweight`);
        return dx;
      },
    }, {
      what: `layerNormBackward rows=${rows} dim=${dim}`, expected: refLayerBack.dx,
      run: () => {
        const { dx, dweight, dbias } = layerNormBackward(dy, x, w, b);
        assertSameBits(dweight, refLayerBack.dweight, `layerNormBackward rows=${rows} dim=${dim}: dweight`);
        assertSameBits(dbias, refLayerBack.dbias, `layerNormBackward rows=${rows} dim=${dim}: dbias`);
        return dx;
      },
    });
  };
  float32(1, 1, true, 'new');
  float32(3, 17, true, 'out');
  float32(2, 64, false, 'in place');
  float32(1, 896, true, 'out');
  float32(4, 37, true, 'new');
  float32(8, 16, true, 'in place');
  float32(1, 2048, true, 'out');
  sixteen(2, 96, { dtype: 'bfloat16', castMode: 'llama' }, 'bfloat16');
  sixteen(1, 300, { dtype: 'bfloat16', castMode: 'gemma', weightOffset: 1 }, 'float32');
  sixteen(3, 33, { dtype: 'float16', castMode: 'llama' }, 'float16');
  sixteen(1, 128, { dtype: 'float16' }, 'none');
  fusedAdd(2, 80, 'float32');
  fusedAdd(1, 257, 'bfloat16');
  norms(2, 300);
  norms(1, 17);
  return calls;
}

/** A call on an engine's memory through bindMemory: views in, view out. */
function boundCall(seed, bound) {
  const rand = prng(seed);
  const dim = 320;
  const x0 = normalArray(rand, 3 * dim, 2);
  const w0 = uniformArray(rand, dim, 0.5, 1.5);
  const x = new Float32Array(bound.memory.buffer, 0x8000, x0.length);
  const w = new Float32Array(bound.memory.buffer, 0x10000, dim);
  const out = new Float32Array(bound.memory.buffer, 0x18000, x0.length);
  x.set(x0);
  w.set(w0);
  return {
    what: `bindMemory rows=3 dim=${dim}`,
    expected: referenceRmsNorm(x0, w0),
    run: () => bound.rmsNorm(x, w, { out }),
  };
}

/** A zero-copy call on tensors: alloc'd per call (and freed) or kept. */
function tensorCall(seed, churn) {
  const rand = prng(seed);
  const dim = 200;
  const x0 = normalArray(rand, 2 * dim, 2);
  const w0 = uniformArray(rand, dim, 0.5, 1.5);
  const expected = referenceRmsNorm(x0, w0);
  let kept = null;
  return {
    what: `tensors rows=2 dim=${dim} ${churn ? 'alloc and free every call' : 'kept'}`,
    expected,
    run: () => {
      const tensors = kept ?? [alloc(x0.length), alloc(dim), alloc(x0.length)];
      const [tx, tw, ty] = tensors;
      if (kept === null) {
        tx.array.set(x0);
        tw.array.set(w0);
      }
      rmsNorm(tx, tw, { out: ty });
      const y = ty.array.slice();
      if (churn) tensors.forEach((t) => t.free());
      else kept = tensors;
      return y;
    },
  };
}

const CALLS = 1_000_000;
// Late enough that V8 has optimized the calls' paths (their code and
// feedback are heap too): at 20,000 calls the baseline swung by 0.5 MiB.
const WARM_UP = 100_000;
const CHECK_EVERY = 50_003; // a prime, so every shape and backend gets checked

test(`${CALLS} mixed calls: wasm memory and the JS heap stay flat after warm-up`, async (t) => {
  const backends = WASM_BACKENDS;
  const memoryOf = {};
  const callsOf = {};
  for (const [k, backend] of backends.entries()) {
    await init({ backend });
    memoryOf[backend] = activeKernels('soak').memory;
    // Tensors belong to one instance: each backend gets its own.
    const bound = await bindMemory(new WebAssembly.Memory({ initial: 8 }), { scratch: { byteOffset: 0x1000, byteLength: 0x2000 }, backend });
    memoryOf[`${backend} bound`] = bound.memory;
    callsOf[backend] = [...makeCalls(80), tensorCall(90 + k, true), tensorCall(92 + k, false), boundCall(94 + k, bound)];
  }
  const memories = Object.keys(memoryOf);
  const wasmBytes = () => memories.map((m) => memoryOf[m].buffer.byteLength);
  let afterWarmUp = null;
  let heapAfterWarmUp = null;
  const started = performance.now();
  let backend;
  for (let i = 0; i < CALLS; i++) {
    // Switch backends in runs of 1000 calls: init() after the first time
    // only switches, and both instances are exercised all along.
    if (i % 1000 === 0) {
      backend = backends[(i / 1000) % 2];
      await init({ backend });
    }
    const calls = callsOf[backend];
    const call = calls[i % calls.length];
    const y = call.run();
    if (i % CHECK_EVERY === 0) sameBits(y, call.expected, `call ${i} on ${backend}: ${call.what} seed=80`, call.dtype);
    if (i === WARM_UP) {
      afterWarmUp = wasmBytes();
      heapAfterWarmUp = await settledHeap();
    }
  }
  const seconds = (performance.now() - started) / 1000;
  const end = wasmBytes();
  const heapEnd = await settledHeap();
  t.diagnostic(`${CALLS} calls in ${seconds.toFixed(1)} s; wasm memory (${memories.join(', ')}) after ${WARM_UP} calls: `
    + `${afterWarmUp.map(mib).join(', ')}; at the end: ${end.map(mib).join(', ')}`);
  t.diagnostic(`JS heapUsed after warm-up ${mib(heapAfterWarmUp.heapUsed)}, at the end ${mib(heapEnd.heapUsed)}; `
    + `external ${mib(heapAfterWarmUp.external)} -> ${mib(heapEnd.external)}; `
    + `arrayBuffers ${mib(heapAfterWarmUp.arrayBuffers)} -> ${mib(heapEnd.arrayBuffers)}`);
  assert.deepEqual(end, afterWarmUp, 'wasm memory grew after warm-up');
  // Flat: a leak of even 2 bytes per call would show as 1.8 MB here.
  assert.ok(heapEnd.heapUsed - heapAfterWarmUp.heapUsed < 1 * MiB, 'the JS heap grew');
  assert.ok(heapEnd.external - heapAfterWarmUp.external < 1 * MiB, 'external memory grew');
  for (const b of backends) {
    await init({ backend: b });
    for (const call of callsOf[b]) sameBits(call.run(), call.expected, `last call on ${b}: ${call.what}`, call.dtype);
  }
});

for (const backend of WASM_BACKENDS) {
  test(`${backend}: memory growth in the middle of a sequence, with live views and tensors, keeps every result exact`, async () => {
    await init({ backend });
    const kernels = activeKernels('soak');
    const calls = makeCalls(81);
    // Live tensors in wasm memory, used zero-copy across every growth below.
    const tdim = 896;
    const tx0 = normalArray(prng(84), 2 * tdim, 2);
    const tw0 = uniformArray(prng(85), tdim, 0.5, 1.5);
    const te = referenceRmsNorm(tx0, tw0);
    const tx = alloc(tx0.length);
    const tw = alloc(tw0.length);
    const ty = alloc(tx0.length);
    tx.array.set(tx0);
    tw.array.set(tw0);
    const checkAll = (when) => {
      for (const call of calls) sameBits(call.run(), call.expected, `${when}: ${call.what}`, call.dtype);
      assert.equal(rmsNorm(tx, tw, { out: ty }), ty);
      assertSameBits(ty.array, te, `${when}: tensors dim=${tdim}`);
      assertSameBits(rmsNorm(tx.array, tw.array), te, `${when}: tensor views`);
    };
    checkAll('before growth');
    const heapBefore = kernels.views().float32; // the loader's view of wasm memory
    const staleView = tx.array;
    // Growth caused from outside the call sequence (as an alloc() would):
    // every old view on wasm memory is detached, tensors refresh theirs.
    const bytesBefore = kernels.memory.buffer.byteLength;
    kernels.memory.grow(16);
    assert.equal(heapBefore.length, 0, 'the old view is detached by growth');
    checkAll('after memory.grow');
    // A view kept across the growth is detached: a clear error, not an empty result.
    assert.throws(() => rmsNorm(staleView, tw), { name: 'TypeError', message: /^rmsNorm: x is a view of a detached ArrayBuffer/ });
    // Growth caused by a call: a row larger than the scratch space so far.
    const dim = 2 ** 20;
    const big = normalArray(prng(82), dim, 1);
    assertSameBits(rmsNorm(big, null, { dim }), referenceRmsNorm(big, null, { dim }), `growing call dim=${dim} seed=82`);
    assert.ok(kernels.memory.buffer.byteLength > bytesBefore + 16 * 65536, 'memory grew');
    checkAll('after the growing call');
    for (const t of [tx, tw, ty]) t.free();
  });
}

test('independent instances in one process do not interfere', async () => {
  const instances = await Promise.all(['simd', 'simd', 'scalar'].map(async (b) => instantiate(await compileBackend(b))));
  assert.notEqual(instances[0].memory, instances[1].memory);
  // What rmsNorm does, on a given instance instead of the active one.
  const runOn = (kernels, { x, weight, dim }) => kernelFunctions(() => kernels).rmsNorm(x, weight, { dim });
  const rand = prng(83);
  const calls = [[1, 7], [3, 64], [2, 300], [1, 2048]].map(([rows, dim]) => {
    const x = normalArray(rand, rows * dim, 2);
    const weight = uniformArray(rand, dim, 0.5, 1.5);
    return { rows, dim, x, weight, expected: referenceRmsNorm(x, weight) };
  });
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
  for (const call of calls) assertSameBits(rmsNorm(call.x, call.weight), call.expected, `package instance: dim=${call.dim}`);
});
