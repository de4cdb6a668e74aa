// The copying path of the row-wise kernels with several arrays (layerNorm,
// the backward passes, the per-row statistics): every array is staged in wasm
// scratch memory, the rows in chunks of whole rows, and the outputs copied
// out. Rows are independent, and the running sums (dweight, dbias) stay in
// wasm memory from the first chunk to the last, so chunking changes no bit.

import { Tensor } from '../api/tensor.js';
import { CHUNK_BYTES } from './kernels.js';

const BYTES = { float32: 4, bfloat16: 2, float16: 2 };
const align16 = (bytes) => Math.ceil(bytes / 16) * 16;

/**
 * @typedef {object} Slot One array argument of the kernel.
 * @property {'row' | 'stat' | 'once'} per dim values per row, one float32 per
 *   row, or dim values for the whole call (a weight, or a running sum)
 * @property {TypedArray|Tensor|null} [from] copied into the slot
 * @property {TypedArray|Tensor|null} [to] receives the slot afterwards
 * @property {boolean} [scratch] the kernel's own working space (no copies)
 * @property {'float32'|'bfloat16'|'float16'} [dtype] of a 'row' slot; float32 by default
 * A slot with none of from, to, scratch is passed as a null pointer.
 */

/** What a slot stages for a resolved argument (src/api/validate.js): the
 * tensor itself, or the array; null for a missing one. */
export function staged(resolved) {
  return resolved === undefined ? null : resolved.tensor ?? resolved.array;
}

/**
 * Runs `kernel(pointers, rows)` over chunks of rows, with pointers[i] the
 * byte address of slot i in this chunk (0 for a null slot).
 * @param {import('./kernels.js').WasmKernels} kernels
 * @param {string} fn the public function, for error messages
 * @param {Slot[]} slots
 */
export function runRowsStaged(kernels, fn, rows, dim, slots, kernel) {
  if (rows === 0) return;
  const used = slots.map((s) => Boolean(s.from || s.to || s.scratch));
  const dtypeOf = (s) => s.dtype ?? 'float32';
  const width = (s) => (s.per === 'row' ? dim : 1); // values per row
  const perRowBytes = slots.reduce((sum, s, i) =>
    sum + (used[i] && s.per !== 'once' ? width(s) * BYTES[dtypeOf(s)] : 0), 0);
  const chunkRows = Math.min(rows, Math.max(1, Math.floor(CHUNK_BYTES / perRowBytes)));
  const sizes = slots.map((s, i) => (!used[i] ? 0
    : align16((s.per === 'once' ? dim : chunkRows * width(s)) * BYTES[dtypeOf(s)])));
  const base = kernels.scratch(fn, sizes.reduce((a, b) => a + b, 0));
  const pointers = [];
  let next = base;
  for (const [i, size] of sizes.entries()) {
    pointers.push(used[i] ? next : 0);
    next += size;
  }
  // Views are taken after scratch(), whose malloc may have grown the memory
  // and so detached every earlier view of it (a tensor's array among them).
  const view = (v) => (v instanceof Tensor ? v.array : v);
  const heapAt = (s, i) => [kernels.heap(dtypeOf(s)), pointers[i] / BYTES[dtypeOf(s)]];
  slots.forEach((s, i) => {
    if (s.per === 'once' && s.from) {
      const [heap, at] = heapAt(s, i);
      heap.set(view(s.from), at);
    }
  });
  for (let row = 0; row < rows; row += chunkRows) {
    const n = Math.min(chunkRows, rows - row);
    slots.forEach((s, i) => {
      if (s.per !== 'once' && s.from) {
        const [heap, at] = heapAt(s, i);
        heap.set(view(s.from).subarray(row * width(s), (row + n) * width(s)), at);
      }
    });
    kernel(pointers, n);
    slots.forEach((s, i) => {
      if (s.per !== 'once' && s.to) {
        const [heap, at] = heapAt(s, i);
        view(s.to).set(heap.subarray(at, at + n * width(s)), row * width(s));
      }
    });
  }
  slots.forEach((s, i) => {
    if (s.per === 'once' && s.to) {
      const [heap, at] = heapAt(s, i);
      view(s.to).set(heap.subarray(at, at + dim));
    }
  });
}
