// llama.cpp built for the web, stock and on the package, in Chromium and
// Firefox: the runner linked for the page (build/llama-run-*.mjs, llama.mk)
// loads the tiny Llama's GGUF from the test server and runs the 22 fixture
// prompts; their continuations and logits are held to the Node test's bounds
// (tests/helpers/llama-cpp.js), and every RMSNorm the integrated engine
// computes for one prompt is checked in the page against the package's
// rmsNorm (/src/index.js, on the browser's own wasm), and with the Q8_0
// GGUF each norm's q8_0 blocks against ggml's reference rule (the package's
// JS reference quantizer). `make test` builds the engines and the models.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { measureModelsInBrowser, modelTable } from './bench/llama-cpp.js';
import { ENGINES, startTestServer } from './helpers/engines.js';
import { assertBenchRun, assertFixtureRun, assertTruncatingShare, BENCH_SMOKE_RUN, decodeCalls, fixture, MAX_LEN, MODELS, NORMS_PER_CALL, STOP } from './helpers/llama-cpp.js';

const LLAMA_ENGINES = ['stock', 'integrated'];
const MODEL_DTYPES = ['f32', 'bf16'];
// The prompt whose norms are checked: the longest continuation, the most
// decode calls (its prefill's rows, then one row per call).
const generated = (c) => c.greedy.length - c.tokens.length;
const NORMS_CASE = fixture.cases.reduce((best, c) => (generated(c) > generated(best) ? c : best));

/** In the page: the fixture prompts through one engine and model. */
async function runFixture({ engine, model, prompts, maxLen, stop }) {
  const { loadLlamaRun } = await import('/src/integrations/llama.cpp/page.js');
  const runner = await loadLlamaRun(`/build/llama-run-${engine}.mjs`, `/${model}`);
  const result = runner.run(prompts, { maxLen, stop });
  return { engine: result.engine, results: result.results };
}

/** In the page: every norm the integrated engine computes for one prompt, against the package's rmsNorm. */
async function checkNorms({ model, prompt, maxLen, stop }) {
  const [{ loadLlamaRun }, { init, rmsNorm }] = await Promise.all([
    import('/src/integrations/llama.cpp/page.js'),
    import('/src/index.js'),
  ]);
  await init();
  const runner = await loadLlamaRun('/build/llama-run-integrated.mjs', `/${model}`);
  const [result] = runner.run([prompt], { maxLen, stop, capture: 'norms' }).results;
  const floats = (base64) => {
    const bytes = Uint8Array.from(atob(base64), (ch) => ch.charCodeAt(0));
    return new Float32Array(bytes.buffer);
  };
  const mismatches = [];
  let norms = 0;
  let values = 0;
  for (const e of result.captures.filter((c) => c.kind === 'norm')) {
    const x = floats(e.x);
    const got = new Uint32Array(floats(e.y).buffer);
    const want = new Uint32Array(rmsNorm(x, floats(e.weight), { eps: e.eps }).buffer);
    if (x.length !== e.rows * e.dim || got.length !== want.length) mismatches.push(`${e.name}: ${x.length} inputs, ${got.length} outputs`);
    const first = want.findIndex((bits, k) => bits !== got[k]);
    if (first !== -1) mismatches.push(`${e.name} (${e.rows}x${e.dim}): value ${first}`);
    norms++;
    values += got.length;
  }
  return { tokens: result.tokens, continuation: result.continuation, norms, values, mismatches };
}

/**
 * In the page: one prompt through an engine and the Q8_0 GGUF, its norms'
 * q8_0 blocks against the package's reference quantizer of their float32
 * output (ggml's reference rule), block by block. Integrated: the blocks
 * mul_mat receives, unfused and fused (the fused op's must be the same
 * bytes). Stock: its own cast of each norm's output (ggml's wasm quantizer).
 */
async function checkQ8Blocks({ engine, model, prompt, maxLen, stop }) {
  const [{ loadLlamaRun }, { quantize }] = await Promise.all([
    import('/src/integrations/llama.cpp/page.js'),
    import('/src/reference/index.js'),
  ]);
  const runner = await loadLlamaRun(`/build/llama-run-${engine}.mjs`, `/${model}`);
  const bytes = (base64) => Uint8Array.from(atob(base64), (ch) => ch.charCodeAt(0));
  const floats = (base64) => new Float32Array(bytes(base64).buffer);
  const [result] = runner.run([prompt], { maxLen, stop, capture: 'norms' }).results;
  const mismatches = [];
  let received = 0;
  let converted = 0;
  let codes = 0;
  let differing = 0;
  const compare = (name, got, y) => {
    const want = quantize(y, { dtype: 'q8_0' });
    if (got.length !== want.length) mismatches.push(`${name}: ${got.length} bytes, want ${want.length}`);
    for (let b = 0; b < want.length; b += 34) {
      let differs = got[b] !== want[b] || got[b + 1] !== want[b + 1]; // d
      for (let j = 2; j < 34; j++, codes++) {
        if (got[b + j] !== want[b + j]) {
          differing++;
          differs = true;
        }
      }
      if (differs) mismatches.push(`${name}: block ${b / 34}`);
    }
  };
  const latest = new Map();
  const unfused = [];
  for (const e of result.captures) {
    if (e.kind === 'norm') {
      latest.set(e.name, floats(e.y));
      // The engine's from_float of the output, as mul_mat would convert it.
      if (e.q8_0 !== undefined) {
        compare(e.name, bytes(e.q8_0), floats(e.y));
        converted++;
      }
    } else if (e.kind === 'q8') {
      if (!latest.has(e.of)) mismatches.push(`${e.name}: not cast from a norm's output`);
      else compare(e.name, bytes(e.bytes), latest.get(e.of));
      unfused.push(e.bytes);
      received++;
    }
  }
  let fusedEqual = null;
  if (engine === 'integrated') {
    const [fused] = runner.run([prompt], { maxLen, stop, capture: 'fused' }).results;
    const blocks = fused.captures.filter((e) => e.kind === 'q8').map((e) => e.bytes);
    fusedEqual = blocks.length === unfused.length && blocks.every((b, k) => b === unfused[k]);
  }
  return { tokens: result.tokens, continuation: result.continuation, received, converted, codes, differing, mismatches, fusedEqual };
}

for (const browserEngine of ENGINES.filter((e) => e.name !== 'webkit')) {
  test(`llama.cpp in ${browserEngine.name}: stock and integrated, F32 and BF16, PyTorch's 22 continuations; the integrated norms are the package's rmsNorm, their q8_0 blocks ggml's reference rule's`, async (t) => {
    const server = await startTestServer();
    const browser = await browserEngine.launch();
    try {
      t.diagnostic(browser.version);
      const prompts = fixture.cases.map((c) => c.tokens);
      for (const engine of LLAMA_ENGINES) {
        for (const model of MODEL_DTYPES) {
          const page = await browser.openPage(server.url('/tests/pages/blank.html'));
          try {
            const reply = await page.evaluate(runFixture, { engine, model: MODELS[model], prompts, maxLen: MAX_LEN, stop: STOP });
            assert.equal(reply.engine, engine);
            const worst = assertFixtureRun(reply.results, model);
            t.diagnostic(`${engine} ${model}: largest logit difference from PyTorch ${worst.toFixed(4)}`);
            assert.deepEqual(await page.problems(), []);
          } finally {
            await page.close();
          }
        }
      }
      const page = await browser.openPage(server.url('/tests/pages/blank.html'));
      try {
        const r = await page.evaluate(checkNorms, { model: MODELS.f32, prompt: NORMS_CASE.tokens, maxLen: MAX_LEN, stop: STOP });
        assert.deepEqual(r.mismatches, [], `prompt ${JSON.stringify(NORMS_CASE.prompt)}`);
        assert.equal(r.norms, NORMS_PER_CALL * decodeCalls(r), 'norms captured');
        assert.ok(r.values > 0);
        t.diagnostic(`integrated f32, prompt ${JSON.stringify(NORMS_CASE.prompt)}: ${r.norms} norms, ${r.values} values, all the package's bits`);
        assert.deepEqual(await page.problems(), []);
      } finally {
        await page.close();
      }
      for (const engine of LLAMA_ENGINES) {
        const q8Page = await browser.openPage(server.url('/tests/pages/blank.html'));
        try {
          const r = await q8Page.evaluate(checkQ8Blocks, { engine, model: MODELS.q8_0, prompt: NORMS_CASE.tokens, maxLen: MAX_LEN, stop: STOP });
          // Every norm feeds Q8_0 weights (tests/llama-cpp.test.js): in the
          // integrated engine mul_mat receives its blocks; stock converts it.
          assert.equal(r.converted, NORMS_PER_CALL * decodeCalls(r), `${engine}: norm outputs converted`);
          assert.equal(r.received, engine === 'integrated' ? r.converted : 0, `${engine}: q8_0 casts mul_mat receives`);
          if (engine === 'integrated') {
            assert.deepEqual(r.mismatches, [], 'integrated: blocks against ggml\'s reference rule');
            assert.equal(r.fusedEqual, true, 'integrated: the fused op\'s blocks');
          } else {
            assertTruncatingShare(r.differing, r.codes);
          }
          t.diagnostic(`${engine} q8_0: ${r.converted} norm outputs, ${r.received} casts, ${r.differing} of ${r.codes} codes differ from ggml's reference rule`);
          assert.deepEqual(await q8Page.problems(), []);
        } finally {
          await q8Page.close();
        }
      }
    } finally {
      await browser.close();
      await server.close();
    }
  });
}

test('the benchmark\'s Chromium rows run in a page and fill their table (no timing asserted)', async (t) => {
  const { version, models } = await measureModelsInBrowser('chromium', { runs: [BENCH_SMOKE_RUN], rounds: 1 });
  t.diagnostic(version);
  assertBenchRun(models[0]);
  assert.match(modelTable(models), /^\| tiny-llama-q8_0 \| 2, 2 \|/m);
});
