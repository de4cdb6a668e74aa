// SIMD module = scalar module = JS reference, bit for bit, in every case of
// the bit-exactness suite (tests/helpers/bit-exact-suite.js): the one list of
// cases that every browser engine also runs (tests/engines.test.js).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runBitExactSuite } from './helpers/bit-exact-suite.js';

test('the bit-exactness suite: simd = scalar = reference in every case, in Node', async (t) => {
  const result = await runBitExactSuite();
  t.diagnostic(`${result.cases} cases, ${result.values} values, digest ${result.digest}`);
  assert.deepEqual(result.backends, { simd: 'simd', scalar: 'scalar' });
  assert.deepEqual(result.mismatches, [], 'the first mismatches');
  assert.equal(result.mismatchCount, 0);
  assert.ok(result.cases > 2000 && result.values > 3_000_000, `${result.cases} cases, ${result.values} values`);
});
