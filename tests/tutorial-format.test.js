// How the tutorial writes shares (web/lib/format.js, percentages): the
// shares of a whole, as shown, add up to 100, with two significant digits
// of the smallest. Before, the "What the norms cost" table showed 0.48% for
// the norms and 100% for everything else.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { percentages } from '../web/lib/format.js';
import { prng } from './helpers/random.js';

const sum = (shown) => shown.reduce((s, p) => s + Math.round(Number(p.slice(0, -1)) * 1e4), 0) / 1e4;

test('the norms\' share of a decode step and the rest add up to 100% as shown', () => {
  assert.deepEqual(percentages([0.0048, 0.9952]), ['0.48%', '99.52%']);
  assert.deepEqual(percentages([0.00482, 0.99518]), ['0.48%', '99.52%']);
  assert.deepEqual(percentages([1, 3]), ['25%', '75%']);
  assert.deepEqual(percentages([1, 1, 1]), ['34%', '33%', '33%']);
  assert.deepEqual(percentages([0, 5]), ['0%', '100%']);
});

test('random splits into 2 to 5 parts, over six decades: the shares add up to 100 and keep two digits of the smallest', () => {
  const rand = prng(29);
  for (let i = 0; i < 2000; i++) {
    const n = 2 + Math.floor(rand() * 4);
    const parts = Array.from({ length: n }, () => 10 ** (rand() * 6 - 5));
    const shown = percentages(parts);
    assert.equal(sum(shown), 100, `${parts} → ${shown}`);
    const total = parts.reduce((s, p) => s + p, 0);
    const smallest = Math.min(...parts) / total * 100;
    const decimals = (shown[0].split('.')[1] ?? '%').length - 1;
    assert.ok(smallest * 10 ** decimals >= 10 || decimals === 4, `${parts} → ${shown}: two digits of the smallest share`);
    shown.forEach((s, k) => assert.ok(Math.abs(Number(s.slice(0, -1)) - parts[k] / total * 100) <= 10 ** -decimals, `${parts} → ${shown}: part ${k} within one unit`));
  }
});
