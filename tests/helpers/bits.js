// Bit-for-bit comparison of float32 arrays, as the numerics contract defines
// it: identical bits for every non-NaN value (+0 and -0 differ), and NaN
// where the other side has NaN (wasm leaves NaN sign and payload open).

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

export function bitsOf(v) {
  f32[0] = v;
  return u32[0];
}

function hex(v) {
  return `0x${bitsOf(v).toString(16).padStart(8, '0')} (${v})`;
}

/** Index of the first element whose bits differ, or -1. */
export function firstBitDifference(a, b) {
  if (a.length !== b.length) return Math.min(a.length, b.length);
  const ua = new Uint32Array(a.buffer, a.byteOffset, a.length);
  const ub = new Uint32Array(b.buffer, b.byteOffset, b.length);
  for (let i = 0; i < a.length; i++) {
    if (ua[i] !== ub[i] && !(Number.isNaN(a[i]) && Number.isNaN(b[i]))) return i;
  }
  return -1;
}

/** Throws, naming the case and the first differing index, unless a and b agree bit for bit. */
export function assertSameBits(a, b, what) {
  if (a.length !== b.length) {
    throw new Error(`${what}: lengths differ (${a.length} vs ${b.length})`);
  }
  const i = firstBitDifference(a, b);
  if (i >= 0) {
    throw new Error(`${what}: first difference at index ${i}: ${hex(a[i])} vs ${hex(b[i])}`);
  }
}

/** Index of the first differing 16-bit pattern, or -1. NaNs too must match:
 * every implementation writes one NaN pattern per format (src/kernels/float16.h). */
export function firstDifference16(a, b) {
  if (a.length !== b.length) return Math.min(a.length, b.length);
  for (let i = 0; i < a.length; i++) {
    if (a[i] !== b[i]) return i;
  }
  return -1;
}

/** assertSameBits for arrays of any dtype (Float32Array or 16-bit patterns). */
export function assertSameBitsAs(dtype, a, b, what) {
  if (dtype === 'float32') {
    assertSameBits(a, b, what);
    return;
  }
  if (a.length !== b.length) throw new Error(`${what}: lengths differ (${a.length} vs ${b.length})`);
  const i = firstDifference16(a, b);
  if (i >= 0) {
    const h = (v) => `0x${v.toString(16).padStart(4, '0')}`;
    throw new Error(`${what}: first difference at index ${i}: ${h(a[i])} vs ${h(b[i])}`);
  }
}
