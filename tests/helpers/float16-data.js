// Random 16-bit test data: float32 samples rounded to bfloat16/float16 bit
// patterns by the reference's conversion.
import { narrow } from '../../src/reference/float16.js';
import { gaussian } from './random.js';

/** n values ~ N(0, sigma²) as `dtype` bit patterns in a Uint16Array. */
export function normal16(rand, n, dtype, sigma = 1) {
  const a = new Uint16Array(n);
  for (let i = 0; i < n; i++) a[i] = narrow(Math.fround(sigma * gaussian(rand)), dtype);
  return a;
}

/** n values ~ U(lo, hi) as `dtype` bit patterns. */
export function uniform16(rand, n, dtype, lo, hi) {
  const a = new Uint16Array(n);
  for (let i = 0; i < n; i++) a[i] = narrow(Math.fround(lo + (hi - lo) * rand()), dtype);
  return a;
}

/** Base64 little-endian 16-bit patterns (the fixtures' encoding) as a Uint16Array. */
export function fromBase64(text) {
  const bytes = Buffer.from(text, 'base64');
  const out = new Uint16Array(bytes.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = bytes.readUInt16LE(2 * i);
  return out;
}
