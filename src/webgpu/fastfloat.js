// The common path of the kernels' float32 arithmetic, in WGSL: the same
// bits as ./softfloat.js (round to nearest even) for operands and results
// in the normal range, branch-free and four lanes at a time. A row whose
// values leave that range is computed by ./softfloat.js instead (the
// shaders check the range first, ./rmsnorm-shader.js).
//
// Why branch-free: software adapters (SwiftShader, lavapipe) run an
// invocation's lanes on the CPU's SIMD units and execute both sides of a
// branch whenever the lanes disagree; ./softfloat.js's early returns for
// NaN, infinities and zeros then cost on every value.
//
// What a native float operation is trusted with, and why that is enough
// (the WGSL spec, "Floating Point Evaluation"; docs/webgpu.md): one
// multiplication `a * b` of normal f32 operands whose exact product is
// normal. (rmsnorm-shader.js widens float16 subnormals with one native
// subtraction whose exact result is a normal float, by the same argument.)
// WGSL defines that result as "correctly rounded": the exact product when
// it is a float, else one of the two floats next to it, either one (no
// rounding mode is specified). Nothing else is asked of it: the product goes straight to
// bitcast<u32>, so it is the only float operation of its expression
// (nothing for an implementation to reassociate or fuse with), its
// operands come from integers (nothing to fold), no operand or result is
// subnormal (nothing to flush), none is infinite or NaN (the finite-math
// assumption holds), and its sign is not used (a zero's sign may be
// ignored). The integer code below then decides which of the two
// candidates round-to-nearest-even picks, from the low 32 bits of the
// exact product of the significands (a wrapping u32 multiply, exact by
// definition):
//
//   ma, mb in [2^23, 2^24): the significands; P = ma * mb in [2^46, 2^48).
//   c = [P >= 2^47]; k = 23 + c bits are cut; Q = P >> k, R = P mod 2^k.
//   RD, the float below, has bits ((field - 1) << 23) + Q, so RD and Q
//   have the same parity; the native result is RD or RD + 1 (RU, the next
//   bit pattern), so d = (native ^ Q) & 1 tells which. Q's parity is bit
//   k of lo = P mod 2^32, R is lo's low k bits; nearest-even rounds up
//   iff R > 2^(k-1), or R == 2^(k-1) and Q is odd. The result is
//   native - d + up.
//
// c is an integer comparison where one operand is fixed, ma >= ceil(2^47 /
// mb) (threshold47, once a row for inv; a constant for squares). Where
// both vary (mul4_free) it is read off the native result's exponent:
// field(native) - (field(a) + field(b) - 127) is c, except when RD's
// significand is all ones and the native result rounded up into the next
// binade (c = 0 but the difference is 1, and the native significand is
// 0); then P is just below 2^47, so lo = P mod 2^32 >= 2^31, while the one
// other case with that difference and significand 0 (c = 1, P just above
// 2^47) has lo < 2^24. A difference of 2 is c = 1 rounded up into the next
// binade.
export const FASTFLOAT_WGSL = /* wgsl */ `
// F32_SIGN and F32_ABS are softfloat's (SOFTFLOAT_WGSL comes first in every shader).
const F_MANT: u32 = 0x7fffffu;
const F_HIDDEN: u32 = 0x800000u;
// m * m >= 2^47 iff m >= 2^23.5 rounded up.
const SQUARE_CARRY: u32 = 11863284u;

// The nearest-even bits of |a * b| from the native candidate p (the bits of
// |a * b| rounded either way), lo = (ma * mb) mod 2^32 and c = [ma * mb >= 2^47].
fn round_product4(p: vec4<u32>, lo: vec4<u32>, c: vec4<u32>) -> vec4<u32> {
  let q = (lo >> vec4<u32>(23u)) >> c;
  let d = (p ^ q) & vec4<u32>(1u);
  let rest = lo << (vec4<u32>(9u) - c); // R, top-aligned: half is 2^31
  // Up iff R > half, or R == half and Q odd: rest + (Q odd) > half
  // (rest's low bits are 0).
  let up = select(vec4<u32>(0u), vec4<u32>(1u), rest + (q & vec4<u32>(1u)) > vec4<u32>(F32_SIGN));
  return p - d + up;
}

// x * x, for each x zero or normal with a normal square (or zero).
fn square4(x: vec4<u32>) -> vec4<u32> {
  let m = (x & vec4<u32>(F_MANT)) | vec4<u32>(F_HIDDEN);
  let p = bitcast<vec4<u32>>(bitcast<vec4<f32>>(x) * bitcast<vec4<f32>>(x)) & vec4<u32>(F32_ABS);
  let c = select(vec4<u32>(0u), vec4<u32>(1u), m >= vec4<u32>(SQUARE_CARRY));
  // A zero x gives m = 2^23, lo = 2^46 mod 2^32 = 0, p = 0: the result is 0.
  return round_product4(p, m * m, c);
}

// a * b, for a and b each zero or normal, t = threshold47(b), and a normal
// product wherever neither is zero; a zero operand gives a zero of the
// product's sign.
fn mul4(a: vec4<u32>, b: vec4<u32>, t: vec4<u32>) -> vec4<u32> {
  let sign = (a ^ b) & vec4<u32>(F32_SIGN);
  let ma = (a & vec4<u32>(F_MANT)) | vec4<u32>(F_HIDDEN);
  let mb = (b & vec4<u32>(F_MANT)) | vec4<u32>(F_HIDDEN);
  let p = bitcast<vec4<u32>>(bitcast<vec4<f32>>(a) * bitcast<vec4<f32>>(b)) & vec4<u32>(F32_ABS);
  let c = select(vec4<u32>(0u), vec4<u32>(1u), ma >= t);
  let r = round_product4(p, ma * mb, c) | sign;
  return select(r, sign, min(a & vec4<u32>(F32_ABS), b & vec4<u32>(F32_ABS)) == vec4<u32>(0u));
}

// a * b as mul4, for a and b each zero or normal with a normal product
// wherever neither is zero, without a threshold.
fn mul4_free(a: vec4<u32>, b: vec4<u32>) -> vec4<u32> {
  let sign = (a ^ b) & vec4<u32>(F32_SIGN);
  let ma = (a & vec4<u32>(F_MANT)) | vec4<u32>(F_HIDDEN);
  let mb = (b & vec4<u32>(F_MANT)) | vec4<u32>(F_HIDDEN);
  let p = bitcast<vec4<u32>>(bitcast<vec4<f32>>(a) * bitcast<vec4<f32>>(b)) & vec4<u32>(F32_ABS);
  let lo = ma * mb;
  let t = (p >> vec4<u32>(23u)) + vec4<u32>(127u) - ((a >> vec4<u32>(23u)) & vec4<u32>(0xffu)) - ((b >> vec4<u32>(23u)) & vec4<u32>(0xffu));
  let crossed = (t == vec4<u32>(1u)) & ((p & vec4<u32>(F_MANT)) == vec4<u32>(0u)) & (lo >= vec4<u32>(F32_SIGN));
  let c = select(min(t, vec4<u32>(1u)), vec4<u32>(0u), crossed);
  let r = round_product4(p, lo, c) | sign;
  return select(r, sign, min(a & vec4<u32>(F32_ABS), b & vec4<u32>(F32_ABS)) == vec4<u32>(0u));
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
fn add_pos4(a: vec4<u32>, b: vec4<u32>) -> vec4<u32> {
  let x = max(a, b);
  let y = min(a, b);
  let ex = x >> vec4<u32>(23u);
  let mx = ((x & vec4<u32>(F_MANT)) | vec4<u32>(F_HIDDEN)) << vec4<u32>(6u);
  let my = ((y & vec4<u32>(F_MANT)) | vec4<u32>(F_HIDDEN)) << vec4<u32>(6u);
  let d = min(ex - (y >> vec4<u32>(23u)), vec4<u32>(31u));
  let aligned = my >> d;
  let jam = aligned | select(vec4<u32>(1u), vec4<u32>(0u), (aligned << d) == my);
  let sum = mx + jam; // [2^29, 2^31)
  let carry = sum >> vec4<u32>(30u);
  let s = (sum >> carry) | (sum & carry);
  let q = s >> vec4<u32>(6u);
  // Up iff the 6 bits below are past half (0x20), or at half with q odd.
  let up = select(vec4<u32>(0u), vec4<u32>(1u), (s & vec4<u32>(0x3fu)) + (q & vec4<u32>(1u)) > vec4<u32>(0x20u));
  let r = ((ex + carry - vec4<u32>(1u)) << vec4<u32>(23u)) + q + up;
  return select(r, x, y == vec4<u32>(0u));
}

fn add_pos(a: u32, b: u32) -> u32 { return add_pos4(vec4<u32>(a), vec4<u32>(b)).x; }
`;
