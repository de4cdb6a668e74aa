// One instantiated wasm module: its exports, its memory and the scratch
// space the copying API stages arrays in.

const FLOAT_BYTES = 4;
// Largest single allocation we ask of a wasm32 module: malloc takes a 32-bit
// size, and the whole address space is 4 GiB, part of it already in use.
const MAX_ALLOC_BYTES = 2 ** 32 - 2 ** 24;
// The copying API moves arrays through wasm memory in chunks of whole rows of
// about this size, so a huge input does not grow the memory (which can never
// shrink again) to its own size, and each chunk is still in cache when the
// kernel reads it.
export const CHUNK_FLOATS = 2 ** 18;

export class WasmKernels {
  constructor(exports) {
    this.exports = exports;
    this.memory = exports.memory;
    this.heapBuffer = null;
    this.heapF32 = null;
    this.scratchPtr = 0;
    this.scratchBytes = 0;
  }

  /** A Float32Array over all of wasm memory. Rebuilt after memory.grow(),
   * which detaches the old ArrayBuffer and with it every view on it. */
  get heap() {
    if (this.heapBuffer !== this.memory.buffer) {
      this.heapBuffer = this.memory.buffer;
      this.heapF32 = new Float32Array(this.heapBuffer);
    }
    return this.heapF32;
  }

  /** A scratch region of at least `floats` floats, reused across calls and
   * only ever replaced by a larger one. Returns its byte address. */
  scratch(fn, floats) {
    const bytes = floats * FLOAT_BYTES;
    if (bytes <= this.scratchBytes) return this.scratchPtr;
    if (bytes > MAX_ALLOC_BYTES) {
      throw new RangeError(`${fn}: needs ${bytes} bytes of wasm memory, more than wasm32 can address`);
    }
    if (this.scratchPtr !== 0) this.exports.free(this.scratchPtr);
    this.scratchPtr = 0;
    this.scratchBytes = 0;
    const ptr = this.exports.malloc(bytes) >>> 0;
    if (ptr === 0) {
      throw new RangeError(`${fn}: could not grow wasm memory to hold ${bytes} more bytes`);
    }
    this.scratchPtr = ptr;
    this.scratchBytes = bytes;
    return ptr;
  }

  /**
   * The copying path of a row-wise float32 kernel: weight (if any) and then
   * chunks of whole rows of x are copied into scratch, normalized in place
   * there by `kernel(xPtr, wPtr, yPtr, rows, dim)`, and copied out to y.
   * Rows are independent, so chunking does not change a single bit.
   */
  runRowsCopying(fn, x, weight, y, rows, dim, kernel) {
    const chunkRows = Math.min(rows, Math.max(1, Math.floor(CHUNK_FLOATS / dim)));
    // Weight first, padded to 16 bytes so the rows start aligned.
    const weightFloats = weight === null ? 0 : Math.ceil(dim / 4) * 4;
    const base = this.scratch(fn, weightFloats + chunkRows * dim);
    const heap = this.heap; // after scratch(): malloc may have grown memory
    const wPtr = weight === null ? 0 : base;
    const xPtr = base + weightFloats * FLOAT_BYTES;
    if (weight !== null) heap.set(weight, wPtr / FLOAT_BYTES);
    for (let row = 0; row < rows; row += chunkRows) {
      const n = Math.min(chunkRows, rows - row);
      const from = row * dim;
      const to = from + n * dim;
      heap.set(x.subarray(from, to), xPtr / FLOAT_BYTES);
      kernel(xPtr, wPtr, xPtr, n, dim);
      y.set(heap.subarray(xPtr / FLOAT_BYTES, xPtr / FLOAT_BYTES + n * dim), from);
    }
  }
}
