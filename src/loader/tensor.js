// Tensors living in one instance's own WebAssembly memory: the zero-copy
// path. A kernel given tensors reads and writes them where they are.

import { ELEMENT_BYTES } from './abi.js';
import { Float32Array, lengthOf, setPrototypeOf, TypeError, Uint16Array, Uint8Array } from './intrinsics.js';

/**
 * What the package knows of one array argument once measured: where its
 * values lie and what they hold. `memory` is the instance memory it lies
 * in (a tensor, or a view the instance adopted), else null; `buffer` is
 * a view's buffer (null for a tensor; undefined for a result the package
 * made, src/ops/arrays.js newOutput); [start, end) are byte offsets in it.
 */
export class ArrayRecord {
  constructor(value, dtype, memory, buffer, start, length, kind) {
    this.value = value; // what a call returns when this is its result
    this.dtype = dtype;
    this.memory = memory;
    this.buffer = buffer;
    this.start = start;
    this.length = length;
    this.end = start + length * ELEMENT_BYTES[dtype];
    this.kind = kind; // 'Float32Array' | 'Uint16Array' | 'Float16Array' | 'Uint8Array', or null for a tensor
    this.shared = memory === null ? undefined : false; // a SharedArrayBuffer? asked only when it matters
    this.owned = false; // made by the package for its result, not the caller's
    this.live = true; // false once its tensor is freed
    this.shadow = null; // a view's own view of the same values, once its call is repeated (src/ops/arrays.js, stillHolds)
    this.within = null; // the record of the tensor a view of an instance's memory lies in (src/loader/memory.js)
  }
}

// Fields are plain assignments (fast), and the prototype ends here: no
// setter a page puts on Object.prototype runs for them.
setPrototypeOf(ArrayRecord.prototype, null);

// Only this module makes tensors (makeTensor): a caller cannot construct one
// over addresses it chose.
const MAKER = Symbol('rmsnorm-wasm tensor');

/** Whether `value` is a tensor (a brand check: runs no caller code). */
export let isTensor;
/** A tensor's record, or null once freed. Reads only private fields. */
export let recordOf;
/** A tensor's view; throws once freed. A view of a detached buffer has
 * length 0, which is how a stale one is recognized cheaply. */
export let tensorView;

export class Tensor {
  #memory;
  #record;
  #view = null;
  #dtype;
  #length;
  #byteOffset;

  /** @internal Tensors come from alloc(). */
  constructor(maker, memory, byteOffset, length, dtype) {
    if (maker !== MAKER) throw new TypeError('Tensor: tensors come from alloc()');
    this.#memory = memory;
    this.#dtype = dtype;
    this.#length = length;
    this.#byteOffset = byteOffset;
    // Measured once, here: a call given this tensor reads only this record.
    this.#record = new ArrayRecord(this, dtype, memory, null, byteOffset, length, null);
  }

  /**
   * The typed-array view of the tensor, always of its current memory:
   * memory.grow() detaches every earlier view, so this is rebuilt when it
   * happened (do not keep `tensor.array` across kernel calls or allocations).
   */
  get array() {
    return tensorView(Tensor.#of(this, 'array'));
  }

  get dtype() { return Tensor.#of(this, 'dtype').#dtype; }
  get length() { return Tensor.#of(this, 'length').#length; }
  /** Byte address in the instance's memory. */
  get byteOffset() { return Tensor.#of(this, 'byteOffset').#byteOffset; }
  get freed() { return Tensor.#of(this, 'freed').#record === null; }

  /** Returns the memory to the instance. Using the tensor afterwards throws. Idempotent. */
  free() {
    const tensor = Tensor.#of(this, 'free');
    if (tensor.#record === null) return;
    tensor.#memory.free(tensor.#record.start);
    tensor.#record.live = false;
    tensor.#record = null;
    tensor.#view = null;
  }

  /** `value` when it is a tensor: a member taken off its tensor and called on
   * anything else is a TypeError of ours, not the engine's private-field one. */
  static #of(value, member) {
    if (!isTensor(value)) throw new TypeError(`Tensor.${member}: called on something that is not a tensor`);
    return value;
  }

  #live() {
    if (this.#record === null) throw new TypeError('Tensor: this tensor has been freed');
    return this.#record;
  }

  // The package's own access to tensors, as functions of this module: a
  // static of the exported class would be a property a page can replace.
  static {
    isTensor = (value) => typeof value === 'object' && value !== null && #record in value;
    recordOf = (tensor) => tensor.#record;
    tensorView = (tensor) => {
      const { length, dtype, start } = tensor.#live();
      let view = tensor.#view;
      if (view === null || lengthOf(view) !== length || length === 0) {
        const Type = dtype === 'float32' ? Float32Array : ELEMENT_BYTES[dtype] === 1 ? Uint8Array : Uint16Array; // a block format: its bytes
        view = new Type(tensor.#memory.buffer(), start, length);
        tensor.#view = view;
      }
      return view;
    };
  }
}

/** @internal A tensor of `memory` at a byte address it allocated. */
export function makeTensor(memory, byteOffset, length, dtype) {
  return new Tensor(MAKER, memory, byteOffset, length, dtype);
}
