// A prepared call: a function's call checked once (resolveOnce, ./resolve.js)
// and then run any number of times, as XNNPACK's create/setup/run and
// WebGPU's bind groups make repetition explicit. A run asks only what can
// have changed since: that every array is still what was measured (a tensor
// not freed, a view neither detached nor resized). Everything else about a
// call (types, sizes, options, overlaps) cannot change.

import { setPrototypeOf, TypeError } from '../loader/intrinsics.js';
import { stillHolds } from './arrays.js';

export class PreparedCall {
  #call;
  #runner;

  /** `runner(call)` runs the checked call and returns what the function returns. */
  constructor(call, runner) {
    this.#call = call;
    this.#runner = runner;
  }

  /** Runs the call: what the function called with the prepared arguments returns. */
  run() {
    const call = this.#call;
    const { records } = call;
    for (let i = 0; i < records.length; i++) {
      if (records[i] !== null && !stillHolds(records[i])) {
        throw new TypeError(`${call.fn}: ${call.op.slots[i].name} was freed, detached or resized since the call was prepared; prepare the call again`);
      }
    }
    return this.#runner(call);
  }
}
setPrototypeOf(PreparedCall.prototype, null);
