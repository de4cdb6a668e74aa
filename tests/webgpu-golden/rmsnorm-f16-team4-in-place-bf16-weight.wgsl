
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

// F32_SIGN and F32_ABS are softfloat's (SOFTFLOAT_WGSL comes first in every shader).
const F_MANT: u32 = 0x7fffffu;
const F_HIDDEN: u32 = 0x800000u;
// m * m >= 2^47 iff m >= 2^23.5 rounded up.
const SQUARE_CARRY: u32 = 11863284u;

// The nearest-even bits of |a * b| from the native candidate p (the bits of
// |a * b| rounded either way), lo = (ma * mb) mod 2^32 and c = [ma * mb >= 2^47].
fn round_product(p: u32, lo: u32, c: u32) -> u32 {
  let q = (lo >> 23u) >> c;
  let d = (p ^ q) & 1u;
  let rest = lo << (9u - c); // R, top-aligned: half is 2^31
  // Up iff R > half, or R == half and Q odd: rest + (Q odd) > half
  // (rest's low bits are 0).
  let up = select(0u, 1u, rest + (q & 1u) > F32_SIGN);
  return p - d + up;
}

// x * x, for x zero or normal with a normal square (or zero).
fn square(x: u32) -> u32 {
  let m = (x & F_MANT) | F_HIDDEN;
  let p = bitcast<u32>(bitcast<f32>(x) * bitcast<f32>(x)) & F32_ABS;
  let c = select(0u, 1u, m >= SQUARE_CARRY);
  // A zero x gives m = 2^23, lo = 2^46 mod 2^32 = 0, p = 0: the result is 0.
  return round_product(p, m * m, c);
}

// a * b, for a and b each zero or normal, t = threshold47(b), and a normal
// product wherever neither is zero; a zero operand gives a zero of the
// product's sign.
fn mul(a: u32, b: u32, t: u32) -> u32 {
  let sign = (a ^ b) & F32_SIGN;
  let ma = (a & F_MANT) | F_HIDDEN;
  let mb = (b & F_MANT) | F_HIDDEN;
  let p = bitcast<u32>(bitcast<f32>(a) * bitcast<f32>(b)) & F32_ABS;
  let c = select(0u, 1u, ma >= t);
  let r = round_product(p, ma * mb, c) | sign;
  return select(r, sign, min(a & F32_ABS, b & F32_ABS) == 0u);
}

// a * b as mul, for a and b each zero or normal with a normal product
// wherever neither is zero, without a threshold.
fn mul_free(a: u32, b: u32) -> u32 {
  let sign = (a ^ b) & F32_SIGN;
  let ma = (a & F_MANT) | F_HIDDEN;
  let mb = (b & F_MANT) | F_HIDDEN;
  let p = bitcast<u32>(bitcast<f32>(a) * bitcast<f32>(b)) & F32_ABS;
  let lo = ma * mb;
  let t = (p >> 23u) + 127u - ((a >> 23u) & 0xffu) - ((b >> 23u) & 0xffu);
  let crossed = (t == 1u) & ((p & F_MANT) == 0u) & (lo >= F32_SIGN);
  let c = select(min(t, 1u), 0u, crossed);
  let r = round_product(p, lo, c) | sign;
  return select(r, sign, min(a & F32_ABS, b & F32_ABS) == 0u);
}

// ceil(2^47 / mb) for b's significand mb (b normal): mb * m >= 2^47 iff
// m >= this. Long division of 2^47 - 1 (23 one bits above 24 more).
fn threshold47(b: u32) -> u32 {
  let mb = (b & F_MANT) | F_HIDDEN;
  var r = 0x7fffffu; // floor((2^47 - 1) / 2^24), below mb
  var q = 0u;
  for (var i = 0u; i < 24u; i = i + 1u) {
    r = (r << 1u) | 1u;
    q = q << 1u;
    if (r >= mb) { r = r - mb; q = q | 1u; }
  }
  return q + 1u;
}

// a + b for a, b >= 0, each zero or normal, with a normal sum (or zero):
// the larger's significand and the smaller's aligned below it with a
// sticky bit (the scheme of ./softfloat.js's f32_add), all in integers.
fn add_pos(a: u32, b: u32) -> u32 {
  let x = max(a, b);
  let y = min(a, b);
  let ex = x >> 23u;
  let mx = ((x & F_MANT) | F_HIDDEN) << 6u;
  let my = ((y & F_MANT) | F_HIDDEN) << 6u;
  let d = min(ex - (y >> 23u), 31u);
  let aligned = my >> d;
  let jam = aligned | select(1u, 0u, (aligned << d) == my);
  let sum = mx + jam; // [2^29, 2^31)
  let carry = sum >> 30u;
  let s = (sum >> carry) | (sum & carry);
  let q = s >> 6u;
  // Up iff the 6 bits below are past half (0x20), or at half with q odd.
  let up = select(0u, 1u, (s & 0x3fu) + (q & 1u) > 0x20u);
  let r = ((ex + carry - 1u) << 23u) + q + up;
  return select(r, x, y == 0u);
}

fn square4(x: vec4<u32>) -> vec4<u32> {
  return vec4<u32>(square(x.x), square(x.y), square(x.z), square(x.w));
}
fn mul4(a: vec4<u32>, b: vec4<u32>, t: vec4<u32>) -> vec4<u32> {
  return vec4<u32>(mul(a.x, b.x, t.x), mul(a.y, b.y, t.y), mul(a.z, b.z, t.z), mul(a.w, b.w, t.w));
}
fn mul_free4(a: vec4<u32>, b: vec4<u32>) -> vec4<u32> {
  return vec4<u32>(mul_free(a.x, b.x), mul_free(a.y, b.y), mul_free(a.z, b.z), mul_free(a.w, b.w));
}
fn add_pos4(a: vec4<u32>, b: vec4<u32>) -> vec4<u32> {
  return vec4<u32>(add_pos(a.x, b.x), add_pos(a.y, b.y), add_pos(a.z, b.z), add_pos(a.w, b.w));
}

struct Params { rows: u32, dim: u32, dim_f32: u32, eps: u32, groups_x: u32, x_hi: u32, x_off: u32, x_stride: u32, r_off: u32, r_stride: u32, y_off: u32, y_stride: u32, s_off: u32, w_off: u32, pad0: u32, pad1: u32, }
@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read_write> b1: array<vec2<u32>>;
@group(0) @binding(2) var<storage, read> b2: array<vec2<u32>>;

fn x_raw(e: u32) -> u32 { return (b1[e >> 2u][(e >> 1u) & 1u] >> ((e & 1u) << 4u)) & 0xffffu; }
fn x_raw4(e: u32, n: u32) -> vec4<u32> {
  let w = b1[e >> 2u];
  let v = vec4<u32>(w.x & 0xffffu, w.x >> 16u, w.y & 0xffffu, w.y >> 16u);
  return select(vec4<u32>(0u), v, vec4<u32>(0u, 1u, 2u, 3u) < vec4<u32>(n));
}
fn w_raw(e: u32) -> u32 { return (b2[e >> 2u][(e >> 1u) & 1u] >> ((e & 1u) << 4u)) & 0xffffu; }
fn w_raw4(e: u32, n: u32) -> vec4<u32> {
  let w = b2[e >> 2u];
  let v = vec4<u32>(w.x & 0xffffu, w.x >> 16u, w.y & 0xffffu, w.y >> 16u);
  return select(vec4<u32>(0u), v, vec4<u32>(0u, 1u, 2u, 3u) < vec4<u32>(n));
}
fn y_raw(e: u32) -> u32 { return (b1[e >> 2u][(e >> 1u) & 1u] >> ((e & 1u) << 4u)) & 0xffffu; }
fn y_raw4(e: u32, n: u32) -> vec4<u32> {
  let w = b1[e >> 2u];
  let v = vec4<u32>(w.x & 0xffffu, w.x >> 16u, w.y & 0xffffu, w.y >> 16u);
  return select(vec4<u32>(0u), v, vec4<u32>(0u, 1u, 2u, 3u) < vec4<u32>(n));
}
fn y_put(e: u32, v: u32) {
  let shift = (e & 1u) << 4u;
  let i = (e >> 1u) & 1u;
  b1[e >> 2u][i] = (b1[e >> 2u][i] & ~(0xffffu << shift)) | (v << shift);
}
fn y_put4(e: u32, v: vec4<u32>, n: u32) {
  if (n == 4u) {
    b1[e >> 2u] = vec2<u32>(v.x | (v.y << 16u), v.z | (v.w << 16u));
  } else {
    b1[e >> 2u].x = v.x | (v.y << 16u);
  }
}

fn widen(h: u32) -> u32 { return f16_to_f32(h); }
fn narrow(v: u32) -> u32 { return f32_to_f16(v); }
fn widen4(h: vec4<u32>) -> vec4<u32> {
  let sign = (h & vec4<u32>(0x8000u)) << vec4<u32>(16u);
  let e = (h >> vec4<u32>(10u)) & vec4<u32>(0x1fu);
  let f = h & vec4<u32>(0x3ffu);
  let normal = ((e + vec4<u32>(112u)) << vec4<u32>(23u)) | (f << vec4<u32>(13u));
  let sub = bitcast<vec4<u32>>(bitcast<vec4<f32>>(vec4<u32>(0x38800000u) | (f << vec4<u32>(13u))) - vec4<f32>(bitcast<f32>(0x38800000u)));
  let tiny = select(sub & vec4<u32>(F32_ABS), vec4<u32>(0u), f == vec4<u32>(0u));
  let special = select(normal, vec4<u32>(F32_INF) | (f << vec4<u32>(13u)), e == vec4<u32>(31u));
  return sign | select(special, tiny, e == vec4<u32>(0u));
}
fn narrow4(a: vec4<u32>) -> vec4<u32> {
  let sign = (a >> vec4<u32>(16u)) & vec4<u32>(0x8000u);
  let aa = a & vec4<u32>(F32_ABS);
  let rb = aa - vec4<u32>(112u << 23u);
  let qn = rb >> vec4<u32>(13u);
  let normal = qn + select(vec4<u32>(0u), vec4<u32>(1u), (rb & vec4<u32>(0x1fffu)) + (qn & vec4<u32>(1u)) > vec4<u32>(0x1000u));
  let sh = min(vec4<u32>(126u) - min(aa >> vec4<u32>(23u), vec4<u32>(126u)), vec4<u32>(25u));
  let m = (aa & vec4<u32>(F_MANT)) | vec4<u32>(F_HIDDEN);
  let qs = m >> sh;
  let rest = m - (qs << sh);
  let sub = qs + select(vec4<u32>(0u), vec4<u32>(1u), rest + (qs & vec4<u32>(1u)) > (vec4<u32>(1u) << (sh - vec4<u32>(1u))));
  let r = select(sub, normal, aa >= vec4<u32>(0x38800000u));
  return sign | select(r, vec4<u32>(0x7c00u), aa >= vec4<u32>(0x477ff000u));
}

fn widen_w(h: u32) -> u32 { return bf16_to_f32(h); }
fn narrow_w(v: u32) -> u32 { return f32_to_bf16(v); }
fn widen_w4(h: vec4<u32>) -> vec4<u32> { return h << vec4<u32>(16u); }
fn narrow_w4(a: vec4<u32>) -> vec4<u32> { return (a + vec4<u32>(0x7fffu) + ((a >> vec4<u32>(16u)) & vec4<u32>(1u))) >> vec4<u32>(16u); }


// t[0..16): a block's lane sums; t[16 + k] = t[FOLD_A[k]] + t[FOLD_B[k]];
// v_j is t[18 + 3j] = (L_j + L_{j+4}) + (L_{j+8} + L_{j+12}); the block,
// t[30], is (v_0 + v_2) + (v_1 + v_3). One call site keeps the shader small.
const FOLD_A = array<u32, 15>(0u, 8u, 16u, 1u, 9u, 19u, 2u, 10u, 22u, 3u, 11u, 25u, 18u, 21u, 28u);
const FOLD_B = array<u32, 15>(4u, 12u, 17u, 5u, 13u, 20u, 6u, 14u, 23u, 7u, 15u, 26u, 24u, 27u, 29u);
fn fold_lanes(t: ptr<function, array<u32, 31>>) -> u32 {
  for (var k = 0u; k < 15u; k = k + 1u) { (*t)[16u + k] = f32_add((*t)[FOLD_A[k]], (*t)[FOLD_B[k]]); }
  return (*t)[30];
}
// Block sums added pairwise as they come: a stack of partial sums, each
// over a power of two of blocks, merged while the top covers as many.
// In softfloat here; FAST_SUMS_WGSL has the common path's twins.
struct Pairwise { stack: array<u32, 32>, sizes: array<u32, 32>, depth: u32 }
// Whether a sum over n blocks merges with the stack's top next (n 0: the
// final merge, of everything left).
fn pairwise_merge(p: ptr<function, Pairwise>, n: u32) -> bool {
  return (*p).depth != 0u && (n == 0u || (*p).sizes[(*p).depth - 1u] == n);
}
fn pairwise_store(p: ptr<function, Pairwise>, s: u32, n: u32) {
  (*p).stack[(*p).depth] = s;
  (*p).sizes[(*p).depth] = n;
  (*p).depth = (*p).depth + 1u;
}
fn pairwise_push(p: ptr<function, Pairwise>, block_sum: u32) {
  var s = block_sum;
  var n = 1u;
  while (pairwise_merge(p, n)) {
    (*p).depth = (*p).depth - 1u;
    s = f32_add((*p).stack[(*p).depth], s);
    n = n * 2u;
  }
  pairwise_store(p, s, n);
}
// The pending sums added from the top down: the last, smallest first.
fn pairwise_total(p: ptr<function, Pairwise>) -> u32 {
  var depth = (*p).depth - 1u;
  var total = (*p).stack[depth];
  while (depth > 0u) {
    depth = depth - 1u;
    total = f32_add((*p).stack[depth], total);
  }
  return total;
}

// The same fold on lane groups L0..L3 (lanes 0-3, 4-7, 8-11, 12-15): v = (L0 + L1) + (L2 + L3) lane-wise.
// The block is (v_0 + v_2) + (v_1 + v_3). A loop over the lanes, so that
// each addition is compiled once, not four times.
fn fold_fast(l0: vec4<u32>, l1: vec4<u32>, l2: vec4<u32>, l3: vec4<u32>) -> u32 {
  var v: vec4<u32>;
  for (var k = 0u; k < 4u; k = k + 1u) { v[k] = add_pos(add_pos(l0[k], l1[k]), add_pos(l2[k], l3[k])); }
  return add_pos(add_pos(v.x, v.z), add_pos(v.y, v.w));
}

fn pairwise_push_fast(p: ptr<function, Pairwise>, block_sum: u32) {
  var s = block_sum;
  var n = 1u;
  while (pairwise_merge(p, n)) {
    (*p).depth = (*p).depth - 1u;
    s = add_pos((*p).stack[(*p).depth], s);
    n = n * 2u;
  }
  pairwise_store(p, s, n);
}
fn pairwise_total_fast(p: ptr<function, Pairwise>) -> u32 {
  var depth = (*p).depth - 1u;
  var total = (*p).stack[depth];
  while (depth > 0u) {
    depth = depth - 1u;
    total = add_pos((*p).stack[depth], total);
  }
  return total;
}

const TINY_SUM: u32 = 0x1f800000u; // 2^-64
const FLT_MAX: u32 = 0x7f7fffffu;
const TEAM: u32 = 4u;
const LOW_X: u32 = 0x1fffffffu; // nonzero |x| >= 2^-63: its bits - 1 are at least this

// The row's storage bits at elements i..i+3 (0 past the row): x's, or
// round(x + residual) for addRmsNorm (step 0), recomputed where needed
// rather than read back, so that no pass waits for another's stores.
fn h4(row: u32, i: u32) -> vec4<u32> {
  let n = select(0u, min(P.dim - i, 4u), i < P.dim);
  let xs = x_raw4(P.x_off + row * P.x_stride + i, n);
  return xs;
}

// The row's statistics as the common path leaves them: the sum of
// squares, and max|v| and min(|v| - 1) over its widened values (for the
// range check: a zero's |v| - 1 wraps above every other).
struct Fast { sum: u32, hi: u32, lo: u32 }

// Whether the common path holds for the row: every |v| below x_hi (no
// square, lane sum or total can overflow) and zero or at least 2^-63 (no
// square is subnormal), and S in the plain range (no rescue).
fn fast_ok(f: Fast) -> bool { return f.hi < P.x_hi && f.lo >= LOW_X && f.sum >= TINY_SUM; }

// Whether step 4's products stay normal on the common path: |x * inv| in
// [2^-80, 2^41) for every nonzero x, so that with |w'| in [2^-40, 2^40)
// (weight_fits4) every product is normal too.
fn out_fast_ok(f: Fast, inv: u32) -> bool {
  let ei = inv >> 23u;
  return ((f.lo + 1u) >> 23u) + ei >= 174u && (f.hi >> 23u) + ei <= 293u;
}

// Whether the common path holds for four w': each zero or in [2^-40, 2^40).
fn weight_fits4(w: vec4<u32>) -> bool {
  let a = w & vec4<u32>(F32_ABS);
  let e = a >> vec4<u32>(23u);
  return all((a == vec4<u32>(0u)) | ((e >= vec4<u32>(87u)) & (e <= vec4<u32>(166u))));
}
fn w4(i: u32) -> vec4<u32> { return widen_w4(w_raw4(P.w_off + i, min(P.dim - i, 4u))); }

// Step 4 on the common path for four values, from their storage bits (and w').
fn out_fast4(h: vec4<u32>, w: vec4<u32>, inv: vec4<u32>, tinv: vec4<u32>) -> vec4<u32> {
  var v = mul4(widen4(h), inv, tinv);
  v = widen4(narrow4(v));
  v = mul_free4(v, w);
  return narrow4(v);
}

// Step 4 in softfloat for row element i, from its storage bits: x * scale
// (the rescue path's), * inv, then * w'; one multiplication in the loop.
fn out_value(h: u32, i: u32, inv: u32, scale: u32) -> u32 {
  var v = widen(h);
  for (var j = select(1u, 0u, scale != F32_ONE); j < 3u; j = j + 1u) {
    var m = inv;
    if (j == 0u) { m = scale; }
    if (j == 2u) {
      v = widen(narrow(v));
      m = widen_w(w_raw(P.w_off + i));
    }
    v = f32_mul(v, m);
  }
  return narrow(v);
}

// Steps 0 (the residual's store) and 4 for the groups of four of a row
// from group g0 by stride: on the common path where the row (fast) and
// the group's w' allow it, then in softfloat for the groups left, if any.
// Two loops rather than a branch in one: a loop is the branch an adapter
// skips. Each group is stored once, after its values are read (out or the
// residual may be x's own bytes).
fn finish_row(row: u32, g0: u32, stride: u32, fast: bool, inv: u32, scale: u32) {
  let tinv = vec4<u32>(threshold47(inv));
  let inv4 = vec4<u32>(inv);
  let groups = (P.dim + 3u) / 4u;
  var left = !fast;
  if (fast) {
    for (var g = g0; g < groups; g = g + stride) {
      let i = 4u * g;
      let n = min(P.dim - i, 4u);
      let h = h4(row, i);
      let w = w4(i);
      let fits = weight_fits4(w);
      left = left || !fits;
      if (fits) {
        y_put4(P.y_off + row * P.y_stride + i, out_fast4(h, w, inv4, tinv), n);
      }
    }
  }
  for (var g = g0; left && g < groups; g = g + stride) {
    let i = 4u * g;
    if (!fast || !weight_fits4(w4(i))) {
      let n = min(P.dim - i, 4u);
      let h = h4(row, i);
      var y: vec4<u32>;
      for (var k = 0u; k < 4u; k = k + 1u) { y[k] = out_value(h[k], i + k, inv, scale); }
      y_put4(P.y_off + row * P.y_stride + i, y, n);
    }
  }
}

// Step 1's term in softfloat: (x * scale) squared, one multiplication in the loop.
fn square_of(h: u32, scale: u32) -> u32 {
  var x = widen(h);
  for (var j = select(1u, 0u, scale != F32_ONE); j < 2u; j = j + 1u) { x = f32_mul(x, select(x, scale, j == 0u)); }
  return x;
}

// Steps 2 and 3 an operation at a time, for the loops below that hold
// one softfloat operation each: (a, b, op) of inv step 1 (S / dim), 2
// (+ eps), 3 (the root) or 4 (one over it), from S and the last step's result.
fn inv_step(step: u32, sum: u32, inv: u32, eps: u32) -> vec3<u32> {
  if (step == 1u) { return vec3<u32>(sum, P.dim_f32, 2u); }
  if (step == 2u) { return vec3<u32>(inv, eps, 1u); }
  if (step == 3u) { return vec3<u32>(inv, 0u, 3u); }
  return vec3<u32>(F32_ONE, inv, 2u);
}

// One softfloat operation: op 1 an addition, 2 a division, 3 a root (of a).
fn f32_op(op: u32, a: u32, b: u32) -> u32 {
  var r: u32;
  if (op == 1u) {
    r = f32_add(a, b);
  } else if (op == 2u) {
    r = f32_div(a, b);
  } else {
    r = f32_sqrt(a);
  }
  return r;
}

// Steps 1 to 3 in softfloat for a whole row in one invocation, on
// x * scale (with no sum asked for, steps 2 and 3 alone from S = given).
// Returns (S, inv). Every softfloat operation of it sits in one loop that
// holds one addition, one division and one root (an adapter compiles a
// copy of a softfloat operation at each call): a round adds a value's
// square to its lane, a node of the block's fold, or a pending block sum
// to the one being merged, or takes an inv step.
fn general_row(row: u32, scale: u32, eps: u32, sum_it: bool, given: u32) -> vec2<u32> {
  let blocks = select(0u, (P.dim + 255u) / 256u, sum_it);
  var sums: Pairwise;
  var t: array<u32, 31>;
  var h = vec4<u32>(0u);
  var block = 0u; // blocks begun
  var i = 0u; // the block's next value, to end
  var end = 0u;
  var j = 15u; // the fold's next node (15: no block being folded)
  // The sum being merged (over n blocks; n 0 for the final merge of
  // everything), then S; the inv step next (0 while S is summed; 1 S / dim,
  // 2 + eps, 3 the root, 4 one over it, 5 done) and the last step's result.
  var total = given;
  var n = 0u;
  var merging = false;
  var step = select(1u, 0u, sum_it);
  var inv = 0u;
  loop {
    var op = 1u; // 1 an addition, 2 a division, 3 a root
    var a = 0u;
    var b = 0u;
    var into = 0u; // the result to a lane (0), a fold node (1), the sum being merged (2), the inv step (3)
    if (i < end) {
      if ((i & 3u) == 0u) { h = h4(row, i); }
      a = t[i & 15u];
      b = square_of(h[i & 3u], scale);
    } else if (j < 15u) {
      a = t[FOLD_A[j]];
      b = t[FOLD_B[j]];
      into = 1u;
    } else if (merging) {
      // Merged while the stack's top covers as many blocks (all of it at the end).
      if (pairwise_merge(&sums, n)) {
        sums.depth = sums.depth - 1u;
        a = sums.stack[sums.depth];
        b = total;
        into = 2u;
      } else {
        merging = false;
        if (n != 0u) { pairwise_store(&sums, total, n); } else { step = 1u; }
        continue;
      }
    } else if (step == 0u) {
      if (block < blocks) {
        for (var k = 0u; k < 16u; k = k + 1u) { t[k] = 0u; }
        i = block * 256u;
        end = min(P.dim, i + 256u);
        j = 0u;
        block = block + 1u;
      } else {
        // The pending sums added from the top down, the last (smallest) first.
        sums.depth = sums.depth - 1u;
        total = sums.stack[sums.depth];
        n = 0u;
        merging = true;
      }
      continue;
    } else {
      if (step == 5u) { break; }
      into = 3u;
      let o = inv_step(step, total, inv, eps);
      a = o.x;
      b = o.y;
      op = o.z;
    }
    let r = f32_op(op, a, b);
    if (into == 0u) {
      t[i & 15u] = r;
      i = i + 1u;
    } else if (into == 1u) {
      t[16u + j] = r;
      j = j + 1u;
      if (j == 15u) {
        total = t[30];
        n = 1u;
        merging = true;
      }
    } else if (into == 2u) {
      total = r;
      n = n * 2u;
    } else {
      inv = r;
      step = step + 1u;
    }
  }
  return vec2<u32>(total, inv);
}

// The rescue path's 2^k from max|x| (src/kernels/common.h), and eps * 2^k * 2^k;
// scale 1 when the plain result stands (no finite nonzero max, or eps * 4^k overflows).
fn rescue_of(top: u32) -> vec2<u32> {
  if (top == 0u || top >= F32_INF) { return vec2<u32>(F32_ONE, P.eps); }
  let k = clamp(127 - i32(top >> 23u), -126, 126); // subnormals: exponent field 0
  let s2 = u32(k + 127) << 23u;
  var eps = P.eps;
  for (var j = 0u; j < 2u; j = j + 1u) { eps = f32_mul(eps, s2); }
  if (eps > FLT_MAX) { return vec2<u32>(F32_ONE, P.eps); }
  return vec2<u32>(s2, eps);
}

fn plain_ok(sum: u32, inv: u32) -> bool { return sum >= TINY_SUM && sum <= FLT_MAX && inv != 0u; }

// Steps 2 and 3 from the common path's S if it holds; else steps 1 to 3
// in softfloat, plainly, then on x * 2^k (the rescue path) when S or
// ms + eps left the safe range and the row is finite and not all zeros
// (in one invocation: rows that need it are rare). Returns (inv, scale,
// whether step 4 takes the common path).
fn row_result(row: u32, f: Fast) -> vec3<u32> {
  var sum = f.sum;
  var scale = F32_ONE;
  var eps = P.eps;
  var inv = 0u;
  var fast = fast_ok(f);
  for (var attempt = select(1u, 0u, fast); attempt < 3u; attempt = attempt + 1u) {
    let g = general_row(row, scale, eps, attempt > 0u, sum);
    sum = g.x;
    inv = g.y;
    if (attempt == 0u) {
      if (inv != 0u) { break; }
      fast = false;
    } else if (attempt == 1u) {
      if (plain_ok(sum, inv)) { break; }
      let r = rescue_of(f.hi);
      if (r.x == F32_ONE) { break; }
      scale = r.x;
      eps = r.y;
    }
  }
  return vec3<u32>(inv, scale, select(0u, 1u, fast && out_fast_ok(f, inv)));
}

const ROWS: u32 = 16u;
const BLOCKS_AT_ONCE: u32 = 1u;
var<workgroup> lanes: array<vec4<u32>, 64>;
var<workgroup> block_sums: array<u32, 16>;
var<workgroup> row_hi: array<atomic<u32>, ROWS>;
var<workgroup> row_lo: array<atomic<u32>, ROWS>;
// Each row's S (inv once done), scale, eps and state (0 the common path's
// S, 1 softfloat next, 2 the rescue pass next, 3 done), whether step 4
// takes the common path, and the common path's statistics.
var<workgroup> row_stats: array<vec4<u32>, ROWS>;
var<workgroup> row_fast: array<u32, ROWS>;
var<workgroup> row_ok: array<Fast, ROWS>;
var<workgroup> pending: atomic<u32>;
var<workgroup> pending_now: u32;

// What the rows of the workgroup still need (bit 0 softfloat, bit 1 the
// rescue pass), the same in every invocation. Uniform control flow.
fn pending_all(tid: u32) -> u32 {
  workgroupBarrier();
  if (tid == 0u) { pending_now = atomicLoad(&pending); }
  return workgroupUniformLoad(&pending_now);
}

// Steps 1 to 3 in softfloat for the rows in state `want`, on x * their
// scale: each lane group as on the common path, a lane at a time (state
// 0: steps 2 and 3 alone, from the common path's S). The team leader
// then folds each block's lanes, adds the block sums pairwise as they
// come, and makes the total and inv, all through one loop that holds one
// addition, one division and one root: an adapter compiles a copy of a
// softfloat operation at each call, and the leader's share is a sixteenth
// of the row's additions. Called in uniform control flow (it holds the
// workgroup's barriers).
fn general_pass(row: u32, member: u32, tid: u32, want: u32, live: bool) {
  let team = tid / TEAM;
  // (State 0 is the team leader's own, just written: it alone reads it.)
  let leads = live && member == 0u;
  var s = vec4<u32>(0u);
  if (want != 0u || leads) { s = row_stats[team]; }
  let mine = live && s.w == want;
  let blocks = select((P.dim + 255u) / 256u, 0u, want == 0u);
  let lane = member & 3u;
  // The leader's state from chunk to chunk: the sum being merged (of n
  // blocks; n 0 while it is the total), whether it is yet to be stored,
  // S, the inv step next (0 while S is summed; 1 S / dim, 2 + eps, 3 the
  // root, 4 one over it, 5 done) and the last step's result.
  var sums: Pairwise;
  var merged = 0u;
  var n = 0u;
  var holding = false;
  var sum = s.x;
  var step = 0u;
  var inv = 0u;
  // (With no blocks, one round: the leader's steps 2 and 3 alone.)
  for (var c = 0u; c == 0u || c * BLOCKS_AT_ONCE < blocks; c = c + 1u) {
    let summing = c * BLOCKS_AT_ONCE < blocks;
    if (summing) {
      let block = c * BLOCKS_AT_ONCE + (member >> 2u);
      var acc = vec4<u32>(0u);
      if (mine && block < blocks) {
        let end = min(P.dim, block * 256u + 256u);
        for (var i = block * 256u + 4u * lane; i < end; i = i + 16u) {
          let h = h4(row, i);
          for (var k = 0u; k < 4u; k = k + 1u) { acc[k] = f32_add(acc[k], square_of(h[k], s.y)); }
        }
      }
      lanes[tid] = acc;
      workgroupBarrier();
    }
    if (mine && member == 0u) {
      let first = c * BLOCKS_AT_ONCE;
      let count = min(BLOCKS_AT_ONCE, blocks - min(first, blocks));
      let last = first + BLOCKS_AT_ONCE >= blocks;
      var k = 0u; // the chunk's blocks begun
      var j = 15u; // the fold's next node (15: no block being folded)
      var t: array<u32, 31>;
      loop {
        // One operation a round: op 1 an addition, 2 a division, 3 a root;
        // its result goes to a fold node (0), the sum being merged (1) or
        // the inv step (2).
        var op = 1u;
        var a = 0u;
        var b = 0u;
        var into = 0u;
        if (j < 15u) {
          a = t[FOLD_A[j]];
          b = t[FOLD_B[j]];
        } else if (holding) {
          if (pairwise_merge(&sums, n)) {
            sums.depth = sums.depth - 1u;
            a = sums.stack[sums.depth];
            b = merged;
            into = 1u;
          } else {
            holding = false;
            if (n != 0u) {
              pairwise_store(&sums, merged, n);
            } else {
              sum = merged;
              step = 1u;
            }
            continue;
          }
        } else if (k < count) {
          // Block k's 16 lane sums: lane group g is member 4k + g's.
          for (var q = 0u; q < 16u; q = q + 1u) { t[q] = lanes[tid + 4u * k + (q >> 2u)][q & 3u]; }
          j = 0u;
          k = k + 1u;
          continue;
        } else if (!last) {
          break;
        } else if (step == 0u && want != 0u) {
          // The pending sums added from the top down, the last (smallest)
          // first: one more merge, of everything.
          sums.depth = sums.depth - 1u;
          merged = sums.stack[sums.depth];
          n = 0u;
          holding = true;
          continue;
        } else {
          step = max(step, 1u);
          if (step == 5u) { break; }
          into = 2u;
          let o = inv_step(step, sum, inv, s.z);
          a = o.x;
          b = o.y;
          op = o.z;
        }
        let r = f32_op(op, a, b);
        if (into == 0u) {
          t[16u + j] = r;
          j = j + 1u;
          if (j == 15u) {
            merged = t[30];
            n = 1u;
            holding = true;
          }
        } else if (into == 1u) {
          merged = r;
          n = n * 2u;
        } else {
          inv = r;
          step = step + 1u;
        }
      }
    }
    if (summing) { workgroupBarrier(); }
  }
  if (mine && member == 0u) {
    var next = vec4<u32>(inv, s.y, s.z, 3u);
    if (want == 0u) {
      // The common path's S: its inv, unless ms + eps overflows.
      if (inv == 0u) {
        next = vec4<u32>(sum, s.y, s.z, 1u);
        row_fast[team] = 0u;
        atomicOr(&pending, 1u);
      } else {
        row_fast[team] = select(0u, 1u, out_fast_ok(row_ok[team], inv));
      }
    } else if (want == 1u && !plain_ok(sum, inv)) {
      let r = rescue_of(atomicLoad(&row_hi[team]));
      if (r.x != F32_ONE) {
        next = vec4<u32>(inv, r.x, r.y, 2u);
        atomicOr(&pending, 2u);
      }
    }
    row_stats[team] = next;
  }
}

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) tid: u32) {
  let team = tid / TEAM;
  let member = tid % TEAM;
  let row = (wid.x + wid.y * P.groups_x) * ROWS + team;
  let live = row < P.rows;
  if (member == 0u) {
    atomicStore(&row_hi[team], 0u);
    atomicStore(&row_lo[team], 0xffffffffu);
  }
  if (tid == 0u) { atomicStore(&pending, 0u); } // (the chunk loop's barriers order these stores before any use)
  // Step 1 on the common path: this invocation's lane group of
  // BLOCKS_AT_ONCE blocks at a time, folded by block, pushed in order.
  let blocks = (P.dim + 255u) / 256u;
  let lane = member & 3u;
  var sums: Pairwise;
  var hi = vec4<u32>(0u);
  var lo = vec4<u32>(0xffffffffu);
  for (var c = 0u; c * BLOCKS_AT_ONCE < blocks; c = c + 1u) {
    let block = c * BLOCKS_AT_ONCE + (member >> 2u);
    var acc = vec4<u32>(0u);
    if (live && block < blocks) {
      let end = min(P.dim, block * 256u + 256u);
      for (var i = block * 256u + 4u * lane; i < end; i = i + 16u) {
        let x = widen4(h4(row, i));
        let a = x & vec4<u32>(F32_ABS);
        hi = max(hi, a);
        lo = min(lo, a - vec4<u32>(1u));
        acc = add_pos4(acc, square4(x));
      }
    }
    lanes[tid] = acc;
    workgroupBarrier();
    if (lane == 0u) { block_sums[tid >> 2u] = fold_fast(lanes[tid], lanes[tid + 1u], lanes[tid + 2u], lanes[tid + 3u]); }
    workgroupBarrier();
    if (live && member == 0u) {
      for (var k = 0u; k < BLOCKS_AT_ONCE && c * BLOCKS_AT_ONCE + k < blocks; k = k + 1u) {
        pairwise_push_fast(&sums, block_sums[(tid >> 2u) + k]);
      }
    }
  }
  atomicMax(&row_hi[team], max(max(hi.x, hi.y), max(hi.z, hi.w)));
  atomicMin(&row_lo[team], min(min(lo.x, lo.y), min(lo.z, lo.w)));
  workgroupBarrier();
  if (live && member == 0u) {
    let f = Fast(pairwise_total_fast(&sums), atomicLoad(&row_hi[team]), atomicLoad(&row_lo[team]));
    let ok = fast_ok(f);
    // The common path's inv is made by general_pass(0u) below, with the others.
    row_stats[team] = vec4<u32>(f.sum, F32_ONE, P.eps, select(1u, 0u, ok));
    row_fast[team] = select(0u, 1u, ok);
    row_ok[team] = f;
    if (!ok) { atomicOr(&pending, 1u); }
  }
  // Steps 2 and 3 from the common path's S; then steps 1 to 3 in softfloat
  // for the rows that need it (1), and the rescue pass (2) for those whose
  // S or ms + eps left the safe range.
  for (var want = 0u; want < 3u; want = want + 1u) {
    if (want != 0u && (pending_all(tid) & want) == 0u) { break; }
    general_pass(row, member, tid, want, live);
  }
  workgroupBarrier();
  let s = row_stats[team];
  let fast = row_fast[team] != 0u;
  if (!live) { return; }
  finish_row(row, member, TEAM, fast, s.x, s.y);
}
