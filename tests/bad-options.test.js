// Bad input for the 16-bit, cast-mode, weight-offset and fused-residual
// options: a TypeError or RangeError naming the option, thrown before
// anything is written, by the wasm API and the JS reference alike.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as wasm from '../src/index.js';
import * as reference from '../src/reference/index.js';

const SENTINEL = 0x1234;
const u16 = (n) => new Uint16Array(n).fill(0x3f80); // bfloat16 1.0
const f32 = (n) => new Float32Array(n).fill(1);

function cases() {
  const shared = new Uint16Array(16);
  return [
    ['rmsNorm', 'unknown dtype', [f32(8), f32(4), { dtype: 'bf16' }], TypeError, /rmsNorm: options\.dtype must be 'float32' or 'bfloat16' or 'float16', got string "bf16"/],
    ['rmsNorm', 'float32 x for bfloat16', [f32(8), f32(4), { dtype: 'bfloat16' }], TypeError, /rmsNorm: x must be a Uint16Array \(bfloat16 bit patterns\) for dtype 'bfloat16', got Float32Array\(8\)/],
    ['rmsNorm', '16-bit x for float32', [u16(8), f32(4)], TypeError, /rmsNorm: x must be a Float32Array, got Uint16Array\(8\)/],
    ['rmsNorm', 'float32 out for float16', [u16(8), f32(4), { dtype: 'float16', out: f32(8) }], TypeError, /options\.out must be a Uint16Array \(float16 bit patterns\)/],
    ['rmsNorm', '16-bit weight for float32', [f32(8), u16(4)], TypeError, /rmsNorm: weight must be a Float32Array, got Uint16Array\(4\)/],
    ['rmsNorm', 'Float64Array weight for bfloat16', [u16(8), new Float64Array(4), { dtype: 'bfloat16' }], TypeError, /weight must be a Float32Array or a Uint16Array \(bfloat16 bit patterns\), got Float64Array/],
    ['rmsNorm', 'weightDtype of the other 16-bit kind', [u16(8), u16(4), { dtype: 'bfloat16', weightDtype: 'float16' }], TypeError, /options\.weightDtype must be 'float32' or 'bfloat16', got string "float16"/],
    ['rmsNorm', 'weightDtype not matching the array', [u16(8), f32(4), { dtype: 'bfloat16', weightDtype: 'bfloat16' }], TypeError, /weight must be a Uint16Array \(bfloat16 bit patterns\) for weightDtype 'bfloat16', got Float32Array/],
    ['rmsNorm', 'weightDtype without weight', [u16(8), null, { dtype: 'bfloat16', dim: 4, weightDtype: 'float32' }], TypeError, /options\.weightDtype needs a weight/],
    ['rmsNorm', 'unknown castMode', [u16(8), u16(4), { dtype: 'bfloat16', castMode: 'mistral' }], TypeError, /options\.castMode must be 'llama' or 'gemma', got string "mistral"/],
    ['rmsNorm', 'weightOffset NaN', [f32(8), f32(4), { weightOffset: NaN }], RangeError, /options\.weightOffset must be a finite float32, got NaN/],
    ['rmsNorm', 'weightOffset infinite', [f32(8), f32(4), { weightOffset: -Infinity }], RangeError, /options\.weightOffset must be a finite float32/],
    ['rmsNorm', 'weightOffset beyond float32', [f32(8), f32(4), { weightOffset: 1e39 }], RangeError, /options\.weightOffset must be a finite float32/],
    ['rmsNorm', 'weightOffset a string', [f32(8), f32(4), { weightOffset: '1' }], TypeError, /options\.weightOffset must be a number, got string/],
    ['rmsNorm', 'weightOffset without weight', [f32(8), null, { dim: 4, weightOffset: 1 }], TypeError, /options\.weightOffset needs a weight, but weight is null/],
    ['addRmsNorm', 'residual missing', [f32(8), undefined, f32(4)], TypeError, /addRmsNorm: residual must be an array of x's dtype, got undefined/],
    ['addRmsNorm', 'residual of another dtype', [f32(8), u16(8), f32(4)], TypeError, /addRmsNorm: residual must be a Float32Array, got Uint16Array/],
    ['addRmsNorm', 'residual too short', [f32(8), f32(4), f32(4)], RangeError, /addRmsNorm: residual\.length \(4\) must equal x\.length \(8\)/],
    ['addRmsNorm', 'residual overlapping x', [shared.subarray(0, 8), shared.subarray(4, 12), u16(4), { dtype: 'bfloat16' }], RangeError, /addRmsNorm: residual must not overlap x or weight/],
    ['addRmsNorm', 'out overlapping residual', [u16(8), shared.subarray(0, 8), u16(4), { dtype: 'bfloat16', out: shared.subarray(4, 12) }], RangeError, /addRmsNorm: options\.out must not overlap residual/],
  ];
}

for (const [name, impl] of [['wasm', wasm], ['reference', reference]]) {
  test(`${name}: bad dtype, castMode, weightOffset and residual arguments are rejected before any write`, async () => {
    await wasm.init();
    for (const [fn, what, args, errorClass, pattern] of cases()) {
      const fnArgs = fn === 'rmsNorm' ? [args[0], args[1], args[2]] : [args[0], args[1], args[2], args[3]];
      const optionsIndex = fnArgs.length - 1;
      const options = fnArgs[optionsIndex];
      const dtype = options?.dtype ?? 'float32';
      const out = dtype === 'float32' ? new Float32Array(8).fill(SENTINEL) : new Uint16Array(8).fill(SENTINEL);
      if (options === undefined || !('out' in options)) fnArgs[optionsIndex] = { ...options, out };
      const residual = fn === 'addRmsNorm' && ArrayBuffer.isView(args[1]) ? args[1] : null;
      const residualBefore = residual?.slice();
      assert.throws(() => impl[fn](...fnArgs), (err) => {
        assert.ok(err instanceof errorClass, `${what}: expected ${errorClass.name}, got ${err.name}: ${err.message}`);
        assert.match(err.message, pattern, what);
        return true;
      }, what);
      assert.ok(out.every((v) => v === SENTINEL), `${what}: the output was written to`);
      if (residual) assert.deepEqual(residual, residualBefore, `${what}: the residual was written to`);
    }
  });
}
