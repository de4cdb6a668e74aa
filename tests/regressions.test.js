// Inputs that the fuzzer or the property tests once found to break the
// contract, kept as fixed cases on every implementation (how each was found
// and fixed: the commit that added it).
import { test } from 'node:test';
import { init, rmsNorm, addRmsNorm } from '../src/index.js';
import { addRmsNorm as referenceAddRmsNorm, rmsNorm as referenceRmsNorm } from '../src/reference/index.js';
import { numberToBfloat16, numberToFloat16 } from '../src/reference/float16.js';
import { assertSameBitsAs } from './helpers/bits.js';

// A weight offset and a weight that are both finite can add up to +-Inf;
// where x is 0 the output is then 0 * Inf = NaN. The SIMD module's 16-bit
// writers assumed no NaN for finite weights and stored float16 -Inf instead
// (found by tests/fuzz/kernels_fuzz.c; seed tests/fuzz/corpus/regression-*).
test('a weight offset that overflows the weight to Inf gives NaN where x is 0, on every backend', async () => {
  const offset = -1.6612e38; // the fuzzer's 0xfefa0100
  for (const dtype of ['float16', 'bfloat16']) {
    const narrow = dtype === 'float16' ? numberToFloat16 : numberToBfloat16;
    for (const castMode of ['gemma', 'llama']) {
      for (const dim of [16, 257]) {
        const x = Uint16Array.from({ length: 2 * dim }, (_, i) => narrow(i % 3 === 0 ? 0 : (i % 7) - 3));
        const residual = Uint16Array.from({ length: 2 * dim }, (_, i) => narrow(i % 3 === 0 ? -0 : 0.5));
        const w = Float32Array.from({ length: dim }, (_, i) => (i % 2 === 0 ? -1.75e38 : 0.5));
        const options = { dtype, castMode, weightOffset: offset, weightDtype: 'float32' };
        const expected = referenceRmsNorm(x, w, options);
        const expectedResidual = residual.slice();
        const expectedAdd = referenceAddRmsNorm(x, expectedResidual, w, options);
        for (const backend of ['simd', 'scalar']) {
          await init({ backend });
          const what = `${backend} ${dtype} ${castMode} rows=2 dim=${dim}`;
          assertSameBitsAs(dtype, rmsNorm(x, w, options), expected, `rmsNorm ${what}`);
          const r = residual.slice();
          assertSameBitsAs(dtype, addRmsNorm(x, r, w, options), expectedAdd, `addRmsNorm ${what}`);
          assertSameBitsAs(dtype, r, expectedResidual, `addRmsNorm ${what}: residual`);
        }
      }
    }
  }
});
