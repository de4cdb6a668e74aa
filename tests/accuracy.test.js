// Accuracy against the float64 oracle, in float32 ulps of the exact answer,
// on the data: x ~ N(0, 9), w ~ U(0.5, 1.5), eps = 1e-6.
// Bounds: max <= 4 ulp, mean <= 0.6 ulp at every dim. (PyTorch 1.13 float32
// on CPU measures max 3.45, mean 0.57 on this data.)
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { wasmImplementations } from './helpers/implementations.js';
import { rmsNorm64, ulpErrors } from './helpers/oracle.js';
import { normalArray, prng, uniformArray } from './helpers/random.js';

const DIMS = [64, 100, 128, 256, 512, 896, 1000, 1024, 2048, 3584, 4095, 4096, 8192, 11008, 16384];
const ELEMENTS_PER_DIM = 2 ** 21; // enough rows that the mean is not at the mercy of a few
const MAX_ULP = 4;
const MEAN_ULP = 0.6;

for (const { name: backend, rmsNorm } of await wasmImplementations()) {
  test(`${backend}: max <= ${MAX_ULP} ulp and mean <= ${MEAN_ULP} ulp against float64`, async (t) => {
    const lines = [];
    for (const dim of DIMS) {
      const seed = 4242 + dim;
      const rand = prng(seed);
      const rows = Math.max(4, Math.floor(ELEMENTS_PER_DIM / dim));
      const x = normalArray(rand, rows * dim, 3);
      const w = uniformArray(rand, dim, 0.5, 1.5);
      const { max, mean } = ulpErrors(rmsNorm(x, w), rmsNorm64(x, w, dim, Math.fround(1e-6)));
      lines.push(`dim ${dim}: max ${max.toFixed(2)} ulp, mean ${mean.toFixed(3)} ulp`);
      assert.ok(max <= MAX_ULP, `rows=${rows} dim=${dim} seed=${seed}: max error ${max} ulp > ${MAX_ULP}`);
      assert.ok(mean <= MEAN_ULP, `rows=${rows} dim=${dim} seed=${seed}: mean error ${mean} ulp > ${MEAN_ULP}`);
    }
    t.diagnostic(lines.join('; '));
  });
}
