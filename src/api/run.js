// The staging runner: a resolved call (src/ops/resolve.js) run on an
// instance memory (src/loader/memory.js). An array the memory claimed is
// used where it lies; every other one is staged, its rows copied in before
// and out after each chunk. A call with nothing to stage calls the kernel
// at once: that is the zero-copy call on tensors.

import { ELEMENT_BYTES } from '../loader/abi.js';
import { ceil, copyInto, floor, List, min, RangeError, setPrototypeOf } from '../loader/intrinsics.js';
import { STACK_BYTES } from '../loader/memory.js';
import { storageView, viewOf } from '../ops/arrays.js';
import { rowSpan } from '../ops/options.js';
import { BLOCKS, IN, makeResults, OUT, returnValue, ROW, STAT, zeroRowResult } from '../ops/resolve.js';

// Arrays outside wasm memory move through it in chunks of whole rows of about
// this size: a huge input does not grow the memory (which never shrinks) to
// its own size, and each chunk is still in cache when the kernel reads it.
export const CHUNK_BYTES = 2 ** 18;
const STAGED = -1;

/** Staging starts on 16-byte boundaries, where the kernels' vector loads are fastest. */
const align16 = (n) => ceil(n / 16) * 16;

function filled(n, value) {
  const items = new List(n);
  for (let i = 0; i < n; i++) items[i] = value;
  return items;
}

// Where each array of a call goes, made at its first run and kept with the
// call (a remembered or prepared call runs on it again): its address
// (STAGED, or 0 for none), values from one row's start to the next's in
// the caller's array (the row stride, 1 for a statistic, 0 for an array of
// dim values for the whole call), bytes a value, its offset in the staging
// (-1: not staged; an output staged beside the input it may overwrite
// shares that staging). Staged rows keep the caller's stride, so that the
// kernel sees one stride for every per-row array. What only staging needs
// is made once a call stages.
class Plan {
  constructor(n, pointers) {
    this.at = filled(n, 0);
    this.step = filled(n, 0);
    this.size = filled(n, 0);
    this.offset = filled(n, -1);
    this.pointers = { ...pointers };
    this.staged = 0;
    this.chunkRows = 0;
    this.total = 0;
    this.pointersAt = -1; // the staging base the pointers hold the first chunk's addresses for
    this.heap = null; // the memory's views, and the staging base, the outputs' views were made for
    this.viewsAt = -1;
    this.outViews = null; // per output slot: a full chunk's view, or (rows apart) a List of its rows' views
    this.onceIn = null; // slots copied in once, copied in each chunk, out each chunk, out once
    this.rowIn = null;
    this.rowOut = null;
    this.onceOut = null;
    this.token = null; // with heads: the pointers of one token's kernel call (runKernel)
  }
}
setPrototypeOf(Plan.prototype, null);

/** `run` on a shared lent region, which is this thread's while the call
 * runs (src/loader/memory.js, LentMemory): bindMemory's functions on a
 * shared memory run through this, every other function through `run`. */
export function runLocked(memory, call) {
  memory.enter(call.fn);
  try {
    return run(memory, call);
  } finally {
    memory.leave();
  }
}

/**
 * How a prepared call (src/ops/prepared.js) runs `call` on `memory` with
 * `runner` (run or runLocked): planned now, so that a call whose staging
 * cannot fit is refused at prepare(). A zero-copy call that makes no result
 * and takes no lock gets a Direct: its kernel, terms and result, which the
 * prepared call runs with none of run()'s per-call dispatch (what the decode
 * loop's prepared norm is measured by: docs/benchmarks.md); every other
 * call gets null, and runs through `runner`.
 */
export function directOf(memory, call, runner) {
  if (call.rows !== 0 && !call.makes) call.plan ??= planCall(memory, call);
  const { plan } = call;
  if (runner !== run || plan === null || plan.staged !== 0 || typeof call.op.returns !== 'string' || call.heads > 1) return null;
  return new Direct(call.op.kernel, memory.exports, plan.pointers, call.rows, call.records[call.op.returnSlots]);
}

class Direct {
  constructor(kernel, exports, pointers, rows, result) {
    this.kernel = kernel;
    this.exports = exports;
    this.pointers = pointers;
    this.rows = rows;
    this.result = result; // the caller's out, whose value a run returns (a view of memory made again after growth)
  }
}
setPrototypeOf(Direct.prototype, null);

/** Runs `call` on `memory` and returns what the function returns. */
export function run(memory, call) {
  const none = zeroRowResult(call);
  if (none !== null) return none;
  makeResults(call);
  let { plan } = call;
  if (plan === null) {
    plan = planCall(memory, call);
    call.plan = plan;
  }
  if (plan.staged === 0) runKernel(memory.exports, call, plan, plan.pointers, call.tokens);
  else stageAndRun(memory, call, plan);
  return returnValue(call);
}

/**
 * The kernel on `n` tokens of the call from `pointers`. Without heads a
 * token is a row, and the kernel takes them all at once. With heads, the
 * kernel is called once a token, on its heads as rows headStride apart:
 * the rows in the call's order (t·heads + h, a statistic's index), each
 * computed as alone, so the bits are those of a call per head.
 */
function runKernel(exports, call, plan, pointers, n) {
  const { kernel, keys } = call.op;
  if (call.heads === 1) {
    kernel(exports, call, pointers, n);
    return;
  }
  const { step, size } = plan;
  plan.token ??= { ...pointers };
  const { token } = plan;
  for (let t = 0; t < n; t++) {
    for (let i = 0; i < keys.length; i++) {
      const at = pointers[keys[i]];
      token[keys[i]] = at === 0 ? 0 : at + t * step[i] * size[i];
    }
    kernel(exports, call, token, call.heads);
  }
}

/** The values of a slot's array that n tokens of the call span: tokens a
 * stride apart, each its heads headStride apart (../ops/options.js,
 * rowSpan), a statistic a row, packed rows of blocks (bytes), or dim. */
function spanOf(call, slot, n) {
  if (slot.per === ROW) return rowSpan(n, rowSpan(call.heads, call.dim, call.headStride), call.stride);
  return slot.per === STAT ? n * call.heads : slot.per === BLOCKS ? n * call.heads * call.blockRowBytes : call.dim;
}

function planCall(memory, call) {
  const { op: { slots, keys, pointers: blank }, tokens, dim, stride, records, fn } = call;
  const plan = new Plan(slots.length, blank);
  const { at, step, size, offset, pointers } = plan;
  const shares = filled(slots.length, false); // an output staged beside its staged input shares that staging
  let perRowBytes = 0; // what each row after the first adds to the staged spans
  let onceBytes = 0;
  for (let i = 0; i < slots.length; i++) {
    const { per, dir, scratch, over } = slots[i];
    const r = records[i];
    // Values (bytes, of blocks) a token: a token's rows are `heads` rows.
    step[i] = per === ROW ? stride : per === STAT ? call.heads : per === BLOCKS ? call.heads * call.blockRowBytes : 0;
    size[i] = r === null ? 4 : ELEMENT_BYTES[r.dtype];
    at[i] = r === null || dir === 0 ? (r === null && scratch ? STAGED : 0) : r.memory === memory ? r.start : STAGED;
    pointers[keys[i]] = at[i];
    shares[i] = at[i] === STAGED && over >= 0 && at[over] === STAGED && records[over] !== null;
    if (at[i] === STAGED && !shares[i]) {
      plan.staged++;
      if (step[i] === 0) onceBytes += align16(dim * size[i]);
      else perRowBytes += step[i] * size[i];
    }
  }
  if (plan.staged === 0) return plan; // the zero-copy call: every array where it lies
  // Staging holds a chunk's span of each array, its rows and the gaps
  // between them, never a whole stride after the last row: a chunk is at
  // most CHUNK_BYTES, or one token's rows, however far apart tokens are.
  const stagingBytes = (n) => {
    let bytes = onceBytes;
    for (let i = 0; i < slots.length; i++) if (at[i] === STAGED && !shares[i] && step[i] !== 0) bytes += align16(spanOf(call, slots[i], n) * size[i]);
    return bytes;
  };
  // Chunks of whole tokens (rows, without heads).
  let chunkRows = call.mayAlias || perRowBytes === 0 ? tokens : min(tokens, floor(CHUNK_BYTES / perRowBytes) || 1);
  if (perRowBytes > 0) {
    // What the memory can stage at once (a lent region is finite): the most rows whose spans fit.
    let fit = memory.capacity < stagingBytes(1) ? 0 : min(chunkRows, floor((memory.capacity - stagingBytes(1)) / perRowBytes) + 1);
    while (fit > 1 && stagingBytes(fit) > memory.capacity) fit--;
    if (fit < 1) {
      throw new RangeError(`${fn}: needs ${stagingBytes(tokens)} bytes of staging in options.scratch besides the kernels' ${STACK_BYTES}-byte stack; lend a larger region (one row at a time needs ${stagingBytes(1)})`);
    }
    chunkRows = fit;
  }
  for (let i = 0; i < slots.length; i++) {
    if (at[i] !== STAGED) continue;
    if (shares[i]) {
      offset[i] = offset[slots[i].over];
    } else {
      offset[i] = plan.total;
      plan.total += align16((step[i] === 0 ? dim : spanOf(call, slots[i], chunkRows)) * size[i]);
    }
  }
  plan.chunkRows = chunkRows;
  plan.outViews = new List(slots.length);
  plan.onceIn = new List();
  plan.rowIn = new List();
  plan.rowOut = new List();
  plan.onceOut = new List();
  // The records the staging copies, in slot order: in before the kernel, out after it.
  for (let i = 0; i < slots.length; i++) {
    if (offset[i] < 0 || records[i] === null) continue;
    if (slots[i].dir & IN) add(step[i] === 0 ? plan.onceIn : plan.rowIn, i);
    if (slots[i].dir & OUT) add(step[i] === 0 ? plan.onceOut : plan.rowOut, i);
  }
  return plan;
}

const add = (list, item) => {
  list[list.length] = item;
};

/** The staged call: inputs copied in, the kernel run chunk by chunk, outputs copied out. */
function stageAndRun(memory, call, plan) {
  const { op: { slots, keys }, tokens, records, fn } = call;
  const { at, step, size, offset, pointers, chunkRows, total, onceIn, rowIn, rowOut, onceOut } = plan;
  // The last allocation of the call: views of memory are taken only after it.
  const base = memory.staging(fn, total);
  // From here on: copies and kernel calls only, on the memory's buffer as it is now.
  const heap = memory.views();
  if (plan.heap !== heap || plan.viewsAt !== base) {
    plan.heap = heap;
    plan.viewsAt = base;
    for (let i = 0; i < slots.length; i++) plan.outViews[i] = null;
  }
  for (let k = 0; k < onceIn.length; k++) copyIn(heap, records[onceIn[k]], 0, call.dim, base + offset[onceIn[k]]);
  for (let row = 0; row < tokens; row += chunkRows) {
    const n = min(chunkRows, tokens - row);
    if (row !== 0 || plan.pointersAt !== base) {
      for (let i = 0; i < slots.length; i++) pointers[keys[i]] = offset[i] >= 0 ? base + offset[i] : at[i] === 0 ? 0 : at[i] + row * step[i] * size[i];
    }
    plan.pointersAt = row === 0 ? base : -1;
    for (let k = 0; k < rowIn.length; k++) {
      const i = rowIn[k];
      copyIn(heap, records[i], row * step[i], spanOf(call, slots[i], n), base + offset[i]);
    }
    runKernel(memory.exports, call, plan, pointers, n);
    // Outputs in slot order: where shared memory lets two of them alias, the last one written wins, as in the reference.
    for (let k = 0; k < rowOut.length; k++) {
      const i = rowOut[k];
      if (slots[i].per !== ROW || (call.stride === call.dim && call.heads === 1)) copyOut(plan, i, records[i], row * step[i], spanOf(call, slots[i], n), base + offset[i], n === chunkRows);
      else copyRowsOut(plan, call, i, row, n, base + offset[i]);
    }
  }
  for (let k = 0; k < onceOut.length; k++) copyOut(plan, onceOut[k], records[onceOut[k]], 0, call.dim, base + offset[onceOut[k]], true);
}

/** Copies values [from, from + n) of a staged record to byte `to` of memory. */
function copyIn(heap, record, from, n, to) {
  // The memory's views, and a record's shadow, carry the intrinsic `set` (ownView in src/loader/intrinsics.js).
  if (record.dtype === 'float32') heap.float32.set(viewOf(record, from, n), to / 4);
  else heap.uint16.set(viewOf(record, from, n), to / 2);
}

/** Copies `source` (a view of staging) to values [from, …) of a staged record. */
function copyTo(record, source, from) {
  if (record.shadow !== null) record.shadow.set(source, from);
  else copyInto(viewOf(record, 0, record.length), source, from);
}

/** Copies n values from byte `at` of memory to values [from, from + n) of
 * a staged record, the output of slot i: a full chunk's view is kept. */
function copyOut(plan, i, record, from, n, at, full) {
  let view = full ? plan.outViews[i] : null;
  if (view === null) {
    view = storageView(record.dtype, plan.heap.buffer, at, n);
    if (full) plan.outViews[i] = view;
  }
  copyTo(record, view, from);
}

/** The rows of a chunk of n tokens (from `row`) of a per-row output with a
 * row stride (or heads), copied out one by one from byte `at`: the values
 * between the rows are the caller's, never written. A full chunk's row views are kept. */
function copyRowsOut(plan, call, i, row, n, at) {
  const { dim, stride, heads, headStride } = call;
  const record = call.records[i];
  const bytes = plan.size[i];
  let views = n === plan.chunkRows ? plan.outViews[i] : null;
  if (views === null) {
    views = new List(n * heads);
    for (let r = 0; r < n; r++) {
      for (let h = 0; h < heads; h++) views[r * heads + h] = storageView(record.dtype, plan.heap.buffer, at + (r * stride + h * headStride) * bytes, dim);
    }
    if (n === plan.chunkRows) plan.outViews[i] = views;
  }
  for (let r = 0; r < n; r++) {
    for (let h = 0; h < heads; h++) copyTo(record, views[r * heads + h], (row + r) * stride + h * headStride);
  }
}
