// What the llama.cpp tests in Node (tests/llama-cpp.test.js) and in the
// browsers (tests/llama-cpp-browsers.test.js) share: the fixture, the models,
// the bounds, and the check of a run's continuations and logits.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';

const root = new URL('../../', import.meta.url);
export const fixture = JSON.parse(readFileSync(new URL('tests/fixtures/tiny-llama.json', root)));
export const { config, vocab } = JSON.parse(readFileSync(new URL('web/model/weights.json', root)));
export const MODELS = {
  f32: 'build/models/tiny-llama-f32.gguf',
  bf16: 'build/models/tiny-llama-bf16.gguf',
  q8_0: 'build/models/tiny-llama-q8_0.gguf',
  // A Llama at decode width (dim 2048, 2 blocks), Q4_K: its vec_dot_type is q8_K.
  wideQ4K: 'build/models/wide-llama-q4_k.gguf',
};
// The prompts' logits against PyTorch's (float32 compute on the bf16
// weights), largest absolute difference: llama.cpp keeps its KV cache in
// float16 (measured: 0.0104 at most, both engines), and the BF16 model
// multiplies by activations ggml rounds to bfloat16, its vec_dot_type
// (measured: 0.057).
export const LOGIT_BOUND = { f32: 0.02, bf16: 0.1 };
// The names' start and end token ('.'), and the context.
export const STOP = 0;
export const MAX_LEN = config.max_seq_len;

// Each decode call of a prompt runs the model's 9 norms (4 blocks of 2, and
// the final one): one call for the prompt, one per token fed back.
export const decodeCalls = (result, maxLen = MAX_LEN) =>
  1 + Math.max(0, result.continuation.length - (result.tokens + result.continuation.length === maxLen ? 1 : 0));
export const NORMS_PER_CALL = 2 * config.n_layers + 1;
// Of those, the integrated engine's fused norm-to-q8 op (llama.patch) runs
// the blocks' two: the final norm's output is also llama.cpp's embeddings
// output (t_embd, flagged a graph output), which ggml_can_fuse keeps, so
// that norm runs as RMS_NORM+MUL and its q8 cast as a CPY of its own.
export const FUSED_NORMS_PER_CALL = 2 * config.n_layers;

export const text = (tokens) => tokens.map((t) => vocab[t]).join('');

/**
 * Stock ggml's wasm q8_0 quantizer truncates where ggml's reference rounds:
 * of a norm output's codes, `differing` of `codes` differ from the
 * reference's, about half (measured: 49.6% in Node, 50% in the browsers).
 */
export function assertTruncatingShare(differing, codes) {
  const share = differing / codes;
  assert.ok(share > 0.3 && share < 0.6, `${differing} of ${codes} codes differ (${(100 * share).toFixed(1)}%)`);
}

/**
 * The runner's results for the 22 fixture prompts (run.cpp's JSON): each
 * greedy continuation is PyTorch's, each logit within LOGIT_BOUND[model].
 */
export function assertFixtureRun(results, model) {
  assert.equal(results.length, fixture.cases.length);
  let worst = 0;
  fixture.cases.forEach((c, i) => {
    const r = results[i];
    assert.equal(text([...c.tokens.slice(1), ...r.continuation]), c.greedy, `prompt ${JSON.stringify(c.prompt)}`);
    c.logits.forEach((row, p) => {
      row.forEach((want, v) => {
        const error = Math.abs(r.logits[p][v] - want);
        worst = Math.max(worst, error);
        assert.ok(error <= LOGIT_BOUND[model], `prompt ${JSON.stringify(c.prompt)}, position ${p}, token ${v}: ${r.logits[p][v]} against ${want}`);
      });
    });
  });
  assert.ok(worst > 0, 'the logits equal PyTorch\'s to the bit: is the fixture read at all?');
  return worst;
}

// The benchmark's smoke run (tests/bench/llama-cpp.js, in Node and in a
// page): run.cpp's --bench times 3 runs of a prefill and `decode` decode calls.
export const BENCH_SMOKE_RUN = { model: 'tiny-llama-q8_0', prompt: 2, decode: 2 };
const BENCH_TIMED_RUNS = 3;

/**
 * One model run's figures for BENCH_SMOKE_RUN (no timing asserted): both
 * engines filled them, and the integrated one ran its fused norm-to-q8 op
 * for every block's norm of every timed decode call.
 */
export function assertBenchRun(figures) {
  for (const engine of ['stock', 'integrated']) {
    assert.ok(figures[engine].prefillTokensPerSecond > 0 && figures[engine].decodeMsPerToken > 0, engine);
  }
  assert.ok(figures.prefillRatio > 0 && figures.decodeRatio > 0);
  assert.equal(figures.stock.fusedQ8Ops, null);
  assert.equal(figures.integrated.fusedQ8Ops, BENCH_TIMED_RUNS * (1 + BENCH_SMOKE_RUN.decode) * FUSED_NORMS_PER_CALL);
}
