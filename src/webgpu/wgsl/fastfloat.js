// The common path of the kernels' float32 arithmetic, in WGSL: the same
// bits as ./softfloat.js (round to nearest even) for operands and results
// in the normal range, branch-free. A row whose values leave that range is
// computed by ./softfloat.js instead (the shaders check the range first,
// ./programs/rmsnorm-shader.js).
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
// both vary (mul_free) it is read off the native result's exponent:
// field(native) - (field(a) + field(b) - 127) is c, except when RD's
// significand is all ones and the native result rounded up into the next
// binade (c = 0 but the difference is 1, and the native significand is
// 0); then P is just below 2^47, so lo = P mod 2^32 >= 2^31, while the one
// other case with that difference and significand 0 (c = 1, P just above
// 2^47) has lo < 2^24. A difference of 2 is c = 1 rounded up into the next
// binade.
//
// Each operation is written for one value; the shaders call its vec4
// twin (named with a 4), which makes the four lanes one after the other.
// (A software adapter runs a vec4 as four SIMD registers: an operation's
// temporaries for four lanes at once outnumber a CPU's registers and
// spill, where a lane at a time does not. docs/webgpu.md has the figures.)
export const FASTFLOAT_WGSL = /* wgsl */ `
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
`;
