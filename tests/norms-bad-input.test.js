// Bad input to layerNorm, rmsNormBackward, layerNormBackward and rmsNorm's
// rstd option: a TypeError or RangeError that starts with the function's name
// and names the argument, thrown before anything is written, by the wasm API
// and the JS reference alike.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as wasm from '../src/index.js';
import * as reference from '../src/reference/index.js';

const SENTINEL = 12345.5;
const f32 = (n, v = 1) => new Float32Array(n).fill(v);

// [function, what, (impl, outputs) => call, error class, message pattern].
// `outputs` holds sentinel-filled arrays that a good call would write.
test('calling before init() throws a clear Error', () => {
  for (const call of [() => wasm.layerNorm(f32(4), f32(4), null),
    () => wasm.rmsNormBackward(f32(4), f32(4), f32(4)),
    () => wasm.layerNormBackward(f32(4), f32(4), null, f32(4))]) {
    assert.throws(call, { name: 'Error', message: /^(layerNorm|rmsNormBackward|layerNormBackward): call `await init\(\)`/ });
  }
});

function cases(freed) {
  const shared = new Float32Array(16);
  return [
    ['layerNorm', 'x is an Array', (m, o) => m.layerNorm([1, 2], null, null, { dim: 2, out: o.y }), TypeError, /x must be a Float32Array, got Array\(2\)/],
    ['layerNorm', 'weight undefined', (m, o) => m.layerNorm(f32(8), undefined, null, { out: o.y }), TypeError, /weight must be a Float32Array or null/],
    ['layerNorm', 'bias undefined', (m, o) => m.layerNorm(f32(8), f32(4), undefined, { out: o.y }), TypeError, /bias must be a Float32Array or null/],
    ['layerNorm', 'bias a Float64Array', (m, o) => m.layerNorm(f32(8), f32(4), new Float64Array(4), { out: o.y }), TypeError, /bias must be a Float32Array, got Float64Array/],
    ['layerNorm', 'no weight, bias nor dim', (m, o) => m.layerNorm(f32(8), null, null, { out: o.y }), TypeError, /options\.dim is required when weight and bias are null/],
    ['layerNorm', 'bias length', (m, o) => m.layerNorm(f32(8), f32(4), f32(3), { out: o.y }), RangeError, /bias\.length \(3\) must equal weight\.length \(4\)/],
    ['layerNorm', 'dim from bias', (m, o) => m.layerNorm(f32(6), null, f32(4), { out: o.y }), RangeError, /x\.length \(6\) must be a multiple of dim \(4\)/],
    ['layerNorm', 'shape vs bias', (m) => m.layerNorm(f32(24), null, f32(5), { shape: [2, 3, 4], axis: 1 }), RangeError, /bias\.length \(5\) must equal the product of the normalized dims of options\.shape \(12\)/],
    ['layerNorm', 'axis without shape', (m, o) => m.layerNorm(f32(8), f32(4), null, { axis: 0, out: o.y }), TypeError, /options\.axis needs options\.shape/],
    ['layerNorm', 'freed tensor', (m, o) => m.layerNorm(f32(8), freed, null, { out: o.y }), TypeError, /weight is a freed tensor/],
    ['layerNorm', 'eps negative', (m, o) => m.layerNorm(f32(8), f32(4), null, { eps: -1, out: o.y }), RangeError, /options\.eps must be a finite float32 >= 0/],
    ['layerNorm', 'unknown option', (m, o) => m.layerNorm(f32(8), f32(4), null, { epsilon: 1, out: o.y }), TypeError, /unknown option 'epsilon' \(allowed: eps, dim, shape, axis, out, mean, rstd\)/],
    ['layerNorm', 'rstd too short', (m, o) => m.layerNorm(f32(8), f32(4), null, { out: o.y, mean: o.mean, rstd: f32(1) }), RangeError, /options\.rstd\.length \(1\) must equal the number of rows \(2\)/],
    ['layerNorm', 'mean a Float64Array', (m, o) => m.layerNorm(f32(8), f32(4), null, { out: o.y, mean: new Float64Array(2) }), TypeError, /options\.mean must be a Float32Array/],
    ['layerNorm', 'mean overlaps x', (m, o) => m.layerNorm(shared.subarray(0, 8), f32(4), null, { out: o.y, mean: shared.subarray(7, 9) }), RangeError, /options\.mean must not overlap x/],
    ['layerNorm', 'out overlaps bias', (m, o) => m.layerNorm(shared.subarray(8, 16), null, shared.subarray(0, 8), { out: shared.subarray(4, 12), mean: o.mean }), RangeError, /options\.out must (be x itself or )?not overlap/],
    ['layerNorm', 'rstd overlaps mean', (m, o) => m.layerNorm(f32(8), f32(4), null, { out: o.y, mean: shared.subarray(0, 2), rstd: shared.subarray(1, 3) }), RangeError, /options\.rstd must not overlap options\.mean/],
    ['rmsNorm', 'rstd wrong length', (m, o) => m.rmsNorm(f32(8), f32(4), { out: o.y, rstd: f32(3) }), RangeError, /rmsNorm: options\.rstd\.length \(3\) must equal the number of rows \(2\)/],
    ['rmsNorm', 'rstd overlaps out', (m) => m.rmsNorm(f32(8), f32(4), { out: shared.subarray(0, 8), rstd: shared.subarray(6, 8) }), RangeError, /options\.rstd must not overlap options\.out/],
    ['rmsNormBackward', 'dy missing', (m, o) => m.rmsNormBackward(undefined, f32(8), f32(4), { dx: o.dx }), TypeError, /dy must be a Float32Array, got undefined/],
    ['rmsNormBackward', 'dy length', (m, o) => m.rmsNormBackward(f32(4), f32(8), f32(4), { dx: o.dx }), RangeError, /dy\.length \(4\) must equal x\.length \(8\)/],
    ['rmsNormBackward', 'x not a multiple', (m, o) => m.rmsNormBackward(f32(6), f32(6), f32(4), { dx: o.dx }), RangeError, /x\.length \(6\) must be a multiple of dim \(4\)/],
    ['rmsNormBackward', 'weight undefined', (m, o) => m.rmsNormBackward(f32(8), f32(8), undefined, { dx: o.dx }), TypeError, /weight must be a Float32Array or null/],
    ['rmsNormBackward', 'rstd length', (m, o) => m.rmsNormBackward(f32(8), f32(8), f32(4), { dx: o.dx, rstd: f32(3) }), RangeError, /options\.rstd\.length \(3\) must equal the number of rows \(2\)/],
    ['rmsNormBackward', 'rstd an Array', (m, o) => m.rmsNormBackward(f32(8), f32(8), f32(4), { dx: o.dx, rstd: [1, 1] }), TypeError, /options\.rstd must be a Float32Array, got Array\(2\)/],
    ['rmsNormBackward', 'dx overlaps x', (m) => m.rmsNormBackward(f32(8), shared.subarray(0, 8), f32(4), { dx: shared.subarray(4, 12) }), RangeError, /options\.dx must not overlap x/],
    ['rmsNormBackward', 'dx length', (m) => m.rmsNormBackward(f32(8), f32(8), f32(4), { dx: f32(4) }), RangeError, /options\.dx\.length \(4\) must equal x\.length \(8\)/],
    ['rmsNormBackward', 'unknown option', (m, o) => m.rmsNormBackward(f32(8), f32(8), f32(4), { dx: o.dx, mean: f32(2) }), TypeError, /unknown option 'mean' \(allowed: eps, dim, shape, axis, rstd, dx\)/],
    ['layerNormBackward', 'mean without rstd', (m, o) => m.layerNormBackward(f32(8), f32(8), f32(4), null, { dx: o.dx, mean: f32(2) }), TypeError, /options\.mean and options\.rstd must be given together/],
    ['layerNormBackward', 'bias length', (m, o) => m.layerNormBackward(f32(8), f32(8), f32(4), f32(2), { dx: o.dx }), RangeError, /bias\.length \(2\) must equal weight\.length \(4\)/],
    ['layerNormBackward', 'eps a string', (m, o) => m.layerNormBackward(f32(8), f32(8), f32(4), null, { dx: o.dx, eps: '1' }), TypeError, /options\.eps must be a number/],
    ['layerNormBackward', 'options null', (m) => m.layerNormBackward(f32(8), f32(8), f32(4), null, null), TypeError, /options must be an object, got null/],
    ['layerNormBackward', 'dx overlaps weight', (m) => m.layerNormBackward(f32(8), f32(8), shared.subarray(0, 4), null, { dx: shared.subarray(2, 10) }), RangeError, /options\.dx must not overlap weight/],
  ];
}

for (const [name, impl] of [['wasm', wasm], ['reference', reference]]) {
  test(`${name}: every bad argument is rejected by name, and nothing is written`, async () => {
    await wasm.init();
    const freed = wasm.alloc(4);
    freed.free();
    const rows = cases(freed);
    assert.ok(rows.length >= 25);
    for (const [fn, what, call, errorClass, pattern] of rows) {
      const outputs = { y: f32(8, SENTINEL), mean: f32(2, SENTINEL), dx: f32(8, SENTINEL) };
      assert.throws(() => call(impl, outputs), (err) => {
        assert.ok(err instanceof errorClass, `${fn} ${what}: expected ${errorClass.name}, got ${err.name}: ${err.message}`);
        assert.ok(err.message.startsWith(`${fn}: `), `${fn} ${what}: message ${err.message}`);
        assert.match(err.message, pattern, `${fn} ${what}`);
        return true;
      }, `${fn} ${what}`);
      for (const [key, a] of Object.entries(outputs)) {
        assert.ok(a.every((v) => v === SENTINEL), `${fn} ${what}: ${key} was written to`);
      }
    }
  });
}

test('zero rows: empty results, and dweight/dbias of zeros', async () => {
  await wasm.init();
  for (const impl of [wasm, reference]) {
    assert.equal(impl.layerNorm(new Float32Array(0), f32(3), null).length, 0);
    const { dx, dweight } = impl.rmsNormBackward(new Float32Array(0), new Float32Array(0), f32(3));
    assert.equal(dx.length, 0);
    assert.deepEqual(dweight, new Float32Array(3));
    const lb = impl.layerNormBackward(new Float32Array(0), new Float32Array(0), null, f32(3));
    assert.equal(lb.dweight, null);
    assert.deepEqual(lb.dbias, new Float32Array(3));
  }
});

test('a bound memory refuses the rstd option, before writing', async () => {
  const memory = new WebAssembly.Memory({ initial: 2 });
  const bound = await wasm.bindMemory(memory, { scratch: { byteOffset: 65536, byteLength: 65536 } });
  const x = new Float32Array(memory.buffer, 0, 8).fill(1);
  const out = new Float32Array(memory.buffer, 64, 8).fill(SENTINEL);
  assert.throws(() => bound.rmsNorm(x, null, { dim: 4, out, rstd: f32(2) }),
    { name: 'TypeError', message: /^rmsNorm: options\.rstd is not available on a bound memory/ });
  assert.ok(out.every((v) => v === SENTINEL));
});
