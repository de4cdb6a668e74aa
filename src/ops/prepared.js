// A prepared call: a function's call checked once (resolveOnce, ./resolve.js)
// and then run any number of times, as XNNPACK's create/setup/run and
// WebGPU's bind groups make repetition explicit. A run asks only what can
// have changed since: that every array is still what was measured (a tensor
// not freed, a view neither detached nor resized). Everything else about a
// call (types, sizes, options, overlaps) cannot change.

import { defineProperty, List, setPrototypeOf, TypeError } from '../loader/intrinsics.js';
import { stillHolds } from './arrays.js';

export class PreparedCall {
  #call;
  #runner;
  #held; // the caller's records (made results are made anew), and their slots
  #slots;
  #direct;

  /** `runner(call)` runs the checked call and returns what the function
   * returns; `direct`, if not null, runs it without the runner
   * (src/api/run.js, directOf). */
  constructor(call, runner, direct = null) {
    this.#call = call;
    this.#runner = runner;
    this.#direct = direct;
    this.#held = new List();
    this.#slots = new List();
    const { records } = call;
    for (let i = 0; i < records.length; i++) {
      if (records[i] === null || records[i].owned) continue;
      this.#slots[this.#held.length] = i;
      this.#held[this.#held.length] = records[i];
    }
    // Its own, as a WebGPU prepared call's run is: it works taken off the object (`const { run } = prepared`).
    defineProperty(this, 'run', { __proto__: null, value: () => this.#run(), enumerable: true });
  }

  /** Runs the call: what the function called with the prepared arguments returns. */
  #run() {
    const held = this.#held;
    for (let k = 0; k < held.length; k++) {
      const record = held[k];
      // A tensor's record says at once (stillHolds asks it first too; inline, for SpiderMonkey).
      if (record.buffer === null ? !record.live : !stillHolds(record)) {
        const call = this.#call;
        throw new TypeError(`${call.fn}: ${call.op.slots[this.#slots[k]].name} was freed, detached or resized since the call was prepared; prepare the call again`);
      }
    }
    const direct = this.#direct;
    if (direct === null) return this.#runner(this.#call);
    direct.kernel(direct.exports, this.#call, direct.pointers, direct.rows);
    return direct.value;
  }
}
setPrototypeOf(PreparedCall.prototype, null);
