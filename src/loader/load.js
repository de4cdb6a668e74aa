// Loads the WebAssembly modules. Both are embedded in the JS as base64
// (modules.generated.js, written by `make build`), so no file path or fetch
// is involved: the same code works in Node, in a browser page without a
// bundler, and after any bundler has moved the files around.

import { simd as simdBase64, scalar as scalarBase64 } from './modules.generated.js';
import {
  charCodeAt, compile, copyInto, floor, fround, isView, lengthOf, customSections, decodeBase64 as atob, Error, Float32Array, fromCharCode, instantiate as instantiateModule,
  instanceExportsOf, List, mapDelete, mapGet, mapSet, Map, moduleExports, moduleImports, promiseThen, Uint32Array, Uint8Array,
  validate, WeakSet, weakAdd, weakHas,
} from './intrinsics.js';
import { ALLOCATOR_EXPORTS } from './abi.js';
import { OwnMemory } from './memory.js';

/** @typedef {'simd' | 'scalar'} Backend */
export const BACKENDS = /** @type {const} */ (['simd', 'scalar']);

const base64ByBackend = { simd: simdBase64, scalar: scalarBase64 };
const bytesCache = new Map();

/** The raw bytes of one backend's module. */
export function moduleBytes(backend) {
  let bytes = mapGet(bytesCache, backend);
  if (bytes === undefined) {
    bytes = decodeBase64(base64ByBackend[backend]);
    mapSet(bytesCache, backend, bytes);
  }
  return bytes;
}

function decodeBase64(base64) {
  const binary = atob(base64);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = charCodeAt(binary, i);
  return bytes;
}

let simdSupport;
/** Whether this engine accepts SIMD128: it validates the SIMD module itself. */
export function simdSupported() {
  simdSupport ??= validate(moduleBytes('simd'));
  return simdSupport;
}

// The custom section each module carries (appended by the Makefile) naming
// its backend: the two modules export the same functions, so this is how a
// precompiled WebAssembly.Module says which build it is.
const BACKEND_SECTION = 'rmsnorm-wasm.backend';

/** Whether `value` is a WebAssembly.Module (the built-in's own brand check:
 * across realms, and whatever toStringTag an object claims). */
export function isWasmModule(value) {
  try {
    moduleExports(value);
    return true;
  } catch {
    return false;
  }
}

/** The backend a compiled module was built as, or undefined if it names none of ours. */
export function backendOf(module) {
  const sections = customSections(module, BACKEND_SECTION);
  if (sections.length !== 1) return undefined;
  const bytes = new Uint8Array(sections[0]);
  let name = '';
  for (let i = 0; i < lengthOf(bytes); i++) name += fromCharCode(bytes[i]);
  return name === 'simd' || name === 'scalar' ? name : undefined;
}

// The modules this realm compiled from its own bytes: trusted as they are.
const ours = new WeakSet();

// What a module of ours exports besides the kernels, and imports.
// (Emscripten's own: the function table, the reactor's initializer, errno and the stack.)
const OTHER_EXPORTS = [
  ['memory', 'memory'], [ALLOCATOR_EXPORTS[0], 'function'], [ALLOCATOR_EXPORTS[1], 'function'], ['__indirect_function_table', 'table'],
  ['_initialize', 'function'], ['__errno_location', 'function'], ['stackSave', 'function'], ['stackRestore', 'function'],
  ['stackAlloc', 'function'],
];
const IMPORTS = [['env', 'emscripten_notify_memory_growth', 'function']];

/**
 * Why `module` cannot be one of ours (a sentence), or '' when it may be:
 * compiled here from our bytes, or (a module from another realm, a worker's
 * say) with exactly our exports (`kernels`, the functions the descriptions
 * call, the converters, and the rest) and imports. A module that passes is instantiated and
 * then proven by selfTest before any call runs on it.
 */
export function notOurs(module, kernels) {
  if (weakHas(ours, module)) return '';
  const exports = moduleExports(module);
  const has = (name, kind) => {
    for (let i = 0; i < exports.length; i++) if (exports[i].name === name && exports[i].kind === kind) return true;
    return false;
  };
  let missing = '';
  const need = (name, kind) => {
    if (!has(name, kind)) missing += `${missing === '' ? '' : ', '}${name}`;
  };
  need('memory', 'memory');
  for (let k = 0; k < kernels.length; k++) need(kernels[k], 'function');
  for (let k = 0; k < ALLOCATOR_EXPORTS.length; k++) need(ALLOCATOR_EXPORTS[k], 'function');
  if (missing !== '') return `it lacks ${missing}`;
  if (backendOf(module) === undefined) return 'it has no rmsnorm-wasm backend section';
  for (let i = 0; i < exports.length; i++) {
    const { name, kind } = exports[i];
    let known = false;
    for (let k = 0; k < kernels.length; k++) known ||= name === kernels[k] && kind === 'function';
    for (let k = 0; k < OTHER_EXPORTS.length; k++) known ||= name === OTHER_EXPORTS[k][0] && kind === OTHER_EXPORTS[k][1];
    if (!known) return `it exports '${name}' (${kind}), which ours do not`;
  }
  const imports = moduleImports(module);
  if (imports.length !== IMPORTS.length) return `it has ${imports.length} imports`;
  for (let i = 0; i < imports.length; i++) {
    const { module: from, name, kind } = imports[i];
    if (from !== IMPORTS[i][0] || name !== IMPORTS[i][1] || kind !== IMPORTS[i][2]) return `it imports '${from}.${name}'`;
  }
  return '';
}

const compiled = new Map();
/** The compiled module of a backend, compiled once per process and cached. */
export function compileBackend(backend) {
  let module = mapGet(compiled, backend);
  if (module === undefined) {
    module = promiseThen(compile(moduleBytes(backend)), (m) => {
      weakAdd(ours, m);
      return m;
    });
    mapSet(compiled, backend, module);
    promiseThen(module, undefined, () => mapDelete(compiled, backend)); // a failed compile may be retried
  }
  return module;
}

let importedBase64 = null;
let memory64Base64 = null;
const importedCompiled = new Map();
/** The kernels-only build that imports its memory (bindMemory), compiled
 * once: the wasm32 one, or with `memory64` the wasm64 one (its addresses
 * and counts are f64, so calls pass the same Numbers); for a shared memory,
 * the same build with its memory import made shared (a module must declare
 * that). Each loaded on first use only: most users never need them. */
export function compileImportedMemoryBackend(backend, shared, memory64 = false) {
  const key = `${backend}${shared ? 'Shared' : ''}${memory64 ? '64' : ''}`;
  let module = mapGet(importedCompiled, key);
  if (module === undefined) {
    const modules = memory64
      ? (memory64Base64 ??= import('./modules-memory64.generated.js'))
      : (importedBase64 ??= import('./modules-imported.generated.js'));
    module = promiseThen(modules, (base64) => {
      const bytes = decodeBase64(base64[backend]);
      return compile(shared ? withSharedMemoryImport(bytes, memory64) : bytes);
    });
    mapSet(importedCompiled, key, module);
    promiseThen(module, undefined, () => mapDelete(importedCompiled, key));
  }
  return module;
}

// The binary format's pieces this needs: LEB128 unsigned integers, the
// import section (id 2), and a memory import's limits (flags: 1 has a
// maximum, 2 shared, 4 64-bit addresses; the Makefile leaves 0 or 4).
function readLeb(bytes, at) {
  let value = 0;
  let shift = 0;
  let byte;
  do {
    byte = bytes[at++];
    value += (byte & 0x7f) * 2 ** shift;
    shift += 7;
  } while (byte & 0x80);
  return { value, next: at };
}

function leb(value) {
  const out = new List();
  do {
    let byte = value % 128;
    value = floor(value / 128);
    if (value > 0) byte |= 0x80;
    out[out.length] = byte;
  } while (value > 0);
  return out;
}

// The maximum a shared import declares, which every shared memory it links
// must not exceed. wasm32: all of its space. memory64: 2^18 pages (16 GiB),
// the most Chromium compiles (its limit for any memory64 memory) and as much
// as Firefox lets one grow to (Firefox compiles up to 2^32 pages: a shared
// memory declared larger there does not link).
const SHARED_MAXIMUM_PAGES = 65536;
export const SHARED_MAXIMUM_PAGES_64 = 262144;
const LIMITS_64 = 0x04;
const LIMITS_SHARED_WITH_MAXIMUM = 0x03;

/**
 * The imported-memory module (whose only import is its memory, declared
 * with a minimum and no maximum, as the Makefile leaves it) with that
 * import declared shared, with the maximum above: the one change a shared
 * memory needs, made here rather than shipping a second copy of the module.
 */
function withSharedMemoryImport(bytes, memory64) {
  let at = 8; // magic and version
  const size = lengthOf(bytes);
  while (at < size) {
    const id = bytes[at];
    const { value: length, next: payload } = readLeb(bytes, at + 1);
    if (id === 2) {
      let p = payload;
      const { value: count, next: afterCount } = readLeb(bytes, p);
      p = afterCount;
      for (let i = 0; i < count; i++) {
        for (let name = 0; name < 2; name++) { // module and field names
          const { value: length, next: start } = readLeb(bytes, p);
          p = start + length;
        }
        const kind = bytes[p];
        const flags = memory64 ? LIMITS_64 : 0;
        if (kind !== 2 || bytes[p + 1] !== flags) throw new Error('imported-memory module: unexpected import');
        const { value: minimum, next: end } = readLeb(bytes, p + 2);
        const limits = concat([[flags | LIMITS_SHARED_WITH_MAXIMUM], leb(minimum),
          leb(memory64 ? SHARED_MAXIMUM_PAGES_64 : SHARED_MAXIMUM_PAGES)]);
        const section = concat([part(bytes, payload, p + 1), limits, part(bytes, end, payload + length)]);
        return concat([part(bytes, 0, at), [2], leb(lengthOf(section)), section, part(bytes, payload + length, size)]);
      }
    }
    at = payload + length;
  }
  throw new Error('imported-memory module: no memory import');
}

/** Bytes [from, to) of `bytes` as a plain array. */
function part(bytes, from, to) {
  const out = new List();
  for (let i = from; i < to; i++) out[i - from] = bytes[i];
  return out;
}

/** The bytes of `parts` (plain arrays or Uint8Arrays) one after another. */
function concat(parts) {
  const out = new List();
  for (let i = 0; i < parts.length; i++) {
    const n = isView(parts[i]) ? lengthOf(parts[i]) : parts[i].length;
    for (let j = 0; j < n; j++) out[out.length] = parts[i][j];
  }
  const bytes = new Uint8Array(out.length);
  for (let i = 0; i < out.length; i++) bytes[i] = out[i];
  return bytes;
}

/** A fresh instance of a compiled module: its own memory; null when a
 * module not provably ours fails the self-test. */
export async function instantiate(module) {
  // The only import: the standalone module tells us when memory grows. Views
  // are refreshed lazily instead (OwnMemory.buffer), so nothing to do here.
  const instance = await instantiateModule(module, { env: { emscripten_notify_memory_growth() {} } });
  const exports = instanceExportsOf(instance);
  exports._initialize?.();
  const memory = new OwnMemory(exports);
  if (weakHas(ours, module)) return memory;
  try {
    return selfTest(memory) ? memory : null;
  } catch {
    return null; // a forgery's export that traps fails the test like a wrong answer
  }
}

// The worked example of the seeds: x = (2, -4, 6, -8), w = (1.5, 0.5, 1, 2),
// eps 1e-6; y's float32 bits as the reference gives them
// (tests/engine-surfaces.test.js holds these to the reference).
export const KNOWN_ANSWER = { x: [2, -4, 6, -8], w: [1.5, 0.5, 1, 2], y: [0x3f0c378c, 0xbebaf4ba, 0x3f8c378c, 0xc03af4ba] };

/** Whether a module that is not provably ours behaves as ours: an allocator
 * that hands out distinct blocks inside its memory, and a kernel that
 * gives the known answer. */
function selfTest(memory) {
  const { exports } = memory;
  const a = exports.malloc(48) >>> 0;
  const b = exports.malloc(48) >>> 0;
  const heap = memory.views().float32;
  const limit = lengthOf(heap) * 4;
  const ok = a !== 0 && b !== 0 && a % 8 === 0 && b % 8 === 0 && (a + 48 <= b || b + 48 <= a) && a + 48 <= limit && b + 48 <= limit;
  if (!ok) return false;
  copyInto(heap, new Float32Array(KNOWN_ANSWER.x), a / 4);
  copyInto(heap, new Float32Array(KNOWN_ANSWER.w), b / 4);
  exports.rmsnorm(a, 0, b, a + 16, 0, 1, 4, 4, fround(1e-6), 0, 0, 0, 0);
  const y = new Uint32Array(memory.buffer(), a + 16, 4);
  let same = true;
  for (let i = 0; i < 4; i++) same &&= y[i] === KNOWN_ANSWER.y[i];
  exports.free(a);
  exports.free(b);
  return same;
}
