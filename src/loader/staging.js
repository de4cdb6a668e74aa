// The copying path of the row-wise kernels with several arrays (layerNorm,
// the backward passes, per-row statistics): every array is staged in wasm
// scratch memory, the rows in chunks of whole rows, and the outputs copied
// out. Rows are independent, and the running sums (dweight, dbias) stay in
// wasm memory from the first chunk to the last, so chunking changes no bit.

import { CHUNK_FLOATS } from './kernels.js';

const FLOAT_BYTES = 4;
const padTo16Bytes = (floats) => Math.ceil(floats / 4) * 4;

/**
 * @typedef {object} Slot One array argument of the kernel.
 * @property {'row' | 'stat' | 'once'} per dim floats per row, one float per
 *   row, or dim floats for the whole call (a weight, or a running sum)
 * @property {Float32Array|null} [from] copied into the slot
 * @property {Float32Array|null} [to] receives the slot afterwards
 * @property {boolean} [scratch] the kernel's own working space (no copies)
 * A slot with none of from, to, scratch is passed as a null pointer.
 */

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
  const perRowFloats = slots.reduce((sum, s, i) =>
    sum + (!used[i] ? 0 : s.per === 'row' ? dim : s.per === 'stat' ? 1 : 0), 0);
  const chunkRows = Math.min(rows, Math.max(1, Math.floor(CHUNK_FLOATS / perRowFloats)));
  const sizes = slots.map((s, i) => (!used[i] ? 0
    : padTo16Bytes(s.per === 'row' ? chunkRows * dim : s.per === 'stat' ? chunkRows : dim)));
  const base = kernels.scratch(fn, sizes.reduce((a, b) => a + b, 0));
  const heap = kernels.heap; // after scratch(): malloc may have grown memory
  const offsets = []; // in floats
  let next = base / FLOAT_BYTES;
  for (const size of sizes) {
    offsets.push(next);
    next += size;
  }
  const pointers = offsets.map((o, i) => (used[i] ? o * FLOAT_BYTES : 0));
  slots.forEach((s, i) => {
    if (s.per === 'once' && s.from) heap.set(s.from, offsets[i]);
  });
  for (let row = 0; row < rows; row += chunkRows) {
    const n = Math.min(chunkRows, rows - row);
    const width = (s) => (s.per === 'row' ? dim : 1);
    slots.forEach((s, i) => {
      if (s.per !== 'once' && s.from) {
        heap.set(s.from.subarray(row * width(s), (row + n) * width(s)), offsets[i]);
      }
    });
    kernel(pointers, n);
    slots.forEach((s, i) => {
      if (s.per !== 'once' && s.to) {
        s.to.set(heap.subarray(offsets[i], offsets[i] + n * width(s)), row * width(s));
      }
    });
  }
  slots.forEach((s, i) => {
    if (s.per === 'once' && s.to) s.to.set(heap.subarray(offsets[i], offsets[i] + dim));
  });
}
