// The staging runner: a resolved call (src/ops/resolve.js) run on an
// instance memory (src/loader/memory.js). An array the memory claimed is
// used where it lies; every other one is staged, its rows copied in before
// and out after each chunk. A call with nothing to stage calls the kernel
// at once: that is the zero-copy call on tensors.

import { DTYPE } from '../loader/abi.js';
import { ceil, copyInto, floor, min, RangeError, setPrototypeOf } from '../loader/intrinsics.js';
import { STACK_BYTES } from '../loader/memory.js';
import { storageView, viewOf } from '../ops/arrays.js';
import { IN, makeResults, ONCE, OUT, returnValue, ROW, STAT } from '../ops/resolve.js';

// Arrays outside wasm memory move through it in chunks of whole rows of about
// this size: a huge input does not grow the memory (which never shrinks) to
// its own size, and each chunk is still in cache when the kernel reads it.
export const CHUNK_BYTES = 2 ** 18;
const STAGED = -1;

/** Staging starts on 16-byte boundaries, where the kernels' vector loads are fastest. */
const align16 = (n) => ceil(n / 16) * 16;

// Where each array of a call goes: its address (or STAGED, or 0 for none),
// values a row (0: dim for the whole call), bytes a value, whether it
// shares the staging of the input it may overwrite, and its offset in the
// staging. Made once per resolved call: a call the resolver remembered
// (src/ops/resolve.js, LastCall) runs on the plan of its first run.
class Plan {
  constructor(op) {
    this.at = [];
    this.width = [];
    this.size = [];
    this.shares = [];
    this.offset = [];
    for (let i = 0; i < op.slots.length; i++) {
      this.at[i] = 0;
      this.width[i] = 0;
      this.size[i] = 0;
      this.shares[i] = false;
      this.offset[i] = 0;
    }
    this.pointers = { ...op.pointers };
    this.pointersAt = -1; // the staging base the pointers hold the first chunk's addresses for, or -1
    this.outViews = []; // per staged output: its last staging view (StagedView), or null
    for (let i = 0; i < op.slots.length; i++) this.outViews[i] = null;
    this.staged = 0;
    this.chunkRows = 0;
    this.total = 0;
  }
}
setPrototypeOf(Plan.prototype, null);

/** A view of a staged output's values in memory, kept while it still is one:
 * a call copies its outputs out of the same few bytes every time. */
class StagedView {
  constructor(view, dtype, buffer, at, n) {
    this.view = view;
    this.dtype = dtype;
    this.buffer = buffer;
    this.at = at;
    this.n = n;
  }
}
setPrototypeOf(StagedView.prototype, null);

/** Runs `call` on `memory` and returns what the function returns. */
export function run(memory, call) {
  let plan = call.plan;
  if (plan === null) {
    makeResults(call);
    if (call.rows === 0) return returnValue(call);
    plan = new Plan(call.op);
    planCall(memory, call, plan);
    call.plan = plan; // kept while the call is remembered (src/ops/resolve.js, LastCall)
  }
  if (plan.staged === 0) call.op.kernel(memory.exports, call, plan.pointers, call.rows);
  else stageAndRun(memory, call, plan);
  return returnValue(call);
}

function planCall(memory, call, plan) {
  const { op, rows, dim, records, fn } = call;
  const { slots, keys } = op;
  const { at, width, size, shares, offset, pointers } = plan;
  const count = slots.length;
  let perRowBytes = 0;
  let onceBytes = 0;
  let staged = 0;
  for (let i = 0; i < count; i++) {
    const slot = slots[i];
    const r = records[i];
    width[i] = slot.per === ROW ? dim : slot.per === STAT ? 1 : 0;
    size[i] = r === null ? 4 : DTYPE[r.dtype].bytes;
    if (r === null || slot.dir === 0) at[i] = r === null && slot.scratch ? STAGED : 0;
    else if (r.memory === memory) at[i] = r.start;
    else at[i] = STAGED;
    // An output staged beside its staged input shares that staging: the kernel works in place.
    shares[i] = at[i] === STAGED && slot.over >= 0 && at[slot.over] === STAGED && records[slot.over] !== null;
    if (at[i] === STAGED && !shares[i]) {
      staged++;
      if (width[i] === 0) onceBytes += align16(dim * size[i]);
      else perRowBytes += width[i] * size[i];
    }
  }
  plan.staged = staged;
  plan.pointersAt = -1;
  if (staged === 0) {
    // The zero-copy call: every array where it lies.
    for (let i = 0; i < count; i++) pointers[keys[i]] = at[i];
    return;
  }
  let chunkRows = call.mayAlias || perRowBytes === 0 ? rows : min(rows, floor(CHUNK_BYTES / perRowBytes) || 1);
  if (perRowBytes > 0) {
    // What the memory can stage at once (a lent region is finite), less alignment.
    const fit = floor((memory.capacity - onceBytes - 16 * staged) / perRowBytes);
    if (fit < 1) {
      throw new RangeError(`${fn}: needs ${onceBytes + align16(rows * perRowBytes)} bytes of staging in options.scratch besides the kernels' ${STACK_BYTES}-byte stack; lend a larger region (one row at a time needs ${onceBytes + perRowBytes + 16 * staged})`);
    }
    if (fit < chunkRows) chunkRows = fit;
  }
  let total = 0;
  for (let i = 0; i < count; i++) {
    if (shares[i]) {
      offset[i] = offset[slots[i].over];
    } else if (at[i] === STAGED) {
      offset[i] = total;
      total += align16((width[i] === 0 ? dim : chunkRows * width[i]) * size[i]);
    } else {
      offset[i] = -1;
    }
  }
  plan.chunkRows = chunkRows;
  plan.total = total;
}

/** The staged call: inputs copied in, the kernel run chunk by chunk, outputs copied out. */
function stageAndRun(memory, call, plan) {
  const { op, rows, dim, records, fn } = call;
  const { slots, keys, kernel } = op;
  const { at, width, size, shares, offset, pointers, chunkRows, total } = plan;
  const count = slots.length;
  // The last allocation of the call: views of memory are taken only after it.
  const base = memory.staging(fn, total);
  memory.checkStaged(fn, slots, records, base, total);

  // From here on: copies and kernel calls only, on the memory's buffer as it is now.
  const heap = memory.views();
  for (let i = 0; i < count; i++) {
    if (offset[i] >= 0 && width[i] === 0 && slots[i].dir & IN && records[i] !== null) copyIn(heap, records[i], 0, dim, base + offset[i]);
  }
  for (let row = 0; row < rows; row += chunkRows) {
    const n = min(chunkRows, rows - row);
    // The first chunk's addresses are those of the last call on this plan while the staging stays put.
    const samePointers = row === 0 && plan.pointersAt === base;
    for (let i = 0; i < count; i++) {
      if (offset[i] < 0) {
        if (!samePointers) pointers[keys[i]] = at[i] === 0 ? 0 : at[i] + row * width[i] * size[i];
      } else {
        if (!samePointers) pointers[keys[i]] = base + offset[i];
        if (width[i] !== 0 && !shares[i] && slots[i].dir & IN && records[i] !== null) {
          copyIn(heap, records[i], row * width[i], n * width[i], base + offset[i]);
        }
      }
    }
    plan.pointersAt = row === 0 ? base : -1;
    kernel(memory.exports, call, pointers, n);
    // Outputs in slot order: where shared memory lets two of them alias, the last one written wins, as in the reference.
    for (let i = 0; i < count; i++) {
      if (offset[i] >= 0 && width[i] !== 0 && slots[i].dir & OUT && records[i] !== null) {
        copyOut(heap, plan, i, records[i], row * width[i], n * width[i], base + offset[i]);
      }
    }
  }
  for (let i = 0; i < count; i++) {
    if (offset[i] >= 0 && slots[i].per === ONCE && slots[i].dir & OUT && records[i] !== null) {
      copyOut(heap, plan, i, records[i], 0, dim, base + offset[i]);
    }
  }
}

/** Copies values [from, from + n) of a staged record to byte `to` of memory. */
function copyIn(heap, record, from, n, to) {
  // The memory's own views carry the intrinsic `set` (src/loader/memory.js, withOwnSet).
  (record.dtype === 'float32' ? heap.float32 : heap.uint16).set(viewOf(record, from, n), to / DTYPE[record.dtype].bytes);
}

/** Copies n values from byte `at` of memory to values [from, from + n) of
 * a staged record, the output of slot i of `plan`. */
function copyOut(heap, plan, i, record, from, n, at) {
  let staged = plan.outViews[i];
  if (staged === null || staged.buffer !== heap.buffer || staged.at !== at || staged.n !== n || staged.dtype !== record.dtype) {
    staged = new StagedView(storageView(record.dtype, heap.buffer, at, n), record.dtype, heap.buffer, at, n);
    plan.outViews[i] = staged;
  }
  copyInto(viewOf(record, 0, record.length), staged.view, from);
}
