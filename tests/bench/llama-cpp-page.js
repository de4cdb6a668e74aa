// In a page (tests/bench/llama-cpp.js drives it in Chromium): the runner
// linked for the web (build/llama-run-{stock,integrated}.mjs, run.cpp's main
// through callMain) timing a model's prefill and decode with --bench, the
// two engines alternating in one page, as the Node rows alternate processes.
import { loadLlamaMain } from '../../src/integrations/llama.cpp/page.js';

const ENGINES = ['stock', 'integrated'];

/**
 * Per engine, `rounds` results of run.cpp's --bench on one model and prompt:
 * { stock: [{ tokens, prefill_ms, decode_ms_per_token, fused_q8_ops }], integrated: […] }.
 */
export async function benchModelInPage({ model, prompt, decode, rounds }) {
  const response = await fetch(`/build/models/${model}.gguf`);
  if (!response.ok) throw new Error(`${model}.gguf: HTTP ${response.status}`);
  const bytes = new Uint8Array(await response.arrayBuffer());
  const runs = {};
  for (const engine of ENGINES) runs[engine] = await loadLlamaMain(`/build/llama-run-${engine}.mjs`, bytes);
  const results = Object.fromEntries(ENGINES.map((engine) => [engine, []]));
  for (let r = 0; r < rounds; r++) {
    for (const engine of ENGINES) results[engine].push(runs[engine]([prompt, '--bench', `${decode}`]).results[0]);
  }
  return results;
}
