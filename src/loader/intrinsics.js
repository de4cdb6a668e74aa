// Built-ins saved when the package loads, as Node's core keeps its
// "primordials": the package measures and copies a caller's arrays through
// these, so that a subclass, an own property, an overridden method or a
// polluted prototype cannot change what it sees or where it writes.

const uncurryThis = (fn) => Function.prototype.call.bind(fn);
const TypedArrayPrototype = Object.getPrototypeOf(Uint8Array.prototype);
const typedArrayGetter = (key) => uncurryThis(Object.getOwnPropertyDescriptor(TypedArrayPrototype, key).get);

export const lengthOf = typedArrayGetter('length');
export const byteOffsetOf = typedArrayGetter('byteOffset');
export const byteLengthOf = typedArrayGetter('byteLength');
export const bufferOf = typedArrayGetter('buffer');
/** 'Float32Array', 'Uint16Array', … for a typed array; undefined for a DataView. */
export const kindOf = typedArrayGetter(Symbol.toStringTag);
/** %TypedArray%.prototype.set, which reads no property of its target or its
 * source: set.call(target, source, offset). (Called through .call rather
 * than uncurried: V8 inlines that, not a bound call, on a hot path.) */
export const { set } = TypedArrayPrototype;
export const copyInto = uncurryThis(set);
const typedArrayAt = uncurryThis(TypedArrayPrototype.at);
const arrayBufferByteLength = uncurryThis(Object.getOwnPropertyDescriptor(ArrayBuffer.prototype, 'byteLength').get);
/** WebAssembly.Memory.prototype.buffer: throws for anything but a memory. */
export const memoryBufferOf = uncurryThis(Object.getOwnPropertyDescriptor(WebAssembly.Memory.prototype, 'buffer').get);
export const hasOwn = uncurryThis(Object.prototype.hasOwnProperty);
export const { isView } = ArrayBuffer;
export const Float32ArrayOf = Float32Array;
export const Uint16ArrayOf = Uint16Array;
/** undefined where the engine has none (Node 20). */
export const Float16ArrayOf = globalThis.Float16Array;

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

/** Whether a measured argument lies on shared memory, asked once and only
 * when it matters (the check costs a builtin call). */
export function isShared(arg) {
  if (arg.shared === undefined) arg.shared = arg.kernels === null && isSharedBuffer(arg.buffer);
  return arg.shared;
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
