// In a page (tests/bench/llama-cpp.js drives it in Chromium): the runner
// linked for the web (build/llama-run-{stock,integrated}.mjs, run.cpp's main
// through callMain) timing a model's prefill and decode with --bench, the
// two engines alternating in one page, as the Node rows alternate processes.
const ENGINES = ['stock', 'integrated'];
const MODEL_PATH = '/model.gguf';

/** An engine module with `bytes` as its model file: `bench(args)` is run.cpp's JSON. */
async function loadEngine(engine, bytes) {
  const { default: create } = await import(`/build/llama-run-${engine}.mjs`);
  let out = [];
  let errors = [];
  const module = await create({ print: (line) => out.push(line), printErr: (line) => errors.push(line) });
  module.FS.writeFile(MODEL_PATH, bytes);
  return (args) => {
    out = [];
    errors = [];
    const status = module.callMain([MODEL_PATH, ...args]);
    if (status !== 0 || errors.length) throw new Error(`llama-run-${engine}: status ${status}: ${errors.join('\n')}`);
    return JSON.parse(out.join('\n'));
  };
}

/**
 * Per engine, `rounds` results of run.cpp's --bench on one model and prompt:
 * { stock: [{ tokens, prefill_ms, decode_ms_per_token, fused_q8_ops }], integrated: […] }.
 */
export async function benchModelInPage({ model, prompt, decode, rounds }) {
  const response = await fetch(`/build/models/${model}.gguf`);
  if (!response.ok) throw new Error(`${model}.gguf: HTTP ${response.status}`);
  const bytes = new Uint8Array(await response.arrayBuffer());
  const runs = {};
  for (const engine of ENGINES) runs[engine] = await loadEngine(engine, bytes);
  const results = Object.fromEntries(ENGINES.map((engine) => [engine, []]));
  for (let r = 0; r < rounds; r++) {
    for (const engine of ENGINES) results[engine].push(runs[engine]([prompt, '--bench', `${decode}`]).results[0]);
  }
  return results;
}
