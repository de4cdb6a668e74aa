// In a page (tests/memory64.test.js): bindMemory on a memory64 memory
// against bindMemory on a 32-bit one, call for call, and against the
// reference. Both memories start filled with one byte pattern and get the
// same arrays at the same addresses; after every call, each output must have
// the same bytes in both (float32 NaNs: a NaN in both) and the reference's
// bits, every input its values, and, at the end, every byte outside the
// arrays and the lent scratch region must still be the pattern in both: the
// wasm64 kernels' stack is in the lent region (stackRestore), and they write
// nothing else. Inside the region, nothing between the staging (the first
// STAGING_BYTES, far more than these calls stage) and the kernels' stack
// (the last STACK_BYTES) may change either: both builds' stacks fit the
// STACK_BYTES a lent region must leave them.
import { bindMemory } from '/src/index.js';
import { STACK_BYTES } from '/src/loader/memory.js';
import { numberToBfloat16, numberToFloat16 } from '/src/reference/float16.js';
import * as reference from '/src/reference/index.js';
import { normalArray, prng, uniformArray } from '/web/lib/random.js';

const PAGE = 65536;
const PAGES = 64; // 4 MiB
const PATTERN = 0x5a;
const SCRATCH = { byteOffset: PAGE, byteLength: 4 * PAGE };
const ARRAYS_AT = 8 * PAGE;
const STAGING_BYTES = PAGE;

const ARRAY = { float32: Float32Array, bfloat16: Uint16Array, float16: Uint16Array };
const TO_16 = { bfloat16: numberToBfloat16, float16: numberToFloat16 };
const narrow = (values, dtype) => (dtype === 'float32' ? Float32Array.from(values) : Uint16Array.from(values, TO_16[dtype]));

/** Each call, once per memory: { name, fn, params(dtype arrays), options, outputs }. */
function cases() {
  const list = [];
  const rand = prng(64);
  for (const dim of [1, 7, 16, 33, 255, 256, 257, 896, 4097]) {
    const rows = dim > 1000 ? 2 : 3;
    const n = rows * dim;
    const x = normalArray(rand, n, 2);
    const w = uniformArray(rand, dim, 0.5, 1.5);
    const b = normalArray(rand, dim, 0.5);
    const dy = normalArray(rand, n, 1);
    for (const [dtype, weightDtype, castMode, weightOffset] of [
      ['float32', 'float32', 'llama', 0], ['bfloat16', 'bfloat16', 'llama', 0], ['bfloat16', 'float32', 'gemma', 1],
      ['float16', 'bfloat16', 'gemma', 0], ['float16', 'float16', 'llama', 1]]) {
      const options = { dtype, weightDtype, castMode, weightOffset };
      list.push({ name: `rmsNorm ${dtype} ${weightDtype} ${castMode} +${weightOffset} dim ${dim}`, fn: 'rmsNorm', options,
        inputs: { x: narrow(x, dtype), weight: narrow(w, weightDtype) }, params: ['x', 'weight'],
        outputs: { out: [dtype, n], rstd: ['float32', rows] } });
      list.push({ name: `addRmsNorm ${dtype} ${weightDtype} dim ${dim}`, fn: 'addRmsNorm', options,
        inputs: { x: narrow(x, dtype), residual: narrow(dy, dtype), weight: narrow(w, weightDtype) }, params: ['x', 'residual', 'weight'],
        inout: ['residual'], outputs: { out: [dtype, n] } });
    }
    list.push({ name: `layerNorm dim ${dim}`, fn: 'layerNorm', options: {}, params: ['x', 'weight', 'bias'],
      inputs: { x: Float32Array.from(x), weight: Float32Array.from(w), bias: Float32Array.from(b) },
      outputs: { out: ['float32', n], mean: ['float32', rows], rstd: ['float32', rows] } });
    list.push({ name: `rmsNormBackward dim ${dim}`, fn: 'rmsNormBackward', options: {}, params: ['dy', 'x', 'weight'],
      inputs: { dy: Float32Array.from(dy), x: Float32Array.from(x), weight: Float32Array.from(w) },
      outputs: { dx: ['float32', n] }, results: ['dweight'] });
    list.push({ name: `layerNormBackward dim ${dim}`, fn: 'layerNormBackward', options: {}, params: ['dy', 'x', 'weight', 'bias'],
      inputs: { dy: Float32Array.from(dy), x: Float32Array.from(x), weight: Float32Array.from(w), bias: Float32Array.from(b) },
      outputs: { dx: ['float32', n] }, results: ['dweight', 'dbias'] });
  }
  // special values: NaN, infinities, zeros, huge and tiny rows
  const special = Float32Array.from([NaN, 1, 2, 3, Infinity, -1, 2, 0, 0, 0, 0, 0, 3e38, -3e38, 1e38, 2e38, 1e-40, -2e-40, 3e-41, 0]);
  list.push({ name: 'rmsNorm special values', fn: 'rmsNorm', options: { dim: 4, eps: 0 }, params: ['x', 'weight'],
    inputs: { x: special, weight: Float32Array.from([1, 2, 3, 4]) }, outputs: { out: ['float32', 20], rstd: ['float32', 5] } });
  return list;
}

const sameBits = (dtype, a, b) => {
  for (let i = 0; i < a.length; i++) {
    if (dtype === 'float32' ? !(Object.is(a[i], b[i]) || (a[i] !== a[i] && b[i] !== b[i])) : a[i] !== b[i]) return i;
  }
  return -1;
};

/** Runs every case on bindMemory over a memory64 memory and over a 32-bit
 * one; returns { cases, differences: [first few], outsideChanged, backend64 }. */
export async function compareBound({ backend, shared }) {
  const make = (memory64) => new WebAssembly.Memory(memory64
    ? { initial: BigInt(PAGES), address: 'i64', ...(shared ? { maximum: 1024n, shared: true } : {}) }
    : { initial: PAGES, ...(shared ? { maximum: 1024, shared: true } : {}) });
  const memories = [make(false), make(true)];
  for (const memory of memories) new Uint8Array(memory.buffer).fill(PATTERN);
  const bound = [];
  for (const memory of memories) bound.push(await bindMemory(memory, { scratch: SCRATCH, backend }));
  const differences = [];
  const arrays = []; // [start, end) of every array placed, for the final check
  let at = ARRAYS_AT;
  const place = (memory, dtype, length, start) => new ARRAY[dtype](memory.buffer, start, length);
  const list = cases();
  for (const c of list) {
    const results = [];
    const starts = {};
    const layout = (name, dtype, length) => {
      starts[name] = at;
      at += Math.ceil((length * ARRAY[dtype].BYTES_PER_ELEMENT + 64) / 64) * 64;
    };
    for (const [name, array] of Object.entries(c.inputs)) layout(name, array instanceof Float32Array ? 'float32' : c.options.dtype, array.length);
    for (const [name, [dtype, length]] of Object.entries(c.outputs)) layout(name, dtype, length);
    for (let m = 0; m < 2; m++) {
      const memory = memories[m];
      const views = {};
      for (const [name, array] of Object.entries(c.inputs)) {
        views[name] = place(memory, array instanceof Float32Array ? 'float32' : c.options.dtype, array.length, starts[name]);
        views[name].set(array);
      }
      const options = { ...c.options };
      for (const [name, [dtype, length]] of Object.entries(c.outputs)) options[name] = place(memory, dtype, length, starts[name]);
      const returned = bound[m][c.fn](...c.params.map((p) => views[p]), options);
      for (const [name, array] of Object.entries(c.inputs)) {
        if (!(c.inout ?? []).includes(name) && sameBits('16-bit', new Uint16Array(views[name].buffer, views[name].byteOffset, array.byteLength / 2),
          new Uint16Array(array.buffer, array.byteOffset, array.byteLength / 2)) >= 0) differences.push(`${c.name}: input ${name} changed (memory ${m})`);
      }
      const got = {};
      for (const name of Object.keys(c.outputs)) got[name] = options[name].slice();
      for (const name of c.inout ?? []) got[name] = views[name].slice();
      for (const name of c.results ?? []) got[name] = returned[name].slice();
      results.push(got);
    }
    for (const [name, [dtype, length]] of Object.entries(c.outputs)) {
      arrays.push([starts[name], starts[name] + length * ARRAY[dtype].BYTES_PER_ELEMENT]);
    }
    for (const [name, array] of Object.entries(c.inputs)) arrays.push([starts[name], starts[name] + array.byteLength]);
    // The reference on copies, the arrays packed.
    const refOptions = { ...c.options };
    const refInputs = Object.fromEntries(Object.entries(c.inputs).map(([k, v]) => [k, v.slice()]));
    for (const [name, [dtype, length]] of Object.entries(c.outputs)) refOptions[name] = new ARRAY[dtype](length);
    const refReturned = reference[c.fn](...c.params.map((p) => refInputs[p]), refOptions);
    const expected = {};
    for (const name of Object.keys(c.outputs)) expected[name] = refOptions[name];
    for (const name of c.inout ?? []) expected[name] = refInputs[name];
    for (const name of c.results ?? []) expected[name] = refReturned[name];
    for (const name of Object.keys(results[0])) {
      const dtype = results[0][name] instanceof Float32Array ? 'float32' : '16-bit';
      const vs32 = sameBits(dtype, results[1][name], results[0][name]);
      const vsRef = sameBits(dtype, results[1][name], expected[name]);
      if (vs32 >= 0) differences.push(`${c.name}: ${name}[${vs32}] memory64 vs wasm32`);
      if (vsRef >= 0) differences.push(`${c.name}: ${name}[${vsRef}] memory64 vs the reference`);
    }
  }
  // Every byte outside the arrays and the lent region kept the pattern.
  let outsideChanged = 0;
  let beyondStack = 0;
  const lentEnd = SCRATCH.byteOffset + SCRATCH.byteLength;
  const outputs = arrays.sort((p, q) => p[0] - q[0]);
  for (const memory of memories) {
    const bytes = new Uint8Array(memory.buffer);
    let next = 0;
    for (let i = SCRATCH.byteOffset + STAGING_BYTES; i < lentEnd - STACK_BYTES; i++) beyondStack += bytes[i] !== PATTERN;
    for (let i = 0; i < bytes.length; i++) {
      if (i >= SCRATCH.byteOffset && i < lentEnd) continue;
      while (next < outputs.length && outputs[next][1] <= i) next++;
      if (next < outputs.length && outputs[next][0] <= i) continue;
      if (bytes[i] !== PATTERN) outsideChanged++;
    }
  }
  return { cases: list.length, differences: differences.slice(0, 10), outsideChanged, beyondStack, backends: bound.map((k) => k.backend) };
}

/** rmsNorm and layerNorm through bindMemory on arrays above 4 GiB of a
 * 5 GiB memory64 memory, against the reference; or what the engine said. */
export async function aboveFourGiB() {
  let memory;
  try {
    memory = new WebAssembly.Memory({ initial: 5n * 16384n, address: 'i64' });
  } catch (error) {
    return { made: false, error: String(error) };
  }
  const bound = await bindMemory(memory, { scratch: { byteOffset: PAGE, byteLength: PAGE } });
  const at = 4.25 * 2 ** 30;
  const dim = 896;
  const rand = prng(4);
  const x = new Float32Array(memory.buffer, at, 4 * dim);
  x.set(normalArray(rand, 4 * dim, 3));
  const w = new Float32Array(memory.buffer, at + 2 ** 20, dim);
  w.set(uniformArray(rand, dim, 0.5, 1.5));
  const y = new Float32Array(memory.buffer, at + 2 ** 21, 4 * dim);
  const rstd = new Float32Array(memory.buffer, 5 * 2 ** 30 - 64, 4); // at the very end
  bound.rmsNorm(x, w, { out: y, rstd });
  const expectedRstd = new Float32Array(4);
  const expected = reference.rmsNorm(x.slice(), w.slice(), { rstd: expectedRstd });
  const layer = new Float32Array(memory.buffer, at + 2 ** 22, 4 * dim);
  bound.layerNorm(x, w, null, { out: layer });
  const expectedLayer = reference.layerNorm(x.slice(), w.slice(), null);
  return {
    made: true,
    bytes: memory.buffer.byteLength,
    y: sameBits('float32', y, expected),
    rstd: sameBits('float32', rstd, expectedRstd),
    layer: sameBits('float32', layer, expectedLayer),
  };
}
