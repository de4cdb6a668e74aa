// 16-bit NaN outputs are one fixed pattern per format, bfloat16 0x7FC0 and
// float16 0x7E00 (src/kernels/float16.h), on the SIMD module, the scalar
// module and the reference alike, whatever sign and payload the NaN had: so
// 16-bit results are bit-identical everywhere, NaNs included. (float32 NaNs
// keep the engine's sign and payload: WebAssembly leaves them open.)
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { numberToBfloat16, numberToFloat16 } from '../src/reference/float16.js';
import { onEvery } from './helpers/implementations.js';

const NAN = { bfloat16: 0x7fc0, float16: 0x7e00 };
const PATTERNS = {
  // +NaN, -NaN, a signalling payload, +Inf, 1, 2 (for building rows)
  bfloat16: { nan: 0x7fc0, negNan: 0xffc0, payload: 0x7f81, inf: 0x7f80, one: 0x3f80, two: 0x4000 },
  float16: { nan: 0x7e00, negNan: 0xfe00, payload: 0x7c01, inf: 0x7c00, one: 0x3c00, two: 0x4000 },
};
const hex = (v) => `0x${v.toString(16).padStart(4, '0')}`;

/** Rows of dim 40 (vector steps, a 4-value step and a tail): row 0 holds a
 * NaN of `kind`, row 1 an Inf (NaN at its position: Inf * 0 in float32, made
 * with the engine's sign), row 2 is finite. */
function rowsWith(dtype, kind) {
  const p = PATTERNS[dtype];
  const dim = 40;
  const x = new Uint16Array(3 * dim).map((_, i) => (i % 3 ? p.one : p.two));
  x[17] = p[kind];
  x[dim + 5] = p.inf;
  return { x, dim };
}

function assertNaNsFixed(y, dtype, what) {
  const infinity = dtype === 'bfloat16' ? 0x7f80 : 0x7c00;
  let nans = 0;
  y.forEach((v, i) => {
    if ((v & infinity) === infinity && (v & 0x7fff) !== infinity) {
      nans++;
      assert.equal(v, NAN[dtype], `${what}: NaN at ${i} is ${hex(v)}, not ${hex(NAN[dtype])}`);
    }
  });
  assert.ok(nans > 0, `${what}: the case makes NaNs`);
}

test('the reference narrows every NaN to the fixed pattern', () => {
  for (const v of [NaN, -NaN, new Float32Array(new Uint32Array([0xffc00001]).buffer)[0]]) {
    assert.equal(numberToBfloat16(v), 0x7fc0);
    assert.equal(numberToFloat16(v), 0x7e00);
  }
});

for (const dtype of ['bfloat16', 'float16']) {
  test(`${dtype}: NaN outputs are ${hex(NAN[dtype])} on every backend`, async () => {
    const p = PATTERNS[dtype];
    for (const kind of ['nan', 'negNan', 'payload']) {
      const { x, dim } = rowsWith(dtype, kind);
      const weight = new Uint16Array(dim).fill(p.one);
      const nanWeight = weight.slice();
      nanWeight[3] = p.negNan;
      for (const castMode of ['llama', 'gemma']) {
        const cases = {
          'no weight': ({ rmsNorm }) => rmsNorm(x, null, { dtype, dim, castMode }),
          weighted: ({ rmsNorm }) => rmsNorm(x, weight, { dtype, castMode }),
          'NaN in the weight': ({ rmsNorm }) => rmsNorm(x, nanWeight, { dtype, castMode }),
          'weight offset': ({ rmsNorm }) => rmsNorm(x, weight, { dtype, castMode, weightOffset: 1 }),
        };
        for (const [name, call] of Object.entries(cases)) {
          const results = await onEvery(call);
          for (const [backend, y] of Object.entries(results)) {
            assertNaNsFixed(y, dtype, `${dtype} ${kind} ${castMode} ${name} ${backend}`);
          }
        }
      }
      // The fused add stores NaN sums to the residual: the fixed pattern too.
      const results = await onEvery(({ addRmsNorm }) => {
        const residual = new Uint16Array(x.length).fill(p.one);
        residual[2] = p.negNan;
        const y = addRmsNorm(x, residual, weight, { dtype });
        return { y, residual };
      });
      for (const [backend, { y, residual }] of Object.entries(results)) {
        assertNaNsFixed(y, dtype, `${dtype} ${kind} addRmsNorm y ${backend}`);
        assertNaNsFixed(residual, dtype, `${dtype} ${kind} addRmsNorm residual ${backend}`);
      }
    }
  });
}
