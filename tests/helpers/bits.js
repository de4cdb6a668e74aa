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

// 16-bit storage (Uint16Array of bfloat16 or float16 bit patterns): the same
// rule, with each format's NaN (exponent all ones, mantissa not zero).
const NAN16 = { bfloat16: [0x7f80, 0x007f], float16: [0x7c00, 0x03ff] };
const isNaN16 = (bits, dtype) => (bits & NAN16[dtype][0]) === NAN16[dtype][0] && (bits & NAN16[dtype][1]) !== 0;

/** assertSameBits for Uint16Arrays holding `dtype` bit patterns. */
export function assertSameBits16(a, b, what, dtype) {
  if (a.length !== b.length) {
    throw new Error(`${what}: lengths differ (${a.length} vs ${b.length})`);
  }
  for (let i = 0; i < a.length; i++) {
    if (a[i] !== b[i] && !(isNaN16(a[i], dtype) && isNaN16(b[i], dtype))) {
      const hex16 = (v) => `0x${v.toString(16).padStart(4, '0')}`;
      throw new Error(`${what}: first difference at index ${i}: ${hex16(a[i])} vs ${hex16(b[i])} (${dtype})`);
    }
  }
}
