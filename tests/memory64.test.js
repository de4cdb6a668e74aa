// bindMemory on a memory64 memory (address: 'i64'), in the engines that make
// one (Chromium, Firefox; WebKitGTK makes none, and Node 20's flagged
// memory64 predates the 64-bit tables of clang's wasm64 code: docs/api.md):
// the wasm64 build of the kernels gives the bits of the wasm32 build bound to
// a 32-bit memory, call for call, and the reference's, shared and not, SIMD
// and scalar, writing nothing but its outputs and the lent scratch region
// (tests/helpers/memory64-page.js); arrays above 4 GiB of a 5 GiB memory
// too.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ENGINES, startTestServer } from './helpers/engines.js';

const BLANK = '/tests/pages/blank.html';
const MEMORY64_ENGINES = ENGINES.filter((engine) => engine.name !== 'webkit');

let server;
before(async () => {
  server = await startTestServer();
});
after(() => server?.close());

async function inPage(browser, fn, arg, isolated) {
  const page = await browser.openPage(server.url(BLANK, { isolated }));
  try {
    const value = await page.evaluate(fn, arg);
    assert.deepEqual(await page.problems(), [], browser.version);
    return value;
  } finally {
    await page.close();
  }
}

for (const engine of MEMORY64_ENGINES) {
  describe(engine.name, () => {
    let browser;
    before(async () => {
      browser = await engine.launch();
    });
    after(() => browser?.close());

    for (const shared of [false, true]) {
      for (const backend of ['simd', 'scalar']) {
        test(`${backend} on a${shared ? ' shared' : ''} memory64 memory: the wasm32 build's bits, the reference's, nothing written outside`, async (t) => {
          const result = await inPage(browser, async (arg) => {
            const { compareBound } = await import('/tests/helpers/memory64-page.js');
            return compareBound(arg);
          }, { backend, shared }, shared);
          t.diagnostic(`${browser.version}: ${result.cases} calls`);
          assert.deepEqual(result.backends, [backend, backend]);
          assert.ok(result.cases > 100, `${result.cases} calls`);
          assert.deepEqual(result.differences, [], browser.version);
          assert.equal(result.outsideChanged, 0, `${browser.version}: bytes changed outside the outputs and the lent region`);
          assert.equal(result.beyondStack, 0, `${browser.version}: bytes changed between the staging and the kernels' stack`);
        });
      }
    }

    test('arrays above 4 GiB of a 5 GiB memory64 memory have the reference\'s bits', async (t) => {
      const result = await inPage(browser, async () => {
        const { aboveFourGiB } = await import('/tests/helpers/memory64-page.js');
        return aboveFourGiB();
      }, null, false);
      t.diagnostic(`${browser.version}: ${JSON.stringify(result)}`);
      assert.equal(result.made, true, `${browser.version} makes a 5 GiB memory64 memory: ${result.error}`);
      assert.equal(result.bytes, 5 * 2 ** 30);
      assert.deepEqual([result.y, result.rstd, result.layer], [-1, -1, -1], 'first differing index of y, rstd, layerNorm');
    });

    test('a shared memory64 memory is bound when its maximum is at most 2^18 pages, refused with a TypeError saying so above', async (t) => {
      const result = await inPage(browser, async () => {
        const { bindMemory } = await import('/src/index.js');
        const scratch = { byteOffset: 65536, byteLength: 65536 };
        const at = async (maximum) => {
          let memory;
          try {
            memory = new WebAssembly.Memory({ initial: 2n, maximum, shared: true, address: 'i64' });
          } catch (error) {
            return { made: false, error: error.constructor.name };
          }
          try {
            const bound = await bindMemory(memory, { scratch });
            return { made: true, bound: bound.shared };
          } catch (error) {
            return { made: true, name: error.constructor.name, message: error.message };
          }
        };
        return { limit: await at(262144n), above: await at(262145n) };
      }, null, true);
      t.diagnostic(`${browser.version}: ${JSON.stringify(result)}`);
      assert.deepEqual(result.limit, { made: true, bound: true });
      // Chromium makes no memory64 memory beyond 2^18 pages; Firefox makes one, which the kernels cannot import.
      if (result.above.made) {
        assert.equal(result.above.name, 'TypeError');
        assert.match(result.above.message, /^bindMemory: a shared memory64 memory must have a maximum of at most 262144 pages/);
      } else {
        assert.equal(result.above.error, 'RangeError');
      }
    });
  });
}
