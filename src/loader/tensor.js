// Tensors living in one instance's own WebAssembly memory: the zero-copy
// path. A kernel given tensors reads and writes them where they are.

export const DTYPES = /** @type {const} */ (['float32', 'bfloat16', 'float16']);

/** The typed array that holds each dtype's bits: 16-bit dtypes travel as raw bit patterns. */
export const ARRAY_TYPE_OF = { float32: Float32Array, bfloat16: Uint16Array, float16: Uint16Array };

/** Bytes per value of each storage dtype. */
export const BYTES = { float32: 4, bfloat16: 2, float16: 2 };

// Only this module makes tensors (makeTensor): a caller cannot construct one
// over addresses it chose.
const MAKER = Symbol('rmsnorm-wasm tensor');

export class Tensor {
  #kernels;
  #byteOffset;
  #length;
  #dtype;
  #view = null;

  /** @internal Tensors come from alloc(). */
  constructor(maker, kernels, byteOffset, length, dtype) {
    if (maker !== MAKER) throw new TypeError('Tensor: tensors come from alloc()');
    this.#kernels = kernels;
    this.#byteOffset = byteOffset;
    this.#length = length;
    this.#dtype = dtype;
  }

  /**
   * The typed-array view of the tensor, always of its current memory:
   * memory.grow() detaches every earlier view, so this is rebuilt when it
   * happened (do not keep `tensor.array` across kernel calls or allocations).
   */
  get array() {
    return Tensor.viewOf(this);
  }

  get dtype() { return this.#dtype; }
  get length() { return this.#length; }
  /** Byte address in the instance's memory. */
  get byteOffset() { return this.#byteOffset; }
  get freed() { return this.#kernels === null; }

  /** Returns the memory to the instance. Using the tensor afterwards throws. Idempotent. */
  free() {
    if (this.#kernels === null) return;
    this.#kernels.free(this.#byteOffset);
    this.#kernels = null;
    this.#view = null;
  }

  // Internal reads through private fields: a subclass, an own property or a
  // changed prototype cannot change what the package sees of a tensor.

  /** @internal Whether `value` is a tensor (a brand check: runs no caller code). */
  static is(value) {
    return typeof value === 'object' && value !== null && #kernels in value;
  }

  /** @internal The instance holding the tensor, or null once freed. */
  static kernelsOf(tensor) { return tensor.#kernels; }
  /** @internal */
  static byteOffsetOf(tensor) { return tensor.#byteOffset; }
  /** @internal */
  static lengthOf(tensor) { return tensor.#length; }
  /** @internal */
  static dtypeOf(tensor) { return tensor.#dtype; }

  /** @internal The tensor's view; throws once freed. A view of a detached
   * buffer has length 0, which is how a stale one is recognized cheaply. */
  static viewOf(tensor) {
    const kernels = tensor.#kernels;
    if (kernels === null) throw new TypeError('Tensor: this tensor has been freed');
    let view = tensor.#view;
    if (view === null || view.length !== tensor.#length || tensor.#length === 0) {
      view = new ARRAY_TYPE_OF[tensor.#dtype](kernels.buffer(), tensor.#byteOffset, tensor.#length);
      tensor.#view = view;
    }
    return view;
  }
}

/** @internal A tensor of `kernels` at a byte address it allocated. */
export function makeTensor(kernels, byteOffset, length, dtype) {
  return new Tensor(MAKER, kernels, byteOffset, length, dtype);
}
