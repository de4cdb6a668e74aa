// The surfaces engines touch, attacked by class (issue 19): arrays at the
// null pointer, outputs aliasing through shared memory, a shared memory
// grown by another thread, lent regions smaller than one staging,
// precompiled modules that are not ours, built-ins replaced after load,
// accessors defined on Array.prototype and Object.prototype, and errors of
// the wrong kind. Each check: the reference's bits, or the
// right error type naming the function and argument, with every array and
// every other live tensor byte for byte unchanged.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { test } from 'node:test';
import { Worker } from 'node:worker_threads';
import { bindMemory, compileModule, createKernels, init, rmsNorm, Tensor } from '../src/index.js';
import { KNOWN_ANSWER, moduleBytes } from '../src/loader/load.js';
import { KERNEL_EXPORTS } from '../src/ops/descriptions.js';
import * as reference from '../src/reference/index.js';
import { assertSameBits } from './helpers/bits.js';
import { assertAllAgree, implementations, WASM_BACKENDS } from './helpers/implementations.js';
import { packageNames } from './helpers/package-names.js';
import { normalArray, prng, uniformArray } from './helpers/random.js';

const PAGE = 65536;
const bytesOf = (a) => new Uint8Array(a.buffer, a.byteOffset, a.byteLength).slice();

function assertRejected(call, type, fn, pattern, what) {
  assert.throws(call, (error) => {
    assert.equal(error.constructor, type, `${what}: ${error.constructor.name}: ${error.message}`);
    assert.ok(error.message.startsWith(`${fn}: `), `${what}: ${error.message}`);
    assert.match(error.message, pattern, what);
    return true;
  }, what);
}

test('class 1: no array the kernels are given lies at address 0, whoever placed it', async () => {
  const memory = new WebAssembly.Memory({ initial: 4 });
  await assert.rejects(bindMemory(memory, { scratch: { byteOffset: 0, byteLength: PAGE } }),
    { name: 'RangeError', message: /bindMemory: options\.scratch\.byteOffset must be a positive multiple of 16 \(address 0 is the null pointer\)/ });
  // Scratch just above the null pointer: what a bound call stages itself is never at 0.
  const bound = await bindMemory(memory, { scratch: { byteOffset: 16, byteLength: PAGE - 16 } });
  const rand = prng(5);
  const x = new Float32Array(memory.buffer, PAGE, 64);
  x.set(normalArray(rand, 64));
  const dy = new Float32Array(memory.buffer, PAGE + 256, 64);
  dy.set(normalArray(rand, 64));
  const w = new Float32Array(memory.buffer, PAGE + 512, 16);
  w.set(uniformArray(rand, 16, 0.5, 1.5));
  const b = new Float32Array(memory.buffer, PAGE + 576, 16);
  b.set(uniformArray(rand, 16, -0.5, 0.5));
  assertSameBits(bound.layerNorm(x, w, null), reference.layerNorm(x, w, null), 'layerNorm staged next to the null pointer');
  assertSameBits(bound.layerNorm(x, null, null, { dim: 16 }), reference.layerNorm(x, null, null, { dim: 16 }), 'layerNorm, no parameters');
  const lg = bound.layerNormBackward(dy, x, w, b);
  const lr = reference.layerNormBackward(dy, x, w, b);
  for (const k of ['dx', 'dweight', 'dbias']) assertSameBits(lg[k], lr[k], `layerNormBackward ${k}`);
  const rg = bound.rmsNormBackward(dy, x, w);
  const rr = reference.rmsNormBackward(dy, x, w);
  for (const k of ['dx', 'dweight']) assertSameBits(rg[k], rr[k], `rmsNormBackward ${k}`);
  // A caller's view at byte 0, of a bound memory or of an instance's own: refused, nothing written.
  const high = await bindMemory(memory, { scratch: { byteOffset: 3 * PAGE, byteLength: PAGE } });
  const at0 = new Float32Array(memory.buffer, 0, 4);
  const before = bytesOf(new Uint8Array(memory.buffer));
  assertRejected(() => high.rmsNorm(x.subarray(0, 16), null, { dim: 16, out: new Float32Array(memory.buffer, 0, 16) }),
    RangeError, 'rmsNorm', /options\.out .*byte 0 of wasm memory, the null pointer/, 'bound out at 0');
  assertRejected(() => high.rmsNorm(at0, null, { dim: 4, out: new Float32Array(memory.buffer, PAGE * 2, 4) }),
    RangeError, 'rmsNorm', /x .*byte 0 of wasm memory, the null pointer/, 'bound x at 0');
  const own = await createKernels();
  const ownView = new Float32Array(own.alloc(4).array.buffer, 0, 4);
  assertRejected(() => own.rmsNorm(ownView, null, { dim: 4 }), RangeError, 'rmsNorm', /x .*byte 0 of wasm memory, the null pointer/, 'own x at 0');
  assert.deepEqual(bytesOf(new Uint8Array(memory.buffer)), before, 'nothing written');
});

test('class 2: outputs aliasing through two SharedArrayBuffer objects give the same bits everywhere', async () => {
  const rand = prng(9);
  const x = normalArray(rand, 8);
  const r0 = normalArray(rand, 8);
  const w = uniformArray(rand, 4, 0.5, 1.5);
  // [fn, args(outA, outB, buffers) ] pairs of outputs laid over one another through a clone.
  const cases = [
    ['out/rstd', (impl, s, t) => impl.rmsNorm(x, w, { out: new Float32Array(s, 0, 8), rstd: new Float32Array(t, 28, 2) })],
    ['out/rstd exact', (impl, s, t) => impl.rmsNorm(x, w, { out: new Float32Array(s, 0, 8), rstd: new Float32Array(t, 0, 2) })],
    ['residual/out', (impl, s, t) => {
      const residual = new Float32Array(s, 0, 8);
      residual.set(r0);
      return impl.addRmsNorm(x, residual, w, { out: new Float32Array(t, 16, 8) });
    }],
    ['residual/rstd', (impl, s, t) => {
      const residual = new Float32Array(s, 0, 8);
      residual.set(r0);
      return impl.addRmsNorm(x, residual, w, { out: new Float32Array(8), rstd: new Float32Array(t, 24, 2) });
    }],
    ['out/mean', (impl, s, t) => impl.layerNorm(x, w, null, { out: new Float32Array(s, 0, 8), mean: new Float32Array(t, 4, 2) })],
    ['mean/rstd', (impl, s, t) => impl.layerNorm(x, w, null, { mean: new Float32Array(s, 0, 2), rstd: new Float32Array(t, 4, 2) })],
    ['x/out in place', (impl, s, t) => {
      new Float32Array(s, 0, 8).set(x);
      return impl.rmsNorm(new Float32Array(s, 0, 8), w, { out: new Float32Array(t, 0, 8) });
    }],
  ];
  for (const [what, call] of cases) {
    const results = {};
    for (const impl of await implementations()) {
      const s = new SharedArrayBuffer(64);
      const t = structuredClone(s);
      call(impl, s, t);
      results[impl.name] = new Uint8Array(s).slice();
    }
    assertAllAgree(results, what);
  }
});

test('class 3: a shared memory grown since a view was made: buffers this thread never saw are proven, not refused', async () => {
  const memory = new WebAssembly.Memory({ initial: 4, maximum: 64, shared: true });
  const bound = await bindMemory(memory, { scratch: { byteOffset: PAGE, byteLength: PAGE } });
  const rand = prng(11);
  memory.grow(1); // a buffer the bound instance has never seen
  const x = new Float32Array(memory.buffer, 2 * PAGE, 64);
  x.set(normalArray(rand, 64));
  const w = new Float32Array(memory.buffer, 3 * PAGE, 16);
  w.set(uniformArray(rand, 16, 0.5, 1.5));
  memory.grow(1); // and then another thread grows it again before the call
  const out = new Float32Array(memory.buffer, 3 * PAGE + 1024, 64);
  assert.equal(bound.rmsNorm(x, w, { out }), out);
  assertSameBits(out, reference.rmsNorm(x, w), 'views of two buffers the instance never saw');
  // Views of two such buffers overlapping are still refused: they are one memory.
  memory.grow(1);
  const overlapping = new Float32Array(memory.buffer, 2 * PAGE + 16, 64);
  assertRejected(() => bound.rmsNorm(x, w, { out: overlapping }), RangeError, 'rmsNorm', /options\.out must be x itself or not overlap x/, 'overlap across buffers');
  // Another memory's SharedArrayBuffer is not this one's, whatever its length.
  const other = new WebAssembly.Memory({ initial: 8, maximum: 8, shared: true });
  assertRejected(() => bound.rmsNorm(new Float32Array(other.buffer, 2 * PAGE, 64), w, { out }), TypeError, 'rmsNorm',
    /x must be a view of the bound memory's buffer/, 'a foreign shared memory');
  assertRejected(() => bound.rmsNorm(new Float32Array(new SharedArrayBuffer(8 * PAGE), 2 * PAGE, 64), w, { out }), TypeError, 'rmsNorm',
    /x must be a view of the bound memory's buffer/, 'a plain SharedArrayBuffer');
});

test('class 3: a scratch view made before the shared memory grew binds; one of another memory does not', async () => {
  const memory = new WebAssembly.Memory({ initial: 4, maximum: 64, shared: true });
  const scratch = new Uint8Array(memory.buffer, PAGE, PAGE);
  memory.grow(1); // scratch's buffer is an earlier object over the same bytes
  assert.notEqual(scratch.buffer, memory.buffer);
  const bound = await bindMemory(memory, { scratch });
  const x = new Float32Array(memory.buffer, 3 * PAGE, 64);
  x.set(normalArray(prng(12), 64));
  assertSameBits(bound.rmsNorm(x, null, { dim: 16 }), reference.rmsNorm(x, null, { dim: 16 }), 'bound through an earlier buffer');
  const other = new WebAssembly.Memory({ initial: 4, maximum: 64, shared: true });
  const before = bytesOf(new Uint8Array(other.buffer));
  await assert.rejects(bindMemory(memory, { scratch: new Uint8Array(other.buffer, 2 * PAGE, PAGE) }),
    { name: 'TypeError', message: /^bindMemory: options\.scratch must be a view of the memory's buffer/ });
  assert.deepEqual(bytesOf(new Uint8Array(other.buffer)), before, 'the other memory was written');
});

test('class 3: calls racing a thread that grows the shared memory never fail and give the reference bits', async () => {
  const memory = new WebAssembly.Memory({ initial: 8, maximum: 4096, shared: true });
  const bound = await bindMemory(memory, { scratch: { byteOffset: PAGE, byteLength: PAGE } });
  const rand = prng(12);
  const xs = normalArray(rand, 4 * 256);
  const ws = uniformArray(rand, 256, 0.5, 1.5);
  new Float32Array(memory.buffer, 2 * PAGE, xs.length).set(xs);
  new Float32Array(memory.buffer, 3 * PAGE, ws.length).set(ws);
  const expected = reference.rmsNorm(xs, ws);
  const grower = new Worker(`
    const { workerData, parentPort } = require('node:worker_threads');
    const { memory } = workerData;
    let stop = false;
    parentPort.on('message', () => { stop = true; });
    (function grow() {
      if (stop || memory.buffer.byteLength >= 4000 * 65536) return parentPort.postMessage('done');
      memory.grow(1);
      setTimeout(grow, 0);
    })();`, { eval: true, workerData: { memory } });
  const done = new Promise((resolve) => grower.once('message', resolve));
  let calls = 0;
  const until = Date.now() + 1500;
  while (Date.now() < until) {
    const buffer = memory.buffer;
    const out = new Float32Array(buffer, 4 * PAGE, xs.length);
    bound.rmsNorm(new Float32Array(buffer, 2 * PAGE, xs.length), new Float32Array(buffer, 3 * PAGE, ws.length), { out });
    if (calls % 64 === 0) assertSameBits(out, expected, `call ${calls}`);
    calls++;
    if (calls % 256 === 0) await new Promise((resolve) => setImmediate(resolve));
  }
  grower.postMessage('stop');
  await done;
  await grower.terminate();
  assert.ok(calls > 100, `${calls} calls`);
});

test('class 3: two threads lent one region of a shared memory: a call finding another thread\'s in it is refused, none is wrong', async () => {
  const memory = new WebAssembly.Memory({ initial: 8, maximum: 8, shared: true });
  const scratch = { byteOffset: PAGE, byteLength: PAGE };
  const bound = await bindMemory(memory, { scratch });
  const other = await bindMemory(memory, { scratch }); // another thread's binding of the region, as the lock sees it
  assert.notEqual(bound.lockId, other.lockId, 'each binding has an id of its own');
  const x = new Float32Array(memory.buffer, 2 * PAGE, 8 * 64);
  x.set(normalArray(prng(14), x.length));
  const expected = reference.rmsNorm(x, null, { dim: 64 });
  // The other binding's call in the region, as its lock word says while it runs.
  const lock = new Uint32Array(memory.buffer, scratch.byteOffset, 1);
  Atomics.store(lock, 0, other.lockId);
  const held = new RegExp(`the scratch region \\[65536, 131072\\) is in use by a call on another thread \\(the binding with lockId ${other.lockId}\\); each thread must lend a region of its own`);
  const before = bytesOf(new Uint8Array(memory.buffer));
  assertRejected(() => bound.rmsNorm(x, null, { dim: 64 }), RangeError, 'rmsNorm', held, 'while held');
  assert.deepEqual(bytesOf(new Uint8Array(memory.buffer)), before, 'written while another thread held the region');
  // Binding the region again frees no lock: a call may still be running in it.
  const again = await bindMemory(memory, { scratch });
  assertRejected(() => again.rmsNorm(x, null, { dim: 64 }), RangeError, 'rmsNorm', held, 'bound again while held');
  assert.equal(Atomics.load(lock, 0), other.lockId, 'binding left the lock as it was');
  Atomics.store(lock, 0, 0);
  assertSameBits(bound.rmsNorm(x, null, { dim: 64 }), expected, 'once it is free');
  assert.equal(Atomics.load(lock, 0), 0, 'the call frees the region');
  // A region a thread left held (a worker terminated mid-call) is lent again by naming its binding.
  Atomics.store(lock, 0, other.lockId);
  await assert.rejects(bindMemory(memory, { scratch, recover: bound.lockId }),
    { name: 'RangeError', message: new RegExp(`^bindMemory: options.recover: the lock of the scratch region \\[65536, 131072\\) is held by the binding with lockId ${other.lockId}, not by ${bound.lockId}`) });
  assert.equal(Atomics.load(lock, 0), other.lockId, 'a recovery naming another binding frees nothing');
  const recovered = await bindMemory(memory, { scratch, recover: other.lockId });
  assertSameBits(recovered.rmsNorm(x, null, { dim: 64 }), expected, 'recovered');
  // Two workers on one region at once: each call gives the reference's bits or is refused.
  const racer = `
    const { workerData, parentPort } = require('node:worker_threads');
    (async () => {
      const { bindMemory } = await import(workerData.index);
      const { memory, scratch, at, expected } = workerData;
      const bound = await bindMemory(memory, { scratch });
      const x = new Float32Array(memory.buffer, at, expected.length);
      let ok = 0, refused = 0, wrong = 0, other = '';
      for (let i = 0; i < 4000; i++) {
        try {
          const y = bound.rmsNorm(x, null, { dim: 64 });
          if (y.every((v, j) => Object.is(v, expected[j]))) ok++; else wrong++;
        } catch (error) {
          if (/in use by a call on another thread/.test(error.message)) refused++; else { other = error.message; break; }
        }
      }
      parentPort.postMessage({ ok, refused, wrong, other });
    })();`;
  const index = new URL('../src/index.js', import.meta.url).href;
  const runs = await Promise.all([2 * PAGE, 2 * PAGE].map((at) => new Promise((resolve, reject) => {
    const worker = new Worker(racer, { eval: true, workerData: { index, memory, scratch, at, expected } });
    worker.once('message', (m) => worker.terminate().then(() => resolve(m)));
    worker.once('error', reject);
  })));
  for (const run of runs) {
    assert.equal(run.other, '', 'another error');
    assert.equal(run.wrong, 0, `wrong results (${JSON.stringify(run)})`);
    assert.equal(run.ok + run.refused, 4000);
  }
});

test('class 4: a lent region smaller than the whole staging is used in chunks that fit it', async () => {
  const memory = new WebAssembly.Memory({ initial: 4 });
  const bound = await bindMemory(memory, { scratch: { byteOffset: PAGE, byteLength: 8192 } });
  const rand = prng(13);
  const x = new Float32Array(memory.buffer, 2 * PAGE, 100 * 64);
  x.set(normalArray(rand, x.length));
  const w = new Float32Array(memory.buffer, 3 * PAGE, 64);
  w.set(uniformArray(rand, 64, 0.5, 1.5));
  // 100 rows of 256 bytes for the new result; 4 KiB of staging beside the stack.
  assertSameBits(bound.rmsNorm(x, w), reference.rmsNorm(x, w), 'rmsNorm, new result staged in chunks');
  const dy = new Float32Array(memory.buffer, 2 * PAGE + x.byteLength, x.length);
  dy.set(normalArray(rand, x.length));
  const g = bound.rmsNormBackward(dy, x, w);
  const r = reference.rmsNormBackward(dy, x, w);
  assertSameBits(g.dx, r.dx, 'backward dx in chunks');
  assertSameBits(g.dweight, r.dweight, 'backward dweight across chunks');
  // One row that does not fit: a RangeError saying what one row needs.
  const wide = new Float32Array(memory.buffer, 2 * PAGE, 2048);
  assertRejected(() => bound.rmsNorm(wide, null, { dim: 2048 }), RangeError, 'rmsNorm', /lend a larger region \(one row at a time needs \d+\)/, 'one row too large');
});

/** A module that looks like ours from outside: the backend section and our export names, each function returning 1024. */
const forgedModule = (backend, body) => new WebAssembly.Module(forgedBytes(backend, body));
const I32_1024 = [0, 0x41, 0x80, 0x08, 0x0b]; // no locals; i32.const 1024; end
const UNREACHABLE = [0, 0x00, 0x0b]; // no locals; unreachable; end
function forgedBytes(backend = 'simd', body = I32_1024) {
  const names = [...KERNEL_EXPORTS, 'malloc', 'free', '_initialize', '__errno_location', 'stackSave', 'stackRestore', 'stackAlloc'];
  const leb = (n) => { const out = []; do { let b = n & 0x7f; n >>>= 7; if (n) b |= 0x80; out.push(b); } while (n); return out; };
  const str = (s) => [...leb(s.length), ...Buffer.from(s)];
  const section = (id, body) => [id, ...leb(body.length), ...body];
  const type = section(1, [1, 0x60, 0, 1, 0x7f]); // () -> i32; extra arguments are dropped by JS calls
  const func = section(3, [...leb(names.length), ...names.map(() => 0)]);
  const table = section(4, [1, 0x70, 0, 1]);
  const mem = section(5, [1, 0, 2]);
  // Function 0 is the import; ours are 1…n.
  const exports = section(7, [...leb(names.length + 2), ...str('memory'), 2, 0, ...str('__indirect_function_table'), 1, 0,
    ...names.flatMap((n, i) => [...str(n), 0, ...leb(i + 1)])]);
  const code = section(10, [...leb(names.length), ...names.flatMap(() => [...leb(body.length), ...body])]);
  const custom = section(0, [...str('rmsnorm-wasm.backend'), ...Buffer.from(backend)]);
  const importSection = section(2, [1, ...str('env'), ...str('emscripten_notify_memory_growth'), 0, 0]);
  return new Uint8Array([0, 0x61, 0x73, 0x6d, 1, 0, 0, 0, ...type, ...importSection, ...func, ...table, ...mem, ...exports,
    ...code, ...custom]);
}

test('class 6: a precompiled module is accepted only when proven ours, and a refused one leaves no state', async () => {
  // The self-test's known answer is the reference's, to the bit.
  const known = reference.rmsNorm(new Float32Array(KNOWN_ANSWER.x), new Float32Array(KNOWN_ANSWER.w));
  assert.deepEqual([...new Uint32Array(known.buffer)], KNOWN_ANSWER.y, 'KNOWN_ANSWER.y');
  const forged = forgedModule();
  assert.deepEqual(WebAssembly.Module.exports(forged).map((e) => e.name).sort(),
    WebAssembly.Module.exports(await compileModule('simd')).map((e) => e.name).sort(), 'the forgery has our exports');
  await assert.rejects(createKernels({ module: forged }), { name: 'TypeError', message: /^createKernels: options\.module is not an rmsnorm-wasm module \(it fails the known-answer self-test\)/ });
  await init({ backend: 'scalar' });
  const x = new Float32Array([1, 2, 3, 4]);
  const expected = reference.rmsNorm(x, null, { dim: 4 });
  await assert.rejects(init({ module: forged }), { name: 'TypeError', message: /^init: options\.module is not an rmsnorm-wasm module/ });
  assertSameBits(rmsNorm(x, null, { dim: 4 }), expected, 'the default instance after a refused init');
  await init({ backend: 'simd' });
  assertSameBits(rmsNorm(x, null, { dim: 4 }), expected, 'a plain init after a refused one');
  // A real module compiled elsewhere (as a worker receives one) is proven by the self-test.
  for (const backend of WASM_BACKENDS) {
    const k = await createKernels({ module: new WebAssembly.Module(moduleBytes(backend)) });
    assert.equal(k.backend, backend);
    const a = k.alloc(4);
    const b = k.alloc(4);
    assert.notEqual(a.byteOffset, b.byteOffset);
    a.array.set(x);
    assertSameBits(k.rmsNorm(a, null, { dim: 4, out: b }).array, expected, `${backend}: a module from another compile`);
  }
  // A refused init leaves no trace: an init asked for before it, still loading, wins.
  const script = `
    const { init, rmsNorm } = await import(${JSON.stringify(new URL('../src/index.js', import.meta.url).href)});
    const forged = new WebAssembly.Module(new Uint8Array(${JSON.stringify([...forgedBytes()])}));
    const first = init({ backend: 'scalar' });
    const refused = init({ module: forged }).then(() => 'accepted', (e) => e.name);
    const wrong = init({ backend: 'gpu' }).then(() => 'accepted', (e) => e.name);
    await first;
    console.log(JSON.stringify({ refused: await refused, wrong: await wrong, y: [...rmsNorm(new Float32Array([2, -4, 6, -8]), null, { dim: 4 })] }));`;
  const raced = JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' }));
  assert.deepEqual(raced, { refused: 'TypeError', wrong: 'TypeError', y: [...reference.rmsNorm(new Float32Array([2, -4, 6, -8]), null, { dim: 4 })] });
  // A forgery whose functions trap (its _initialize, then its malloc): a TypeError naming the function, not the engine's trap.
  await assert.rejects(createKernels({ module: forgedModule('simd', UNREACHABLE) }),
    { name: 'TypeError', message: /^createKernels: options\.module is not an rmsnorm-wasm module \(instantiating it failed/ });
  await assert.rejects(init({ module: forgedModule('scalar', UNREACHABLE) }),
    { name: 'TypeError', message: /^init: options\.module is not an rmsnorm-wasm module/ });
  // A module with one export more or less than ours is refused by its shape.
  const extra = new WebAssembly.Module(new Uint8Array([0, 0x61, 0x73, 0x6d, 1, 0, 0, 0]));
  await assert.rejects(createKernels({ module: extra }), { name: 'TypeError', message: /it lacks memory, rmsnorm/ });
});

function runIsolated(script) {
  return execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
}
const src = (path) => JSON.stringify(new URL(`../src/${path}`, import.meta.url).href);

test('class 7: a Proxy-based Float16Array polyfill is not taken for the engine\'s own', () => {
  const out = runIsolated(`
    // What @petamoriken/float16 installs where an engine has no Float16Array: a Proxy class over Uint16Array.
    globalThis.Float16Array = new Proxy(class Float16Array { constructor(n) { return new Proxy(new Uint16Array(n), {}); } }, {});
    const { init, rmsNorm } = await import(${src('index.js')});
    const reference = await import(${src('reference/index.js')});
    await init();
    const x = new Uint16Array([0x4000, 0xc400, 0x4600, 0xc800]);
    const y = rmsNorm(x, null, { dtype: 'float16', dim: 4 });
    const r = reference.rmsNorm(x, null, { dtype: 'float16', dim: 4 });
    console.log(JSON.stringify({ kind: Object.prototype.toString.call(y), y: [...y], r: [...r] }));`);
  const { kind, y, r } = JSON.parse(out);
  assert.equal(kind, '[object Uint16Array]');
  assert.deepEqual(y, r);
});

test('class 7: built-ins replaced after load steer nothing: every function gives the bits computed before', () => {
  const out = runIsolated(`
    const { writeSync } = await import('node:fs');
    const wasm = await import(${src('index.js')});
    const reference = await import(${src('reference/index.js')});
    const { bindMemory, createKernels } = wasm;
    await wasm.init();
    const k = await createKernels({ backend: 'scalar' });
    const memory = new WebAssembly.Memory({ initial: 4 });
    const bound = await bindMemory(memory, { scratch: { byteOffset: 65536, byteLength: 65536 } });
    const rand = (() => { let s = 7; return () => ((s = (s * 1103515245 + 12345) >>> 0) / 2 ** 32) - 0.5; })();
    const fill = (a) => { for (let i = 0; i < a.length; i++) a[i] = rand() * 4; return a; };
    const x = fill(new Float32Array(64)), dy = fill(new Float32Array(64)), w = fill(new Float32Array(16));
    const bx = fill(new Float32Array(memory.buffer, 2 * 65536, 64));
    const bw = fill(new Float32Array(memory.buffer, 2 * 65536 + 1024, 16));
    // The test's own built-ins, saved before the page replaces them.
    const call = Function.prototype.call;
    const uncurry = (f) => call.bind(f);
    const TA = Object.getPrototypeOf(Uint8Array.prototype);
    const getter = (k) => uncurry(Object.getOwnPropertyDescriptor(TA, k).get);
    const [lengthOf, bufferOf, offsetOf] = [getter('length'), getter('buffer'), getter('byteOffset')];
    const U32 = Uint32Array, F32 = Float32Array, stringify = JSON.stringify;
    const bits = (a) => {
      const u = new U32(bufferOf(a), offsetOf(a), lengthOf(a));
      let s = '';
      for (let i = 0; i < lengthOf(u); i++) s += u[i] + ',';
      return s;
    };
    const tensors = [wasm.alloc(64), k.alloc(64)];
    const bystander = [wasm.alloc(64), k.alloc(64)];
    for (const t of [...tensors, ...bystander]) t.array.set(x);
    const impls = [wasm, k, reference];
    const run = () => {
      let rows = '';
      for (let i = 0; i < 3; i++) {
        const impl = impls[i];
        rows += bits(impl.rmsNorm(x, w)) + bits(impl.rmsNorm(x, w, { eps: 1e-5, castMode: 'gemma' })) +
          bits(impl.addRmsNorm(x, new F32(x), w)) + bits(impl.layerNorm(x, w, null)) +
          bits(impl.rmsNormBackward(dy, x, w).dx) + bits(impl.layerNormBackward(dy, x, w, null).dweight) +
          bits(impl.rmsNorm(x, null, { shape: [4, 16], axis: -1 })) + '|';
      }
      for (let i = 0; i < 2; i++) rows += bits(impls[i].rmsNorm(tensors[i], w, { out: tensors[i] }).array);
      rows += bits(bound.rmsNorm(bx, bw)) + bits(bound.layerNormBackward(bx, bx, bw, null).dx);
      return rows;
    };
    const before = run();
    for (const t of tensors) t.array.set(x);
    const same = (t) => { const a = t.array; for (let i = 0; i < 64; i++) if (!Object.is(a[i], x[i])) return false; return true; };
    // The page replaces what it can.
    const noop = function () { return []; };
    Array.prototype[Symbol.iterator] = function* () { yield 0; yield 1024; yield 2048; yield 0; };
    for (const name of ['map', 'includes', 'join', 'push', 'fill', 'indexOf', 'filter', 'slice', 'concat']) Array.prototype[name] = noop;
    Math.fround = (v) => v * 2; Math.abs = () => 0; Math.min = () => 1; Math.max = () => 1e9; Math.floor = () => 3; Math.sqrt = () => 1; Math.ceil = () => 7;
    Number.isSafeInteger = () => true; Number.isInteger = () => true;
    Object.keys = () => []; Object.prototype.hasOwnProperty = () => true;
    Map.prototype.get = () => undefined; Map.prototype.set = noop; WeakSet.prototype.has = () => false;
    Promise.prototype.then = noop;
    TA.set = noop; TA.subarray = noop; TA.fill = noop; TA.at = () => 0;
    Object.defineProperty(TA, 'length', { get: () => 3 });
    Object.defineProperty(TA, 'buffer', { get: () => new ArrayBuffer(8) });
    Object.defineProperty(TA, 'byteOffset', { get: () => 4096 });
    globalThis.Float32Array = function () { throw new Error('Float32Array replaced'); };
    globalThis.Uint16Array = function () { throw new Error('Uint16Array replaced'); };
    globalThis.TypeError = globalThis.RangeError = function () { return {}; };
    String.prototype.slice = noop; JSON.stringify = () => 'x';
    let after;
    let error;
    try { after = run(); } catch (e) { error = String(e && e.stack); }
    writeSync(1, stringify({ same: after === before, error, bystanders: [same(bystander[0]), same(bystander[1])] }));`);
  const { same, error, bystanders } = JSON.parse(out);
  assert.equal(error, undefined, error);
  assert.ok(same, 'the same bits after the built-ins were replaced');
  assert.deepEqual(bystanders, [true, true], 'no other live tensor was written');
});

test('class 7: the exported Tensor class is the page\'s to change: nothing the package does reads it', async () => {
  const k = await createKernels({ backend: 'scalar' });
  const victim = k.alloc(16);
  victim.array.fill(7);
  const x = new Float32Array(16).fill(2);
  const expected = reference.rmsNorm(x, null, { dim: 16 });
  const fake = {};
  const forged = { value: fake, dtype: 'float32', memory: null, buffer: null, start: victim.byteOffset, end: victim.byteOffset + 64, length: 16, live: true };
  // What a page can reach: the class's own properties, and its prototype's members.
  const saved = Object.getOwnPropertyDescriptors(Tensor.prototype);
  const replaced = { is: (v) => v === fake || v instanceof Tensor, recordOf: (v) => (v === fake ? forged : null), viewOf: () => victim.array };
  try {
    Object.assign(Tensor, replaced);
    for (const key of Object.keys(saved)) if (key !== 'constructor') Object.defineProperty(Tensor.prototype, key, { get: () => 0, configurable: true });
    assertRejected(() => k.rmsNorm(x, null, { dim: 16, out: fake }), TypeError, 'rmsNorm', /options\.out must be a Float32Array/, 'a forged tensor');
    const out = k.alloc(16);
    k.rmsNorm(x, null, { dim: 16, out });
    Object.defineProperties(Tensor.prototype, saved);
    assertSameBits(out.array, expected, 'a real tensor, while the class was the page\'s');
    out.free();
  } finally {
    for (const key of Object.keys(replaced)) delete Tensor[key];
    Object.defineProperties(Tensor.prototype, saved);
  }
  assert.deepEqual([...victim.array], new Array(16).fill(7), 'the victim tensor was written');
  // A member taken off its tensor and called on anything else: our TypeError, naming it.
  for (const [key, d] of Object.entries(saved)) {
    if (key === 'constructor') continue;
    const member = d.get ?? d.value;
    for (const receiver of [undefined, {}, Object.create(Tensor.prototype), 42]) {
      assertRejected(() => member.call(receiver), TypeError, `Tensor.${key}`, /called on something that is not a tensor/, `Tensor.prototype.${key} on ${typeof receiver}`);
    }
  }
});

test('class 7: accessors a page defines on Array.prototype and Object.prototype, for every index and name, steer nothing', () => {
  // In a process of its own: the accessors outlive the call until it removes them.
  const out = runIsolated(`
    const { writeSync } = await import('node:fs');
    const { attackPrototypes } = await import(${JSON.stringify(new URL('./helpers/prototype-attack.js', import.meta.url).href)});
    writeSync(1, JSON.stringify(await attackPrototypes({ names: ${JSON.stringify(packageNames())} })));`);
  const { same, differences, accessors, hits } = JSON.parse(out);
  assert.ok(accessors > 400, `only ${accessors} accessors defined`);
  assert.deepEqual(differences, []);
  assert.ok(same);
  assert.equal(hits, 0, 'an accessor of the page ran');
});

test('class 8: a wrong type is a TypeError, a wrong value a RangeError, always naming the function', async () => {
  const x = new Float32Array(8);
  const w = new Float32Array(4);
  for (const impl of await implementations()) {
    const { name } = impl;
    for (const axis of ['1', 1n, true, {}, null]) {
      assertRejected(() => impl.rmsNorm(x, w, { shape: [2, 4], axis }), TypeError, 'rmsNorm', /options\.axis must be an integer, got/, `${name}: axis ${typeof axis}`);
    }
    assertRejected(() => impl.rmsNorm(x, w, { shape: [2, 4], axis: 5 }), RangeError, 'rmsNorm', /options\.axis must be an integer in/, `${name}: axis 5`);
    assertRejected(() => impl.rmsNorm(x, w, { eps: null }), TypeError, 'rmsNorm', /options\.eps must be a number/, `${name}: eps null`);
    const { proxy, revoke } = Proxy.revocable({}, {});
    revoke();
    assertRejected(() => impl.rmsNorm(x, w, proxy), TypeError, 'rmsNorm', /options is a revoked Proxy/, `${name}: revoked options`);
    assertRejected(() => impl.rmsNorm(x, w, { shape: proxy }), TypeError, 'rmsNorm', /options\.shape is a revoked Proxy/, `${name}: revoked shape`);
    // A shape whose length lies is a TypeError (its dims' own checks are rows of tests/argument-errors.test.js).
    for (const length of [-1, 1.5, NaN, 2 ** 60, '2']) {
      const lying = new Proxy([2, 4], { get: (target, key) => (key === 'length' ? length : target[key]) });
      assertRejected(() => impl.rmsNorm(x, w, { shape: lying }), TypeError, 'rmsNorm', /options\.shape must be an array of dims, got one of length/, `${name}: a shape of length ${String(length)}`);
    }
    assertRejected(() => impl.layerNorm(x, w, null, proxy), TypeError, 'layerNorm', /options is a revoked Proxy/, `${name}: revoked layerNorm options`);
    assertRejected(() => impl.rmsNorm(new Uint16Array(8), w), TypeError, 'rmsNorm', /x must be a Float32Array.*options\.dtype: 'bfloat16' or 'float16'/, `${name}: Uint16Array x`);
  }
  const { proxy, revoke } = Proxy.revocable({}, {});
  revoke();
  await assert.rejects(init(proxy), { name: 'TypeError', message: /^init: options is a revoked Proxy/ });
  await assert.rejects(createKernels(proxy), { name: 'TypeError', message: /^createKernels: options is a revoked Proxy/ });
  await assert.rejects(createKernels({ module: { [Symbol.toStringTag]: 'WebAssembly.Module' } }),
    { name: 'TypeError', message: /^createKernels: options\.module must be a WebAssembly\.Module, got Object/ });
  const memory = new WebAssembly.Memory({ initial: 2 });
  await assert.rejects(bindMemory(memory, proxy), { name: 'TypeError', message: /^bindMemory: options is a revoked Proxy/ });
  await assert.rejects(bindMemory(memory, { scratch: proxy }), { name: 'TypeError', message: /^bindMemory: options\.scratch is a revoked Proxy/ });
  for (const scratch of [{}, { byteOffset: 16 }, { byteLength: 4096 }, { byteOffset: '16', byteLength: 4096 }, { byteOffset: 16, byteLength: 4096n }]) {
    await assert.rejects(bindMemory(memory, { scratch }), { name: 'TypeError', message: /^bindMemory: options\.scratch\.byte(Offset|Length) must be a number/ }, JSON.stringify(scratch, (k, v) => (typeof v === 'bigint' ? `${v}n` : v)));
  }
  await assert.rejects(bindMemory(memory, { scratch: { byteOffset: 16, byteLength: 1e9 } }), { name: 'RangeError', message: /lies outside the memory/ });
  // An option getter that grows the memory: the memory is measured after every option is read.
  const grown = new WebAssembly.Memory({ initial: 1, maximum: 4 });
  const bound = await bindMemory(grown, { get scratch() { grown.grow(2); return { byteOffset: 65536, byteLength: 65536 }; } });
  const view = new Float32Array(grown.buffer, 2 * 65536, 4);
  view.set([2, -4, 6, -8]);
  assertSameBits(bound.rmsNorm(view, null, { dim: 4 }), reference.rmsNorm(view, null, { dim: 4 }), 'bound after a growing getter');
});
