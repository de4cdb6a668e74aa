// A page that defines accessors on Array.prototype and Object.prototype
// after the package loaded: for every array index up to 63 and for every
// property name the package's source uses (tests/helpers/package-names.js),
// a getter that answers with a record-like object and a setter that
// swallows what is written; and Array.prototype's iterator replaced. A plain
// array the package appended to, a hole it read, an object it gave a key it
// did not own, or a descriptor missing a member WebGPU reads would meet them.
// Every function of every kind of instance (made before and after the
// accessors), the reference and, where asked, the WebGPU array form must
// give the bits they gave before, and write no other tensor.
//
// Runs in Node (in a process of its own: the accessors stay) and in a
// browser page; imports nothing from Node.
import * as wasm from '../../src/index.js';
import * as reference from '../../src/reference/index.js';

const INDICES = 64;
// Names the accessors leave alone: what the engines' own machinery (promises,
// errors, the test's serialization) reads of any object. Property
// descriptors' members are attacked: Object.defineProperty reads a missing
// one through the prototype chain.
const SPARED = new Set(['then', 'constructor', 'length', 'prototype', 'name', 'message', 'stack', 'cause', 'toJSON', 'call', 'apply', 'bind']);
const DESCRIPTOR_MEMBERS = ['value', 'get', 'set', 'enumerable', 'writable', 'configurable'];

/** `names`: property names to attack; `gpu`: also the WebGPU array form on
 * this page's default adapter. Resolves to { same, differences, hits }. */
export async function attackPrototypes({ names, gpu = false }) {
  await wasm.init();
  const simd = await wasm.createKernels({ backend: 'simd' });
  const scalar = await wasm.createKernels({ backend: 'scalar' });
  const memory = new WebAssembly.Memory({ initial: 8 });
  const PAGE = 65536;
  const bound = await wasm.bindMemory(memory, { scratch: { byteOffset: PAGE, byteLength: PAGE } });
  let seed = 7;
  const rand = () => ((seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32) - 0.5;
  const fill = (a) => {
    for (let i = 0; i < a.length; i++) a[i] = rand() * 4;
    return a;
  };
  const F32 = Float32Array;
  const U32 = Uint32Array;
  const x = fill(new F32(64));
  const dy = fill(new F32(64));
  const w = fill(new F32(16));
  const bias = fill(new F32(16));
  const big = new F32(16 * 8192); // staged in chunks
  for (let i = 0; i < big.length; i++) big[i] = (i % 13) - 6;
  const x16 = new Uint16Array(64);
  for (let i = 0; i < 64; i++) x16[i] = 0x3f00 + i;
  const bx = fill(new F32(memory.buffer, 3 * PAGE, 64));
  const bw = fill(new F32(memory.buffer, 3 * PAGE + 1024, 16));
  // Read with the typed arrays' own indexing only: no array, no method of the page's.
  const bits = (a) => {
    if (a === null) return 'null;';
    const u = a instanceof F32 ? new U32(a.buffer, a.byteOffset, a.length) : a;
    let s = '';
    for (let i = 0; i < u.length; i++) s += `${u[i]},`;
    return `${s};`;
  };
  const attempt = (label, f) => {
    try {
      return `${label}=${f()}\n`;
    } catch (error) {
      return `${label}=${error instanceof Error ? `${error.constructor === TypeError ? 'TypeError' : 'Error'}: ${error.message}` : 'thrown'}\n`;
    }
  };
  const battery = (impl) => {
    let s = '';
    for (let round = 0; round < 2; round++) { // the second round repeats every call: remembered ones
      s += attempt('rmsNorm', () => bits(impl.rmsNorm(x, w)));
      s += attempt('out', () => bits(impl.rmsNorm(x, w, { eps: 1e-5, out: new F32(64) })));
      s += attempt('shape', () => bits(impl.rmsNorm(x, null, { shape: [4, 16], axis: -1 })));
      s += attempt('bfloat16', () => bits(impl.rmsNorm(x16, null, { dim: 16, dtype: 'bfloat16', castMode: 'gemma' })));
      s += attempt('addRmsNorm', () => {
        const residual = new F32(x);
        return bits(impl.addRmsNorm(x, residual, w)) + bits(residual);
      });
      s += attempt('layerNorm', () => bits(impl.layerNorm(x, w, bias)));
      s += attempt('rstd', () => {
        const rstd = new F32(4);
        return bits(impl.rmsNorm(x, w, { rstd })) + bits(rstd);
      });
      s += attempt('rmsNormBackward', () => {
        const g = impl.rmsNormBackward(dy, x, w);
        return bits(g.dx) + bits(g.dweight);
      });
      s += attempt('layerNormBackward', () => {
        const g = impl.layerNormBackward(dy, x, w, bias);
        return bits(g.dx) + bits(g.dweight) + bits(g.dbias);
      });
      s += attempt('big', () => bits(impl.rmsNorm(big, null, { dim: 16 })).length);
      s += attempt('strided', () => bits(impl.rmsNorm(x, null, { dim: 8, rowStride: 16 })));
      s += attempt('prepared', () => {
        const prepared = impl.rmsNorm.prepare(x, w, { eps: 1e-5 });
        return bits(prepared.run()) + bits(prepared.run());
      });
      s += attempt('converters', () => bits(impl.fromFloat32(x, { dtype: 'bfloat16' })) + bits(impl.toFloat32(x16, { dtype: 'float16' })));
      if (impl.alloc !== undefined) {
        s += attempt('tensors', () => {
          const t = impl.alloc(64);
          t.array.set(x);
          const o = impl.alloc(64);
          impl.rmsNorm(t, w, { out: o });
          const r = bits(o.array);
          impl.rmsNorm(t, w, { out: t });
          const inPlace = bits(t.array);
          t.free();
          o.free();
          return r + inPlace;
        });
      }
    }
    return s;
  };
  const boundBattery = (b) => attempt('bound', () => bits(b.rmsNorm(bx, bw)) + bits(b.layerNormBackward(bx, bx, bw, null).dx));
  const gpuBattery = async (arrays) => {
    let s = '';
    for (let round = 0; round < 2; round++) {
      try {
        s += bits(await arrays.rmsNorm(x, w)) + bits(await arrays.rmsNorm(x16, null, { dim: 16, dtype: 'bfloat16' }));
        const residual = new F32(x);
        s += bits(await arrays.addRmsNorm(x, residual, w)) + bits(residual) + bits(await arrays.layerNorm(x, w, bias));
      } catch (error) {
        s += `Error: ${error instanceof Error ? error.message : 'thrown'}`;
      }
    }
    return s;
  };
  // What every implementation gives before the accessors.
  const instances = [wasm, simd, scalar, reference];
  const labels = ['default instance', 'createKernels simd', 'createKernels scalar', 'reference'];
  const before = instances.map(battery);
  const bystander = simd.alloc(64);
  bystander.array.set(x);
  const boundBefore = boundBattery(bound);
  const differences = [];
  let gpuBefore = '';
  let makeGpu = null;
  let firstGpu = null;
  if (gpu) {
    const webgpu = await import('../../src/webgpu/index.js');
    const device = await (await navigator.gpu.requestAdapter()).requestDevice();
    makeGpu = () => webgpu.createArrayKernels(webgpu.createGpuKernels(device));
    firstGpu = makeGpu();
    gpuBefore = await gpuBattery(firstGpu);
    const expected = await gpuBattery(reference); // the same calls, answered at once
    if (gpuBefore !== expected) differences.push(`WebGPU before the accessors: ${gpuBefore.slice(0, 300)}`);
  }

  // The page's accessors, listed before any is defined (appending to the list afterwards would meet them).
  const fake = { memory: null, buffer: null, start: 16, end: 272, length: 64, dtype: 'float32', live: true, shadow: null, value: null };
  let hits = 0;
  const installed = [];
  for (const target of [Array.prototype, Object.prototype]) {
    const keys = [];
    for (let i = 0; i < INDICES; i++) keys.push(String(i));
    keys.push(...names, ...DESCRIPTOR_MEMBERS);
    for (const key of keys) {
      if (!SPARED.has(key) && !Object.prototype.hasOwnProperty.call(target, key) && !(key in Object.prototype)) installed.push([target, key]);
    }
  }
  const accessor = { __proto__: null, configurable: true, get() { hits++; return fake; }, set() { hits++; } };
  for (let i = 0; i < installed.length; i++) Object.defineProperty(installed[i][0], installed[i][1], accessor);
  // And arrays iterate to the page's values (WebIDL sequences, such as queue.submit's, are iterated).
  const iterator = Array.prototype[Symbol.iterator];
  Array.prototype[Symbol.iterator] = function* () { hits++; yield fake; };
  // Results are strings from here until the accessors are gone.
  let after = ''; // "label: results" of each instance, one after another
  let made = '';
  let boundAfter = '';
  let boundNew = '';
  let gpuAfter = '';
  let gpuNew = '';
  let bystanderSame = true;
  try {
    for (let i = 0; i < instances.length; i++) {
      after += `${labels[i]}: ${battery(instances[i])}`;
    }
    boundAfter = boundBattery(bound);
    made = battery(await wasm.createKernels({ backend: 'scalar' }));
    boundNew = boundBattery(await wasm.bindMemory(memory, { scratch: { byteOffset: 2 * PAGE, byteLength: PAGE } }));
    if (gpu) {
      gpuAfter = await gpuBattery(firstGpu);
      gpuNew = await gpuBattery(makeGpu());
    }
    const a = bystander.array;
    for (let i = 0; i < 64; i++) if (!Object.is(a[i], x[i])) bystanderSame = false;
  } finally {
    for (let i = 0; i < installed.length; i++) delete installed[i][0][installed[i][1]];
    Array.prototype[Symbol.iterator] = iterator;
  }
  // The calls that gave something else: "label=result" lines not in `expected`.
  const changed = (what, got, expected) => {
    const lines = got.split('\n').filter((line) => !expected.split('\n').includes(line));
    if (lines.length > 0) differences.push(`${what}: ${lines.map((line) => line.slice(0, 160)).join(' | ')}`);
  };
  let rest = after;
  for (let i = instances.length - 1; i >= 0; i--) {
    const at = rest.lastIndexOf(`${labels[i]}: `);
    changed(labels[i], rest.slice(at + labels[i].length + 2), before[i]);
    rest = rest.slice(0, at);
  }
  changed('createKernels made after the accessors', made, before[2]);
  changed('bindMemory', boundAfter, boundBefore);
  changed('bindMemory made after the accessors', boundNew, boundBefore);
  changed('WebGPU array form', gpuAfter, gpuBefore);
  changed('WebGPU kernels made after the accessors', gpuNew, gpuBefore);
  if (!bystanderSame) differences.push('a bystander tensor was written');
  for (let i = 0; i < instances.length; i++) {
    if (before[i].includes('Error')) differences.push(`${labels[i]} failed before the accessors: ${before[i].slice(0, 300)}`);
    // Before the accessors too, every call gave the reference's bits (tensors aside: the reference has none).
    changed(`${labels[i]} before the accessors`, before[i].replace(/^tensors=.*\n/gm, ''), before[3]);
  }
  return { same: differences.length === 0, differences, accessors: installed.length, hits };
}
