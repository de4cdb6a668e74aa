// WebAssembly compiled by the engine's optimizing tier alone, for the
// benchmarks. Engines compile a module in a fast baseline tier first and a
// hot function again, optimized, on a background thread. A bench that times
// calls meanwhile measures baseline code, and on a CPU-time clock it also
// counts the compiling thread. A small module settles within a row's
// warm-up; a large one does not (onnxruntime-web's module, llama.cpp's
// graph-compute function: docs/benchmarks.md#method). Compiled by the
// optimizing tier from the start, every row runs the code a long-running
// page or process settles on. WebKit's tiers are left as they are, and
// Firefox's in its WebGPU pages (./webgpu-engines.js).

/** V8's flags: Node's (v8.setFlagsFromString, or a child's command line). */
export const OPTIMIZED_WASM_V8_FLAGS = ['--no-liftoff'];

/** The same flags on Chromium's command line. */
export const OPTIMIZED_WASM_CHROMIUM_ARGS = [`--js-flags=${OPTIMIZED_WASM_V8_FLAGS.join(' ')}`];

/** Firefox's prefs: its optimizing compiler (Ion) alone. */
export const OPTIMIZED_WASM_FIREFOX_PREFS = { 'javascript.options.wasm_baselinejit': false };
