// One instantiated wasm module: its exports, the memory it works in, the
// scratch space arrays are staged in, and the runner that places a checked
// call's arrays in that memory and calls a kernel on them.

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
export const CAST_CODE = { gemma: 0, llama: 1 };

/** Scratch regions start on 16-byte boundaries, where the kernels' vector loads are fastest. */
const align16 = (n) => Math.ceil(n / 16) * 16;

// How a slot of runRows spans the rows, and which way its values move.
export const PER_ROW = 0; // dim values a row
export const PER_STAT = 1; // one value a row
export const ONCE = 2; // dim values for the whole call (a weight, a running sum)
export const IN = 1;
export const OUT = 2;
export const INOUT = 3;
export const SCRATCH = 4; // the kernel's own working space, never copied
const STAGED = -1;
const ABSENT = -2;

/** WebAssembly.Memory.prototype.buffer, saved: throws for anything but a
 * memory, and no property of the memory object can redirect it. */
export const memoryBufferOf = Function.prototype.call.bind(
  Object.getOwnPropertyDescriptor(WebAssembly.Memory.prototype, 'buffer').get);
const Float32ArrayOf = Float32Array;
const Uint16ArrayOf = Uint16Array;
const copyInto = Function.prototype.call.bind(Object.getPrototypeOf(Uint8Array.prototype).set);

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
    this.#lent = lent;
  }

  /** The memory's current buffer (the intrinsic getter: a property of the
   * memory object cannot redirect it). */
  buffer() {
    return memoryBufferOf(this.memory);
  }

  /** A view of all of wasm memory by element type, rebuilt after memory.grow()
   * (which detaches the old buffer and every view of it). */
  heap(dtype) {
    const buffer = this.buffer();
    if (this.#views?.buffer !== buffer) {
      this.#views = { buffer, float32: new Float32ArrayOf(buffer), uint16: new Uint16ArrayOf(buffer) };
    }
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
   * Runs `kernel(pointers, n)` over chunks of n rows, pointers[i] being the
   * byte address of slot i for the chunk (0 for an argument not given).
   * Slots are { arg, per, dir, dtype, inPlaceOf } (inPlaceOf: the index of
   * an input slot the kernel may overwrite with this output, or -1). An
   * argument in this memory is used where it is; any other is staged, its
   * rows copied in before and out after each chunk. Rows are independent and
   * running sums (ONCE, INOUT) stay put from the first chunk to the last, so
   * chunking changes no bit. With `readAllFirst` (arrays that may alias
   * through shared memory) every input is read in before the first write.
   * All scratch is asked for before anything is written, and views of the
   * memory are taken only after that last allocation.
   */
  runRows(fn, rows, dim, slots, readAllFirst, kernel) {
    if (rows === 0) return;
    const count = slots.length;
    // Where each slot is: a direct address, STAGED, or ABSENT (a null pointer).
    const at = new Array(count);
    for (let i = 0; i < count; i++) {
      const { arg, dir, inPlaceOf } = slots[i];
      if (arg == null) {
        at[i] = dir === SCRATCH ? STAGED : ABSENT;
      } else if (inPlaceOf >= 0 && sameRange(arg, slots[inPlaceOf].arg)) {
        at[i] = at[inPlaceOf]; // an output exactly over its input stays with it, staged or not
      } else {
        at[i] = this.addressOf(fn, arg);
        if (at[i] === 0 && arg.start !== arg.end) {
          throw new RangeError(`${fn}: ${arg.name} is a view at address 0 of wasm memory, the null pointer`);
        }
      }
    }
    // An output staged beside the staged input it may overwrite shares its
    // rows (the kernel works in place); every other staged slot has its own.
    const sharing = (i) => at[i] === STAGED && slots[i].inPlaceOf >= 0 && at[slots[i].inPlaceOf] === STAGED;
    const width = (s) => (s.per === PER_ROW ? dim : 1);
    let perRowBytes = 0;
    for (let i = 0; i < count; i++) {
      const s = slots[i];
      if (at[i] === STAGED && !sharing(i) && s.per !== ONCE) perRowBytes += width(s) * BYTES[s.dtype];
    }
    const chunkRows = readAllFirst || perRowBytes === 0 ? rows
      : Math.min(rows, Math.max(1, Math.floor(CHUNK_BYTES / perRowBytes)));
    const offset = new Array(count).fill(-1);
    let total = 0;
    for (let i = 0; i < count; i++) {
      const s = slots[i];
      if (at[i] !== STAGED || sharing(i)) continue;
      offset[i] = total;
      total += align16((s.per === ONCE ? dim : chunkRows * width(s)) * BYTES[s.dtype]);
    }
    for (let i = 0; i < count; i++) if (sharing(i)) offset[i] = offset[slots[i].inPlaceOf];
    const base = total > 0 ? this.scratch(fn, total) : 0;

    // The last allocation is behind us: no array given as a view of this
    // memory may lie in the region the call works in.
    const [reservedStart, reservedEnd] = this.bound ? this.#lent : [base, base + total];
    for (let i = 0; i < count; i++) {
      const a = slots[i].arg;
      if (at[i] >= 0 && a != null && a.kernels === null && a.start < reservedEnd && reservedStart < a.end) {
        throw new RangeError(`${fn}: ${a.name} overlaps the kernels' scratch region [${reservedStart}, ${reservedEnd}) of wasm memory`);
      }
    }

    // From here on: copies and kernel calls only.
    const copiesIn = (s) => s.arg != null && (s.dir === IN || s.dir === INOUT);
    const copiesOut = (s) => s.arg != null && (s.dir === OUT || s.dir === INOUT);
    for (let i = 0; i < count; i++) {
      const s = slots[i];
      if (offset[i] >= 0 && s.per === ONCE && copiesIn(s)) {
        copyInto(this.heap(s.dtype), viewOf(s.arg, 0, dim), (base + offset[i]) / BYTES[s.dtype]);
      }
    }
    const pointers = new Array(count);
    for (let row = 0; row < rows; row += chunkRows) {
      const n = Math.min(chunkRows, rows - row);
      for (let i = 0; i < count; i++) {
        const s = slots[i];
        if (offset[i] < 0) {
          pointers[i] = at[i] === ABSENT ? 0 : at[i] + (s.per === ONCE ? 0 : row * width(s) * BYTES[s.dtype]);
          continue;
        }
        pointers[i] = base + offset[i];
        if (s.per !== ONCE && copiesIn(s) && !sharing(i)) {
          copyInto(this.heap(s.dtype), viewOf(s.arg, row * width(s), n * width(s)), pointers[i] / BYTES[s.dtype]);
        }
      }
      kernel(pointers, n);
      for (let i = 0; i < count; i++) {
        const s = slots[i];
        if (offset[i] >= 0 && s.per !== ONCE && copiesOut(s)) {
          copyInto(viewOf(s.arg, 0, s.arg.length), this.#stagedView(s.dtype, pointers[i], n * width(s)), row * width(s));
        }
      }
    }
    for (let i = 0; i < count; i++) {
      const s = slots[i];
      if (offset[i] >= 0 && s.per === ONCE && copiesOut(s)) {
        copyInto(viewOf(s.arg, 0, dim), this.#stagedView(s.dtype, base + offset[i], dim), 0);
      }
    }
  }

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
  if (from === 0 && n === arg.length && !arg.shared && arg.kind === (arg.dtype === 'float32' ? 'Float32Array' : 'Uint16Array')) {
    return arg.value;
  }
  const start = arg.start + from * BYTES[arg.dtype];
  return arg.dtype === 'float32' ? new Float32ArrayOf(arg.buffer, start, n) : new Uint16ArrayOf(arg.buffer, start, n);
}
