// Built-ins saved when the package loads, as Node's core keeps its
// "primordials". After load the package's code reads nothing a page can
// replace: no global, no prototype method, no iterator (src/ is linted
// against for-of, spread and array destructuring, which call
// Array.prototype[Symbol.iterator]). So a subclass, an own property, an
// overridden method, a polyfill or a polluted prototype cannot change what
// the package sees of a caller's arrays, where it writes, or what it computes.

const { call, bind } = Function.prototype;
const uncurryThis = bind.bind(call);
const descriptor = Object.getOwnPropertyDescriptor;
const TypedArray = Object.getPrototypeOf(globalThis.Uint8Array);
const TypedArrayPrototype = TypedArray.prototype;
const typedArrayGetter = (key) => uncurryThis(descriptor(TypedArrayPrototype, key).get);
const lengthGetter = descriptor(TypedArrayPrototype, 'length').get;

export const lengthOf = typedArrayGetter('length');
export const byteOffsetOf = typedArrayGetter('byteOffset');
export const byteLengthOf = typedArrayGetter('byteLength');
export const bufferOf = typedArrayGetter('buffer');
/** 'Float32Array', 'Uint16Array', … for a typed array; undefined for a DataView. */
export const kindOf = typedArrayGetter(Symbol.toStringTag);
/** %TypedArray%.prototype.set, which reads no property of its target or its
 * source: copyInto(target, source, offset). */
export const copyInto = uncurryThis(TypedArrayPrototype.set);
const typedArraySet = TypedArrayPrototype.set;
export const fill = uncurryThis(TypedArrayPrototype.fill);
const typedArrayAt = uncurryThis(TypedArrayPrototype.at);
const arrayBufferByteLength = uncurryThis(descriptor(ArrayBuffer.prototype, 'byteLength').get);
const getterOr = (prototype, key, fallback) => {
  const get = descriptor(prototype, key)?.get;
  return get === undefined ? fallback : uncurryThis(get);
};
// An engine without these getters has no resizable or growable buffers.
const resizableOf = getterOr(ArrayBuffer.prototype, 'resizable', () => false);
const growableOf = getterOr(globalThis.SharedArrayBuffer?.prototype ?? {}, 'growable', () => false);
/** WebAssembly.Memory.prototype.buffer: throws for anything but a memory. */
export const memoryBufferOf = uncurryThis(descriptor(WebAssembly.Memory.prototype, 'buffer').get);
export const instanceExportsOf = uncurryThis(descriptor(WebAssembly.Instance.prototype, 'exports').get);
/** Object.hasOwn where the engine has it: an uncurried hasOwnProperty costs
 * a bound-function call, which SpiderMonkey and JavaScriptCore do not inline. */
export const hasOwn = Object.hasOwn ?? uncurryThis(Object.prototype.hasOwnProperty);
export const toStringTag = uncurryThis(Object.prototype.toString);
export const { isView } = ArrayBuffer;
export const { fround, abs, floor, ceil, max, min, log2, sqrt, random } = Math;
export const { isSafeInteger } = Number;
export const { defineProperty, freeze, setPrototypeOf, keys } = Object;
export const { compile, instantiate, validate, LinkError } = WebAssembly;
export const { add: atomicAdd, compareExchange, load: atomicLoad, store: atomicStore } = globalThis.Atomics ?? {};
export const { customSections, exports: moduleExports, imports: moduleImports } = WebAssembly.Module;
export const StringOf = String;
export const fromCharCode = String.fromCharCode;
export const charCodeAt = uncurryThis(String.prototype.charCodeAt);
export const sliceString = uncurryThis(String.prototype.slice);
export const JSONStringify = JSON.stringify;
export const ITERATOR = Symbol.iterator;
export const decodeBase64 = globalThis.atob;
export const { TypeError, RangeError, Error, Promise, WeakSet, WeakMap, Map, Float32Array, Uint16Array, Uint8Array, Uint32Array, Int32Array } =
  globalThis;
export const weakHas = uncurryThis(WeakSet.prototype.has);
const { get: weakMapGet, set: weakMapSet } = WeakMap.prototype;
export const weakAdd = uncurryThis(WeakSet.prototype.add);
export const mapGet = uncurryThis(Map.prototype.get);
export const mapSet = uncurryThis(Map.prototype.set);
export const mapDelete = uncurryThis(Map.prototype.delete);
export const promiseThen = uncurryThis(Promise.prototype.then);
const nativeIsArray = Array.isArray;

/** Array.isArray, but undefined for a revoked Proxy rather than an engine error. */
export function isArray(value) {
  try {
    return nativeIsArray(value);
  } catch {
    return undefined;
  }
}

/** The engine's own Float16Array, or undefined where it has none (Node 20)
 * or where the global is not one (a polyfill, which is no typed array: the
 * intrinsic getters refuse its instances). */
export const Float16Array = (() => {
  const F = globalThis.Float16Array;
  try {
    return kindOf(new F(1)) === 'Float16Array' ? F : undefined;
  } catch {
    return undefined;
  }
})();

/** Whether a buffer is a SharedArrayBuffer, told by the buffer itself
 * (ArrayBuffer's getter refuses those): pages without cross-origin
 * isolation have no SharedArrayBuffer global, yet shared memories. */
export function isSharedBuffer(buffer) {
  try {
    arrayBufferByteLength(buffer);
    return false;
  } catch {
    return true;
  }
}

/** Whether a view can no longer reach its memory (detached, or out of
 * bounds of a shrunk resizable buffer): the intrinsic `at` validates it. */
export function isUnreachable(view) {
  try {
    typedArrayAt(view, 0);
    return false;
  } catch {
    return true;
  }
}

const detachedOf = getterOr(ArrayBuffer.prototype, 'detached', null);
const maxByteLengthOf = getterOr(ArrayBuffer.prototype, 'maxByteLength', null);

/** Whether a buffer (not shared: those cannot be) was detached, told from
 * one shrunk to nothing where the engine has no `detached` getter: a
 * detached resizable buffer's maximum reads 0 too. */
export function isDetached(buffer) {
  if (isSharedBuffer(buffer)) return false;
  if (detachedOf !== null) return detachedOf(buffer);
  if (arrayBufferByteLength(buffer) !== 0) return false;
  return maxByteLengthOf === null || maxByteLengthOf(buffer) === 0;
}

/** Whether a buffer can neither grow nor shrink: a view of it changes
 * length only when it is detached. */
export function isFixedLength(buffer) {
  try {
    return !resizableOf(buffer);
  } catch {
    try {
      return !growableOf(buffer);
    } catch {
      return false;
    }
  }
}

/**
 * A view the package made and only it holds, given the intrinsics as its
 * own properties: `view.set(source, at)` is %TypedArray%.prototype.set
 * and `view.size` its length getter, whatever a page did to the
 * prototypes. As a method and an accessor of the view itself they are
 * plain property reads, which JavaScriptCore makes far cheaper than the
 * uncurried copyInto and lengthOf (docs/benchmarks.md).
 */
export function ownView(view) {
  defineProperty(view, 'set', { __proto__: null, value: typedArraySet });
  return defineProperty(view, 'size', { __proto__: null, get: lengthGetter });
}

/** A WeakMap with the intrinsic `get` and `set` as its own methods (as ownView does for views). */
export function ownWeakMap() {
  const map = new WeakMap();
  defineProperty(map, 'get', { __proto__: null, value: weakMapGet });
  return defineProperty(map, 'set', { __proto__: null, value: weakMapSet });
}

/**
 * An array of the package's own, for every array it builds after load:
 * its prototype chain ends at List.prototype, so no index, accessor or
 * method a page puts on Array.prototype or Object.prototype is read or
 * run through it. (`items[n] = v` past a plain array's end runs a setter
 * a page defined for index n, and reading a hole runs its getter.) It has
 * no methods: index it. `new List(n)` has n holes; fill them first.
 */
export class List extends Array {
  constructor(n = 0) {
    super(n);
  }
}
setPrototypeOf(List.prototype, null);

/** `items` joined by `separator`, without Array.prototype.join. */
export function join(items, separator, quote = '') {
  let s = '';
  for (let i = 0; i < items.length; i++) s += `${i === 0 ? '' : separator}${quote}${items[i]}${quote}`;
  return s;
}

/** Whether `items` holds `value`, without Array.prototype.includes. */
export function holds(items, value) {
  for (let i = 0; i < items.length; i++) if (items[i] === value) return true;
  return false;
}

// What is saved above is whatever the page had when the package loaded: a
// built-in replaced before then (a polyfill, an instrumenting wrapper) is
// the one used. The arithmetic the reference and the option checks compute
// with is checked against known answers here, so a replacement that gives
// other answers fails the import, naming it, instead of giving other bits
// silently (docs/api.md, "Threat model"). A replacement that gives the
// built-in's answers is used and changes nothing.
const wrongBuiltin = (() => {
  if (fround(0.1) !== 0.10000000149011612 || fround(1 + 2 ** -24) !== 1 || fround(1 + 3 * 2 ** -24) !== 1 + 2 ** -22 || fround(2 ** -150) !== 0
    || fround(2 ** -149) !== 2 ** -149 || fround(3.4028235677973366e38) !== Infinity || fround(NaN) === fround(NaN)) return 'Math.fround';
  const f32 = new Float32Array(1);
  f32[0] = 0.1;
  if (f32[0] !== 0.10000000149011612 || lengthOf(f32) !== 1 || kindOf(f32) !== 'Float32Array') return 'Float32Array';
  // And the two against each other, over 64 binades: a replacement right on the known answers only.
  for (let i = 0; i < 64; i++) {
    const v = (1 + ((i * 0.6180339887498949) % 1)) * 2 ** (2 * i - 70);
    f32[0] = v;
    if (fround(v) !== f32[0]) return 'Math.fround or Float32Array';
  }
  if (sqrt(2) !== 1.4142135623730951 || sqrt(0.25) !== 0.5) return 'Math.sqrt';
  if (floor(-0.5) !== -1 || ceil(0.5) !== 1 || abs(-2) !== 2 || max(1, 3) !== 3 || min(1, 3) !== 1 || log2(2 ** -100) !== -100) return 'Math';
  return null;
})();
if (wrongBuiltin !== null) {
  throw new Error(`rmsnorm-wasm: ${wrongBuiltin} was replaced before rmsnorm-wasm loaded, by one that gives other answers than the built-in's; the package computes with what it saves at load, so it would give other bits. Load it before the code that replaces ${wrongBuiltin}, or without it`);
}
