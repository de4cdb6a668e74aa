// npm run bench's llama.cpp rows (docs/llama.cpp.md): the stock engine ÷ the
// integrated one, side by side in one run, one thread, Node. The norm op
// alone inside each engine's ggml-cpu (build/llama-norm-bench-*.cjs), and
// whole models' prefill and decode (build/llama-run-*.cjs --bench). The two
// engines alternate, ROUNDS times; each figure is the median of its rounds.
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));
const ENGINES = ['stock', 'integrated'];
export const NORM_SHAPES = ['1x2048', '1x4096', '32x4096'];
// Prompt length and decoded tokens within each model's context.
export const MODEL_RUNS = [
  { model: 'tiny-llama-q8_0', prompt: 4, decode: 8 },
  { model: 'wide-llama-q8_0', prompt: 32, decode: 16 },
  { model: 'wide-llama-q4_k', prompt: 32, decode: 16 },
];

const runJson = (file, args) =>
  JSON.parse(execFileSync(process.execPath, [file, ...args], { cwd: root, encoding: 'utf8', maxBuffer: 1 << 26 }));
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

/** Per engine, the rounds' results of `measure(engine)`, engines alternating. */
function alternate(rounds, measure) {
  const results = Object.fromEntries(ENGINES.map((e) => [e, []]));
  for (let r = 0; r < rounds; r++) for (const engine of ENGINES) results[engine].push(measure(engine));
  return results;
}

/** The norm op's microseconds per engine and shape: { shape: { stock: { norm, q8_0 }, integrated: … } }. */
export function measureNorms({ shapes = NORM_SHAPES, rounds = 3, repeats = 9 } = {}) {
  const runs = alternate(rounds, (engine) => runJson(`build/llama-norm-bench-${engine}.cjs`, [...shapes, '--repeats', `${repeats}`]));
  return Object.fromEntries(shapes.map((shape, i) => [shape, Object.fromEntries(ENGINES.map((engine) => [engine, {
    norm: median(runs[engine].map((run) => run.shapes[i].norm_us)),
    q8_0: median(runs[engine].map((run) => run.shapes[i].q8_0_us)),
  }]))]));
}

/** Prefill tokens/s and decode ms/token per engine and model run. */
export function measureModels({ runs = MODEL_RUNS, rounds = 3 } = {}) {
  return runs.map((run) => {
    const prompt = Array.from({ length: run.prompt }, (_, i) => (i * 7 + 1) % 28).join(',');
    const results = alternate(rounds, (engine) =>
      runJson(`build/llama-run-${engine}.cjs`, [`build/models/${run.model}.gguf`, prompt, '--bench', `${run.decode}`]).results[0]);
    return {
      ...run,
      ...Object.fromEntries(ENGINES.map((engine) => [engine, {
        prefillTokensPerSecond: median(results[engine].map((r) => (1000 * run.prompt) / r.prefill_ms)),
        decodeMsPerToken: median(results[engine].map((r) => r.decode_ms_per_token)),
      }])),
    };
  });
}

const fixed = (v, digits = 2) => v.toFixed(digits);

export function normTable(norms) {
  const lines = [
    '| rows×dim | stock RMS_NORM+MUL µs | integrated µs | stock ÷ integrated | stock +q8_0 conversion µs | integrated fused q8_0 µs | stock ÷ integrated |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: |',
  ];
  for (const [shape, { stock, integrated }] of Object.entries(norms)) {
    lines.push(`| ${shape.replace('x', '×')} | ${fixed(stock.norm)} | ${fixed(integrated.norm)} | ${fixed(stock.norm / integrated.norm)} | ${fixed(stock.q8_0)} | ${fixed(integrated.q8_0)} | ${fixed(stock.q8_0 / integrated.q8_0)} |`);
  }
  return lines.join('\n');
}

export function modelTable(models) {
  const lines = [
    '| model | prompt, decoded | stock prefill tok/s | integrated | stock ÷ integrated (time) | stock decode ms/token | integrated | stock ÷ integrated |',
    '| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |',
  ];
  for (const m of models) {
    const { stock, integrated } = m;
    lines.push(`| ${m.model} | ${m.prompt}, ${m.decode} | ${fixed(stock.prefillTokensPerSecond, 1)} | ${fixed(integrated.prefillTokensPerSecond, 1)} | ${fixed(integrated.prefillTokensPerSecond / stock.prefillTokensPerSecond, 3)} | ${fixed(stock.decodeMsPerToken, 3)} | ${fixed(integrated.decodeMsPerToken, 3)} | ${fixed(stock.decodeMsPerToken / integrated.decodeMsPerToken, 3)} |`);
  }
  return lines.join('\n');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  console.log(`llama.cpp ${process.version}, one thread: the norm op inside ggml-cpu (median µs)\n`);
  console.log(normTable(measureNorms()));
  console.log('\nWhole models, stock ÷ integrated\n');
  console.log(modelTable(measureModels()));
}
