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

// options.out was read a second time for the return value: a getter ran twice.
test('options.out is read once, and the call returns the caller\'s own out (array or tensor)', async () => {
  const { alloc, layerNorm } = await import('../src/index.js');
  const reference = await import('../src/reference/index.js');
  await init();
  const t = alloc(4);
  for (const [name, call] of [
    ['rmsNorm', (f, o) => f.rmsNorm(new Float32Array([2, -4, 6, -8]), null, o)],
    ['layerNorm', (f, o) => f.layerNorm(new Float32Array([2, -4, 6, -8]), null, null, o)],
  ]) {
    for (const [what, api] of [['wasm', { rmsNorm, layerNorm }], ['reference', reference]]) {
      for (const out of [new Float32Array(4), t]) {
        let reads = 0;
        const options = { dim: 4, get out() { reads++; return out; } };
        const returned = call(api, options);
        if (reads !== 1) throw new Error(`${what} ${name}: options.out read ${reads} times`);
        if (returned !== out) throw new Error(`${what} ${name}: did not return the given out`);
      }
    }
  }
  t.free();
});

// A failed compile was cached, so init() could never succeed afterwards.
test('init() can be retried after the module failed to compile', async () => {
  const { execFileSync } = await import('node:child_process');
  const script = `
    // The package saves WebAssembly.compile when it loads: this one fails once.
    const compile = WebAssembly.compile;
    let calls = 0;
    WebAssembly.compile = (bytes) => (calls++ === 0 ? Promise.reject(new Error('simulated compile failure')) : compile(bytes));
    const { init } = await import(${JSON.stringify(new URL('../src/index.js', import.meta.url).href)});
    const first = await init().then(() => 'ok', (e) => e.message);
    const second = await init().then((r) => r.backend, (e) => e.message);
    console.log(JSON.stringify({ first, second }));
  `;
  const out = JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' }));
  if (out.first !== 'simulated compile failure' || out.second !== 'simd') {
    throw new Error(`unexpected: ${JSON.stringify(out)}`);
  }
});
