// One instantiated wasm module: its exports, the memory it works in, the
// scratch space arrays are staged in, and the runner that places a checked
// call's arrays in that memory and calls a kernel on them.

import {
  bufferOf, byteOffsetOf, Float32ArrayOf, isShared, isSharedBuffer, memoryBufferOf, set, Uint16ArrayOf,
} from './intrinsics.js';
import { CAST_MODE } from './abi.js';
import { BYTES, makeTensor } from './tensor.js';

// Largest single allocation asked of a wasm32 module: malloc takes a 32-bit
// size, and the whole address space is 4 GiB, part of it already in use.
const MAX_ALLOC_BYTES = 2 ** 32 - 2 ** 24;
const ADDRESS_SPACE = 2 ** 32;
// Arrays outside wasm memory move through it in chunks of whole rows of about
// this size: a huge input does not grow the memory (which never shrinks) to
// its own size, and each chunk is still in cache when the kernel reads it.
export const CHUNK_BYTES = 2 ** 18;
/** Bytes of call stack the kernels need at most: a bound memory's scratch region must hold them. */
export const STACK_BYTES = 4096;

export const DTYPE_CODE = { float32: 0, bfloat16: 1, float16: 2 };
export const CAST_CODE = CAST_MODE;

/** Scratch regions start on 16-byte boundaries, where the kernels' vector loads are fastest. */
const align16 = (n) => Math.ceil(n / 16) * 16;

// How an array of a call spans the rows, and which way its values move
// (the layouts are src/api/args.js's).
export const PER_ROW = 0; // dim values a row
export const PER_STAT = 1; // one value a row
export const ONCE = 2; // dim values for the whole call (a weight, a running sum)
export const IN = 1;
export const OUT = 2;
export const INOUT = 3;
export const SCRATCH = 4; // the kernel's own working space, never copied
const STAGED = -1;
const ABSENT = -2;
const MAX_ARRAYS = 8;


export class WasmKernels {
  #views = null; // { buffer, float32, uint16 } over all of memory
  #scratchAt = 0;
  #scratchBytes = 0;
  #lent; // bound memory: [start, end) of the region lent as stack and scratch

  /**
   * `memory`: the module's own (exported) memory, or, for bindMemory, the
   * memory it imports together with `lent` = [start, end), the region it may
   * use: its call stack at the top, staging below.
   */
  constructor(exports, memory = exports.memory, lent = undefined) {
    this.exports = exports;
    this.memory = memory;
    this.bound = lent !== undefined;
    this.shared = isSharedBuffer(memoryBufferOf(memory));
    this.#lent = lent;
  }

  /**
   * The memory's current buffer. The getter (the intrinsic: no property of
   * the memory object can redirect it) is a slow builtin, so the buffer is
   * kept with views of it, and asked again only once those read as empty:
   * growing a non-shared memory detaches its old buffer. A shared memory's
   * buffer is never detached, so it is asked every time.
   */
  buffer() {
    const views = this.#views;
    if (views !== null && views.float32.length !== 0 && !this.shared) return views.buffer;
    const buffer = memoryBufferOf(this.memory);
    if (views?.buffer !== buffer) {
      this.#views = { buffer, float32: new Float32ArrayOf(buffer), uint16: new Uint16ArrayOf(buffer) };
    }
    return buffer;
  }

  /** A view of all of wasm memory by element type. */
  heap(dtype) {
    this.buffer();
    return dtype === 'float32' ? this.#views.float32 : this.#views.uint16;
  }

  /** `bytes` of this module's memory from its allocator; a RangeError when
   * they cannot be had (a block must end inside the address space). */
  malloc(fn, bytes) {
    if (bytes > MAX_ALLOC_BYTES) {
      throw new RangeError(`${fn}: needs ${bytes} bytes of wasm memory, more than wasm32 can address`);
    }
    const at = this.exports.malloc(Math.max(bytes, 1)) >>> 0;
    if (at === 0) throw new RangeError(`${fn}: could not grow wasm memory to hold ${bytes} more bytes`);
    if (at + bytes > ADDRESS_SPACE || at + bytes > this.buffer().byteLength) {
      this.exports.free(at);
      throw new RangeError(`${fn}: could not grow wasm memory to hold ${bytes} more bytes`);
    }
    return at;
  }

  free(at) {
    this.exports.free(at);
  }

  /** A tensor of `length` values of `dtype` in this module's memory. */
  alloc(fn, length, dtype) {
    if (this.bound) throw new TypeError(`${fn}: a bound memory has no allocator; use the engine's own`);
    return makeTensor(this, this.malloc(fn, length * BYTES[dtype]), length, dtype);
  }

  /** The byte address of a scratch region of at least `bytes`: the module's
   * own, reused across calls and only replaced by a larger one, or the
   * bottom of the region a bound memory was lent. */
  scratch(fn, bytes) {
    if (this.bound) {
      const [start, end] = this.#lent;
      if (bytes > end - start - STACK_BYTES) {
        throw new RangeError(`${fn}: needs ${bytes} bytes of staging in options.scratch besides the kernels' ${STACK_BYTES}-byte stack; lend a larger region`);
      }
      return start;
    }
    if (bytes <= this.#scratchBytes) return this.#scratchAt;
    if (this.#scratchAt !== 0) this.exports.free(this.#scratchAt);
    this.#scratchAt = 0;
    this.#scratchBytes = 0;
    this.#scratchAt = this.malloc(fn, bytes);
    this.#scratchBytes = bytes;
    return this.#scratchAt;
  }

  /** The byte address of a measured argument (src/api/args.js) in this
   * memory, or -1 when it must be staged. */
  addressOf(fn, arg) {
    if (arg.kernels !== null) {
      if (arg.kernels !== this) {
        throw new TypeError(`${fn}: ${arg.name} is a tensor of another instance's memory${this.bound
          ? '; bound kernels take views of the bound memory' : ' (allocated by another instance or backend)'}`);
      }
      return arg.start;
    }
    if (arg.buffer === this.buffer()) return arg.start;
    if (this.bound && !arg.owned) {
      throw new TypeError(`${fn}: ${arg.name} must be a view of the bound memory's buffer (bound kernels copy nothing in)`);
    }
    return -1;
  }

  /**
   * The plain copying call (src/api/args.js, isPlainCopyingCall): float32
   * x, weight and out (null: a new array) outside this memory, staged
   * through scratch, the weight once and the rows in chunks, y over x's
   * staged rows. What runRows does for these arguments, without its
   * bookkeeping, which at one row is a measurable share of the call.
   */
  rmsNormCopying(fn, x, weight, out, rows, dim, eps) {
    const n = rows * dim;
    const y = out ?? new Float32ArrayOf(n);
    const chunkRows = Math.min(rows, Math.max(1, Math.floor(CHUNK_BYTES / (4 * dim))));
    const weightBytes = align16(4 * dim);
    const at = this.scratch(fn, weightBytes + align16(4 * chunkRows * dim));
    const xAt = at + weightBytes;
    const heap = this.heap('float32');
    set.call(heap, weight, at >>> 2);
    const { rmsnorm } = this.exports;
    const xBuffer = bufferOf(x);
    const xStart = byteOffsetOf(x);
    for (let row = 0; row < rows; row += chunkRows) {
      const count = Math.min(chunkRows, rows - row) * dim;
      set.call(heap, count === n ? x : new Float32ArrayOf(xBuffer, xStart + 4 * row * dim, count), xAt >>> 2);
      rmsnorm(xAt, 0, at, xAt, 0, count / dim, dim, eps, DTYPE_CODE.float32, DTYPE_CODE.float32, CAST_CODE.llama, 0);
      set.call(y, this.#stagedView('float32', xAt, count), row * dim);
    }
    return y;
  }

  /**
   * Runs `kernel(exports, call, pointers, n)` over chunks of n rows, with
   * pointers[i] the byte address of arrays[i] for the chunk (0 for one not
   * given). `layout[i]` says how array i spans the rows and which way its
   * values move (src/api/args.js). An array in this memory is used where it
   * is; any other is staged, its rows copied in before and out after each
   * chunk. Rows are independent and running sums (ONCE, INOUT) stay put from
   * the first chunk to the last, so chunking changes no bit. With
   * `readAllFirst` (arrays that may alias through shared memory) every
   * input is read in before the first write. All scratch is asked for before
   * anything is written, and views of the memory are taken only after that
   * last allocation.
   */
  runRows(fn, rows, dim, layout, arrays, readAllFirst, kernel, call) {
    if (rows === 0) return;
    const count = layout.length;
    // Per array: where it is (a direct address, STAGED, or ABSENT: a null
    // pointer), values per row (0: the same dim values for every row), bytes
    // per value, and whether it shares the staging of the input it may
    // overwrite (an output staged beside its staged input: the kernel works
    // in place); every other staged array has rows of its own.
    const { at, width, size, shares, offset, pointers } = this.#plan;
    let perRowBytes = 0;
    let views = false; // any typed array given as a view of this memory
    let anyStaged = false;
    for (let i = 0; i < count; i++) {
      const arg = arrays[i];
      const { per, dir, inPlaceOf } = layout[i];
      width[i] = per === PER_ROW ? dim : per === PER_STAT ? 1 : 0;
      size[i] = arg == null ? 4 : BYTES[arg.dtype];
      if (arg == null) {
        at[i] = dir === SCRATCH ? STAGED : ABSENT;
      } else if (inPlaceOf >= 0 && sameRange(arg, arrays[inPlaceOf])) {
        at[i] = at[inPlaceOf]; // an output exactly over its input stays with it, staged or not
      } else {
        at[i] = this.addressOf(fn, arg);
        if (at[i] >= 0 && arg.kernels === null) {
          views = true;
          if (at[i] === 0 && arg.start !== arg.end) {
            throw new RangeError(`${fn}: ${arg.name} is a view at address 0 of wasm memory, the null pointer`);
          }
        }
      }
      shares[i] = at[i] === STAGED && inPlaceOf >= 0 && at[inPlaceOf] === STAGED;
      if (at[i] === STAGED && !shares[i]) perRowBytes += width[i] * size[i];
      anyStaged ||= at[i] === STAGED;
    }
    if (!anyStaged && !this.bound) {
      // Everything in this memory: the zero-copy call, at once on all the rows.
      for (let i = 0; i < count; i++) pointers[i] = at[i] === ABSENT ? 0 : at[i];
      kernel(this.exports, call, pointers, rows);
      return;
    }
    const chunkRows = readAllFirst || perRowBytes === 0 ? rows
      : Math.min(rows, Math.max(1, Math.floor(CHUNK_BYTES / perRowBytes)));
    let total = 0;
    for (let i = 0; i < count; i++) {
      if (shares[i]) {
        offset[i] = offset[layout[i].inPlaceOf];
      } else if (at[i] === STAGED) {
        offset[i] = total;
        total += align16((width[i] === 0 ? dim : chunkRows * width[i]) * size[i]);
      } else {
        offset[i] = -1;
      }
    }
    const base = total > 0 ? this.scratch(fn, total) : 0;
    // The last allocation is behind us: no array given as a view of this
    // memory may lie in the region the call works in.
    if (views) this.#refuseViewsIn(fn, arrays, count, base, total);

    // From here on: copies and kernel calls only.
    for (let i = 0; i < count; i++) {
      if (offset[i] >= 0 && width[i] === 0 && layout[i].dir & IN && arrays[i] != null) {
        this.#copyIn(arrays[i], 0, dim, base + offset[i]);
      }
    }
    for (let row = 0; row < rows; row += chunkRows) {
      const n = Math.min(chunkRows, rows - row);
      for (let i = 0; i < count; i++) {
        if (offset[i] < 0) {
          pointers[i] = at[i] === ABSENT ? 0 : at[i] + row * width[i] * size[i];
        } else {
          pointers[i] = base + offset[i];
          if (width[i] !== 0 && !shares[i] && layout[i].dir & IN && arrays[i] != null) {
            this.#copyIn(arrays[i], row * width[i], n * width[i], pointers[i]);
          }
        }
      }
      kernel(this.exports, call, pointers, n);
      for (let i = 0; i < count; i++) {
        if (offset[i] >= 0 && width[i] !== 0 && layout[i].dir & OUT && arrays[i] != null) {
          this.#copyOut(arrays[i], row * width[i], n * width[i], pointers[i]);
        }
      }
    }
    for (let i = 0; i < count; i++) {
      if (offset[i] >= 0 && width[i] === 0 && layout[i].dir & OUT && arrays[i] != null) {
        this.#copyOut(arrays[i], 0, dim, base + offset[i]);
      }
    }
  }

  /** Refuses a typed array given as a view of this memory that lies in the
   * region a call works in: its scratch, or all of a bound memory's lent region. */
  #refuseViewsIn(fn, arrays, count, base, total) {
    const [start, end] = this.bound ? this.#lent : [base, base + total];
    for (let i = 0; i < count; i++) {
      const a = arrays[i];
      if (a != null && a.kernels === null && a.start < end && start < a.end && this.#plan.at[i] >= 0) {
        throw new RangeError(`${fn}: ${a.name} overlaps the kernels' scratch region [${start}, ${end}) of wasm memory`);
      }
    }
  }

  /** Copies values [from, from + n) of a staged argument to byte `to` of this memory. */
  #copyIn(arg, from, n, to) {
    const heap = this.heap(arg.dtype);
    set.call(heap, viewOf(arg, from, n), arg.dtype === 'float32' ? to >>> 2 : to >>> 1);
  }

  /** Copies n values from byte `at` of this memory to values [from, from + n) of a staged argument. */
  #copyOut(arg, from, n, at) {
    set.call(viewOf(arg, 0, arg.length), this.#stagedView(arg.dtype, at, n), from);
  }

  // runRows' working arrays, reused (it is never re-entered): a call
  // allocates nothing here. Plain arrays, whose small integers stay unboxed.
  #plan = {
    at: new Array(MAX_ARRAYS).fill(0),
    width: new Array(MAX_ARRAYS).fill(0),
    size: new Array(MAX_ARRAYS).fill(0),
    shares: new Array(MAX_ARRAYS).fill(false),
    offset: new Array(MAX_ARRAYS).fill(0),
    pointers: new Array(MAX_ARRAYS).fill(0),
  };

  #lastStaged = null;
  /** A view of `length` values of memory from byte `at`, to copy staged
   * results out of. The last one is kept: a copying call repeated with one
   * shape reuses it. */
  #stagedView(dtype, at, length) {
    const heap = this.heap(dtype);
    const last = this.#lastStaged;
    if (last !== null && last.heap === heap && last.at === at && last.view.length === length) return last.view;
    const view = dtype === 'float32' ? new Float32ArrayOf(heap.buffer, at, length) : new Uint16ArrayOf(heap.buffer, at, length);
    this.#lastStaged = { heap, at, view };
    return view;
  }
}


/** Whether two measured arguments are the same range of the same memory. */
function sameRange(a, b) {
  return b != null && a.kernels === b.kernels && a.buffer === b.buffer && a.start === b.start && a.end === b.end;
}

/** Values [from, from + n) of a staged argument (an array outside this
 * memory) as a view of its measured range in its storage type. The caller's
 * own array serves when it is all of it, of that type, and unshared: no
 * caller code has run since it was measured, so its length is the measured one. */
function viewOf(arg, from, n) {
  if (from === 0 && n === arg.length && arg.kind === (arg.dtype === 'float32' ? 'Float32Array' : 'Uint16Array') && !isShared(arg)) {
    return arg.value;
  }
  const start = arg.start + from * BYTES[arg.dtype];
  return arg.dtype === 'float32' ? new Float32ArrayOf(arg.buffer, start, n) : new Uint16ArrayOf(arg.buffer, start, n);
}
