// A prepared call: a function's call checked once (resolveOnce, ./resolve.js)
// and then run any number of times, as XNNPACK's create/setup/run and
// WebGPU's bind groups make repetition explicit. A run asks only what can
// have changed since: that every array still holds the bytes that were
// measured. A tensor, or a view of wasm memory, holds its address through
// memory growth (the view is made again on the new buffer: ./arrays.js,
// followView); a tensor freed (or the tensor a view lies in), a buffer
// detached, or one shrunk below the view's end is refused, saying which.
// Everything else about a call (types, sizes, options, overlaps) cannot change.

import { defineProperty, List, setPrototypeOf, TypeError } from '../loader/intrinsics.js';
import { DETACHED, FREED, followView, HOLDS, stillHolds } from './arrays.js';

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
        const state = record.buffer === null ? FREED : followView(record);
        if (state !== HOLDS) throw this.#refusal(k, state);
      }
    }
    const direct = this.#direct;
    if (direct === null) return this.#runner(this.#call);
    direct.kernel(direct.exports, this.#call, direct.pointers, direct.rows);
    return direct.result.value;
  }

  #refusal(k, state) {
    const call = this.#call;
    const name = call.op.slots[this.#slots[k]].name;
    const what = state === FREED ? `was freed since the call was prepared (${this.#held[k].buffer === null ? 'a tensor' : 'a view of a tensor'} freed)`
      : state === DETACHED ? 'was detached since the call was prepared (its ArrayBuffer was transferred)'
        : 'was shrunk since the call was prepared (its resizable ArrayBuffer now ends before the view does)';
    return new TypeError(`${call.fn}: ${name} ${what}; prepare the call again`);
  }
}
setPrototypeOf(PreparedCall.prototype, null);
