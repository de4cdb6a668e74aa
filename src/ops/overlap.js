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
  if (spaceOf(a) !== spaceOf(b)) return isShared(a) && isShared(b) ? MAYBE : APART;
  if (a.start === b.start && a.end === b.end) return SAME;
  return a.start < b.end && b.start < a.end ? OVERLAP : APART;
}

/**
 * Checks a call's records (`records[i]` for `slots[i]` of its description;
 * null where not given) against the rule. Returns whether some written
 * array may alias another through shared memory: then every input is read
 * in before the first write, and outputs are written whole, in slot order.
 */
export function checkOverlaps(fn, slots, records) {
  let mayAlias = false;
  for (let i = 0; i < slots.length; i++) {
    const a = records[i];
    if (a === null) continue;
    for (let j = i + 1; j < slots.length; j++) {
      const b = records[j];
      if (b === null || !(slots[i].writes || slots[j].writes)) continue;
      const rel = relation(a, b);
      if (rel === APART) continue;
      if (rel === MAYBE) {
        mayAlias = true;
        continue;
      }
      const w = slots[j].writes ? j : i;
      const o = w === j ? i : j;
      const inPlace = slots[w].over === o;
      if (inPlace && rel === SAME) continue;
      const writer = slots[w].name;
      const other = slots[o].name;
      throw new RangeError(inPlace
        ? `${fn}: ${writer} must be ${other} itself or not overlap ${other}`
        : `${fn}: ${writer} must not overlap ${other}`);
    }
  }
  return mayAlias;
}
