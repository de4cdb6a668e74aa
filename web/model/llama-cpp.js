// The tiny Llama in llama.cpp: the integrated engine's page build (run.cpp
// linked by src/integrations/llama.cpp/llama.mk, every RMSNorm of its graph
// computed by this package's C library) running the model's F32 GGUF, behind
// the same complete(prompt, choose) as TinyLlama, so that panel 9 writes
// names with either engine through one generateNames.
//
// The runner decodes greedily by itself; to sample as the JS engine does
// (same sampler, same seeded draws), each step is one run of its main on the
// name so far, which returns the logits of every position, and the page
// chooses the next token from the last row. A fresh run per token recomputes
// the prefix: at 16 positions and 28 tokens that costs less than loading.

import { loadLlamaRun } from '../../src/integrations/llama.cpp/page.js';

// What `make demo` builds for this panel (its DEMO_LLAMA).
export const LLAMA_CPP_FILES = {
  engine: new URL('../../build/llama-run-integrated.mjs', import.meta.url).href,
  model: new URL('../../build/models/tiny-llama-f32.gguf', import.meta.url).href,
};

/** The files the server does not have (a page served without `make demo`'s llama.cpp step has neither). */
export async function missingLlamaCppFiles() {
  const replies = await Promise.all(Object.values(LLAMA_CPP_FILES).map((url) => fetch(url, { method: 'HEAD' })));
  return Object.values(LLAMA_CPP_FILES).filter((url, i) => replies[i].status === 404);
}

export class LlamaCppModel {
  /** Loads the engine and the GGUF; `config` and `vocab` are the weights' manifest's. */
  static async load(config, vocab) {
    return new LlamaCppModel(await loadLlamaRun(LLAMA_CPP_FILES.engine, LLAMA_CPP_FILES.model), config, vocab);
  }

  constructor(runner, config, vocab) {
    this.runner = runner;
    this.config = config;
    this.vocab = vocab;
    // Which engine ran (run.cpp's "engine"), and how many runs of its main.
    this.engine = null;
    this.runs = 0;
  }

  /** The next-token logits after `ids` (the start token first). */
  logits(ids) {
    const reply = this.runner.run([ids], { maxLen: ids.length });
    this.engine = reply.engine;
    this.runs++;
    return reply.results[0].logits[ids.length - 1];
  }

  /** As TinyLlama's: continues `prompt` until the end token or the context is full; returns the name. */
  complete(prompt, choose) {
    const ids = [0, ...[...prompt].map((ch) => this.vocab.indexOf(ch))];
    let text = prompt;
    while (ids.length < this.config.max_seq_len) {
      const next = choose(this.logits(ids));
      if (next === 0) break;
      text += this.vocab[next];
      ids.push(next);
    }
    return text;
  }
}
