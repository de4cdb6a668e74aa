// No garbage in a decode loop's calls (issue 30): each call shape runs
// 200,000 times (the allocating one a million) after warm-up in a process
// of its own (tests/helpers/gc-probe.js), and V8's collections are counted.
// The calls an engine repeats every token (zero-copy, copying into out, a bound memory, prepared calls)
// never collect; the call that makes its result collects no more than
// making that array alone does, within 10%. A shape that starts allocating
// even a few bytes a call fails here.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { test } from 'node:test';
import { promisify } from 'node:util';

const run = promisify(execFile);
const probe = new URL('./helpers/gc-probe.js', import.meta.url).pathname;

async function collections(shape, calls = 200000) {
  const { stdout } = await run(process.execPath, [probe, shape, String(calls)], { timeout: 240000 });
  return JSON.parse(stdout).collections;
}

const STEADY = [
  'copying: rmsNorm(x, w, { out })',
  'copying: rmsNorm(x, w, { eps, out })',
  'copying: addRmsNorm(x, residual, w, { eps, out })',
  'copying, strided: rmsNorm(qkv, qNorm, { rowStride, out })',
  'copying, heads: rmsNorm(qkv, qNorm, { rowStride, heads, headStride, out })',
  'zero-copy, heads: rmsNorm(tqkv, tqNorm, { rowStride, heads, headStride, out })',
  'prepared, heads, zero-copy',
  'zero-copy: rmsNorm(tx, tw, { out: ty })',
  'zero-copy: rmsNorm(tx, tw, { eps, out: ty })',
  'zero-copy: addRmsNorm(tx, tr, tw, { eps, out: ty })',
  'zero-copy, bound memory: rmsNorm(bx, bw, { eps, out: by })',
  'prepared, zero-copy',
  'prepared, copying',
  'prepared, bound memory',
  'converter into out: toFloat32(bits, { dtype, out })',
];

for (const shape of STEADY) {
  test(`${shape}: no collection in 200,000 calls`, async () => {
    assert.equal(await collections(shape), 0, `${shape} allocates`);
  });
}

test('allocating: rmsNorm(x, w, { eps }) collects at most 10% more than new Float32Array(896) alone', async () => {
  // A million calls each: the array alone collects about 110 times, and
  // from one run to the next by up to a tenth; its larger count of two is
  // the bar. (Before issue 30's fix the call collected eight times as often.)
  const alone = Math.max(await collections('new Float32Array(896) alone', 1e6), await collections('new Float32Array(896) alone', 1e6));
  const calls = await collections('allocating: rmsNorm(x, w, { eps })', 1e6);
  assert.ok(alone > 50, 'the result array alone collects (else the comparison says nothing)');
  assert.ok(calls <= Math.ceil(alone * 1.1), `allocating calls collected ${calls} times, the array alone ${alone}`);
});
