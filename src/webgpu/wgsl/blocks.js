// ggml's 8-bit block outputs in WGSL: a row per format, and the pass that
// writes a call's blocks. The rule is src/kernels/q8_blocks.h's (ggml's
// reference quantizers, and where their C is undefined): every float
// operation of it one of ./softfloat.js's, its roundings and int8
// conversions in integer operations. The pass reads the values a call
// with a storage-dtype out would store (packed rows, in a scratch buffer)
// and writes the blocks an invocation each, packed row after row.
//
// Blocks are bytes, and a word may hold two blocks' (q8_0's 34 bytes) or a
// block's and the caller's (an output that starts or ends inside a word):
// the output's binding is atomic, the words a block fills whole are
// stored, and its first and last words are changed byte-masked (atomicAnd,
// atomicOr), so that no byte outside the block changes.
import { BLOCK_FORMAT, BLOCK_FORMATS } from '../../loader/abi.js';
import { List } from '../../loader/intrinsics.js';
import { entryPoint, roleAccess, shaderHead, STORAGE, WORKGROUP_SIZE } from './wgsl.js';

/** The pass's uniform block. */
export const BLOCK_PARAMS = ['blocks', 'groups_x', 'out_byte', 'pad0'];

// Each format's quantizer: `fn quantize(e: u32)` puts the bytes of the
// block of values e..e+values of the input (v_value) with put_byte,
// put_u16 and put_u32. Every softfloat operation is called at one site a
// loop (docs/webgpu.md, the compile-size rule).
const Q8_32 = ({ values, fields }, withSum) => `
fn quantize(e: u32) {
  // ggml's MAX(amax, |x|) is \`amax > |x| ? amax : |x|\`: a NaN makes
  // amax NaN, and the next value replaces it.
  var amax = 0u;
  for (var j = 0u; j < ${values}u; j = j + 1u) {
    let a = v_value(e + j) & F32_ABS;
    amax = select(a, amax, !is_nan(amax) && !is_nan(a) && amax > a);
  }
  // d = amax / 127; id = d != 0 ? 1 / d : 0 (a NaN d is not 0).
  var d = 0u;
  var id = 0u;
  for (var k = 0u; k < 2u; k = k + 1u) {
    if (k == 1u && (d & F32_ABS) == 0u) { break; }
    let r = f32_div(select(amax, F32_ONE, k == 1u), select(F32_127, d, k == 1u));
    if (k == 0u) { d = r; } else { id = r; }
  }
  put_u16(${fields.d.offset}u, f32_to_f16(d));
  // qs_j = int8(roundf(x_j * id))${withSum ? '; then s = fp16(float(sum of qs) * d), with the float32 d' : ''}.
  var sum = 0i;
  for (var j = 0u; j < ${withSum ? values + 1 : values}u; j = j + 1u) {
${withSum ? `    if (j == ${values}u) {
      put_u16(${fields.s.offset}u, f32_to_f16(f32_mul(f32_of_i32(sum), d)));
      break;
    }
` : ''}    let q = int8_of(f32_mul(v_value(e + j), id), false);
    put_byte(${fields.qs.offset}u + j, u32(q));
    sum = sum + q;
  }
}
`;

// q8_K: max is the first x_j of the largest |x_j| (\`|x_j| > amax\`: a NaN
// never is); iscale = -127 / max; qs_j = int8(MIN(127, nearest_int(iscale *
// x_j))) (halves to even), bsums_g the sums of qs 16g..16g+15, d = 1 / iscale;
// a block of zeros (amax 0) is all zero bytes (ggml leaves bsums as they were).
const Q8_K = ({ values, fields }) => `
fn quantize(e: u32) {
  var amax = 0u;
  var top = 0u;
  for (var j = 0u; j < ${values}u; j = j + 1u) {
    let x = v_value(e + j);
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
  put_u32(${fields.d.offset}u, d);
  var sum = 0i;
  for (var j = 0u; j < ${values}u; j = j + 1u) {
    let q = int8_of(f32_mul(iscale, v_value(e + j)), true);
    put_byte(${fields.qs.offset}u + j, u32(q));
    sum = sum + q;
    if ((j & 15u) == 15u) {
      put_u16(${fields.bsums.offset}u + (j >> 4u) * 2u, u32(sum));
      sum = 0i;
    }
  }
}
`;

/** The block formats by code (src/loader/abi.js, BLOCK_FORMAT): a new
 * output format is a row here. */
const FORMATS = new List(BLOCK_FORMATS.length + 1);
FORMATS[BLOCK_FORMAT.q8_0.code] = { __proto__: null, format: BLOCK_FORMAT.q8_0, wgsl: Q8_32(BLOCK_FORMAT.q8_0, false) };
FORMATS[BLOCK_FORMAT.q8_1.code] = { __proto__: null, format: BLOCK_FORMAT.q8_1, wgsl: Q8_32(BLOCK_FORMAT.q8_1, true) };
FORMATS[BLOCK_FORMAT.q8_K.code] = { __proto__: null, format: BLOCK_FORMAT.q8_K, wgsl: Q8_K(BLOCK_FORMAT.q8_K) };

/**
 * The pass's shader for blocks of format `code` of values of storage
 * `dtype` (codes): binding 1 the values (packed, read), binding 2 the
 * blocks (atomic words, from byte P.out_byte of the binding).
 */
export function blocksShader(code, dtype) {
  const { format, wgsl } = FORMATS[code];
  const words = (format.bytes >> 2) + 2; // a block's words, starting anywhere in a word
  const bindings = new List(2);
  bindings[0] = { __proto__: null, access: 'read', atomic: false, words: 1 };
  bindings[1] = { __proto__: null, access: 'read_write', atomic: true, words: 1 };
  return `${shaderHead(BLOCK_PARAMS, bindings)}
${roleAccess('v', 1, false, dtype, true, false)}
fn v_value(e: u32) -> u32 { return ${STORAGE[dtype].widen('v_raw(e)')}; }
const F32_127: u32 = 0x42fe0000u; // 127.0
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

// The block's bytes, from byte \`at\` of its first word: put there by
// quantize, then written to the output.
var<private> block: array<u32, ${words}>;
var<private> at: u32;
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
${entryPoint(`  let b = group * ${WORKGROUP_SIZE}u + tid;
  if (b >= P.blocks) { return; }
  let start = P.out_byte + b * ${format.bytes}u;
  at = start & 3u;
  quantize(b * ${format.values}u);
  // Words first to last; the first and last hold bytes of others too.
  let first = start >> 2u;
  let last = (start + ${format.bytes - 1}u) >> 2u;
  for (var w = first; w <= last; w = w + 1u) {
    var mask = 0xffffffffu;
    if (w == first) { mask = mask << (at << 3u); }
    if (w == last) { mask = mask & (0xffffffffu >> ((3u - ((start + ${format.bytes - 1}u) & 3u)) << 3u)); }
    if (mask == 0xffffffffu) {
      atomicStore(&b2[w], block[w - first]);
    } else {
      atomicAnd(&b2[w], ~mask);
      atomicOr(&b2[w], block[w - first] & mask);
    }
  }
`)}`;
}

/** A format's values and bytes a block, by its code. */
export const formatOf = (code) => FORMATS[code].format;
