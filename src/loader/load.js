// Loads the WebAssembly modules. Both are embedded in the JS as base64
// (modules.generated.js, written by `make build`), so no file path or fetch
// is involved: the same code works in Node, in a browser page without a
// bundler, and after any bundler has moved the files around.

import { simd as simdBase64, scalar as scalarBase64 } from './modules.generated.js';
import { WasmKernels } from './kernels.js';

/** @typedef {'simd' | 'scalar'} Backend */
export const BACKENDS = /** @type {const} */ (['simd', 'scalar']);

const base64ByBackend = { simd: simdBase64, scalar: scalarBase64 };
const bytesCache = new Map();

/** The raw bytes of one backend's module. */
export function moduleBytes(backend) {
  let bytes = bytesCache.get(backend);
  if (bytes === undefined) {
    bytes = decodeBase64(base64ByBackend[backend]);
    bytesCache.set(backend, bytes);
  }
  return bytes;
}

function decodeBase64(base64) {
  const binary = atob(base64);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

let simdSupport;
/** Whether this engine accepts SIMD128: it validates the SIMD module itself. */
export function simdSupported() {
  simdSupport ??= WebAssembly.validate(moduleBytes('simd'));
  return simdSupport;
}

// The custom section each module carries (appended by the Makefile) naming
// its backend: the two modules export the same functions, so this is how a
// precompiled WebAssembly.Module says which build it is.
const BACKEND_SECTION = 'rmsnorm-wasm.backend';

/** Whether `value` is a WebAssembly.Module. Works across realms. */
export function isWasmModule(value) {
  return Object.prototype.toString.call(value) === '[object WebAssembly.Module]';
}

/** The backend a compiled module was built as, or undefined if it is not one of ours. */
export function backendOf(module) {
  const [section] = WebAssembly.Module.customSections(module, BACKEND_SECTION);
  if (section === undefined) return undefined;
  const name = String.fromCharCode(...new Uint8Array(section));
  return BACKENDS.includes(name) ? name : undefined;
}

// What the JS calls on an instance: a module lacking any of these is not a
// whole build of ours, whatever its custom section says.
const REQUIRED_EXPORTS = [
  ['memory', 'memory'], ['rmsnorm', 'function'], ['layernorm_f32', 'function'],
  ['rmsnorm_backward_f32', 'function'], ['layernorm_backward_f32', 'function'], ['malloc', 'function'],
  ['free', 'function'],
];

/** The names of the exports the kernels need that `module` lacks. */
export function missingExports(module) {
  const kinds = new Map(WebAssembly.Module.exports(module).map(({ name, kind }) => [name, kind]));
  return REQUIRED_EXPORTS.filter(([name, kind]) => kinds.get(name) !== kind).map(([name]) => name);
}

const compiled = new Map();
/** The compiled module of a backend, compiled once per process and cached. */
export function compileBackend(backend) {
  let module = compiled.get(backend);
  if (module === undefined) {
    module = WebAssembly.compile(moduleBytes(backend));
    compiled.set(backend, module);
    module.catch(() => compiled.delete(backend)); // a failed compile may be retried
  }
  return module;
}

let importedBase64 = null;
const importedCompiled = new Map();
/** The kernels-only build that imports its memory (bindMemory), compiled
 * once; for a shared memory, the same build with its memory import made
 * shared (a module must declare that). Loaded on first use only: most users
 * never need it. */
export function compileImportedMemoryBackend(backend, shared) {
  const key = shared ? `${backend}Shared` : backend;
  let module = importedCompiled.get(key);
  if (module === undefined) {
    importedBase64 ??= import('./modules-imported.generated.js');
    module = importedBase64.then((modules) => {
      const bytes = decodeBase64(modules[backend]);
      return WebAssembly.compile(shared ? withSharedMemoryImport(bytes) : bytes);
    });
    importedCompiled.set(key, module);
    module.catch(() => importedCompiled.delete(key));
  }
  return module;
}

// The binary format's pieces this needs: LEB128 unsigned integers, the
// import section (id 2), and a memory import's limits (flags 0: minimum
// only; 3: minimum, maximum, shared).
function readLeb(bytes, at) {
  let value = 0;
  let shift = 0;
  let byte;
  do {
    byte = bytes[at++];
    value += (byte & 0x7f) * 2 ** shift;
    shift += 7;
  } while (byte & 0x80);
  return [value, at];
}

function leb(value) {
  const out = [];
  do {
    let byte = value % 128;
    value = Math.floor(value / 128);
    if (value > 0) byte |= 0x80;
    out.push(byte);
  } while (value > 0);
  return out;
}

const SHARED_MAXIMUM_PAGES = 65536; // all of wasm32: any shared memory fits under it

/**
 * The imported-memory module (whose only import is its memory, declared
 * with a minimum and no maximum, as the Makefile leaves it) with that
 * import declared shared, with the whole wasm32 space as its maximum: the
 * one change a shared memory needs, made here rather than shipping a second
 * copy of the module.
 */
function withSharedMemoryImport(bytes) {
  let at = 8; // magic and version
  while (at < bytes.length) {
    const id = bytes[at];
    const [size, payload] = readLeb(bytes, at + 1);
    if (id === 2) {
      let p = payload;
      const [count, afterCount] = readLeb(bytes, p);
      p = afterCount;
      for (let i = 0; i < count; i++) {
        for (let name = 0; name < 2; name++) { // module and field names
          const [length, start] = readLeb(bytes, p);
          p = start + length;
        }
        const kind = bytes[p];
        if (kind !== 2 || bytes[p + 1] !== 0) throw new Error('imported-memory module: unexpected import');
        const [minimum, end] = readLeb(bytes, p + 2);
        const limits = [0x03, ...leb(minimum), ...leb(SHARED_MAXIMUM_PAGES)];
        const section = [...bytes.subarray(payload, p + 1), ...limits, ...bytes.subarray(end, payload + size)];
        return new Uint8Array([...bytes.subarray(0, at), 2, ...leb(section.length), ...section,
          ...bytes.subarray(payload + size)]);
      }
    }
    at = payload + size;
  }
  throw new Error('imported-memory module: no memory import');
}

/** A fresh instance of a compiled module, wrapped for the JS API. */
export async function instantiate(module) {
  // The only import: the standalone module tells us when memory grows. Views
  // are refreshed lazily instead (WasmKernels.heap), so nothing to do here.
  const instance = await WebAssembly.instantiate(module, {
    env: { emscripten_notify_memory_growth() {} },
  });
  instance.exports._initialize?.();
  return new WasmKernels(instance.exports);
}
