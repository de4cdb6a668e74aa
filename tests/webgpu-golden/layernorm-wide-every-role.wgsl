
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

struct Params { rows: u32, dim: u32, dim_f32: u32, eps: u32, groups_x: u32, x_off: u32, x_stride: u32, w_off: u32, b_off: u32, y_off: u32, y_stride: u32, m_off: u32, s_off: u32, pad0: u32, pad1: u32, pad2: u32, }
@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> b1: array<u32>;
@group(0) @binding(2) var<storage, read> b2: array<u32>;
@group(0) @binding(3) var<storage, read> b3: array<u32>;
@group(0) @binding(4) var<storage, read_write> b4: array<u32>;
@group(0) @binding(5) var<storage, read_write> b5: array<u32>;
@group(0) @binding(6) var<storage, read_write> b6: array<u32>;

fn x_raw(e: u32) -> u32 { return b1[e]; }
fn x_raw4(e: u32, n: u32) -> vec4<u32> {
  let v = vec4<u32>(b1[e], b1[e + 1u], b1[e + 2u], b1[e + 3u]);
  return select(vec4<u32>(0u), v, vec4<u32>(0u, 1u, 2u, 3u) < vec4<u32>(n));
}
fn w_raw(e: u32) -> u32 { return b2[e]; }
fn w_raw4(e: u32, n: u32) -> vec4<u32> {
  let v = vec4<u32>(b2[e], b2[e + 1u], b2[e + 2u], b2[e + 3u]);
  return select(vec4<u32>(0u), v, vec4<u32>(0u, 1u, 2u, 3u) < vec4<u32>(n));
}
fn b_raw(e: u32) -> u32 { return b3[e]; }
fn b_raw4(e: u32, n: u32) -> vec4<u32> {
  let v = vec4<u32>(b3[e], b3[e + 1u], b3[e + 2u], b3[e + 3u]);
  return select(vec4<u32>(0u), v, vec4<u32>(0u, 1u, 2u, 3u) < vec4<u32>(n));
}
fn y_raw(e: u32) -> u32 { return b4[e]; }
fn y_raw4(e: u32, n: u32) -> vec4<u32> {
  let v = vec4<u32>(b4[e], b4[e + 1u], b4[e + 2u], b4[e + 3u]);
  return select(vec4<u32>(0u), v, vec4<u32>(0u, 1u, 2u, 3u) < vec4<u32>(n));
}
fn y_put(e: u32, v: u32) { b4[e] = v; }
fn y_put4(e: u32, v: vec4<u32>, n: u32) {
  b4[e] = v.x;
  if (n > 1u) { b4[e + 1u] = v.y; }
  if (n > 2u) { b4[e + 2u] = v.z; }
  if (n > 3u) { b4[e + 3u] = v.w; }
}
fn m_raw(e: u32) -> u32 { return b5[e]; }
fn m_raw4(e: u32, n: u32) -> vec4<u32> {
  let v = vec4<u32>(b5[e], b5[e + 1u], b5[e + 2u], b5[e + 3u]);
  return select(vec4<u32>(0u), v, vec4<u32>(0u, 1u, 2u, 3u) < vec4<u32>(n));
}
fn m_put(e: u32, v: u32) { b5[e] = v; }
fn m_put4(e: u32, v: vec4<u32>, n: u32) {
  b5[e] = v.x;
  if (n > 1u) { b5[e + 1u] = v.y; }
  if (n > 2u) { b5[e + 2u] = v.z; }
  if (n > 3u) { b5[e + 3u] = v.w; }
}
fn s_raw(e: u32) -> u32 { return b6[e]; }
fn s_raw4(e: u32, n: u32) -> vec4<u32> {
  let v = vec4<u32>(b6[e], b6[e + 1u], b6[e + 2u], b6[e + 3u]);
  return select(vec4<u32>(0u), v, vec4<u32>(0u, 1u, 2u, 3u) < vec4<u32>(n));
}
fn s_put(e: u32, v: u32) { b6[e] = v; }
fn s_put4(e: u32, v: vec4<u32>, n: u32) {
  b6[e] = v.x;
  if (n > 1u) { b6[e + 1u] = v.y; }
  if (n > 2u) { b6[e + 2u] = v.z; }
  if (n > 3u) { b6[e + 3u] = v.w; }
}


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

const TINY_SUM: u32 = 0x1f800000u; // 2^-64
const FLT_MAX: u32 = 0x7f7fffffu;

fn f32_sub(a: u32, b: u32) -> u32 { return f32_add(a, b ^ F32_SIGN); }

// z_i: x_i, or x_i * scale on the rescue path.
fn z_at(xb: u32, i: u32, scale: u32) -> u32 {
  let x = x_raw(xb + i);
  if (scale == F32_ONE) { return x; }
  return f32_mul(x, scale);
}

// The term summed for element i: 0 z_i, 1 e_i = z_i - mean_hi, 2 e_i * e_i.
fn term_at(xb: u32, i: u32, scale: u32, mean_hi: u32, term: u32) -> u32 {
  var v = z_at(xb, i, scale);
  if (term != 0u) { v = f32_sub(v, mean_hi); }
  if (term == 2u) { v = f32_mul(v, v); }
  return v;
}

struct Stats { mean_hi: u32, mean_lo: u32, rstd: u32, ok: bool }

// Steps 4 and 5 from the sums, and whether the plain result stands.
fn finish_stats(s1: u32, mean_hi: u32, e1: u32, e2: u32, eps: u32) -> Stats {
  let mean_lo = f32_div(e1, P.dim_f32);
  var variance = f32_sub(f32_div(e2, P.dim_f32), f32_mul(mean_lo, mean_lo));
  let mag = variance & F32_ABS;
  if ((variance & F32_SIGN) != 0u && mag != 0u && mag <= F32_INF) { variance = 0u; } // below zero (not -0, not NaN)
  let rstd = f32_div(F32_ONE, f32_sqrt(f32_add(variance, eps)));
  let ok = (s1 & F32_ABS) <= FLT_MAX && e2 >= TINY_SUM && e2 <= FLT_MAX && rstd != 0u;
  return Stats(mean_hi, mean_lo, rstd, ok);
}

// The rescue path's power of two (RMSNorm's, from max|x|) and eps * 4^k;
// scale 1 when the plain result stands.
fn rescue_of(top: u32) -> vec2<u32> {
  if (top == 0u || top >= F32_INF) { return vec2<u32>(F32_ONE, P.eps); }
  let k = clamp(127 - i32(top >> 23u), -126, 126);
  let s2 = u32(k + 127) << 23u;
  let eps = f32_mul(f32_mul(P.eps, s2), s2);
  if (eps > FLT_MAX) { return vec2<u32>(F32_ONE, P.eps); }
  return vec2<u32>(s2, eps);
}

// Steps 6 and 7 for a row, its elements shared out from first_lane by stride.
fn finish_row(row: u32, st: Stats, scale: u32, first_lane: u32, stride: u32) {
  let xb = P.x_off + row * P.x_stride;
  let yb = P.y_off + row * P.y_stride;
  for (var i = first_lane; i < P.dim; i = i + stride) {
    var v = f32_mul(f32_sub(f32_sub(z_at(xb, i, scale), st.mean_hi), st.mean_lo), st.rstd);
    v = f32_mul(v, w_raw(P.w_off + i));
    v = f32_add(v, b_raw(P.b_off + i));
    y_put(yb + i, v);
  }
  if (first_lane != 0u) { return; }
  m_put(P.m_off + row, f32_div(f32_add(st.mean_hi, st.mean_lo), scale));
  s_put(P.s_off + row, f32_mul(st.rstd, scale));
}

const W: u32 = 64u;
const BLOCKS_AT_ONCE: u32 = 4u;
var<workgroup> lanes: array<u32, 64>;
var<workgroup> block_sums: array<u32, 4>;
var<workgroup> total_sum: u32;
var<workgroup> max_abs: atomic<u32>;
var<workgroup> top_abs: u32;

// The contract's blocked sum of a term on the workgroup: invocation t owns
// lane t mod 16 of block t / 16 of each pass, W / 16 invocations fold a
// block each, and invocation 0 adds the block sums pairwise as they come;
// the total is the same in every invocation. Uniform control flow.
fn wg_blocked_sum(xb: u32, scale: u32, mean_hi: u32, term: u32, tid: u32) -> u32 {
  let blocks = (P.dim + 255u) / 256u;
  var sums: Pairwise;
  for (var p = 0u; p * BLOCKS_AT_ONCE < blocks; p = p + 1u) {
    let block = p * BLOCKS_AT_ONCE + (tid >> 4u);
    var acc = 0u;
    if (block < blocks) {
      let end = min(P.dim, block * 256u + 256u);
      for (var i = block * 256u + (tid & 15u); i < end; i = i + 16u) {
        acc = f32_add(acc, term_at(xb, i, scale, mean_hi, term));
      }
    }
    lanes[tid] = acc;
    workgroupBarrier();
    if (tid < BLOCKS_AT_ONCE) {
      var t: array<u32, 31>;
      for (var k = 0u; k < 16u; k = k + 1u) { t[k] = lanes[tid * 16u + k]; }
      block_sums[tid] = fold_lanes(&t);
    }
    workgroupBarrier();
    if (tid == 0u) {
      for (var k = 0u; k < BLOCKS_AT_ONCE && p * BLOCKS_AT_ONCE + k < blocks; k = k + 1u) {
        pairwise_push(&sums, block_sums[k]);
      }
    }
  }
  if (tid == 0u) { total_sum = pairwise_total(&sums); }
  return workgroupUniformLoad(&total_sum);
}

fn wg_row_stats(xb: u32, scale: u32, eps: u32, tid: u32) -> Stats {
  let s1 = wg_blocked_sum(xb, scale, 0u, 0u, tid);
  let mean_hi = f32_div(s1, P.dim_f32);
  let e1 = wg_blocked_sum(xb, scale, mean_hi, 1u, tid);
  let e2 = wg_blocked_sum(xb, scale, mean_hi, 2u, tid);
  return finish_stats(s1, mean_hi, e1, e2, eps);
}

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) tid: u32) {
  let row = wid.x + wid.y * P.groups_x;
  if (row >= P.rows) { return; }
  let xb = P.x_off + row * P.x_stride;
  var scale = F32_ONE;
  var st = wg_row_stats(xb, F32_ONE, P.eps, tid);
  if (!st.ok) {
    if (tid == 0u) { atomicStore(&max_abs, 0u); }
    workgroupBarrier();
    var m = 0u;
    for (var i = tid; i < P.dim; i = i + W) { m = max(m, x_raw(xb + i) & F32_ABS); }
    atomicMax(&max_abs, m);
    workgroupBarrier();
    if (tid == 0u) { top_abs = atomicLoad(&max_abs); }
    let r = rescue_of(workgroupUniformLoad(&top_abs));
    if (r.x != F32_ONE) {
      scale = r.x;
      st = wg_row_stats(xb, r.x, r.y, tid);
    }
  }
  finish_row(row, st, scale, tid, W);
}
