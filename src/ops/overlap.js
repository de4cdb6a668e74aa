// The one overlap rule, for every function: no array a call writes may
// share a byte with any other array of the call, except an output exactly
// over the input it is named for (in place).

import { RangeError } from '../loader/intrinsics.js';
import { isShared } from './arrays.js';

const APART = 0;
const SAME = 1;
const OVERLAP = 2;
const MAYBE = 3;

/** Where a record's bytes live: its instance memory's (see src/loader/memory.js), or its buffer. */
const spaceOf = (record) => (record.memory !== null ? record.memory.space() : record.buffer);

/** How two records' bytes relate. Two views of different SharedArrayBuffer
 * objects may still share memory (structuredClone of a SharedArrayBuffer is
 * a second object over the same bytes): MAYBE. */
function relation(a, b) {
  if (a.start === a.end || b.start === b.end) return APART;
  if ((a.memory === null || a.memory !== b.memory) && spaceOf(a) !== spaceOf(b)) return isShared(a) && isShared(b) ? MAYBE : APART;
  if (a.start === b.start && a.end === b.end) return SAME;
  return a.start < b.end && b.start < a.end ? OVERLAP : APART;
}

/**
 * Checks a call's records (`records[i]` for slot i of its description `op`;
 * null where not given) against the rule, over the pairs of slots it can
 * concern (op.pairs). Returns whether some written array may alias another
 * through shared memory: then every input is read in before the first
 * write, and outputs are written whole, in slot order.
 */
export function checkOverlaps(fn, op, records) {
  const { slots, pairs } = op;
  let mayAlias = false;
  for (let k = 0; k < pairs.length; k += 2) {
    const i = pairs[k];
    const j = pairs[k + 1];
    const a = records[i];
    const b = records[j];
    if (a === null || b === null) continue;
    const rel = relation(a, b);
    if (rel === MAYBE) mayAlias = true;
    if (rel === APART || rel === MAYBE) continue;
    const w = slots[j].writes ? j : i;
    const o = w === j ? i : j;
    const inPlace = slots[w].over === o;
    if (inPlace && rel === SAME) continue;
    throw new RangeError(inPlace
      ? `${fn}: ${slots[w].name} must be ${slots[o].name} itself or not overlap ${slots[o].name}`
      : `${fn}: ${slots[w].name} must not overlap ${slots[o].name}`);
  }
  return mayAlias;
}
