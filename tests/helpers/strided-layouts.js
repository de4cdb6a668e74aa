// The strided layouts the docs allow (docs/api.md, options.rowStride), for
// every form's tests: `rows` rows `stride` apart, x.length anywhere in
// [(rows - 1) * stride + dim, rows * stride]. One row's length may be
// anything from dim to the stride: a tail after its values. Imports
// nothing from Node: the browser pages use it too.

function layouts() {
  const all = [];
  for (const [rows, dim, stride] of [[1, 4, 6], [1, 4, 4], [1, 37, 64], [1, 300, 1000], [2, 4, 6], [3, 5, 8], [2, 33, 40], [4, 256, 300]]) {
    const shortest = (rows - 1) * stride + dim;
    const lengths = new Set([shortest, shortest + 1, rows * stride].filter((n) => n <= rows * stride));
    for (const length of lengths) all.push(Object.freeze({ rows, dim, stride, length }));
  }
  return Object.freeze(all);
}

export const STRIDED_LAYOUTS = layouts();

/** The rows of a strided array, packed. */
export function packedRows(a, rows, dim, stride) {
  const p = new (a.constructor)(rows * dim);
  for (let r = 0; r < rows; r++) p.set(a.subarray(r * stride, r * stride + dim), r * dim);
  return p;
}

/** Whether every value of `after` outside the rows (the gaps and the tail) has the bits it had in `before`. */
export function untouched(after, before, rows, dim, stride) {
  const a = new Uint8Array(after.buffer, after.byteOffset, after.byteLength);
  const b = new Uint8Array(before.buffer, before.byteOffset, before.byteLength);
  const bytes = after.BYTES_PER_ELEMENT;
  for (let i = 0; i < after.length; i++) {
    if (i < rows * stride && i % stride < dim && Math.floor(i / stride) < rows) continue;
    for (let k = 0; k < bytes; k++) if (a[i * bytes + k] !== b[i * bytes + k]) return false;
  }
  return true;
}
