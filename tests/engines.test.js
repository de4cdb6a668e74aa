// The package in every browser engine of tests/helpers/engines.js (Chromium,
// Firefox, WebKit): the bit-exactness suite with the digest Node computes,
// the tutorial with a clean console, the float16 path against the engine's
// own Float16Array and Math.f16round, and what each engine reports about
// shared memory on an isolated and a non-isolated page. The installed
// package's bundle runs in every engine in tests/package.test.js.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { runBitExactSuite } from './helpers/bit-exact-suite.js';
import { ENGINES, startTestServer } from './helpers/engines.js';
import { packageNames } from './helpers/package-names.js';

const BLANK = '/tests/pages/blank.html';
const EXAMPLE = ['0.55', '-0.37', '1.10', '-2.92'];

// bindMemory takes a shared WebAssembly.Memory whether or not the page has
// the SharedArrayBuffer global (non-isolated pages lack it, WebKitGTK always):
// it tells a shared memory by its buffer.
const expectedBindMemory = () => 'accepted';

let server;
let inNode;
before(async () => {
  server = await startTestServer();
  // The digest every engine must match (tests/bit-exact.test.js holds Node's own run to the reference).
  inNode = await runBitExactSuite();
});
after(() => server?.close());

/** Opens `path`, runs fn(arg) in the page, checks the page stayed clean, closes it. */
async function inPage(browser, path, fn, arg, { isolated = false } = {}) {
  const page = await browser.openPage(server.url(path, { isolated }));
  try {
    const value = await page.evaluate(fn, arg);
    assert.deepEqual(await page.problems(), [], `${browser.version}: ${path}`);
    return value;
  } finally {
    await page.close();
  }
}

for (const engine of ENGINES) {
  describe(engine.name, () => {
    let browser;
    before(async () => {
      browser = await engine.launch();
    });
    after(() => browser?.close());

    test('the page\'s problems are reported: console error and warning, uncaught error, missing resource', async (t) => {
      t.diagnostic(browser.version);
      const page = await browser.openPage(server.url('/tests/pages/noisy.html'));
      try {
        await page.waitFor(() => document.body.dataset.done === 'true');
        const problems = (await page.problems()).join('\n');
        assert.match(problems, /console error: noisy error/);
        assert.match(problems, /console warn(ing)?: noisy warning/);
        assert.match(problems, /noisy uncaught/);
        assert.match(problems, /HTTP 404: \/tests\/pages\/missing\.png/);
      } finally {
        await page.close();
      }
    });

    test('the bit-exactness suite: SIMD = scalar = reference in every case, and the digest is Node\'s', async () => {
      const result = await inPage(browser, BLANK, async () => {
        const { runBitExactSuite: run } = await import('/tests/helpers/bit-exact-suite.js');
        return run();
      });
      assert.deepEqual(result.backends, { simd: 'simd', scalar: 'scalar' }, 'SIMD128 is used');
      assert.deepEqual(result.mismatches, [], `${browser.version}: first mismatches`);
      assert.equal(result.mismatchCount, 0);
      assert.equal(result.cases, inNode.cases);
      assert.equal(result.values, inNode.values);
      assert.equal(result.digest, inNode.digest, `${browser.version}: digest of the SIMD outputs vs Node's`);
    });

    test('accessors the page defines on Array.prototype and Object.prototype steer nothing', async () => {
      const result = await inPage(browser, BLANK, async (names) => {
        const { attackPrototypes } = await import('/tests/helpers/prototype-attack.js');
        return attackPrototypes({ names });
      }, packageNames());
      assert.deepEqual(result.differences, [], browser.version);
      assert.ok(result.same && result.accessors > 400);
      assert.equal(result.hits, 0, `${browser.version}: an accessor of the page ran`);
    });

    test('bindMemory binds a memory64 memory with the wasm64 kernels, where the engine makes one', async (t) => {
      const result = await inPage(browser, BLANK, async () => {
        const { bindMemory } = await import('/src/index.js');
        let memory;
        try {
          memory = new WebAssembly.Memory({ initial: 2n, address: 'i64' });
        } catch {
          return { made: false };
        }
        try {
          const bound = await bindMemory(memory, { scratch: { byteOffset: 65536, byteLength: 65536 } });
          const x = new Float32Array(memory.buffer, 16, 4);
          x.set([2, -4, 6, -8]);
          const w = new Float32Array(memory.buffer, 32, 4);
          w.set([1.5, 0.5, 1, 2]);
          return { made: true, y: Array.from(bound.rmsNorm(x, w), (v) => v.toFixed(2)) };
        } catch (error) {
          return { made: true, name: error.constructor.name, message: error.message };
        }
      });
      // tests/memory64.test.js holds the memory64 kernels to the wasm32 ones, call for call.
      t.diagnostic(`${browser.version}: ${result.made ? 'makes' : 'does not make'} memory64 memories`);
      if (result.made) assert.deepEqual(result.y, EXAMPLE, JSON.stringify(result));
    });

    test('the tutorial\'s model panel generates names with the package\'s norms, with a clean console', async () => {
      const page = await browser.openPage(server.url('/web/#inside-a-model'));
      try {
        await page.waitFor(() => document.querySelector('#inside-a-model[data-ready]') !== null, null, 60_000);
        const names = () => [...document.querySelectorAll('#model-names li')].map((li) => li.textContent).join(',');
        const first = await page.evaluate(names);
        await page.evaluate(() => {
          document.getElementById('model-seed').value = '4242';
          document.getElementById('model-generate').click();
        });
        await page.waitFor((before) => [...document.querySelectorAll('#model-names li')]
          .map((li) => li.textContent).join(',') !== before, first, 60_000);
        const written = (await page.evaluate(names)).split(',');
        assert.equal(written.length, 8, `${browser.version}: names written`);
        for (const name of written) assert.match(name, /^[A-Z][a-z-]*$|^\(empty\)$/, `${browser.version}: ${name}`);
        assert.deepEqual(await page.problems(), [], browser.version);
      } finally {
        await page.close();
      }
    });

    test('the tutorial loads with a clean console and shows the worked example from the SIMD module', async () => {
      const page = await browser.openPage(server.url('/web/'));
      try {
        await page.waitFor(() => document.body.dataset.ready === 'true', null, 60_000);
        const shown = await page.evaluate(() => ({
          y: [...document.querySelectorAll('#formula-y td')].map((td) => td.textContent),
          backend: document.getElementById('status').dataset.backend,
          katex: document.querySelectorAll('.math .katex').length,
          bitExact: document.getElementById('bit-exact-max').textContent,
        }));
        assert.deepEqual(shown, { y: EXAMPLE, backend: 'simd', katex: 2, bitExact: '0' });
        assert.deepEqual(await page.problems(), [], browser.version);
      } finally {
        await page.close();
      }
    });

    test('float16: Float16Array exists, and rmsNorm\'s float16 bits are the reference\'s and Math.f16round\'s', async () => {
      const report = await inPage(browser, BLANK, async () => {
        const [{ wasmImplementations }, ref, { narrow }, { portableNormal }, { prng, uniformArray }] = await Promise.all([
          import('/tests/helpers/implementations.js'), import('/src/reference/index.js'), import('/src/reference/float16.js'),
          import('/tests/helpers/bit-exact-suite.js'), import('/web/lib/random.js')]);
        const out = { float16Array: typeof Float16Array, f16round: typeof Math.f16round, cases: 0, mismatches: [] };
        if (typeof Float16Array !== 'function' || typeof Math.f16round !== 'function') return out;
        const miss = (what, i, got, want) => out.mismatches.length < 10 && out.mismatches.push(`${what}: index ${i}: ${got} vs ${want}`);
        for (const api of await wasmImplementations()) {
          const backend = api.name;
          for (const dim of [1, 7, 16, 17, 64, 257, 896]) {
            const rows = 3;
            const seed = 16 * dim;
            const rand = prng(seed);
            // The engine rounds the inputs to float16 itself; the reference's
            // conversion must give the same bits.
            const xs = portableNormal(rand, rows * dim, 3);
            const x16 = new Float16Array(xs);
            const xBits = new Uint16Array(x16.buffer);
            for (let i = 0; i < xs.length; i++) {
              const bits = narrow(xs[i], 'float16');
              if (xBits[i] !== bits) miss(`Float16Array conversion dim=${dim} seed=${seed}`, i, xBits[i], bits);
            }
            const xWide = Float32Array.from(x16); // exact: every float16 is a float32
            const w = uniformArray(rand, dim, 0.5, 1.5);
            const v = ref.rmsNorm(xWide, null, { dim }); // the float32 normalized values
            for (const castMode of ['llama', 'gemma']) {
              const what = `${backend} castMode=${castMode} rows=${rows} dim=${dim} seed=${seed}`;
              out.cases += 1;
              // Uint16Array bits in, a Float16Array out (the engine has one).
              const y16 = api.rmsNorm(xBits, w, { dtype: 'float16', castMode });
              if (!(y16 instanceof Float16Array)) miss(`${what}: a new float16 result`, 0, String(y16), 'a Float16Array');
              const y = new Uint16Array(y16.buffer, y16.byteOffset, y16.length);
              const yRef = new Uint16Array(ref.rmsNorm(xBits, w, { dtype: 'float16', castMode }).buffer);
              // Float16Array in: x, a float16 weight, out, and the fused add.
              const fromF16 = new Uint16Array(api.rmsNorm(x16, w, { castMode }).buffer);
              const w16 = new Float16Array(w);
              const wideW = Float32Array.from(w16);
              const withW16 = new Uint16Array(api.rmsNorm(x16, w16, { castMode }).buffer);
              const withWideW = new Uint16Array(api.rmsNorm(xBits, wideW, { dtype: 'float16', castMode }).buffer);
              const into = new Float16Array(x16.length);
              api.rmsNorm(x16, w, { castMode, out: into });
              const residual = new Float16Array(x16);
              const fused = new Uint16Array(api.addRmsNorm(new Float16Array(x16.length), residual, w, { castMode }).buffer);
              const intoBits = new Uint16Array(into.buffer);
              for (let i = 0; i < y.length; i++) {
                if (y[i] !== yRef[i]) miss(`${what} vs reference`, i, y[i], yRef[i]);
                if (fromF16[i] !== y[i]) miss(`${what}: a Float16Array x`, i, fromF16[i], y[i]);
                if (intoBits[i] !== y[i]) miss(`${what}: a Float16Array out`, i, intoBits[i], y[i]);
                if (fused[i] !== y[i]) miss(`${what}: a Float16Array residual`, i, fused[i], y[i]);
                if (withW16[i] !== withWideW[i]) miss(`${what}: a Float16Array weight`, i, withW16[i], withWideW[i]);
                // The contract (src/kernels/f32-rmsnorm/rmsnorm_f32.h): gemma rounds
                // v·w once to float16; llama rounds v to float16 first.
                const product = castMode === 'gemma' ? v[i] * w[i % dim] : Math.f16round(v[i]) * w[i % dim];
                const expected = Math.f16round(Math.fround(product));
                if (!Object.is(y16[i], expected)) miss(`${what} vs Math.f16round`, i, y16[i], expected);
              }
            }
          }
        }
        return out;
      });
      assert.equal(report.float16Array, 'function', `${browser.version}: Float16Array`);
      assert.equal(report.f16round, 'function', `${browser.version}: Math.f16round`);
      assert.deepEqual(report.mismatches, []);
      assert.equal(report.cases, 28);
    });

    test('shared memory: made and recognized as shared on an isolated page; what a non-isolated page reports', async (t) => {
      const probe = async () => {
        const api = await import('/src/index.js');
        const report = { isolated: self.crossOriginIsolated, sharedArrayBufferGlobal: typeof SharedArrayBuffer === 'function' };
        let memory;
        try {
          memory = new WebAssembly.Memory({ initial: 2, maximum: 2, shared: true });
        } catch (error) {
          report.sharedMemory = `${error.name}: ${error.message}`;
          return report;
        }
        // Recognized without the SharedArrayBuffer global, which WebKitGTK lacks.
        report.sharedMemory = Object.prototype.toString.call(memory.buffer);
        try {
          const bound = await api.bindMemory(memory, { scratch: { byteOffset: 0x10000, byteLength: 4096 } });
          const x = new Float32Array(memory.buffer, 0x100, 4);
          const w = new Float32Array(memory.buffer, 0x200, 4);
          x.set([2, -4, 6, -8]);
          w.set([1.5, 0.5, 1, 2]);
          const y = bound.rmsNorm(x, w, { out: new Float32Array(memory.buffer, 0x300, 4) });
          report.bindMemory = bound.shared && [...y].map((v) => v.toFixed(2)).join(' ') === '0.55 -0.37 1.10 -2.92'
            ? 'accepted' : `wrong: shared ${bound.shared}, y ${[...y]}`;
        } catch (error) {
          report.bindMemory = error.name;
        }
        return report;
      };
      const isolated = await inPage(browser, BLANK, probe, null, { isolated: true });
      const plain = await inPage(browser, BLANK, probe, null);
      t.diagnostic(`${browser.version}: isolated ${JSON.stringify(isolated)}; not isolated ${JSON.stringify(plain)}`);
      assert.equal(isolated.isolated, true);
      assert.equal(plain.isolated, false);
      // Every engine here makes a shared memory even without isolation (it
      // cannot be posted to a worker there), and its buffer is recognized as
      // shared without the SharedArrayBuffer global.
      for (const report of [isolated, plain]) {
        assert.equal(report.sharedMemory, '[object SharedArrayBuffer]');
        assert.equal(report.bindMemory, expectedBindMemory(report));
      }
      // WebKitGTK has no SharedArrayBuffer global even on an isolated page.
      assert.equal(isolated.sharedArrayBufferGlobal, engine.name !== 'webkit');
      assert.equal(plain.sharedArrayBufferGlobal, false);
    });
  });
}
