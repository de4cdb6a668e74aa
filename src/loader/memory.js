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
//
// A shared LentMemory also has enter(fn) and leave(), around each call
// (src/api/run.js, runLocked), its lockId, and recover(id).
//
// A view of an instance's own memory must lie inside one of its live
// tensors (tensorHolding): the rest is the module's stack, data, allocator
// and scratch, or freed, and a call writing there would corrupt them. So no
// view a call takes can lie where it stages.

import { ELEMENT_BYTES } from './abi.js';
import {
  atomicAdd, atomicLoad, atomicStore, compareExchange, Error, fill, Float32Array, Int32Array, isSharedBuffer, List, memoryBufferOf, ownView, ownWeakMap, random,
  RangeError, setPrototypeOf, TypeError, Uint16Array, Uint32Array, WeakSet, weakAdd, weakHas,
} from './intrinsics.js';
import { makeTensor, recordOf } from './tensor.js';

// Largest single allocation asked of a wasm32 module: malloc takes a 32-bit
// size, and the whole address space is 4 GiB, part of it already in use.
const MAX_ALLOC_BYTES = 2 ** 32 - 2 ** 24;
/** Bytes of call stack the kernels need at most: a lent region must hold them. */
export const STACK_BYTES = 4096;

const nullPointer = (fn, name) => new RangeError(`${fn}: ${name} is a view at byte 0 of wasm memory, the null pointer, which the kernels read as "no array"; place it at byte 16 or later`);

/** A view of `record`'s bytes claimed by `memory`, refused at the null pointer. */
function claim(memory, fn, name, record) {
  if (record.start === 0 && record.length !== 0) throw nullPointer(fn, name);
  record.memory = memory;
  record.shared = false;
}

// Each instance's own memory by the buffers it has handed out.
const ownerOf = ownWeakMap();

/**
 * The record of the live tensor whose bytes hold a view's, when the view
 * is of an instance's own memory (this one's or another's); null when it
 * is of no such memory, or empty. A RangeError when it lies in no live
 * tensor there. Every kind of call asks, the reference's included.
 */
export function tensorHolding(fn, name, record) {
  const owner = record.length === 0 || record.buffer === null ? undefined : ownerOf.get(record.buffer);
  if (owner === undefined) return null;
  if (record.start === 0) throw nullPointer(fn, name);
  const within = owner.tensorAt(record.start);
  if (within === null || record.end > within.end) {
    throw new RangeError(`${fn}: ${name} is a view of wasm memory outside every live tensor (a freed tensor's bytes, or the module's own); pass a tensor, or a view of a live tensor's array`);
  }
  return within;
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
  #tensors = new List(); // the records of the live tensors, by address: [0, #count)
  #count = 0;
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
    if (this.#views === null || this.#views.float32.size === 0) {
      this.#views = new Views(memoryBufferOf(this.memory));
      ownerOf.set(this.#views.buffer, this);
    }
    return this.#views;
  }

  buffer() {
    return this.views().buffer;
  }

  space() {
    return this.buffer();
  }

  adopt(fn, name, record) {
    if (record.memory === null) {
      // A view of another instance's tensor is copied like any array; it is checked all the same.
      record.within = tensorHolding(fn, name, record);
      if (record.buffer === this.buffer()) claim(this, fn, name, record);
    } else if (record.memory !== this) {
      throw new TypeError(`${fn}: ${name} is a tensor of another instance's memory (allocated by another instance or backend)`);
    }
  }

  /** The index in #tensors of the first live tensor at `at` or above. */
  #firstFrom(at) {
    const tensors = this.#tensors;
    let lo = 0;
    let hi = this.#count;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (tensors[mid].start < at) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** The record of the live tensor with the last start at or below `at`, or null. */
  tensorAt(at) {
    const i = this.#firstFrom(at + 1) - 1;
    return i < 0 ? null : this.#tensors[i];
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

  /** A tensor's block back to the allocator (Tensor.free). */
  free(at) {
    const tensors = this.#tensors;
    const n = this.#count;
    const i = this.#firstFrom(at);
    if (i < n && tensors[i].start === at) {
      for (let j = i; j + 1 < n; j++) tensors[j] = tensors[j + 1];
      tensors[n - 1] = null;
      this.#count = n - 1;
    }
    this.exports.free(at);
  }

  /** A tensor of `length` values of `dtype`, zeroed as `new Float32Array(n)` is. */
  alloc(fn, length, dtype) {
    const bytes = length * ELEMENT_BYTES[dtype];
    const at = this.malloc(fn, bytes);
    fill(this.views().uint16, 0, at / 2, (at + bytes) / 2); // every dtype's bytes a value, and every block's, are even
    const tensor = makeTensor(this, at, length, dtype);
    const tensors = this.#tensors;
    const i = this.#firstFrom(at);
    for (let j = this.#count; j > i; j--) tensors[j] = tensors[j - 1];
    tensors[i] = recordOf(tensor);
    this.#count += 1;
    return tensor;
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

}

// A shared lent region's first HEADER_BYTES are the package's, as words:
const LOCK = 0; // 0 when free; during a call, the id of the binding whose call it is
const IDS = 1; // how many bindings of the region have taken an id
const MARK = 2; // HEADER_MARK once a binding has made the header; INITIALIZING while one does
const PROBE = 4; // and PROBE + 1: the words holds() writes
const HEADER_BYTES = 32;
const HEADER_MARK = 0x6b636f6c; // 'lock'
const INITIALIZING = 0x74696e69; // 'init'
// A binding's id is (n << 8) | ID_TAG, n from 1 to MAX_IDS: a word another
// writer left in LOCK (a float, a small integer) is seldom a possible id,
// so a header written over is told from a lock that is held.
const ID_TAG = 0x5a;
const MAX_IDS = 2 ** 23 - 1;
// How long a binding waits for another thread to finish making a header
// (three stores): past this, that thread died in between.
const INIT_SPINS = 1e6;

/** Whether `word` is an id a binding of `header`'s region has taken. */
function isHeldBy(header, word) {
  const n = word >>> 8;
  return (word & 0xff) === ID_TAG && n >= 1 && (n <= atomicLoad(header, IDS) || atomicLoad(header, IDS) >= MAX_IDS);
}

/**
 * Makes the header of a region anew where no binding made it (a fresh
 * block) or where something wrote over it (a lock word that is no id): no
 * call can still hold such a lock as its own. Then takes a new id. A lock
 * word that is 0 or an id is not written here: binding a region never
 * frees a lock a call holds.
 */
function takeId(header, region) {
  for (let spins = 0; ; spins++) {
    const mark = atomicLoad(header, MARK);
    const lock = atomicLoad(header, LOCK);
    if (mark === HEADER_MARK && (lock === 0 || isHeldBy(header, lock))) break;
    if (mark !== INITIALIZING && compareExchange(header, MARK, mark, INITIALIZING) === mark) {
      if (mark !== HEADER_MARK) atomicStore(header, IDS, 0); // else ids already taken stay taken
      atomicStore(header, LOCK, 0);
      atomicStore(header, MARK, HEADER_MARK);
    } else if (mark === INITIALIZING && spins > INIT_SPINS) {
      throw new RangeError(`bindMemory: the header of the scratch region ${region} is being made by another thread's bindMemory that never finished (a worker terminated while binding); bind it again`);
    }
  }
  const n = ((atomicAdd(header, IDS, 1) >>> 0) % MAX_IDS) + 1;
  return ((n << 8) | ID_TAG) >>> 0;
}

export class LentMemory {
  #start;
  #end;
  #staging; // where staging starts: after the header, on a shared memory
  #header = null; // a shared memory's: the words above, as a Uint32Array
  #fn = ''; // the function whose call holds the lock
  #probe = null;
  #verified = new WeakSet(); // buffers proven to be this memory's
  /**
   * `lent` = [start, end): the region the kernels may use, their stack at
   * the top. On a shared memory, threads that lent one region (by mistake,
   * or one after another) take turns in it through the lock word of its
   * header: a call stores this binding's id there if it reads 0 (enter)
   * and puts back 0 only if it still reads that id (leave); a call that
   * finds another id is refused, and one that finds its id gone when it
   * ends throws rather than return what may be wrong bits. Nothing else
   * writes the lock but recover(), which frees only the id it is given: a
   * binding the caller knows will never run again (a terminated worker's).
   */
  constructor(exports, memory, lent, shared) {
    this.exports = exports;
    this.memory = memory;
    this.shared = shared;
    this.#start = lent[0];
    this.#end = lent[1];
    this.lockId = 0;
    if (shared) {
      this.#header = new Uint32Array(memoryBufferOf(memory), lent[0], HEADER_BYTES / 4);
      this.lockId = takeId(this.#header, this.#region());
    }
    this.#staging = shared ? lent[0] + HEADER_BYTES : lent[0];
    this.capacity = lent[1] - this.#staging - STACK_BYTES;
  }

  #region() {
    return `[${this.#start}, ${this.#end})`;
  }

  enter(fn) {
    const held = compareExchange(this.#header, LOCK, 0, this.lockId);
    if (held !== 0 || this.#header[MARK] !== HEADER_MARK) this.#refuse(fn, held);
    this.#fn = fn;
  }

  #refuse(fn, held) {
    if (held === 0) compareExchange(this.#header, LOCK, this.lockId, 0); // taken just now, under a header not ours
    if (this.#header[MARK] === HEADER_MARK && isHeldBy(this.#header, held)) {
      throw new RangeError(`${fn}: the scratch region ${this.#region()} is in use by a call on another thread (the binding with lockId ${held}); each thread must lend a region of its own. If that thread was terminated mid-call, bind the region again with options.recover: ${held}`);
    }
    throw new RangeError(`${fn}: the header of the scratch region ${this.#region()} (its first ${HEADER_BYTES} bytes, which hold its lock) was written over by something else: an array of another call or binding, or the engine's own data. Keep every array out of every lent region, then bind the region again`);
  }

  leave() {
    const held = compareExchange(this.#header, LOCK, this.lockId, 0);
    if (held !== this.lockId) {
      throw new Error(`${this.#fn}: the lock of the scratch region ${this.#region()} was taken from this call while it ran (by options.recover naming a live binding, or by a write over the region's header), so another call may have run in the region at the same time: the results of this call may be wrong`);
    }
  }

  /** Frees the lock if the binding `id` holds it (bindMemory's options.recover). */
  recover(id) {
    const held = compareExchange(this.#header, LOCK, id, 0);
    if (held !== id && held !== 0) {
      throw new RangeError(`bindMemory: options.recover: the lock of the scratch region ${this.#region()} is held by ${isHeldBy(this.#header, held) ? `the binding with lockId ${held}` : `${held}, no binding's id (the header was written over)`}, not by ${id}; only the named binding's lock is freed, so that no call's lock is freed while it runs`);
    }
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
    if (!this.holds(record.buffer, fn)) {
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
  holds(buffer, fn) {
    if (weakHas(this.#verified, buffer) || buffer === this.buffer()) return true;
    if (!this.shared || !isSharedBuffer(buffer)) return false;
    let there;
    try {
      there = new Int32Array(buffer, this.#start + 4 * PROBE, 2);
    } catch {
      return false; // shorter than the lent region: not a buffer of this memory since the bind
    }
    this.#probe ??= new Int32Array(this.buffer(), this.#start + 4 * PROBE, 2);
    // The probe words are written under the lock: two threads that lent one
    // region would otherwise overwrite each other's and refuse good views.
    const inCall = this.#header[LOCK] === this.lockId;
    if (!inCall) this.enter(fn);
    try {
      for (let i = 0; i < 2; i++) {
        const word = (random() * 2 ** 31) | (i << 30);
        this.#probe[i] = word;
        if (there[i] !== word) return false;
      }
    } finally {
      if (!inCall) this.leave();
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
    return this.#staging;
  }
}

// Their fields are plain assignments, and the prototypes end here: no
// setter a page puts on Object.prototype runs for them.
setPrototypeOf(OwnMemory.prototype, null);
setPrototypeOf(LentMemory.prototype, null);
