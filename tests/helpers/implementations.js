// Every implementation of the package's functions, side by side: the SIMD
// and the scalar module, each an instance of its own from createKernels(),
// and the JS reference. A test takes them from here instead of switching the
// default instance with init(), so no test depends on another's init() and
// none changes what the top-level functions run on.
//
// Imports nothing from Node: the browser pages of tests/engines.test.js load
// this module too (through tests/helpers/bit-exact-suite.js).
import { createKernels } from '../../src/index.js';
import * as reference from '../../src/reference/index.js';
import { firstDifference16, firstBitDifference } from './bits.js';

export const WASM_BACKENDS = Object.freeze(['simd', 'scalar']);
const FUNCTIONS = ['rmsNorm', 'addRmsNorm', 'layerNorm', 'rmsNormBackward', 'layerNormBackward', 'toFloat32', 'fromFloat32', 'quantize'];

/** { name, rmsNorm, addRmsNorm, layerNorm, rmsNormBackward, layerNormBackward, alloc? } */
function implementation(name, source, alloc) {
  const impl = { name };
  for (const fn of FUNCTIONS) impl[fn] = source[fn];
  if (alloc !== undefined) impl.alloc = alloc;
  return Object.freeze(impl);
}

let loaded = null;

/**
 * The SIMD instance, the scalar instance and the reference, in that order,
 * each with the package's function names; the two wasm ones have `alloc`.
 * Created once per thread: a test that needs instances nobody else touched
 * calls createKernels() itself.
 */
export function implementations() {
  loaded ??= Promise.all(WASM_BACKENDS.map(async (backend) => {
    const k = await createKernels({ backend });
    return implementation(k.backend, k, k.alloc);
  })).then((wasm) => Object.freeze([...wasm, implementation('reference', reference)]));
  return loaded;
}

/** The SIMD and scalar instances only (those with tensors). */
export async function wasmImplementations() {
  return (await implementations()).filter((impl) => impl.name !== 'reference');
}

/** fn(impl) on every implementation; returns { simd, scalar, reference } of what it returned. */
export async function onEvery(fn) {
  const results = {};
  for (const impl of await implementations()) results[impl.name] = fn(impl);
  return results;
}

const hex = (v, digits) => `0x${v.toString(16).padStart(digits, '0')}`;

/** An output as [label, array | null] parts: one array, a list of them, or an object of them (gradients). */
function partsOf(output) {
  if (output === null || ArrayBuffer.isView(output)) return [['', output]];
  if (Array.isArray(output)) return output.map((a, i) => [` output ${i}`, a]);
  if (typeof output === 'object') return Object.entries(output).map(([key, a]) => [` ${key}`, a]);
  throw new TypeError(`assertAllAgree: an output must be a typed array, an array or an object of them, got ${typeof output}`);
}

const is16 = (a) => a instanceof Uint16Array || a?.constructor?.name === 'Float16Array';
const bits16 = (a) => new Uint16Array(a.buffer, a.byteOffset, a.length);

/** Why `got` and `want` differ (null if they agree bit for bit, as the numerics contract defines it). */
function difference(got, want) {
  if (want === null || got === null) return got === want ? null : `${got === null ? 'null' : 'an array'} vs ${want === null ? 'null' : 'an array'}`;
  if (got.length !== want.length) return `lengths differ (${got.length} vs ${want.length})`;
  if (want instanceof Float32Array && got instanceof Float32Array) {
    // A float32 NaN matches any NaN: WebAssembly leaves its sign and payload open.
    const i = firstBitDifference(got, want);
    if (i < 0) return null;
    const u = (a) => new Uint32Array(a.buffer, a.byteOffset + 4 * i, 1)[0];
    return `first difference at index ${i}: ${hex(u(got), 8)} (${got[i]}) vs ${hex(u(want), 8)} (${want[i]})`;
  }
  if (is16(want) && is16(got)) {
    // 16-bit results match NaNs included: one NaN pattern per format.
    const [g, w] = [bits16(got), bits16(want)];
    const i = firstDifference16(g, w);
    return i < 0 ? null : `first difference at index ${i}: ${hex(g[i], 4)} vs ${hex(w[i], 4)}`;
  }
  if (got.constructor === want.constructor) {
    // Raw bytes (e.g. a SharedArrayBuffer's contents as a Uint8Array): every bit counts.
    const [g, w] = [new Uint8Array(got.buffer, got.byteOffset, got.byteLength), new Uint8Array(want.buffer, want.byteOffset, want.byteLength)];
    const i = g.findIndex((v, k) => v !== w[k]);
    return i < 0 ? null : `first difference at byte ${i}: ${hex(g[i], 2)} vs ${hex(w[i], 2)}`;
  }
  return `types differ (${got.constructor.name} vs ${want.constructor.name})`;
}

/**
 * Throws unless every implementation's output in `results` ({ simd, scalar,
 * reference } from onEvery) has the reference's bits; the message names the
 * implementation, the part, `context` (shape, seed, options) and the first
 * differing index.
 */
export function assertAllAgree(results, context) {
  const names = Object.keys(results);
  const base = 'reference' in results ? 'reference' : names[0];
  const expected = partsOf(results[base]);
  for (const name of names) {
    if (name === base) continue;
    const got = partsOf(results[name]);
    if (got.length !== expected.length || got.some(([label], i) => label !== expected[i][0])) {
      throw new Error(`${context}: ${name} vs ${base}: outputs differ in kind (${got.map(([l]) => l)} vs ${expected.map(([l]) => l)})`);
    }
    got.forEach(([label, array], i) => {
      const why = difference(array, expected[i][1]);
      if (why !== null) throw new Error(`${context}: ${name} vs ${base}${label}: ${why}`);
    });
  }
  return results[base];
}

/** onEvery(fn), checked by assertAllAgree: returns the reference's output. */
export async function allAgree(fn, context) {
  return assertAllAgree(await onEvery(fn), context);
}
