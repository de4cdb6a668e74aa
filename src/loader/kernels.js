// One instantiated wasm module: its exports, its memory, the scratch space
// the copying path stages arrays in, and the runner that decides, argument by
// argument, what must be copied and what is already in wasm memory.

import { Tensor } from '../api/tensor.js';
import { sameStart, spanOf } from '../api/validate.js';

// Largest single allocation we ask of a wasm32 module: malloc takes a 32-bit
// size, and the whole address space is 4 GiB, part of it already in use.
const MAX_ALLOC_BYTES = 2 ** 32 - 2 ** 24;
// The copying path moves arrays through wasm memory in chunks of whole rows of
// about this size, so a huge input does not grow the memory (which can never
// shrink again) to its own size, and each chunk is still in cache when the
// kernel reads it: 256 KiB stays in L2, where 1 MiB chunks measured 1.64x the
// zero-copy time at 2048 x 4096 float32 and these 1.35x (npm run bench).
export const CHUNK_BYTES = 2 ** 18;

export const DTYPE_CODE = { float32: 0, bfloat16: 1, float16: 2 };
const CAST_CODE = { gemma: 0, llama: 1 };
/** Bytes per value of each storage dtype. */
export const BYTES = { float32: 4, bfloat16: 2, float16: 2 };
/** Scratch regions start on 16-byte boundaries, where the kernels' vector loads are fastest. */
export const align16 = (n) => Math.ceil(n / 16) * 16;

export class WasmKernels {
  #lastStaged = null; // { heap, at, view } of #stagedOutput
  /** `memory`: the module's own (exported) memory, or the one it imports
   * (bindMemory), in which case nothing may be staged: no allocator. */
  constructor(exports, memory = exports.memory) {
    this.exports = exports;
    this.memory = memory;
    this.bound = memory !== exports.memory;
    this.views = null; // { buffer, float32, uint16 } over all of memory
    this.scratchPtr = 0;
    this.scratchBytes = 0;
  }

  /** Typed arrays over all of wasm memory, by element type. Rebuilt after
   * memory.grow(), which detaches the old ArrayBuffer and every view on it. */
  heap(dtype) {
    const buffer = this.memory.buffer;
    if (this.views?.buffer !== buffer) {
      this.views = { buffer, float32: new Float32Array(buffer), uint16: new Uint16Array(buffer) };
    }
    return dtype === 'float32' ? this.views.float32 : this.views.uint16;
  }

  /** `bytes` of wasm memory from malloc; a RangeError when it cannot be had. */
  malloc(fn, bytes) {
    if (bytes > MAX_ALLOC_BYTES) {
      throw new RangeError(`${fn}: needs ${bytes} bytes of wasm memory, more than wasm32 can address`);
    }
    const ptr = this.exports.malloc(Math.max(bytes, 1)) >>> 0;
    if (ptr === 0) {
      throw new RangeError(`${fn}: could not grow wasm memory to hold ${bytes} more bytes`);
    }
    return ptr;
  }

  /** A tensor of `length` values of `dtype` in this module's memory. */
  alloc(fn, length, dtype) {
    return new Tensor(this, this.malloc(fn, length * BYTES[dtype]), length, dtype);
  }

  /** A scratch region of at least `bytes`, reused across calls and only ever
   * replaced by a larger one. Returns its byte address. */
  scratch(fn, bytes) {
    if (bytes <= this.scratchBytes) return this.scratchPtr;
    if (bytes > MAX_ALLOC_BYTES) {
      throw new RangeError(`${fn}: needs ${bytes} bytes of wasm memory, more than wasm32 can address`);
    }
    if (this.scratchPtr !== 0) this.exports.free(this.scratchPtr);
    this.scratchPtr = 0;
    this.scratchBytes = 0;
    this.scratchPtr = this.malloc(fn, bytes);
    this.scratchBytes = bytes;
    return this.scratchPtr;
  }

  /** The byte address of a resolved argument already in this module's memory
   * (a tensor, or a view of `memoryBuffer`), or -1 when it must be copied in. */
  addressOf(fn, name, { array, tensor, span }, memoryBuffer = this.memory.buffer) {
    if (tensor !== undefined) {
      if (tensor.kernels !== this) {
        throw new TypeError(`${fn}: ${name} is a tensor of another instance's memory (allocated under another backend?)`);
      }
      return tensor.byteOffset;
    }
    const { buffer, start } = span ?? spanOf(array);
    if (buffer === memoryBuffer) return start;
    if (this.bound) {
      throw new TypeError(`${fn}: ${name} must be a view of the bound WebAssembly.Memory's buffer (bindMemory copies nothing)`);
    }
    return -1;
  }

  /**
   * RMSNorm (or, with args.residual, the fused residual add) on resolved
   * arguments (src/api/validate.js), writing into `y` ({array, tensor, span},
   * span undefined for a new array). Arguments in wasm memory are used where
   * they are; the others are staged through scratch, weight once and rows in
   * chunks. Rows are independent, so chunking does not change a single bit.
   */
  rmsNorm(fn, args, y) {
    const { x, residual, weight } = args;
    // Tensors know their address: memory.buffer (~20 ns) is read only for arrays.
    const anyArray = x.tensor === undefined || (residual !== undefined && residual.tensor === undefined) ||
      (weight !== null && weight.tensor === undefined) || (y.span !== undefined && y.tensor === undefined);
    const memoryBuffer = anyArray ? this.memory.buffer : null;
    const xAt = this.addressOf(fn, 'x', x, memoryBuffer);
    const rAt = residual === undefined ? 0 : this.addressOf(fn, 'residual', residual, memoryBuffer);
    const wAt = weight === null ? 0 : this.addressOf(fn, 'weight', weight, memoryBuffer);
    // y is options.out (resolved, with its span) or a new array (never x).
    const yAt = y.span === undefined ? -1
      : sameStart(y, x) ? xAt : this.addressOf(fn, 'options.out', y, memoryBuffer);
    if (xAt >= 0 && rAt >= 0 && wAt >= 0 && yAt >= 0) {
      // Everything in place: the zero-copy call, which allocates nothing.
      this.#rmsNormRows(args, xAt, rAt, wAt, yAt, args.rows);
    } else {
      this.#rmsNormStaged(fn, args, y, xAt, rAt, wAt, yAt);
    }
  }

  /** The plain zero-copy call (src/api/validate.js, isPlainTensorCall):
   * float32 tensors, llama (float32's only) cast mode, no offset. */
  rmsNormTensors(x, weight, y, rows, dim, eps) {
    this.exports.rmsnorm(x.byteOffset, 0, weight.byteOffset, y.byteOffset, rows, dim, eps,
      DTYPE_CODE.float32, DTYPE_CODE.float32, CAST_CODE.llama, 0);
  }

  /** The export on `rows` rows at these byte addresses (r and w 0 for none). */
  #rmsNormRows(args, xPtr, rPtr, wPtr, yPtr, rows) {
    this.exports.rmsnorm(xPtr, rPtr, wPtr, yPtr, rows, args.dim, args.eps,
      DTYPE_CODE[args.dtype], DTYPE_CODE[args.weightDtype ?? 'float32'], CAST_CODE[args.castMode],
      args.weightOffset);
  }

  /** A view of `length` values of `heap` from byte `at`: the staged output
   * rows, to copy out. The last one is kept: a copying call made again and
   * again with the same shape reuses it instead of making a subarray each
   * time. (The staged residual takes a fresh subarray: it would evict this.) */
  #stagedOutput(heap, at, length) {
    const last = this.#lastStaged;
    if (last !== null && last.heap === heap && last.at === at && last.view.length === length) return last.view;
    const first = at / heap.BYTES_PER_ELEMENT;
    const view = heap.subarray(first, first + length);
    this.#lastStaged = { heap, at, view };
    return view;
  }

  /** rmsNorm with some arguments outside wasm memory (address -1), staged. */
  #rmsNormStaged(fn, args, y, xAt, rAt, wAt, yAt) {
    const { rows, dim, dtype, x, residual, weight } = args;
    const size = BYTES[dtype];
    const rowBytes = dim * size;
    // Scratch layout: [weight][x rows][residual rows][y rows], each part only if needed.
    const stageWeight = wAt < 0;
    const chunkRows = xAt < 0 || rAt < 0 || yAt < 0
      ? Math.min(rows, Math.max(1, Math.floor(CHUNK_BYTES / rowBytes))) : rows;
    const chunkBytes = align16(chunkRows * rowBytes);
    const weightBytes = stageWeight ? align16(weight.span.end - weight.span.start) : 0;
    // An output staged beside a staged x can share its rows: the kernel works in place.
    const yShares = yAt < 0 && xAt < 0;
    const base = this.scratch(fn, weightBytes + chunkBytes * ((xAt < 0) + (rAt < 0) + (yAt < 0 && !yShares)));
    let next = base + weightBytes;
    const xStage = xAt < 0 ? next : -1;
    if (xAt < 0) next += chunkBytes;
    const rStage = rAt < 0 ? next : -1;
    if (rAt < 0) next += chunkBytes;
    const yStage = yShares ? xStage : yAt < 0 ? next : -1;

    const wPtr = stageWeight ? base : wAt;
    if (stageWeight) this.heap(args.weightDtype).set(weight.array, base / BYTES[args.weightDtype]);
    const heap = xAt < 0 || rAt < 0 || yAt < 0 ? this.heap(dtype) : null; // only to stage
    for (let row = 0; row < rows; row += chunkRows) {
      const n = Math.min(chunkRows, rows - row);
      const offset = row * rowBytes;
      if (xAt < 0) heap.set(rowsOf(x.array, rows, dim, row, n), xStage / size);
      if (rAt < 0) heap.set(rowsOf(residual.array, rows, dim, row, n), rStage / size);
      this.#rmsNormRows(args, xAt < 0 ? xStage : xAt + offset,
        residual === undefined ? 0 : rAt < 0 ? rStage : rAt + offset,
        wPtr, yAt < 0 ? yStage : yAt + offset, n);
      if (rAt < 0) residual.array.set(heap.subarray(rStage / size, rStage / size + n * dim), row * dim);
      if (yAt < 0) y.array.set(this.#stagedOutput(heap, yStage, n * dim), row * dim);
    }
  }
}

/** Rows from..from+n of an array of `rows` rows: the array itself when that
 * is all of it (a subarray is one more object per call). */
function rowsOf(array, rows, dim, from, n) {
  return n === rows ? array : array.subarray(from * dim, (from + n) * dim);
}
