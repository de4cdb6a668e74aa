// The benchmark's own standalone modules (built by `make` into build/: the
// llama.cpp-style norm, the ggml block floor): each instantiated once, read
// from its file in Node and fetched in a browser page.

const instances = new Map();

async function wasmBytes(url, target) {
  if (url.protocol === 'file:') {
    const { readFile } = await import('node:fs/promises');
    return readFile(url).catch((error) => {
      throw new Error(`${url.pathname} is missing: run \`make ${target}\` (${error.code})`);
    });
  }
  const response = await fetch(url);
  if (!response.ok) throw new Error(`${url}: HTTP ${response.status}`);
  return response.arrayBuffer();
}

/** The exports of build/<name>, made once (`make build/<name>` builds it). */
export function standaloneExports(name) {
  if (!instances.has(name)) {
    const url = new URL(`../../../build/${name}`, import.meta.url);
    instances.set(name, wasmBytes(url, `build/${name}`).then(async (bytes) => {
      const { instance } = await WebAssembly.instantiate(bytes, { env: { emscripten_notify_memory_growth() {} } });
      instance.exports._initialize();
      return instance.exports;
    }));
  }
  return instances.get(name);
}
