// bindMemory on an engine built the way engine authors build one: an
// Emscripten C program (tests/engine/engine.c) linked with the C library,
// MODULARIZE, memory growth on, at -O0, -O2 and -O3, and as a -pthread build
// (shared memory). Its WebAssembly.Memory is the one the docs say to take
// (docs/models.md: link with -sIMPORTED_MEMORY and give the module its
// memory), the scratch region comes from its aligned_alloc, and its rows
// normalized through bindMemory must have the bits of rmsNorm, of the JS
// reference and of the C library called inside the same engine, before and
// after the engine's memory grows.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { bindMemory, init, rmsNorm } from '../src/index.js';
import * as reference from '../src/reference/index.js';
import { assertSameBits } from './helpers/bits.js';
import { normalArray, prng, uniformArray } from './helpers/random.js';

const run = promisify(execFile);
const repo = fileURLToPath(new URL('..', import.meta.url));
const env = { ...process.env, NODE_PATH: '/usr/share/nodejs' }; // Debian's emcc

// The link docs/models.md gives, with the sizes the memory is created with.
const PAGE = 65536;
const INITIAL_MEMORY = 16 * 2 ** 20;
const MAXIMUM_MEMORY = 2 * 2 ** 30;
const LINK = [
  '-msimd128', '-I', join(repo, 'c'), join(repo, 'tests', 'engine', 'engine.c'), join(repo, 'c', 'librmsnorm_wasm_simd.a'),
  '-sMODULARIZE=1', '-sEXPORT_NAME=createEngineModule', '-sALLOW_MEMORY_GROWTH=1', '-sIMPORTED_MEMORY=1',
  `-sINITIAL_MEMORY=${INITIAL_MEMORY}`, `-sMAXIMUM_MEMORY=${MAXIMUM_MEMORY}`,
  '-sEXPORTED_FUNCTIONS=_main,_malloc,_free,_aligned_alloc,_engine_rmsnorm',
  '-sSINGLE_FILE=1', '-sENVIRONMENT=node',
];
// -pthread needs the worker environment too (its .worker.js); no thread is started here.
const PTHREAD = ['-pthread', '-sENVIRONMENT=node,worker', '-Wno-pthreads-mem-growth'];
const BUILDS = {
  O0: ['-O0', ...LINK],
  O2: ['-O2', ...LINK],
  O3: ['-O3', ...LINK],
  'O0 -pthread': ['-O0', ...LINK, ...PTHREAD],
  'O3 -pthread': ['-O3', ...LINK, ...PTHREAD],
  // The same program without -sIMPORTED_MEMORY: where the glue keeps the
  // memory it exported, to show why the docs do not read it from there.
  'O2 own memory': ['-O2', ...LINK.filter((f) => f !== '-sIMPORTED_MEMORY=1')],
  'O3 own memory': ['-O3', ...LINK.filter((f) => f !== '-sIMPORTED_MEMORY=1')],
};

let work;
const factories = {};
before(async () => {
  work = await mkdtemp(join(tmpdir(), 'rmsnorm-wasm-engine-'));
  const require = createRequire(join(work, 'index.js'));
  const names = Object.keys(BUILDS);
  // Two at a time: the machine's cores are shared.
  for (let i = 0; i < names.length; i += 2) {
    await Promise.all(names.slice(i, i + 2).map(async (name) => {
      const out = join(work, `engine-${name.replace(/ /g, '-')}.cjs`);
      await run('emcc', [...BUILDS[name], '-o', out], { env, cwd: work });
      factories[name] = require(out);
    }));
  }
  await init();
});
after(() => rm(work, { recursive: true, force: true }));

const ROWS = 8;
const DIM = 896;
const EPS = 1e-5;

/** The engine's tensors, from its own malloc, filled with seeded values. */
function engineTensors(engine, memory, seed) {
  const bytes = ROWS * DIM * 4;
  const at = { x: engine._malloc(bytes), w: engine._malloc(DIM * 4), yC: engine._malloc(bytes), yJs: engine._malloc(bytes) };
  const x = normalArray(prng(seed), ROWS * DIM, 3);
  const w = uniformArray(prng(seed + 1), DIM, 0.5, 1.5);
  new Float32Array(memory.buffer, at.x, ROWS * DIM).set(x);
  new Float32Array(memory.buffer, at.w, DIM).set(w);
  const view = (name, n = ROWS * DIM) => new Float32Array(memory.buffer, at[name], n);
  return { at, x, w, view };
}

for (const name of Object.keys(BUILDS).filter((n) => !n.includes('own memory'))) {
  const shared = name.includes('pthread');
  test(`emcc -${name}: bindMemory on the engine's memory gives rmsNorm's and the C library's bits, before and after it grows`, async () => {
    const memory = new WebAssembly.Memory({ initial: INITIAL_MEMORY / PAGE, maximum: MAXIMUM_MEMORY / PAGE, shared });
    const engine = await factories[name]({ wasmMemory: memory });
    assert.equal(engine.wasmMemory, memory, 'the module runs on the memory it was given');
    assert.equal(engine.HEAPU8.buffer, memory.buffer);

    const scratchBytes = 65536;
    const scratch = engine._aligned_alloc(16, scratchBytes);
    assert.equal(scratch % 16, 0);
    const kernels = await bindMemory(memory, { scratch: { byteOffset: scratch, byteLength: scratchBytes } });
    assert.equal(kernels.shared, shared);
    assert.equal(kernels.backend, 'simd');

    const t = engineTensors(engine, memory, 2100 + name.length);
    const expected = rmsNorm(t.x, t.w, { eps: EPS });
    assertSameBits(expected, reference.rmsNorm(t.x, t.w, { eps: EPS }), 'rmsNorm against the reference');
    const check = (what) => {
      engine._engine_rmsnorm(t.at.x, t.at.w, t.at.yC, ROWS, DIM, EPS);
      kernels.rmsNorm(t.view('x'), t.view('w', DIM), { eps: EPS, out: t.view('yJs') });
      assertSameBits(t.view('yJs'), expected, `${name} ${what}: bindMemory against rmsNorm`);
      assertSameBits(t.view('yC'), expected, `${name} ${what}: the C library in the engine against rmsNorm`);
      // Without out, the result is staged through the scratch region.
      assertSameBits(kernels.rmsNorm(t.view('x'), t.view('w', DIM), { eps: EPS }), expected, `${name} ${what}: allocating call`);
    };
    check('at 16 MiB');

    const before = memory.buffer.byteLength;
    const big = engine._malloc(32 * 2 ** 20);
    assert.ok(big !== 0 && memory.buffer.byteLength > before, 'the engine grew its memory');
    new Float32Array(memory.buffer, t.at.yJs, ROWS * DIM).fill(0);
    new Float32Array(memory.buffer, t.at.yC, ROWS * DIM).fill(0);
    check(`after growing to ${memory.buffer.byteLength / 2 ** 20} MiB`);
  });
}

test('a -pthread build exports the shared memory its glue makes as engine.wasmMemory, at -O0 and -O3', async () => {
  for (const name of ['O0 -pthread', 'O3 -pthread']) {
    const engine = await factories[name]();
    assert.ok(engine.wasmMemory instanceof WebAssembly.Memory, name);
    assert.equal(Object.prototype.toString.call(engine.wasmMemory.buffer), '[object SharedArrayBuffer]', name);
    assert.equal(engine.HEAPU8.buffer, engine.wasmMemory.buffer, name);
  }
});

test('without -sIMPORTED_MEMORY the glue exposes no memory that works at every level (why the docs import it)', async () => {
  const o2 = await factories['O2 own memory']();
  const o3 = await factories['O3 own memory']();
  assert.equal(o2.memory, undefined);
  assert.equal(o3.memory, undefined);
  assert.ok(o2.asm.memory instanceof WebAssembly.Memory, '-O2 keeps the export name');
  assert.equal(o3.asm.memory, undefined, '-O3 minifies the export names');
  assert.equal(o3.wasmMemory, undefined);
});
