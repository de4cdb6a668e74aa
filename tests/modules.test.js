// The two WebAssembly modules and how init() chooses between them.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { alloc, init, rmsNorm } from '../src/index.js';
import * as reference from '../src/reference/index.js';
import { assertSameBits } from './helpers/bits.js';
import { moduleBytes } from '../src/loader/load.js';
import { WASM_BACKENDS } from './helpers/implementations.js';

function disassemble(backend) {
  const path = fileURLToPath(new URL(`../build/rmsnorm-${backend}.wasm`, import.meta.url));
  // wasm-dis comes with binaryen, which the Emscripten package installs.
  return execFileSync('wasm-dis', [path], { encoding: 'utf8', maxBuffer: 64 << 20 });
}

test('the scalar module has no SIMD instruction; the SIMD module is hand-vectorized', () => {
  assert.doesNotMatch(disassemble('scalar'), /v128|f32x4/);
  const simd = disassemble('simd');
  for (const op of ['v128.load', 'v128.store', 'f32x4.mul', 'f32x4.add', 'i8x16.shuffle']) {
    assert.match(simd, new RegExp(op.replace('.', '\\.')), `SIMD module uses ${op}`);
  }
});

test('the embedded modules are the built ones', () => {
  for (const backend of WASM_BACKENDS) {
    const built = readFileSync(new URL(`../build/rmsnorm-${backend}.wasm`, import.meta.url));
    assert.deepEqual(Buffer.from(moduleBytes(backend)), built, backend);
  }
});

test('init() picks SIMD where the engine has it, and is idempotent', async () => {
  assert.deepEqual(await init(), { backend: 'simd' });
  assert.deepEqual(await init(), { backend: 'simd' });
  assert.deepEqual(await init({ backend: 'scalar' }), { backend: 'scalar' });
  assert.deepEqual(await init({ backend: 'auto' }), { backend: 'simd' });
  const [a, b] = await Promise.all([init({ backend: 'scalar' }), init({ backend: 'scalar' })]);
  assert.deepEqual([a, b], [{ backend: 'scalar' }, { backend: 'scalar' }]);
});

test('on an engine without SIMD128, init() falls back to the scalar module', () => {
  // A child process whose WebAssembly.validate rejects everything, as an
  // engine without SIMD128 rejects the SIMD module.
  const script = `
    WebAssembly.validate = () => false;
    const { init, rmsNorm } = await import(${JSON.stringify(new URL('../src/index.js', import.meta.url).href)});
    const got = await init();
    const y = rmsNorm(new Float32Array([2, -4, 6, -8]), new Float32Array([1.5, 0.5, 1, 2]));
    let simdError = '';
    await init({ backend: 'simd' }).catch((e) => { simdError = e.message; });
    console.log(JSON.stringify({ got, y: Array.from(y, (v) => v.toFixed(2)), simdError }));
  `;
  const out = JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' }));
  assert.deepEqual(out.got, { backend: 'scalar' });
  assert.deepEqual(out.y, ['0.55', '-0.37', '1.10', '-2.92']);
  assert.match(out.simdError, /does not support WebAssembly SIMD128/);
});

test('of overlapping init() calls, the one asked for last wins', async () => {
  await init({ backend: 'simd' });
  const first = init({ backend: 'scalar' });
  const second = init({ backend: 'simd' });
  const third = init({ backend: 'scalar' });
  await third;
  const t = alloc(4);
  await Promise.all([first, second]);
  t.array.set([2, -4, 6, -8]);
  // Still the instance the tensor came from: not "foreign".
  assertSameBits(rmsNorm(t, null, { dim: 4 }), reference.rmsNorm(t.array, null, { dim: 4 }), 'the tensor allocated after the last call');
  t.free();
});
