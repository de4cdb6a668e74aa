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
  #view = null;
  #viewBuffer = null; // the buffer #view was made on (read once, not per access)

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
    if (this.#kernels === null) throw new TypeError('Tensor: this tensor has been freed');
    // memory.grow() detaches the old buffer, and a view of a detached buffer
    // has length 0: checking that is cheap, where reading memory.buffer costs
    // ~20 ns on every kernel call. (A zero-length view is simply rebuilt.)
    if (this.#view === null || this.#view.length !== this.#length || this.#length === 0) {
      const buffer = this.#kernels.memory.buffer;
      this.#view = new ARRAY_TYPE_OF[this.#dtype](buffer, this.#byteOffset, this.#length);
      this.#viewBuffer = buffer;
    }
    return this.#view;
  }

  /** @internal Where the tensor lies, as src/api/validate.js's spanOf gives
   * it for arrays, without reading the typed-array getters. Call after
   * `array`, which brings the view's buffer up to date. */
  get span() {
    const start = this.#byteOffset;
    return { buffer: this.#viewBuffer, start, end: start + this.#length * ARRAY_TYPE_OF[this.#dtype].BYTES_PER_ELEMENT };
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
    this.#view = null;
    this.#viewBuffer = null;
  }
}
