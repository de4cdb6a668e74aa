// How the row-wise kernels with several arrays (layerNorm, the backward
// passes, the per-row statistics) reach their arguments: an argument already
// in wasm memory (a tensor from alloc(), or a view of the module's memory) is
// used where it is; any other is staged in scratch memory, whole rows at a
// time in chunks, and copied in before and out after each chunk. Rows are
// independent, and running sums (dweight, dbias) stay put from the first
// chunk to the last, so chunking changes no bit. (rmsNorm and addRmsNorm, the
// calls an inference loop makes per token, use WasmKernels.rmsNorm instead:
// the same staging, written out for their fixed arguments, because at one row
// the generic version's per-call work is a measurable share of the call.)

import { BYTES, CHUNK_BYTES, align16 } from './kernels.js';

/**
 * @typedef {object} Slot One array argument of the kernel.
 * @property {string} name the argument's name, for error messages
 * @property {'row' | 'stat' | 'once'} per dim values per row, one value per
 *   row, or dim values for the whole call (a weight, or a running sum)
 * @property {{array: ArrayBufferView, tensor?: object}|null|undefined} [arg]
 *   a resolved argument (src/api/validate.js); none: a null pointer, unless
 *   dir is 'scratch'
 * @property {'in' | 'out' | 'inout' | 'scratch'} dir copied in, out, both,
 *   or neither (the kernel's own working space)
 * @property {'float32'|'bfloat16'|'float16'} [dtype] float32 by default
 */

/**
 * Runs `kernel(pointers, rows)` over chunks of rows, with pointers[i] the
 * byte address of slot i for this chunk (0 for a null slot).
 * @param {import('./kernels.js').WasmKernels} kernels
 * @param {string} fn the public function, for error messages
 * @param {Slot[]} slots
 */
export function runRowsStaged(kernels, fn, rows, dim, slots, kernel) {
  if (rows === 0) return;
  const bytes = (s) => BYTES[s.dtype ?? 'float32'];
  const width = (s) => (s.per === 'row' ? dim : 1); // values per row
  const present = (s) => s.arg != null && s.arg.array !== null; // null: no weight, no bias
  // Addresses of arguments already in wasm memory (-1: to be staged), taken
  // before scratch(), whose malloc may grow the memory.
  const direct = slots.map((s) => (present(s) ? kernels.addressOf(fn, s.name, s.arg) : -1));
  const staged = slots.map((s, i) => s.dir === 'scratch' || (present(s) && direct[i] < 0));
  const perRowBytes = slots.reduce((sum, s, i) =>
    sum + (staged[i] && s.per !== 'once' ? width(s) * bytes(s) : 0), 0);
  const chunkRows = perRowBytes === 0 ? rows
    : Math.min(rows, Math.max(1, Math.floor(CHUNK_BYTES / perRowBytes)));
  const sizes = slots.map((s, i) => (!staged[i] ? 0
    : align16((s.per === 'once' ? dim : chunkRows * width(s)) * bytes(s))));
  const total = sizes.reduce((a, b) => a + b, 0);
  let next = total > 0 ? kernels.scratch(fn, total) : 0;
  const stagedAt = sizes.map((size) => { const at = next; next += size; return at; });

  // The caller's values and the scratch copy of slot i, as typed arrays.
  // Views are taken here, after scratch(): growing the memory detaches every
  // earlier view of it, a tensor's array among them.
  const callerView = (s) => s.arg.tensor?.array ?? s.arg.array;
  const scratchView = (s, i, values) => {
    const heap = kernels.heap(s.dtype ?? 'float32');
    const at = stagedAt[i] / bytes(s);
    return heap.subarray(at, at + values);
  };
  const copiesIn = (s, i) => staged[i] && present(s) && (s.dir === 'in' || s.dir === 'inout');
  const copiesOut = (s, i) => staged[i] && present(s) && (s.dir === 'out' || s.dir === 'inout');

  slots.forEach((s, i) => {
    if (s.per === 'once' && copiesIn(s, i)) scratchView(s, i, dim).set(callerView(s));
  });
  for (let row = 0; row < rows; row += chunkRows) {
    const n = Math.min(chunkRows, rows - row);
    const rowsOf = (s) => [row * width(s), (row + n) * width(s)];
    slots.forEach((s, i) => {
      if (s.per !== 'once' && copiesIn(s, i)) scratchView(s, i, n * width(s)).set(callerView(s).subarray(...rowsOf(s)));
    });
    kernel(slots.map((s, i) => {
      if (staged[i]) return stagedAt[i];
      if (!present(s)) return 0;
      return direct[i] + (s.per === 'once' ? 0 : row * width(s) * bytes(s));
    }), n);
    slots.forEach((s, i) => {
      if (s.per !== 'once' && copiesOut(s, i)) callerView(s).set(scratchView(s, i, n * width(s)), rowsOf(s)[0]);
    });
  }
  slots.forEach((s, i) => {
    if (s.per === 'once' && copiesOut(s, i)) callerView(s).set(scratchView(s, i, dim));
  });
}
