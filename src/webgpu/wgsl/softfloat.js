// IEEE-754 binary32 arithmetic in WGSL on u32 bit patterns: add, mul, div
// and sqrt correctly rounded to nearest even, with subnormals, infinities and
// NaN, plus the bfloat16 and float16 conversions of the numerics contract
// (src/kernels/f32-rmsnorm/rmsnorm_f32.h, src/kernels/float16.h).
//
// Why integers: WGSL leaves the bits of its float operations open (+, -, *
// may round to either neighbour, / is 2.5 ulp, sqrt 2 ulp, subnormals may
// flush, expressions may be reassociated or fused), but defines every u32
// operation used here exactly (+, -, * wrap modulo 2^32, shifts below 32,
// comparisons, countLeadingZeros, select). No f32 value is ever formed, so
// no implementation can change a bit. Shift amounts are kept below 32
// explicitly: WGSL reduces a runtime shift amount modulo 32.
//
// Significands are carried with the leading bit at bit 30 and seven bits
// below the float32's last bit; the lowest is a sticky bit (any nonzero bits
// shifted out), the scheme of Berkeley SoftFloat's roundPackToF32.
export const SOFTFLOAT_WGSL = /* wgsl */ `
const F32_SIGN: u32 = 0x80000000u;
const F32_ABS: u32 = 0x7fffffffu;
const F32_INF: u32 = 0x7f800000u;
const F32_NAN: u32 = 0x7fc00000u;
const F32_ONE: u32 = 0x3f800000u;

// m >> s with every bit shifted out ORed into bit 0; any s.
fn shr_jam(m: u32, s: u32) -> u32 {
  if (s == 0u) { return m; }
  if (s >= 31u) { return select(0u, 1u, m != 0u); }
  return (m >> s) | select(0u, 1u, (m << (32u - s)) != 0u);
}

// sign | the float32 nearest to m * 2^(e - 157), ties to even, where m has
// its leading bit at bit 30 (m in [2^30, 2^31)) and e is the biased
// exponent the result has if it does not round up to the next binade.
fn round_pack(sign: u32, e: i32, m: u32) -> u32 {
  var mm = m;
  var ee = e;
  if (ee >= 255) { return sign | F32_INF; }
  if (ee <= 0) {
    // Subnormal: shift to the fixed exponent 1 - 127; packing with field 0
    // below lets a round-up into bit 23 become the smallest normal.
    mm = shr_jam(mm, u32(min(1 - ee, 31)));
    ee = 1;
  }
  let rest = mm & 0x7fu;
  var q = mm >> 7u;
  if (rest > 0x40u || (rest == 0x40u && (q & 1u) == 1u)) { q = q + 1u; }
  // q holds the implicit bit (bit 23): adding it to field ee - 1 gives ee,
  // and a carry out of the significand moves to the next exponent (or Inf).
  return sign | ((u32(ee - 1) << 23u) + q);
}

struct F32Parts { e: i32, m: u32 }

// A finite nonzero magnitude as m * 2^(e - 150), m in [2^23, 2^24):
// subnormals are normalized, their e then below 1.
fn f32_parts(a: u32) -> F32Parts {
  let e = i32(a >> 23u);
  let f = a & 0x7fffffu;
  if (e == 0) {
    let s = countLeadingZeros(f) - 8u;
    return F32Parts(1 - i32(s), f << s);
  }
  return F32Parts(e, f | 0x800000u);
}

fn f32_mul(a: u32, b: u32) -> u32 {
  let sign = (a ^ b) & F32_SIGN;
  let aa = a & F32_ABS;
  let ba = b & F32_ABS;
  if (aa > F32_INF || ba > F32_INF) { return F32_NAN; }
  if (aa == F32_INF || ba == F32_INF) {
    if (aa == 0u || ba == 0u) { return F32_NAN; }
    return sign | F32_INF;
  }
  if (aa == 0u || ba == 0u) { return sign; }
  let pa = f32_parts(aa);
  let pb = f32_parts(ba);
  // The 48-bit product from 12-bit halves (each partial product < 2^25).
  let al = pa.m & 0xfffu;
  let ah = pa.m >> 12u;
  let bl = pb.m & 0xfffu;
  let bh = pb.m >> 12u;
  let mid = ah * bl + al * bh;
  let lo = al * bl + ((mid & 0xfffu) << 12u);
  let hi = ah * bh + (mid >> 12u) + (lo >> 24u); // product = hi * 2^24 + (lo & 0xffffff)
  let lo24 = lo & 0xffffffu;
  var e = pa.e + pb.e - 127;
  var m: u32;
  if (hi >= 0x800000u) {
    m = (hi << 7u) | (lo24 >> 17u) | select(0u, 1u, (lo24 & 0x1ffffu) != 0u);
    e = e + 1;
  } else {
    m = (hi << 8u) | (lo24 >> 16u) | select(0u, 1u, (lo24 & 0xffffu) != 0u);
  }
  return round_pack(sign, e, m);
}

fn f32_add(a: u32, b: u32) -> u32 {
  let aa = a & F32_ABS;
  let ba = b & F32_ABS;
  if (aa > F32_INF || ba > F32_INF) { return F32_NAN; }
  if (aa == F32_INF) {
    if (ba == F32_INF && a != b) { return F32_NAN; }
    return a;
  }
  if (ba == F32_INF) { return b; }
  if (ba == 0u) {
    if (aa == 0u) { return a & b; } // -0 only for -0 + -0
    return a;
  }
  if (aa == 0u) { return b; }
  var x = a; // the larger magnitude
  var y = b;
  if (ba > aa) { x = b; y = a; }
  var ex = i32((x >> 23u) & 0xffu);
  var ey = i32((y >> 23u) & 0xffu);
  var mx = x & 0x7fffffu;
  var my = y & 0x7fffffu;
  if (ex == 0) { ex = 1; } else { mx = mx | 0x800000u; }
  if (ey == 0) { ey = 1; } else { my = my | 0x800000u; }
  // Leading bit at 29, a carry to 30; the sticky bit keeps the exact
  // result strictly between the two neighbours of the computed one, and the
  // rounding points are even in these units, so rounding sees no difference.
  mx = mx << 6u;
  my = shr_jam(my << 6u, u32(ex - ey));
  var m: u32;
  if (((x ^ y) & F32_SIGN) == 0u) {
    m = mx + my;
  } else {
    m = mx - my;
    if (m == 0u) { return 0u; } // x - x is +0 when rounding to nearest
  }
  let s = countLeadingZeros(m) - 1u;
  return round_pack(x & F32_SIGN, ex + 1 - i32(s), m << s);
}

fn f32_div(a: u32, b: u32) -> u32 {
  let sign = (a ^ b) & F32_SIGN;
  let aa = a & F32_ABS;
  let ba = b & F32_ABS;
  if (aa > F32_INF || ba > F32_INF) { return F32_NAN; }
  if (aa == F32_INF) {
    if (ba == F32_INF) { return F32_NAN; }
    return sign | F32_INF;
  }
  if (ba == F32_INF) { return sign; }
  if (ba == 0u) {
    if (aa == 0u) { return F32_NAN; }
    return sign | F32_INF;
  }
  if (aa == 0u) { return sign; }
  let pa = f32_parts(aa);
  let pb = f32_parts(ba);
  var r = pa.m;
  var e = pa.e - pb.e + 127;
  if (r < pb.m) { r = r << 1u; e = e - 1; }
  // Restoring division: 31 quotient bits of r / m_b in [1, 2), the
  // remainder's sign the sticky bit.
  var q = 0u;
  for (var i = 0u; i < 31u; i = i + 1u) {
    q = q << 1u;
    if (r >= pb.m) { r = r - pb.m; q = q | 1u; }
    r = r << 1u;
  }
  return round_pack(sign, e, q | select(0u, 1u, r != 0u));
}

fn f32_sqrt(a: u32) -> u32 {
  if ((a & F32_ABS) > F32_INF) { return F32_NAN; }
  if ((a & F32_ABS) == 0u) { return a; } // sqrt(-0) = -0
  if ((a & F32_SIGN) != 0u) { return F32_NAN; }
  if (a == F32_INF) { return a; }
  let p = f32_parts(a);
  var k = p.e - 150; // a = m * 2^k
  var m = p.m;
  if ((k & 1) != 0) { m = m << 1u; k = k - 1; }
  // Digit-by-digit root of m * 2^28 (< 2^53), two radicand bits a step;
  // the remainder stays below 2^28.
  var q = 0u;
  var r = 0u;
  for (var i = 26; i >= 0; i = i - 1) {
    var pair = 0u;
    if (i >= 14) { pair = (m >> u32(2 * i - 28)) & 3u; }
    r = (r << 2u) | pair;
    let t = (q << 2u) | 1u;
    q = q << 1u;
    if (r >= t) { r = r - t; q = q | 1u; }
  }
  // q = floor(sqrt(m * 2^28)) has 26 or 27 bits.
  let s = countLeadingZeros(q) - 1u;
  return round_pack(0u, k / 2 + 143 - i32(s), (q << s) | select(0u, 1u, r != 0u));
}

// bfloat16 bits to float32 bits: exact.
fn bf16_to_f32(h: u32) -> u32 { return h << 16u; }

// float32 to bfloat16, nearest even; every NaN to 0x7fc0.
fn f32_to_bf16(a: u32) -> u32 {
  if ((a & F32_ABS) > F32_INF) { return 0x7fc0u; }
  return (a + 0x7fffu + ((a >> 16u) & 1u)) >> 16u;
}

// float16 bits to float32 bits: exact (subnormals normalized).
fn f16_to_f32(h: u32) -> u32 {
  let sign = (h & 0x8000u) << 16u;
  let e = (h >> 10u) & 0x1fu;
  let f = h & 0x3ffu;
  if (e == 31u) { return sign | F32_INF | (f << 13u); }
  if (e == 0u) {
    if (f == 0u) { return sign; }
    let s = countLeadingZeros(f) - 21u; // leading bit to bit 10
    return sign | (u32(113 - i32(s)) << 23u) | (((f << s) & 0x3ffu) << 13u);
  }
  return sign | ((e + 112u) << 23u) | (f << 13u);
}

// float32 to float16, nearest even, subnormals kept; >= 65520 to Inf; every
// NaN to 0x7e00.
fn f32_to_f16(a: u32) -> u32 {
  let sign = (a >> 16u) & 0x8000u;
  let aa = a & F32_ABS;
  if (aa > F32_INF) { return 0x7e00u; }
  if (aa >= 0x477ff000u) { return sign | 0x7c00u; }
  if (aa < 0x38800000u) {
    // Below 2^-14: a multiple of 2^-24. Under 2^-25 rounds to zero.
    let e = aa >> 23u;
    if (e < 102u) { return sign; }
    let m = (aa & 0x7fffffu) | 0x800000u; // |a| * 2^24 = m >> (126 - e)
    let sh = 126u - e;
    let half = 1u << (sh - 1u);
    let rest = m & ((1u << sh) - 1u);
    var q = m >> sh;
    if (rest > half || (rest == half && (q & 1u) == 1u)) { q = q + 1u; }
    return sign | q;
  }
  let rebiased = aa - (112u << 23u);
  let rest = rebiased & 0x1fffu;
  var q = rebiased >> 13u;
  if (rest > 0x1000u || (rest == 0x1000u && (q & 1u) == 1u)) { q = q + 1u; }
  return sign | q;
}
`;
