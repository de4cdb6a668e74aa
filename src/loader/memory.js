// What a wasm instance works in: its exports and one memory. Two kinds,
// with one interface: an instance's own memory (OwnMemory: its allocator,
// tensors, a scratch block for staging) and a memory lent by an engine
// (LentMemory, bindMemory: no allocator; staging and the kernels' stack in
// the region the engine lent). Both answer:
//   views()                     views of all of its current buffer: { buffer, float32, uint16 }
//   buffer()                    that buffer
//   space()                     what the overlap rule compares (src/ops/overlap.js)
//   adopt(fn, name, record)     a measured array of a call: refuse it, or claim it
//                               when it lies in this memory (record.memory = this)
//   staging(fn, bytes)          the address of `bytes` to stage a call's other arrays in
//   capacity                    the most bytes staging(…) can give at once
//   checkStaged(fn, records, base, bytes)  no claimed view may lie where a call stages

import { DTYPE } from './abi.js';
import {
  fill, Float32Array, Int32Array, isSharedBuffer, memoryBufferOf, ownView, random, RangeError, setPrototypeOf, TypeError,
  Uint16Array, WeakSet, weakAdd, weakHas,
} from './intrinsics.js';
import { makeTensor } from './tensor.js';

// Largest single allocation asked of a wasm32 module: malloc takes a 32-bit
// size, and the whole address space is 4 GiB, part of it already in use.
const MAX_ALLOC_BYTES = 2 ** 32 - 2 ** 24;
/** Bytes of call stack the kernels need at most: a lent region must hold them. */
export const STACK_BYTES = 4096;

/** A view of `record`'s bytes claimed by `memory`, refused at the null pointer. */
function claim(memory, fn, name, record) {
  if (record.start === 0 && record.length !== 0) {
    throw new RangeError(`${fn}: ${name} is a view at byte 0 of wasm memory, the null pointer, which the kernels read as "no array"; place it at byte 16 or later`);
  }
  record.memory = memory;
  record.shared = false;
}

/** Views of all of a buffer, with the intrinsics as their own `set` and `size` (ownView). */
class Views {
  constructor(buffer) {
    this.buffer = buffer;
    this.float32 = ownView(new Float32Array(buffer));
    this.uint16 = ownView(new Uint16Array(buffer));
  }
}
setPrototypeOf(Views.prototype, null);

export class OwnMemory {
  #views = null;
  #scratchAt = 0;
  #scratchBytes = 0;
  capacity = Infinity; // staging(…) grows the memory, up to what malloc can give

  constructor(exports) {
    this.exports = exports;
    this.memory = exports.memory;
  }

  /** Views of the memory's current buffer. The buffer getter (the intrinsic:
   * no property of the memory object can redirect it) is a slow builtin, so
   * it is asked again only once the views read as empty: growing a memory
   * detaches its old buffer. */
  views() {
    if (this.#views === null || this.#views.float32.size === 0) this.#views = new Views(memoryBufferOf(this.memory));
    return this.#views;
  }

  buffer() {
    return this.views().buffer;
  }

  space() {
    return this.buffer();
  }

  adopt(fn, name, record) {
    if (record.memory === null && record.buffer === this.buffer()) claim(this, fn, name, record);
    else if (record.memory !== null && record.memory !== this) {
      throw new TypeError(`${fn}: ${name} is a tensor of another instance's memory (allocated by another instance or backend)`);
    }
  }

  /** `bytes` of this module's memory from its allocator; a RangeError when
   * they cannot be had (a block must end inside the memory). */
  malloc(fn, bytes) {
    if (bytes > MAX_ALLOC_BYTES) throw new RangeError(`${fn}: needs ${bytes} bytes of wasm memory, more than wasm32 can address`);
    const at = this.exports.malloc(bytes < 1 ? 1 : bytes) >>> 0;
    if (at === 0 || at + bytes > this.views().float32.size * 4) {
      if (at !== 0) this.exports.free(at);
      throw new RangeError(`${fn}: could not grow wasm memory to hold ${bytes} more bytes`);
    }
    return at;
  }

  free(at) {
    this.exports.free(at);
  }

  /** A tensor of `length` values of `dtype`, zeroed as `new Float32Array(n)` is. */
  alloc(fn, length, dtype) {
    const bytes = length * DTYPE[dtype].bytes;
    const at = this.malloc(fn, bytes);
    fill(this.views().uint16, 0, at / 2, (at + bytes) / 2); // every dtype's bytes a value are even
    return makeTensor(this, at, length, dtype);
  }

  /** A scratch block of at least `bytes`, reused across calls and only
   * replaced by a larger one. */
  staging(fn, bytes) {
    if (bytes > this.#scratchBytes) {
      if (this.#scratchAt !== 0) this.exports.free(this.#scratchAt);
      this.#scratchAt = 0;
      this.#scratchBytes = 0;
      this.#scratchAt = this.malloc(fn, bytes);
      this.#scratchBytes = bytes;
    }
    return this.#scratchAt;
  }

  checkStaged(fn, slots, records, base, bytes) {
    for (let i = 0; i < records.length; i++) {
      const r = records[i];
      if (r !== null && r.memory === this && r.buffer !== null && r.start < base + bytes && base < r.end) {
        throw new RangeError(`${fn}: ${slots[i].name} overlaps the kernels' scratch region [${base}, ${base + bytes}) of wasm memory`);
      }
    }
  }
}

export class LentMemory {
  #start;
  #end;
  #probe = null;
  #verified = new WeakSet(); // buffers proven to be this memory's
  /** `lent` = [start, end): the region the kernels may use, their stack at the top. */
  constructor(exports, memory, lent, shared) {
    this.exports = exports;
    this.memory = memory;
    this.shared = shared;
    this.#start = lent[0];
    this.#end = lent[1];
    this.capacity = lent[1] - lent[0] - STACK_BYTES;
  }

  /** Always asked again: another thread may have grown a shared memory. */
  buffer() {
    const buffer = memoryBufferOf(this.memory);
    weakAdd(this.#verified, buffer);
    return buffer;
  }

  views() {
    return new Views(this.buffer());
  }

  space() {
    return this;
  }

  adopt(fn, name, record) {
    if (record.memory !== null) {
      throw new TypeError(`${fn}: ${name} is a tensor of an instance's own memory; bound kernels take views of the bound memory`);
    }
    if (!this.#holds(record.buffer)) {
      throw new TypeError(`${fn}: ${name} must be a view of the bound memory's buffer (bound kernels copy nothing in)`);
    }
    if (record.start < this.#end && this.#start < record.end) {
      throw new RangeError(`${fn}: ${name} overlaps the kernels' scratch region [${this.#start}, ${this.#end}) of wasm memory`);
    }
    claim(this, fn, name, record);
  }

  /**
   * Whether `buffer` is this memory's. A shared memory that another thread
   * grows hands out a new SharedArrayBuffer object on every growth, each
   * over the same bytes, so a view made a moment ago may be of a buffer this
   * thread has never seen. It is proven the memory's by a probe: two
   * different random words written through the current buffer into the
   * lent region (this thread's own) must read back through `buffer`. Only
   * the lent region is written; a foreign buffer is only read.
   */
  #holds(buffer) {
    if (weakHas(this.#verified, buffer) || buffer === this.buffer()) return true;
    if (!this.shared || !isSharedBuffer(buffer)) return false;
    let there;
    try {
      there = new Int32Array(buffer, this.#start, 2);
    } catch {
      return false; // shorter than the lent region: not a buffer of this memory since the bind
    }
    this.#probe ??= new Int32Array(this.buffer(), this.#start, 2);
    for (let i = 0; i < 2; i++) {
      const word = (random() * 2 ** 31) | (i << 30);
      this.#probe[i] = word;
      if (there[i] !== word) return false;
    }
    weakAdd(this.#verified, buffer);
    return true;
  }

  alloc(fn) {
    throw new TypeError(`${fn}: a bound memory has no allocator; use the engine's own`);
  }

  free() {}

  staging(fn, bytes) {
    if (bytes > this.capacity) {
      throw new RangeError(`${fn}: needs ${bytes} bytes of staging in options.scratch besides the kernels' ${STACK_BYTES}-byte stack; lend a larger region`);
    }
    return this.#start;
  }

  checkStaged() {} // adopt refused every view in the lent region
}

// Their fields are plain assignments, and the prototypes end here: no
// setter a page puts on Object.prototype runs for them.
setPrototypeOf(OwnMemory.prototype, null);
setPrototypeOf(LentMemory.prototype, null);
