// bindMemory on a shared WebAssembly.Memory, as a threaded engine uses it:
// two worker threads, each with its own scratch region, normalize half the
// rows of one call each, at the same time, and give the one-thread bits.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as reference from '../src/reference/index.js';
import { assertSameBits } from './helpers/bits.js';
import { WASM_BACKENDS } from './helpers/implementations.js';
import { normalArray, prng, uniformArray } from './helpers/random.js';
import { sharedLayout, startThreads } from './helpers/shared-memory.js';

const ROWS = 512;
const DIM = 2048;

for (const backend of WASM_BACKENDS) {
  test(`${backend}: two threads on one shared memory give the one-thread bits, for rmsNorm and addRmsNorm (${ROWS}×${DIM})`, async () => {
    const layout = sharedLayout(ROWS, DIM, 2);
    const x = normalArray(prng(31), ROWS * DIM, 2);
    const residual = normalArray(prng(32), ROWS * DIM, 1);
    const weight = uniformArray(prng(33), DIM, 0.5, 1.5);
    layout.view('x').set(x);
    layout.view('residual').set(residual);
    layout.view('weight', DIM).set(weight);
    const threads = await startThreads(layout, 2, backend);
    try {
      const job = { dim: DIM, eps: 1e-5, ...layout.at };
      const replies = await threads.run({ ...job, op: 'rmsNorm' }, ROWS);
      assert.ok(replies.every((r) => r.shared), 'bound as a shared memory');
      assertSameBits(layout.view('out'), reference.rmsNorm(x, weight, { eps: 1e-5 }), `${backend} rmsNorm rows=${ROWS} dim=${DIM} seed=31`);
      await threads.run({ ...job, op: 'addRmsNorm' }, ROWS);
      const updated = Float32Array.from(x, (v, i) => Math.fround(v + residual[i]));
      assertSameBits(layout.view('residual'), updated, `${backend} addRmsNorm's residual`);
      assertSameBits(layout.view('out'), reference.rmsNorm(updated, weight, { eps: 1e-5 }), `${backend} addRmsNorm rows=${ROWS} dim=${DIM} seed=32`);
    } finally {
      await threads.stop();
    }
  });
}
