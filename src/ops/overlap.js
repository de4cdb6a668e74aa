// The one overlap rule, for every function: no array a call writes may
// share a byte with any other array of the call, except an output exactly
// over the input it is named for (in place). A per-row array's bytes are
// its rows only: with a row stride, the values between rows are not its,
// so rows of two arrays may interleave in one buffer. With heads, a token's
// rows are its heads, headStride apart: row (t, h) at t·stride + h·headStride.

import { ELEMENT_BYTES } from '../loader/abi.js';
import { ceil, floor, max, min, RangeError } from '../loader/intrinsics.js';
import { isShared } from './arrays.js';

const APART = 0;
const SAME = 1;
const OVERLAP = 2;
const MAYBE = 3;

/** Where a record's bytes live: its instance memory's (see src/loader/memory.js), or its buffer. */
const spaceOf = (record) => (record.memory !== null ? record.memory.space() : record.buffer);

/**
 * Whether some row of a, rows of `rowBytes` starting every `strideBytes`
 * from a.start up to a.end, shares a byte with b: with `strided`, b's rows
 * are laid out the same way (so |d − m·S| < D for some row distance m),
 * else b is the contiguous [b.start, b.end).
 */
function rowsMeet(a, b, strideBytes, rowBytes, strided) {
  const rowsA = ceil((a.end - a.start) / strideBytes);
  const d = b.start - a.start;
  if (strided) {
    const rowsB = ceil((b.end - b.start) / strideBytes);
    const lo = max(-(rowsB - 1), floor((d - rowBytes) / strideBytes) + 1);
    const hi = min(rowsA - 1, ceil((d + rowBytes) / strideBytes) - 1);
    return lo <= hi;
  }
  const lo = max(0, floor((d - rowBytes) / strideBytes) + 1);
  const hi = min(rowsA - 1, ceil((b.end - a.start) / strideBytes) - 1);
  return lo <= hi;
}

/**
 * rowsMeet for per-row arrays of `heads` rows a token (`headBytes` apart
 * within one, tokens `strideBytes` apart): row (t, h) of a at a.start +
 * t·S + h·H. Strided b is laid out the same way, and rows of heads h1 of a
 * and h2 of b meet where |d + (h2 − h1)·H − m·S| < D for some token
 * distance m: each head distance is the one-head question at another d.
 */
function headsMeet(a, b, strideBytes, rowBytes, heads, headBytes, strided) {
  const tokensA = ceil((a.end - a.start) / strideBytes);
  if (strided) {
    const tokensB = ceil((b.end - b.start) / strideBytes);
    for (let j = 1 - heads; j < heads; j++) {
      const d = b.start - a.start + j * headBytes;
      const lo = max(-(tokensB - 1), floor((d - rowBytes) / strideBytes) + 1);
      const hi = min(tokensA - 1, ceil((d + rowBytes) / strideBytes) - 1);
      if (lo <= hi) return true;
    }
    return false;
  }
  for (let h = 0; h < heads; h++) {
    const start = a.start + h * headBytes;
    const lo = max(0, floor((b.start - start - rowBytes) / strideBytes) + 1);
    const hi = min(tokensA - 1, ceil((b.end - start) / strideBytes) - 1);
    if (lo <= hi) return true;
  }
  return false;
}

/** How two records' bytes relate (`rowA`, `rowB`: whether each is per-row,
 * its rows `stride` values apart). Two views of different SharedArrayBuffer
 * objects may still share memory (structuredClone of a SharedArrayBuffer is
 * a second object over the same bytes): MAYBE. */
function relation(a, b, rowA, rowB, stride, dim, heads, headStride) {
  if (a.start === a.end || b.start === b.end) return APART;
  if ((a.memory === null || a.memory !== b.memory) && spaceOf(a) !== spaceOf(b)) return isShared(a) && isShared(b) ? MAYBE : APART;
  if (a.start === b.start && a.end === b.end && rowA === rowB) return SAME;
  if (!(a.start < b.end && b.start < a.end)) return APART;
  if ((stride === dim && heads === 1) || (!rowA && !rowB)) return OVERLAP;
  const bytes = ELEMENT_BYTES[rowA ? a.dtype : b.dtype];
  if (heads > 1) {
    const meets = rowA ? headsMeet(a, b, stride * bytes, dim * bytes, heads, headStride * bytes, rowB)
      : headsMeet(b, a, stride * bytes, dim * bytes, heads, headStride * bytes, false);
    return meets ? OVERLAP : APART;
  }
  const meet = rowA ? rowsMeet(a, b, stride * bytes, dim * bytes, rowB) : rowsMeet(b, a, stride * bytes, dim * bytes, false);
  return meet ? OVERLAP : APART;
}

/**
 * Checks a call's records (`records[i]` for slot i of its description `op`;
 * null where not given) against the rule, over the pairs of slots it can
 * concern (op.pairs); the per-row arrays' rows are `dim` values `stride`
 * apart (with `heads` > 1, each token's rows `headStride` apart within
 * it); `names[i]`, where given, names slot i in a message (the GPU
 * device form's buffers.x). Returns whether some written array may alias
 * another through shared memory: then every input is read in before the
 * first write, and outputs are written whole, in slot order.
 */
export function checkOverlaps(fn, op, records, stride, dim, names = null, heads = 1, headStride = dim) {
  const { slots, pairs } = op;
  let mayAlias = false;
  for (let k = 0; k < pairs.length; k += 2) {
    const i = pairs[k];
    const j = pairs[k + 1];
    const a = records[i];
    const b = records[j];
    if (a === null || b === null) continue;
    const rel = relation(a, b, slots[i].row, slots[j].row, stride, dim, heads, headStride);
    if (rel === MAYBE) mayAlias = true;
    if (rel === APART || rel === MAYBE) continue;
    const w = slots[j].writes ? j : i;
    const o = w === j ? i : j;
    const inPlace = slots[w].over === o;
    if (inPlace && rel === SAME) continue;
    const writer = names === null ? slots[w].name : names[w];
    const other = names === null ? slots[o].name : names[o];
    const blocks = slots[w].dtype === 'blocks' ? ` (ggml blocks are never written in place: give ${writer} a buffer of its own)` : '';
    throw new RangeError(inPlace ? `${fn}: ${writer} must be ${other} itself or not overlap ${other}` : `${fn}: ${writer} must not overlap ${other}${blocks}`);
  }
  return mayAlias;
}
