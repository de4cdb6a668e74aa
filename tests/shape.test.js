// Multi-axis normalization: { shape, axis } normalizes over dims axis..rank-1,
// as ONNX RMSNormalization (axis) and PyTorch (normalized_shape) define it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { assertAllAgree, implementations, onEvery } from './helpers/implementations.js';
import { assertSameBits } from './helpers/bits.js';
import { normalArray, prng, uniformArray } from './helpers/random.js';

test('shape/axis equals the flat rows × dim call, on every backend', async () => {
  const shape = [2, 3, 4, 5];
  const x = normalArray(prng(1), 120, 2);
  for (const [axis, dim] of [[-1, 5], [3, 5], [-2, 20], [2, 20], [1, 60], [-3, 60], [0, 120], [-4, 120]]) {
    const w = uniformArray(prng(axis + 10), dim, 0.5, 1.5);
    const results = await onEvery(({ rmsNorm }) => {
      const viaShape = rmsNorm(x, w, { shape, axis });
      assertSameBits(viaShape, rmsNorm(x, w, { dim }), `shape=[${shape}] axis=${axis} vs dim=${dim}`);
      return viaShape;
    });
    assertAllAgree(results, `shape=[${shape}] axis=${axis} seed=1`);
  }
});

test('axis defaults to -1; a weightless call takes dim from the shape', async () => {
  const x = normalArray(prng(2), 24, 1);
  const results = await onEvery(({ name, rmsNorm }) => {
    assertSameBits(rmsNorm(x, null, { shape: [4, 6] }), rmsNorm(x, null, { dim: 6 }), `${name}: default axis`);
    return [rmsNorm(x, null, { shape: [2, 3, 4], axis: 1 }), rmsNorm(x, null, { dim: 12 })];
  });
  assertAllAgree(results, 'shape=[2,3,4] axis=1 and dim=12 seed=2');
  assertSameBits(results.reference[0], results.reference[1], 'axis 1 vs dim 12');
});

test('a zero-sized leading dim gives an empty result', async () => {
  for (const { name, rmsNorm } of await implementations()) {
    const y = rmsNorm(new Float32Array(0), new Float32Array(4), { shape: [0, 3, 4] });
    assert.equal(y.length, 0, name);
  }
});

test('inconsistent shape and axis are rejected by name', async () => {
  const x = new Float32Array(24);
  const w4 = new Float32Array(4);
  for (const { rmsNorm: impl } of await implementations()) {
    assert.throws(() => impl(x, w4, { shape: [5, 4] }), { name: 'RangeError', message: /rmsNorm: options\.shape \[5,4\] holds 20 values, but x\.length is 24/ });
    assert.throws(() => impl(x, w4, { shape: [6, 4], axis: 2 }), { name: 'RangeError', message: /options\.axis must be an integer in \[-2, 1\] for a shape of rank 2, got number 2/ });
    assert.throws(() => impl(x, w4, { shape: [6, 4], axis: -3 }), { name: 'RangeError', message: /options\.axis must be an integer/ });
    assert.throws(() => impl(x, w4, { shape: [6, 4], axis: 0.5 }), { name: 'RangeError', message: /options\.axis must be an integer/ });
    assert.throws(() => impl(x, w4, { shape: [2, 3, 4], axis: 1 }), { name: 'RangeError', message: /weight\.length \(4\) must equal the product of the normalized dims of options\.shape \(12\)/ });
    assert.throws(() => impl(x, w4, { shape: [6, 4], dim: 4 }), { name: 'TypeError', message: /give options\.dim or options\.shape, not both/ });
    assert.throws(() => impl(x, w4, { axis: -1 }), { name: 'TypeError', message: /options\.axis needs options\.shape/ });
    assert.throws(() => impl(x, w4, { shape: '6,4' }), { name: 'TypeError', message: /options\.shape must be an array of dims, got string "6,4"/ });
    assert.throws(() => impl(x, w4, { shape: [6, -4] }), { name: 'RangeError', message: /options\.shape\[1\] must be a non-negative integer, got -4/ });
    assert.throws(() => impl(x, w4, { shape: [] }), { name: 'RangeError', message: /options\.shape must hold at least one dim/ });
    assert.throws(() => impl(new Float32Array(0), null, { shape: [3, 0] }), { name: 'RangeError', message: /normalized dims of options\.shape \[3,0\] must not be empty/ });
  }
});

test('zero rows return an empty array (and dweight/dbias of zeros), whatever the dim', async () => {
  const ones = (n) => new Float32Array(n).fill(1);
  for (const impl of await implementations()) {
    const y = impl.rmsNorm(new Float32Array(0), ones(4));
    assert.ok(y instanceof Float32Array && y.length === 0, impl.name);
    const given = new Float32Array(0);
    assert.equal(impl.rmsNorm(new Float32Array(0), null, { dim: 3, out: given }), given);
    assert.equal(impl.layerNorm(new Float32Array(0), ones(3), null).length, 0);
    const { dx, dweight } = impl.rmsNormBackward(new Float32Array(0), new Float32Array(0), ones(3));
    assert.equal(dx.length, 0);
    assert.deepEqual(dweight, new Float32Array(3));
    const lb = impl.layerNormBackward(new Float32Array(0), new Float32Array(0), null, ones(3));
    assert.equal(lb.dweight, null);
    assert.deepEqual(lb.dbias, new Float32Array(3));
    // A dim beyond what wasm32 could address is no obstacle when there are no rows.
    assert.equal(impl.rmsNorm(new Float32Array(0), null, { shape: [0, 2 ** 32] }).length, 0, impl.name);
    assert.equal(impl.layerNorm(new Float32Array(0), null, null, { shape: [0, 2 ** 32] }).length, 0, impl.name);
  }
});
