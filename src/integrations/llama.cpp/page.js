// The runner (run.cpp) in a page: build/llama-run-{stock,integrated}.mjs, the
// same main as the Node runner's, linked for the web (llama.mk). The model's
// bytes go into the module's in-memory files; each run is one call of main,
// whose JSON (run.cpp's header) comes back through the module's print.
const MODEL_PATH = '/model.gguf';

/**
 * Loads an engine module with a GGUF model as its in-memory file (`model`:
 * the model's URL, or its bytes): `main(args)` runs run.cpp's main on the
 * model with `args` after its path and returns the JSON it printed, parsed.
 */
export async function loadLlamaMain(engineUrl, model) {
  const [{ default: create }, bytes] = await Promise.all([
    import(engineUrl),
    model instanceof Uint8Array
      ? model
      : fetch(model).then((response) => {
        if (!response.ok) throw new Error(`${model}: HTTP ${response.status}`);
        return response.arrayBuffer();
      }).then((buffer) => new Uint8Array(buffer)),
  ]);
  let out = [];
  let errors = [];
  const module = await create({ print: (line) => out.push(line), printErr: (line) => errors.push(line) });
  // writeFile copies: one array of the model serves every engine loaded with it.
  module.FS.writeFile(MODEL_PATH, bytes);
  return (args) => {
    out = [];
    errors = [];
    const status = module.callMain([MODEL_PATH, ...args]);
    if (status !== 0 || errors.length) throw new Error(`${engineUrl}: status ${status}: ${errors.join('\n')}`);
    return JSON.parse(out.join('\n'));
  };
}

/**
 * Loads an engine module and a GGUF model: `{ run(prompts, options) }`, where
 * prompts are arrays of token ids and options are run.cpp's flags
 * ({ maxLen, stop, capture }); run returns run.cpp's JSON, parsed.
 */
export async function loadLlamaRun(engineUrl, modelUrl) {
  const main = await loadLlamaMain(engineUrl, modelUrl);
  return {
    run(prompts, { maxLen, stop, capture = 'none' } = {}) {
      const args = [prompts.map((p) => p.join(',')).join(';'), '--capture', capture];
      if (maxLen !== undefined) args.push('--max-len', `${maxLen}`);
      if (stop !== undefined) args.push('--stop', `${stop}`);
      return main(args);
    },
  };
}
