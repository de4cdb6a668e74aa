// Tensors living in the module's own WebAssembly memory: the zero-copy path.
// A kernel given tensors (or views into the module's memory) reads and writes
// them where they are; a kernel given ordinary arrays copies them in and out.

export const DTYPES = /** @type {const} */ (['float32', 'bfloat16', 'float16']);

/** The typed array that stores each dtype: 16-bit dtypes travel as raw bit patterns. */
export const ARRAY_TYPE_OF = { float32: Float32Array, bfloat16: Uint16Array, float16: Uint16Array };

export class Tensor {
  #kernels;
  #byteOffset;
  #length;
  #dtype;
  #resolved = null; // { array, tensor, span }: the view and where it lies

  /** @internal Use alloc(). */
  constructor(kernels, byteOffset, length, dtype) {
    this.#kernels = kernels;
    this.#byteOffset = byteOffset;
    this.#length = length;
    this.#dtype = dtype;
  }

  /** The typed-array view of the tensor. Always valid: rebuilt after the
   * memory grows, which detaches every earlier view of it (so do not keep
   * `tensor.array` in a variable across kernel calls or allocations). */
  get array() {
    return this.resolved.array;
  }

  /**
   * @internal The tensor as an argument resolved by src/api/validate.js:
   * { array, tensor, span }, span being where it lies ({ buffer, start, end }
   * in bytes, as spanOf gives it for arrays; here the record itself, which
   * carries those three too). One object per view, reused by
   * every call: a kernel call on tensors allocates nothing here, and garbage
   * made per call costs more than its own time, since fresh young-generation
   * memory evicts the operands from cache (+130 ns a call at 1 x 4096).
   */
  get resolved() {
    if (this.#kernels === null) throw new TypeError('Tensor: this tensor has been freed');
    // memory.grow() detaches the old buffer, and a view of a detached buffer
    // has length 0: checking that is cheap, where reading memory.buffer costs
    // ~20 ns on every kernel call. (A zero-length view is simply rebuilt.)
    const resolved = this.#resolved;
    if (resolved === null || resolved.array.length !== this.#length || this.#length === 0) {
      const buffer = this.#kernels.memory.buffer;
      const start = this.#byteOffset;
      const array = new ARRAY_TYPE_OF[this.#dtype](buffer, start, this.#length);
      // Its own span: one object fewer to reach on every call.
      const record = { array, tensor: this, span: null, buffer, start, end: start + array.byteLength };
      record.span = record;
      this.#resolved = record;
    }
    return this.#resolved;
  }

  get dtype() { return this.#dtype; }
  get length() { return this.#length; }
  /** Byte address in the module's memory. */
  get byteOffset() { return this.#byteOffset; }
  get freed() { return this.#kernels === null; }

  /** @internal The instance whose memory holds the tensor (null once freed). */
  get kernels() { return this.#kernels; }

  /** Returns the memory to the module. Using the tensor afterwards throws. Idempotent. */
  free() {
    if (this.#kernels === null) return;
    this.#kernels.exports.free(this.#byteOffset);
    this.#kernels = null;
    this.#resolved = null;
  }
}
