// The reference's side of a call, from the same descriptions as the wasm
// API's (src/ops/descriptions.js): resolved and checked the same way, every
// input read in first (a per-row array's rows packed), then the results
// computed, then every output written whole, in the description's slot
// order (so that where shared memory lets two outputs alias, the same one
// wins as in the wasm modules). A per-row output's values between rows are
// left as they are.

import { defineProperty, hasOwn } from '../loader/intrinsics.js';
import { readIn, readRows, writeOut, writeRows } from '../ops/arrays.js';
import { PreparedCall } from '../ops/prepared.js';
import { makeResults, resolve, resolveOnce, returnValue, zeroRowResult } from '../ops/resolve.js';

/** The public function `op` describes, computed by compute(call, inputs) →
 * { [slot key]: the whole result }, inputs being copies of the arrays read,
 * a per-row one as call.rows packed rows of call.dim values. */
export function referenceFunction(op, compute) {
  const { name } = op;
  function runCall(call) {
    const none = zeroRowResult(call);
    if (none !== null) return none;
    const { records } = call;
    const { slots } = call.op; // the description's, or its blocked form's (./resolve.js)
    const inputs = { ...op.given }; // every slot's key its own: none is read from a prototype
    for (let i = 0; i < slots.length; i++) {
      // (A result made at an earlier run is made anew, from zeros: not read.)
      if (records[i] === null || records[i].owned || !slots[i].reads) continue;
      if (!slots[i].row) inputs[slots[i].key] = readIn(records[i]);
      else inputs[slots[i].key] = readRows(records[i], call);
    }
    const results = compute(call, inputs);
    makeResults(call);
    for (let i = 0; i < slots.length; i++) {
      const bits = hasOwn(results, slots[i].key) ? results[slots[i].key] : null;
      if (!slots[i].writes || records[i] === null || bits == null) continue;
      if (!slots[i].row) writeOut(records[i], bits);
      else writeRows(records[i], bits, call);
    }
    return returnValue(call);
  }
  const fn = {
    [name](a, b, c, d, e) {
      return runCall(resolve(op, name, undefined, a, b, c, d, e));
    },
  }[name];
  function prepare(a, b, c, d, e) {
    return new PreparedCall(resolveOnce(op, name, undefined, a, b, c, d, e), runCall);
  }
  defineProperty(fn, 'prepare', { __proto__: null, value: prepare, enumerable: false, writable: true, configurable: true });
  return fn;
}
