// The lock of a shared memory's lent scratch region (src/loader/memory.js,
// LentMemory), attacked by class: threads calling and binding the same
// region again at the same time, a worker terminated mid-call, a recovery
// that names a live binding, and arrays written over the region's header.
// Each call either gives its own bits, or throws an error that says why:
// no binding, rebinding or call runs two calls in one region's stack and
// staging at once, and none frees a lock a live call holds.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Worker } from 'node:worker_threads';
import { bindMemory } from '../src/index.js';
import * as reference from '../src/reference/index.js';
import { assertSameBits } from './helpers/bits.js';
import { normalArray, prng } from './helpers/random.js';
import { race } from './helpers/shared-memory-racer.js';

const MiB = 2 ** 20;
const RACER = new URL('./helpers/shared-memory-racer.js', import.meta.url);

/** A shared memory with the region [1 MiB, 2 MiB) to lend, and one x per side, each of its own shape. */
function layout(shapes) {
  const memory = new WebAssembly.Memory({ initial: 128, maximum: 128, shared: true });
  const scratch = { byteOffset: MiB, byteLength: MiB };
  const sides = shapes.map(([rows, dim], i) => {
    const at = (2 + 2 * i) * MiB;
    const x = new Float32Array(memory.buffer, at, rows * dim);
    x.set(normalArray(prng(40 + i), x.length));
    return { at, dim, expected: reference.rmsNorm(x, null, { dim }) };
  });
  return { memory, scratch, sides, lock: new Uint32Array(memory.buffer, MiB, 1) };
}

function startWorker(workerData) {
  const worker = new Worker(RACER, { workerData });
  const messages = [];
  let wake = null;
  worker.on('message', (m) => {
    messages.push(m);
    wake?.();
  });
  const errored = new Promise((resolve, reject) => worker.once('error', reject));
  const next = () => Promise.race([errored, new Promise((resolve) => {
    const take = () => (messages.length > 0 ? resolve(messages.shift()) : (wake = take));
    take();
  })]);
  return { worker, next };
}

test('calls and bindings racing on one region, rebinding in a loop on both sides: each call gives its own bits or is refused', async () => {
  // Staged results of two shapes: any two calls in the region at once would mix their staging.
  const { memory, scratch, sides } = layout([[48, 4096], [40, 3072]]);
  const until = Date.now() + 2500;
  const job = (side, rebindEvery) => ({ memory, scratch, at: side.at, dim: side.dim, expected: side.expected, rebindEvery, until });
  const { worker, next } = startWorker({ race: job(sides[1], 1) });
  try {
    const [main, other] = await Promise.all([race(job(sides[0], 3)), next()]);
    for (const [who, counts] of [['main thread', main], ['worker', other]]) {
      assert.equal(counts.other, '', `${who}: ${JSON.stringify(counts)}`);
      assert.equal(counts.wrong, 0, `${who}: wrong bits (${JSON.stringify(counts)})`);
      assert.ok(counts.ok > 0, `${who}: no call ran (${JSON.stringify(counts)})`);
      assert.ok(counts.binds > 1, `${who}: bound again`);
    }
    assert.ok(main.refused + other.refused > 0, 'the two threads met in the region');
  } finally {
    await worker.terminate();
  }
});

/** A worker that binds the region and calls in it until `stop` is set; resolves its lockId. */
async function holder(memory, scratch, side) {
  const stop = new SharedArrayBuffer(4);
  const started = startWorker({ hold: { memory, scratch, at: side.at, dim: side.dim, expected: side.expected, stop } });
  const { lockId } = await started.next();
  return { ...started, lockId, stop: () => Atomics.store(new Int32Array(stop), 0, 1) };
}

test('a worker terminated mid-call leaves the region locked; binding again frees nothing; recover naming its lockId does', async () => {
  const { memory, scratch, sides, lock } = layout([[256, 4096], [8, 64]]);
  const [long, short] = sides;
  let lockId = 0;
  for (let attempt = 0; attempt < 20 && lockId === 0; attempt++) {
    const h = await holder(memory, scratch, long);
    assert.equal(typeof h.lockId, 'number', 'a binding says its lockId');
    const until = Date.now() + 10_000;
    while (Atomics.load(lock, 0) !== h.lockId && Date.now() < until) await new Promise((resolve) => setImmediate(resolve));
    await h.worker.terminate();
    if (Atomics.load(lock, 0) === h.lockId) lockId = h.lockId; // else its call ended before it was stopped
  }
  assert.notEqual(lockId, 0, 'a worker was terminated mid-call');
  const x = new Float32Array(memory.buffer, 4 * MiB, short.expected.length);
  const again = await bindMemory(memory, { scratch });
  assert.throws(() => again.rmsNorm(x, null, { dim: short.dim }), {
    name: 'RangeError',
    message: `rmsNorm: the scratch region [${MiB}, ${2 * MiB}) is in use by a call on another thread (the binding with lockId ${lockId}); each thread must lend a region of its own. If that thread was terminated mid-call, bind the region again with options.recover: ${lockId}`,
  });
  assert.equal(Atomics.load(lock, 0), lockId, 'still held after binding again');
  const recovered = await bindMemory(memory, { scratch, recover: lockId });
  assert.equal(Atomics.load(lock, 0), 0, 'freed');
  assertSameBits(recovered.rmsNorm(x, null, { dim: short.dim }), short.expected, 'a call in the recovered region');
  assertSameBits(again.rmsNorm(x, null, { dim: short.dim }), short.expected, 'the earlier binding too');
  // Recovering it again, or naming a binding that holds nothing, frees nothing and is no error.
  await bindMemory(memory, { scratch, recover: lockId });
});

test('a recovery that names a live binding mid-call: that call throws rather than return what may be wrong bits', async () => {
  const { memory, scratch, sides, lock } = layout([[256, 4096]]);
  const h = await holder(memory, scratch, sides[0]);
  try {
    assert.equal(typeof h.lockId, 'number', 'a binding says its lockId');
    const until = Date.now() + 20_000;
    let report = null;
    const reported = h.next().then((m) => (report = m));
    while (report === null && Date.now() < until) {
      if (Atomics.load(lock, 0) === h.lockId) await bindMemory(memory, { scratch, recover: h.lockId });
      else await new Promise((resolve) => setImmediate(resolve));
    }
    h.stop();
    await reported;
    assert.equal(report.wrong, 0, 'no call returned wrong bits');
    assert.equal(report.error, `Error: rmsNorm: the lock of the scratch region [${MiB}, ${2 * MiB}) was taken from this call while it ran (by options.recover naming a live binding, or by a write over the region's header), so another call may have run in the region at the same time: the results of this call may be wrong`);
  } finally {
    await h.worker.terminate();
  }
});

test('an array written over a region\'s header: the region\'s next call says so, not "in use"; binding it again makes the header anew', async () => {
  const { memory, scratch, sides, lock } = layout([[8, 64]]);
  const [side] = sides;
  const x = new Float32Array(memory.buffer, side.at, side.expected.length);
  const elsewhere = { byteOffset: 7 * MiB, byteLength: 65536 };
  const overwritten = new RegExp(`^rmsNorm: the header of the scratch region \\[${MiB}, ${2 * MiB}\\) \\(its first 32 bytes, which hold its lock\\) was written over by something else: an array of another call or binding, or the engine's own data\\. Keep every array out of every lent region, then bind the region again$`);
  // Another binding's out over the first word (the lock), over the whole header, and the engine zeroing it.
  const writes = [
    ['out over the lock word', (other) => other.rmsNorm(x.subarray(0, 64), null, { dim: 64, out: new Float32Array(memory.buffer, MiB - 252, 64) })],
    ['out over the whole header', (other) => other.rmsNorm(x.subarray(0, 64), null, { dim: 64, out: new Float32Array(memory.buffer, MiB - 128, 64) })],
    ['the header zeroed', () => new Uint8Array(memory.buffer, MiB, 32).fill(0)],
  ];
  for (const [what, write] of writes) {
    const bound = await bindMemory(memory, { scratch });
    assertSameBits(bound.rmsNorm(x, null, { dim: side.dim }), side.expected, `${what}: before`);
    write(await bindMemory(memory, { scratch: elsewhere }));
    const before = new Uint8Array(memory.buffer).slice();
    assert.throws(() => bound.rmsNorm(x, null, { dim: side.dim }), { name: 'RangeError', message: overwritten }, what);
    assert.equal(Atomics.load(lock, 0) === bound.lockId, false, `${what}: the refused call holds no lock`);
    assert.deepEqual(new Uint8Array(memory.buffer, 2 * MiB), before.subarray(2 * MiB), `${what}: nothing written`);
    const again = await bindMemory(memory, { scratch });
    assertSameBits(again.rmsNorm(x, null, { dim: side.dim }), side.expected, `${what}: bound again`);
  }
});

test('a view of another SharedArrayBuffer object over the memory is proven under the lock: refused as "in use" while another binding\'s call holds it', async () => {
  const { memory, scratch, sides, lock } = layout([[8, 64]]);
  const [side] = sides;
  const bound = await bindMemory(memory, { scratch });
  const other = await bindMemory(memory, { scratch });
  const clone = structuredClone(memory.buffer); // a new object over the same bytes, as another thread's growth hands out
  const x = new Float32Array(clone, side.at, side.expected.length);
  Atomics.store(lock, 0, other.lockId);
  assert.throws(() => bound.rmsNorm(x, null, { dim: side.dim }), { name: 'RangeError', message: /is in use by a call on another thread/ });
  Atomics.store(lock, 0, 0);
  assertSameBits(bound.rmsNorm(x, null, { dim: side.dim }), side.expected, 'proven once free');
});

test('options.recover: a lockId, on a shared memory; a wrong one is refused before anything is bound', async () => {
  const { memory, scratch } = layout([]);
  await assert.rejects(bindMemory(memory, { scratch, recover: '5' }), { name: 'TypeError', message: /^bindMemory: options.recover must be the lockId of a binding that will never run again, got string/ });
  for (const bad of [0, -90, 1.5, NaN]) {
    await assert.rejects(bindMemory(memory, { scratch, recover: bad }), { name: 'RangeError', message: /^bindMemory: options.recover must be a binding's lockId \(a positive integer\)/ }, String(bad));
  }
  const plain = new WebAssembly.Memory({ initial: 32 });
  await assert.rejects(bindMemory(plain, { scratch, recover: 90 }), { name: 'TypeError', message: /^bindMemory: options.recover frees the lock of a shared memory's region; this memory is not shared/ });
  assert.equal((await bindMemory(plain, { scratch })).lockId, 0, 'a non-shared binding has no lock');
});
