// The reference's bfloat16/float16 conversions, checked exhaustively against
// the formats' definitions: every pattern round-trips, and every midpoint
// between neighbours rounds to the even one. (The kernels' conversions are
// then checked against the reference, bit for bit, in dtypes.test.js.)
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  bfloat16ToNumber, float16ToNumber, numberToBfloat16, numberToFloat16,
} from '../src/reference/float16.js';

const FORMATS = [
  { name: 'bfloat16', toNumber: bfloat16ToNumber, fromNumber: numberToBfloat16, infinity: 0x7f80 },
  { name: 'float16', toNumber: float16ToNumber, fromNumber: numberToFloat16, infinity: 0x7c00 },
];

const hex = (b) => `0x${b.toString(16).padStart(4, '0')}`;

for (const { name, toNumber, fromNumber, infinity } of FORMATS) {
  test(`${name}: every bit pattern round-trips through float32`, () => {
    for (let bits = 0; bits < 0x10000; bits++) {
      const v = toNumber(bits);
      assert.equal(Math.fround(v), v, `${name} ${hex(bits)} is not a float32 value`);
      const back = fromNumber(v);
      // A NaN comes back as a NaN pattern (JS numbers do not carry a NaN's sign or payload).
      const ok = Number.isNaN(v) ? (back & infinity) === infinity && (back & ~0x8000) !== infinity : back === bits;
      if (!ok) assert.fail(`${name} ${hex(bits)} -> ${v} -> ${hex(back)}`);
    }
  });

  test(`${name}: midpoints round to even, and just past them to the nearer value`, () => {
    for (let bits = 0; bits < infinity; bits++) {
      const lo = toNumber(bits);
      const hi = bits + 1 === infinity ? 2 * toNumber(bits) - toNumber(bits - 1) : toNumber(bits + 1);
      const mid = (lo + hi) / 2;
      if (Math.fround(mid) !== mid) continue; // midpoint not a float32: no tie to test here
      const even = bits % 2 === 0 ? bits : bits + 1;
      for (const sign of [1, -1]) {
        const s = sign < 0 ? 0x8000 : 0;
        assert.equal(fromNumber(sign * mid), s | even, `${name} tie between ${hex(bits)} and ${hex(bits + 1)}`);
        const below = sign * Math.fround(mid - (mid - lo) / 4);
        const above = sign * Math.fround(mid + (hi - mid) / 4);
        assert.equal(fromNumber(below), s | bits, `${name} just below the midpoint above ${hex(bits)}`);
        assert.equal(fromNumber(above), s | (bits + 1), `${name} just above the midpoint above ${hex(bits)}`);
      }
    }
  });

  test(`${name}: overflow goes to infinity, NaN stays NaN`, () => {
    assert.equal(fromNumber(3.4e38), infinity);
    assert.equal(fromNumber(-Infinity), 0x8000 | infinity);
    assert.ok(Number.isNaN(toNumber(fromNumber(NaN))));
  });
}

test('float16 keeps subnormals and flushes nothing', () => {
  assert.equal(numberToFloat16(2 ** -24), 0x0001);
  assert.equal(numberToFloat16(2 ** -25), 0x0000); // tie with 0: even
  assert.equal(numberToFloat16(0.75 * 2 ** -24), 0x0001);
  assert.equal(numberToFloat16(1.5 * 2 ** -24), 0x0002); // tie: even
  assert.equal(numberToFloat16(2.5 * 2 ** -24), 0x0002); // tie: even
  assert.equal(numberToFloat16(-1023.5 * 2 ** -24), 0x8400); // tie with the smallest normal
  assert.equal(numberToFloat16(65504), 0x7bff);
  assert.equal(numberToFloat16(65519.99609375), 0x7bff);
  assert.equal(numberToFloat16(65520), 0x7c00);
});
