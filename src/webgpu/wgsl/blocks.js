// ggml's 8-bit block outputs in WGSL: a quantizer per format, and what the
// RMSNorm main pass (../programs/rmsnorm-shader.js) writes a block's bytes
// with. The rule is src/kernels/q8_blocks.h's (ggml's reference
// quantizers, and where their C is undefined): every float operation of it
// one of ./softfloat.js's or, where its operands allow, ./fastfloat.js's
// (the same bits), its roundings and int8 conversions in integer
// operations. The main pass makes a block's values (the storage-dtype
// values a call with a storage out would store, widened) into `vals`, a
// private array, quantizes them and writes the block: no pass between.
//
// Blocks are bytes, and a word may hold two blocks' (q8_0's 34 bytes) or a
// block's and the caller's (an output that starts or ends inside a word):
// the output's binding is atomic, the words a block fills whole are
// stored, and its first and last words are changed byte-masked (atomicAnd,
// atomicOr on the block's own bytes alone), so that no byte outside the
// block changes whichever invocation comes first.
import { BLOCK_FORMAT, BLOCK_FORMATS } from '../../loader/abi.js';
import { List } from '../../loader/intrinsics.js';

// Each format's quantizer: `fn quantize(range)` puts the bytes of the
// block of values vals[0..values) with keep (its qs), put_byte, put_u16
// and put_u32. Each value is multiplied by the block's scale and rounded
// on the common path (q_fast) when every value of the block is zero or
// normal and the scale is normal (fast_block), else, or where q_fast is
// unsure, in softfloat: two loops, not a branch in one (a loop is the
// branch an adapter skips), the softfloat loop a block's last step too
// where a format has one after its values. Every softfloat operation is
// called at one site a loop (docs/webgpu.md, the compile-size rule).
const Q8_32 = ({ values, fields }, withSum) => `
fn keep(j: u32, q: i32) {
  keep_q(${fields.qs.offset}u, j, q);
}
fn quantize(range: vec2<u32>) {
  // ggml's MAX(amax, |x|) is \`amax > |x| ? amax : |x|\`: the largest |x|,
  // but a NaN makes amax NaN, and the next value replaces it.
  var amax = range.x;
  if (range.x > F32_INF) {
    amax = 0u;
    for (var j = 0u; j < ${values}u; j = j + 1u) {
      let a = vals[j] & F32_ABS;
      amax = select(a, amax, !is_nan(amax) && !is_nan(a) && amax > a);
    }
  }
  // d = amax / 127; id = d != 0 ? 1 / d : 0 (a NaN d is not 0).
  var d = 0u;
  var id = 0u;
  for (var k = 0u; k < 2u; k = k + 1u) {
    if (k == 1u && (d & F32_ABS) == 0u) { break; }
    let r = f32_div(select(amax, F32_ONE, k == 1u), select(F32_127, d, k == 1u));
    if (k == 0u) { d = r; } else { id = r; }
  }
  // qs_j = int8(roundf(x_j * id))${withSum ? '; then s = fp16(float(sum of qs) * d), with the float32 d' : ''}.
  var n = select(0u, ${values}u, fast_block(range, id));
  for (var j = 0u; j < n; j = j + 1u) { keep(j, q_fast(vals[j], id, 0u)); }
  if (unsure) { n = clear_block(); }
  for (var j = n; j < ${withSum ? values + 1 : values}u; j = j + 1u) {
${withSum ? `    if (j == ${values}u) {
      put_u16(${fields.s.offset}u, f32_to_f16(f32_mul(f32_of_i32(qsum), d)));
      break;
    }
` : ''}    keep(j, int8_of(f32_mul(vals[j], id), false));
  }
  put_u16(${fields.d.offset}u, f32_to_f16(d));
}
`;

// q8_K: max is the first x_j of the largest |x_j| (\`|x_j| > amax\`: a NaN
// never is); iscale = -127 / max; qs_j = int8(MIN(127, nearest_int(iscale *
// x_j))) (halves to even), bsums_g the sums of qs 16g..16g+15, d = 1 / iscale;
// a block of zeros (amax 0) is all zero bytes (ggml leaves bsums as they were).
const Q8_K = ({ values, fields }) => `
fn keep(j: u32, q: i32) {
  keep_q(${fields.qs.offset}u, j, q);
  if ((j & 15u) == 15u) {
    put_u16(${fields.bsums.offset}u + (j >> 4u) * 2u, u32(qsum));
    qsum = 0i;
  }
}
fn quantize(range: vec2<u32>) {
  var amax = 0u;
  var top = 0u;
  for (var j = 0u; j < ${values}u; j = j + 1u) {
    let x = vals[j];
    let a = x & F32_ABS;
    if (!is_nan(a) && a > amax) {
      amax = a;
      top = x;
    }
  }
  if (amax == 0u) { return; }
  var iscale = 0u;
  var d = 0u;
  for (var k = 0u; k < 2u; k = k + 1u) {
    let r = f32_div(select(F32_127 | F32_SIGN, F32_ONE, k == 1u), select(top, iscale, k == 1u));
    if (k == 0u) { iscale = r; } else { d = r; }
  }
  var n = select(0u, ${values}u, fast_block(range, iscale));
  for (var j = 0u; j < n; j = j + 1u) { keep(j, q_fast(vals[j], iscale, 1u)); }
  if (unsure) { n = clear_block(); }
  for (var j = n; j < ${values}u; j = j + 1u) { keep(j, int8_of(f32_mul(iscale, vals[j]), true)); }
  put_u32(${fields.d.offset}u, d);
}
`;

/** The block formats by code (src/loader/abi.js, BLOCK_FORMAT): a new
 * output format is a row here. */
const FORMATS = new List(BLOCK_FORMATS.length + 1);
FORMATS[BLOCK_FORMAT.q8_0.code] = { __proto__: null, format: BLOCK_FORMAT.q8_0, wgsl: Q8_32(BLOCK_FORMAT.q8_0, false) };
FORMATS[BLOCK_FORMAT.q8_1.code] = { __proto__: null, format: BLOCK_FORMAT.q8_1, wgsl: Q8_32(BLOCK_FORMAT.q8_1, true) };
FORMATS[BLOCK_FORMAT.q8_K.code] = { __proto__: null, format: BLOCK_FORMAT.q8_K, wgsl: Q8_K(BLOCK_FORMAT.q8_K) };

/**
 * What a main pass that writes blocks of format `code` (its code) into
 * binding `binding` (atomic words) declares: the quantizer, fed through
 * `vals` (a block's values, float32 bits), and `fn put_block(start)`,
 * which quantizes them and writes the block at byte `start` of the
 * binding. Needs ./softfloat.js and ./fastfloat.js.
 */
export function blocksWgsl(code, binding) {
  const { format, wgsl } = FORMATS[code];
  const words = (format.bytes >> 2) + 2; // a block's words, starting anywhere in a word
  const b = `b${binding}`;
  return `
const F32_127: u32 = 0x42fe0000u; // 127.0
const BLOCK_VALUES: u32 = ${format.values}u;
const BLOCK_BYTES: u32 = ${format.bytes}u;
fn is_nan(a: u32) -> bool { return (a & F32_ABS) > F32_INF; }

// The float32 of an integer below 2^24 in magnitude (exact).
fn f32_of_i32(i: i32) -> u32 {
  if (i == 0i) { return 0u; }
  let sign = select(0u, F32_SIGN, i < 0i);
  let m = u32(abs(i));
  let lead = 31u - countLeadingZeros(m);
  return sign | ((127u + lead) << 23u) | ((m << (23u - lead)) & 0x7fffffu);
}

// The int8 of float32 v rounded to an integer, halves away from zero (C's
// roundf) or to even (ggml's nearest_int): NaN is 0, the rest saturates to
// [-128, 127] (src/kernels/q8_blocks.h).
fn int8_of(v: u32, even: bool) -> i32 {
  let mag = v & F32_ABS;
  if (mag > F32_INF) { return 0i; }
  let negative = (v & F32_SIGN) != 0u;
  if (mag >= 0x43000000u) { return select(127i, -128i, negative); } // |v| >= 128, infinities too
  let e = mag >> 23u;
  var r = 0u;
  if (e >= 126u) {
    // |v| in [0.5, 128): m * 2^(e - 150), shift in [17, 24].
    let m = (mag & 0x7fffffu) | 0x800000u;
    let shift = 150u - e;
    let half = 1u << (shift - 1u);
    let rest = m & ((1u << shift) - 1u);
    r = m >> shift;
    if (rest > half || (rest == half && (!even || (r & 1u) == 1u))) { r = r + 1u; }
  }
  if (negative) { return -i32(r); }
  return min(i32(r), 127i);
}

// Whether a block's products take the common path: its |values| (range:
// their largest, and the least of |v| - 1, where a zero wraps above every
// other) are each zero or normal, and the scale s normal. Then |s * v| is
// at most the block's largest, about 127, and normal where the exponent
// fields of s and v add to 128 or more; below that it is under 2^-125,
// whose integer is 0 whatever its bits.
fn fast_block(range: vec2<u32>, s: u32) -> bool {
  let e = (s >> 23u) & 0xffu;
  return range.x < F32_INF && range.y >= F_MANT && e != 0u && e != 0xffu;
}

// int8_of(s * v) on the common path (fast_block), branch-free (a software
// adapter runs both sides of a branch its lanes disagree on), from the
// native product: the exact product rounded either way (./fastfloat.js
// says why no more is asked of it). Its integer is the correctly rounded
// product's unless one of the two candidates is a half-integer, the
// rounding's one step: the native product or a neighbour of it (|rest -
// half| at most 1, in its ulps; the neighbour below 0.5 is 0.5's pred,
// whose rest is half - 1 at this shift). Then \`unsure\` is set, and the
// block is quantized again in softfloat. \`even\` 1 rounds halves to even,
// 0 away from zero. A product below 2^-125 (subnormal, or flushed to 0:
// both operands are normal, so its exponent field is at most 2) takes the
// largest shift, 31: its rest is below 2^24, far from half (2^30), and its
// integer 0, with no test of its own.
fn q_fast(v: u32, s: u32, even: u32) -> i32 {
  let p = bitcast<u32>(bitcast<f32>(v) * bitcast<f32>(s));
  let mag = p & F32_ABS;
  // |p| = m * 2^(e - 150); below 0.5 (e < 126) the shift leaves 0, rest
  // below half.
  let m = (mag & F_MANT) | F_HIDDEN;
  let shift = 150u - clamp(mag >> 23u, 119u, 150u);
  let half = 1u << (shift - 1u);
  let rest = m & ((half << 1u) - 1u);
  let r = m >> shift;
  unsure = unsure || rest + 1u - half <= 2u;
  let up = select(0u, 1u, rest + (even & r & 1u) + (1u - even) > half);
  // int8_of's saturation: |p| >= 128 (Inf too: its shift is 0) is 127 or -128.
  let n = i32(r + up);
  return select(min(n, 127i), -min(n, 128i), (p & F32_SIGN) != 0u);
}

// A block's values, its bytes from byte \`at\` of its first word (put
// there by quantize, then written to the output) and its sum of qs.
var<private> vals: array<u32, ${format.values}>;
var<private> block: array<u32, ${words}>;
var<private> at: u32;
var<private> qsum: i32;
var<private> qword: u32;
var<private> unsure: bool;
// The block's bytes all zero again; 0, where the softfloat loop starts.
fn clear_block() -> u32 {
  for (var w = 0u; w < ${words}u; w = w + 1u) { block[w] = 0u; }
  qword = 0u;
  qsum = 0i;
  unsure = false;
  return 0u;
}
// qs_j, an int8 at byte off + j of the block: four at a time into a word.
fn keep_q(off: u32, j: u32, q: i32) {
  qsum = qsum + q;
  qword = qword | ((u32(q) & 0xffu) << ((j & 3u) << 3u));
  if ((j & 3u) == 3u) {
    let p = at + off + j - 3u;
    let s = (p & 3u) << 3u;
    block[p >> 2u] = block[p >> 2u] | (qword << s);
    block[(p >> 2u) + 1u] = block[(p >> 2u) + 1u] | select(qword >> (32u - s), 0u, s == 0u);
    qword = 0u;
  }
}
fn put_byte(k: u32, b: u32) {
  let p = at + k;
  block[p >> 2u] = block[p >> 2u] | ((b & 0xffu) << ((p & 3u) << 3u));
}
fn put_u16(k: u32, h: u32) {
  put_byte(k, h);
  put_byte(k + 1u, h >> 8u);
}
fn put_u32(k: u32, w: u32) {
  put_u16(k, w);
  put_u16(k + 2u, w >> 16u);
}
${wgsl}
// Quantizes vals (\`range\`: fast_block's) into the block at byte
// \`start\` of the output, and writes its words first to last; the first
// and last hold bytes of others too.
fn put_block(start: u32, range: vec2<u32>) {
  at = start & 3u;
  _ = clear_block();
  quantize(range);
  let first = start >> 2u;
  let last = (start + ${format.bytes - 1}u) >> 2u;
  for (var w = first; w <= last; w = w + 1u) {
    var mask = 0xffffffffu;
    if (w == first) { mask = mask << (at << 3u); }
    if (w == last) { mask = mask & (0xffffffffu >> ((3u - ((start + ${format.bytes - 1}u) & 3u)) << 3u)); }
    if (mask == 0xffffffffu) {
      atomicStore(&${b}[w], block[w - first]);
    } else {
      atomicAnd(&${b}[w], ~mask);
      atomicOr(&${b}[w], block[w - first] & mask);
    }
  }
}
`;
}
