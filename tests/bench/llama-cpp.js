// npm run bench's llama.cpp rows (docs/llama.cpp.md): the stock engine ÷ the
// integrated one, side by side in one run, one thread. The norm op alone
// inside each engine's ggml-cpu (build/llama-norm-bench-*.cjs, Node), and
// whole models' prefill and decode (run.cpp's --bench: build/llama-run-*.cjs
// in Node, build/llama-run-*.mjs in a Chromium page). The two engines
// alternate, `rounds` times; each figure is the median of its rounds. Then
// an accuracy figure: each engine's Q8_0 logits against its F32 logits on
// the same token sequences.
//
//   node tests/bench/llama-cpp.js [--rounds 3] [--norm-rounds 3] [--repeats 9] [--engine node,chromium]
//                                 [--norm-only]   (the norm op alone: needs only the two norm-bench builds)
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { engineNamed, startTestServer } from '../helpers/engines.js';
import { OPTIMIZED_WASM_V8_FLAGS } from '../helpers/optimized-wasm.js';
import { config, fixture, MODELS, STOP, vocab } from '../helpers/llama-cpp.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const ENGINES = ['stock', 'integrated'];
export const NORM_SHAPES = ['1x2048', '1x4096', '32x4096'];
// Prompt length and decoded tokens within each model's context.
export const MODEL_RUNS = [
  { model: 'tiny-llama-q8_0', prompt: 4, decode: 8 },
  { model: 'wide-llama-q8_0', prompt: 32, decode: 16 },
  { model: 'wide-llama-q4_k', prompt: 32, decode: 16 },
];

const runJson = (file, args, nodeFlags = []) =>
  JSON.parse(execFileSync(process.execPath, [...nodeFlags, file, ...args], { cwd: root, encoding: 'utf8', maxBuffer: 1 << 26 }));
// A timed run: its engine compiled by V8's optimizing tier alone (../helpers/optimized-wasm.js).
const runTimed = (file, args) => runJson(file, args, OPTIMIZED_WASM_V8_FLAGS);
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

/** Per engine, the rounds' results of `measure(engine)`, engines alternating. */
function alternate(rounds, measure) {
  const results = Object.fromEntries(ENGINES.map((e) => [e, []]));
  for (let r = 0; r < rounds; r++) for (const engine of ENGINES) results[engine].push(measure(engine));
  return results;
}

/**
 * The norm op's microseconds per engine and shape (norm-bench.cpp's graphs),
 * and the fused ops the q8_0 graph ran in a round:
 * { shape: { stock: { norm, q8_0, convert, fusedQ8Ops }, integrated: … } }.
 */
export function measureNorms({ shapes = NORM_SHAPES, rounds = 3, repeats = 9 } = {}) {
  const runs = alternate(rounds, (engine) => runTimed(`build/llama-norm-bench-${engine}.cjs`, [...shapes, '--repeats', `${repeats}`]));
  return Object.fromEntries(shapes.map((shape, i) => [shape, Object.fromEntries(ENGINES.map((engine) => [engine, {
    norm: median(runs[engine].map((run) => run.shapes[i].norm_us)),
    q8_0: median(runs[engine].map((run) => run.shapes[i].q8_0_us)),
    convert: median(runs[engine].map((run) => run.shapes[i].convert_us)),
    fusedQ8Ops: runs[engine][0].shapes[i].fused_q8_ops,
  }]))]));
}

const benchPrompt = (run) => Array.from({ length: run.prompt }, (_, i) => (i * 7 + 1) % 28).join(',');

/** The median over rounds of stock's time ÷ the integrated engine's in the same round. */
const pairedRatio = (results, time) => median(results.stock.map((r, i) => time(r) / time(results.integrated[i])));

/**
 * A model run's figures from its rounds of run.cpp's --bench results, per
 * engine, and stock ÷ integrated per round: the two engines of a round run
 * one after the other, so a ratio of theirs does not see the machine's
 * speed change between rounds, as one of the engines' medians would
 * (docs/benchmarks.md#whole-models).
 */
export const modelFigures = (run, results) => ({
  ...run,
  prefillRatio: pairedRatio(results, (r) => r.prefill_ms),
  decodeRatio: pairedRatio(results, (r) => r.decode_ms_per_token),
  ...Object.fromEntries(ENGINES.map((engine) => [engine, {
    prefillTokensPerSecond: median(results[engine].map((r) => (1000 * run.prompt) / r.prefill_ms)),
    decodeMsPerToken: median(results[engine].map((r) => r.decode_ms_per_token)),
    // The fused norm-to-q8 ops of a round (null: the stock engine has none).
    fusedQ8Ops: results[engine][0].fused_q8_ops,
  }])),
});

/** Prefill tokens/s and decode ms/token per engine and model run, in Node. */
export function measureModels({ runs = MODEL_RUNS, rounds = 3 } = {}) {
  return runs.map((run) => modelFigures(run, alternate(rounds, (engine) =>
    runTimed(`build/llama-run-${engine}.cjs`, [`build/models/${run.model}.gguf`, benchPrompt(run), '--bench', `${run.decode}`]).results[0])));
}

/** The same figures in a page of a browser engine (tests/helpers/engines.js): { version, models }. */
export async function measureModelsInBrowser(engineName, { runs = MODEL_RUNS, rounds = 3 } = {}) {
  const server = await startTestServer();
  const browser = await engineNamed(engineName).launch({ optimizedWasm: true });
  try {
    const models = [];
    for (const run of runs) {
      // A fresh page per model: the two engine modules and the model's bytes go with it.
      // Isolated: performance.now(), run.cpp's clock, at its finest resolution.
      const page = await browser.openPage(server.url('/tests/pages/blank.html', { isolated: true }));
      try {
        const results = await page.evaluate(async (arg) => (await import('/tests/bench/llama-cpp-page.js')).benchModelInPage(arg),
          { model: run.model, prompt: benchPrompt(run), decode: run.decode, rounds });
        const problems = await page.problems();
        if (problems.length > 0) throw new Error(`${browser.version}: ${problems.join('; ')}`);
        models.push(modelFigures(run, results));
      } finally {
        await page.close();
      }
    }
    return { version: browser.version, models };
  } finally {
    await browser.close();
    await server.close();
  }
}

// The sequences the logit error is measured on: the 22 fixture prompts with
// PyTorch's greedy continuations, and sequences the F32 model generates
// (greedy, no stop: a name, '.', the next name…) from the start token and
// two letters, to the context's length, GENERATED_SEQUENCES of them.
export const GENERATED_SEQUENCES = 80;
const ids = (text) => [...text].map((ch) => vocab.indexOf(ch));
const fixtureSequences = () => fixture.cases.map((c) => [STOP, ...ids(c.greedy)]);
/** Distinct [start, a, b] prompts: a runs over the letters, b steps by 9 each time a wraps. */
const generationPrompts = (count) => Array.from({ length: count }, (_, i) => {
  const letters = config.vocab_size - 1;
  return [STOP, 1 + (i % letters), 1 + ((i + 1 + 9 * Math.floor(i / letters)) % letters)];
});

/** run.cpp's results for `sequences` through one engine and model, each a prompt of its own. */
const runSequences = (engine, model, sequences, args) =>
  runJson(`build/llama-run-${engine}.cjs`, [MODELS[model], sequences.map((s) => s.join(',')).join(';'), ...args]).results;

/**
 * Each engine's Q8_0 logits against its own F32 logits, teacher-forced (each
 * sequence one prompt, the logits of every position): the fixture's
 * sequences and `generated` sequences the stock F32 engine decodes greedily.
 * { positions: { fixture, generated }, generatedTokens, stock: { rms, max }, integrated: { rms, max } }.
 */
export function measureLogitErrors({ generated = GENERATED_SEQUENCES } = {}) {
  const context = config.max_seq_len;
  const decoded = runSequences('stock', 'f32', generationPrompts(generated), ['--max-len', `${context}`]);
  const generatedSequences = decoded.map((r, i) => [...generationPrompts(generated)[i], ...r.continuation]);
  const sequences = [...fixtureSequences(), ...generatedSequences];
  const forced = ['--max-new', '0'];
  const errors = Object.fromEntries(ENGINES.map((engine) => {
    const base = runSequences(engine, 'f32', sequences, forced);
    let sum = 0;
    let n = 0;
    let max = 0;
    runSequences(engine, 'q8_0', sequences, forced).forEach((r, i) => {
      if (r.continuation.length !== 0 || r.logits.length !== sequences[i].length) throw new Error(`${engine}: sequence ${i} is not teacher-forced`);
      r.logits.forEach((row, p) => row.forEach((v, k) => {
        const d = v - base[i].logits[p][k];
        sum += d * d;
        n++;
        max = Math.max(max, Math.abs(d));
      }));
    });
    return [engine, { rms: Math.sqrt(sum / n), max }];
  }));
  const positions = (list) => list.reduce((total, s) => total + s.length, 0);
  return {
    positions: { fixture: positions(fixtureSequences()), generated: positions(generatedSequences) },
    generatedTokens: decoded.reduce((total, r) => total + r.continuation.length, 0),
    ...errors,
  };
}

const fixed = (v, digits = 2) => v.toFixed(digits);

export function normTable(norms) {
  const lines = [
    '| rows×dim | stock RMS_NORM+MUL µs | integrated µs | stock ÷ integrated | stock +q8_0 conversion µs | integrated fused q8_0 µs | stock ÷ integrated | q8_0 conversion alone µs: stock / integrated | integrated fused q8_0 ÷ its norm |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
  ];
  for (const [shape, { stock, integrated }] of Object.entries(norms)) {
    lines.push(`| ${shape.replace('x', '×')} | ${fixed(stock.norm)} | ${fixed(integrated.norm)} | ${fixed(stock.norm / integrated.norm)} | ${fixed(stock.q8_0)} | ${fixed(integrated.q8_0)} | ${fixed(stock.q8_0 / integrated.q8_0)} | ${fixed(stock.convert)} / ${fixed(integrated.convert)} | ${fixed(integrated.q8_0 / integrated.norm)} |`);
  }
  return lines.join('\n');
}

export function logitTable({ positions, generatedTokens, stock, integrated }) {
  return [
    `Positions: ${positions.fixture} of the fixture's sequences, ${positions.generated} of generated ones (${generatedTokens} generated tokens).`,
    '',
    '| Q8_0 logits − F32 logits | stock | integrated | integrated ÷ stock |',
    '| --- | ---: | ---: | ---: |',
    `| RMS | ${fixed(stock.rms, 4)} | ${fixed(integrated.rms, 4)} | ${fixed(integrated.rms / stock.rms, 3)} |`,
    `| max | ${fixed(stock.max, 4)} | ${fixed(integrated.max, 4)} | ${fixed(integrated.max / stock.max, 3)} |`,
  ].join('\n');
}

export function modelTable(models) {
  const lines = [
    '| model | prompt, decoded | stock prefill tok/s | integrated | stock ÷ integrated (time, median of rounds) | stock decode ms/token | integrated | stock ÷ integrated (median of rounds) |',
    '| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |',
  ];
  for (const m of models) {
    const { stock, integrated } = m;
    lines.push(`| ${m.model} | ${m.prompt}, ${m.decode} | ${fixed(stock.prefillTokensPerSecond, 1)} | ${fixed(integrated.prefillTokensPerSecond, 1)} | ${fixed(m.prefillRatio, 3)} | ${fixed(stock.decodeMsPerToken, 3)} | ${fixed(integrated.decodeMsPerToken, 3)} | ${fixed(m.decodeRatio, 3)} |`);
  }
  return lines.join('\n');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({
    options: {
      rounds: { type: 'string', default: '3' },
      'norm-rounds': { type: 'string', default: '3' },
      repeats: { type: 'string', default: '9' },
      engine: { type: 'string', default: 'node,chromium' },
      'norm-only': { type: 'boolean', default: false },
    },
  });
  const rounds = Number(values.rounds);
  const engines = values.engine.split(',');
  console.log(`llama.cpp, ${process.version}, one thread: the norm op inside ggml-cpu (median µs)\n`);
  console.log(normTable(measureNorms({ rounds: Number(values['norm-rounds']), repeats: Number(values.repeats) })));
  if (values['norm-only']) process.exit(0);
  if (engines.includes('node')) {
    console.log(`\nWhole models in Node ${process.version}, stock ÷ integrated\n`);
    console.log(modelTable(measureModels({ rounds })));
  }
  for (const engine of engines.filter((e) => e !== 'node')) {
    const { version, models } = await measureModelsInBrowser(engine, { rounds });
    console.log(`\nWhole models in ${version}, stock ÷ integrated\n`);
    console.log(modelTable(models));
  }
  console.log('\nQ8_0 logits against the same engine\'s F32 logits, teacher-forced\n');
  console.log(logitTable(measureLogitErrors()));
}
