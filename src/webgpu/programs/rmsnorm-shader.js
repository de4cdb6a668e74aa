// The WGSL of the RMSNorm kernels, written for one variant of a call:
// whether it adds a residual, its dtype, whether it has a weight (and its
// cast mode), which of out and rstd it writes, how many invocations share a
// row, and which binding each role lives in and how it is accessed. A
// variant is specialized, not steered by uniforms: a branch a software
// adapter cannot skip costs on every value, and a smaller shader compiles
// in a fraction of the time (docs/webgpu.md has both figures).
//
// The numbers are those of src/kernels/f32-rmsnorm/rmsnorm_f32.h, step by
// step, in its summation order. Each row runs the common path first
// (./fastfloat.js: a vec4 at a time, branch-free), after checking that
// every value of the row is zero or in the range where that path holds;
// a row that is not, and every row that takes the rescue path, is computed
// by ./softfloat.js operations instead, in the same order. Both give the
// same bits; the branch between them is per row and sits around loops,
// which every adapter skips when no invocation of a SIMD group enters.
//
// Step 1's order: value i of a 256-value block goes to lane i mod 16, and
// an invocation owns four consecutive lanes (a vec4) of a block. A row is
// shared by TEAM invocations: 1 (the row's four lane groups in one
// invocation, no barriers) or 4, 16, 64 (TEAM / 4 blocks at a time, their
// lane sums folded through workgroup memory, the block sums pushed in
// order on the team leader's stack). The fold and the pairwise sum are the
// contract's fixed trees, whatever invocation adds which node.
//
// The weight's step-4 operand w' is w widened to float32, read where it is
// used; with a weight offset, w' = weight_offset + w is made by a prologue
// pass (prologueShader) into a scratch buffer the main pass reads as a
// float32 weight. (A pass costs a dispatch, which on a software adapter is
// the price of a small call: docs/webgpu.md.)
//
// 16-bit values are packed two to a u32 (lower address in the low half).
// Roles whose rows start and end on word boundaries are read and written
// by whole words, each word by the one invocation that owns both values; a
// 16-bit role written that is not has an atomic binding, and its words are
// changed a half at a time (atomicAnd, atomicOr), so that invocations of
// neighbouring rows, or the caller's bytes beside the role, are left as
// they were.
import { FASTFLOAT_WGSL } from '../fastfloat.js';
import { SOFTFLOAT_WGSL } from '../softfloat.js';
import { bindingDecl, FAST_SUMS_WGSL, roleAccess, structOf, SUMS_WGSL, WORKGROUP_SIZE } from '../wgsl.js';

/** The uniform block, in u32 slots (its WGSL struct is written from this list). */
export const PARAMS = ['rows', 'dim', 'dim_f32', 'eps', 'groups_x', 'x_hi',
  'x_off', 'x_stride', 'r_off', 'r_stride', 'y_off', 'y_stride', 's_off', 'w_off', 's_step', 'pad1'];

/** The prologue's uniform block. */
export const PROLOGUE_PARAMS = ['dim', 'w_off', 'weight_offset', 'groups_x'];

// The storage dtypes, a row each by code (src/loader/abi.js): bytes a
// value, one value's widening to float32 bits and narrowing back
// (softfloat: any value), and the same for four values (the common path:
// finite values only), written as widen${suffix}4 and narrow${suffix}4. A
// new dtype is a row here (and its conversions in ../softfloat.js).
const STORAGE = [
  { // float32
    bytes: 4, widen: (h) => h, narrow: (v) => v,
    four: (suffix) => `fn widen${suffix}4(h: vec4<u32>) -> vec4<u32> { return h; }
fn narrow${suffix}4(v: vec4<u32>) -> vec4<u32> { return v; }
`,
  },
  { // bfloat16
    bytes: 2, widen: (h) => `bf16_to_f32(${h})`, narrow: (v) => `f32_to_bf16(${v})`,
    four: (suffix) => `fn widen${suffix}4(h: vec4<u32>) -> vec4<u32> { return h << vec4<u32>(16u); }
fn narrow${suffix}4(a: vec4<u32>) -> vec4<u32> { return (a + vec4<u32>(0x7fffu) + ((a >> vec4<u32>(16u)) & vec4<u32>(1u))) >> vec4<u32>(16u); }
`,
  },
  // float16. A subnormal h = f * 2^-24 is (2^-14 + f * 2^-24) - 2^-14: one
  // native subtraction of normal operands whose exact result, a normal
  // float, is what "correctly rounded" returns (../fastfloat.js says why
  // nothing else can change it).
  {
    bytes: 2, widen: (h) => `f16_to_f32(${h})`, narrow: (v) => `f32_to_f16(${v})`,
    four: (suffix) => `fn widen${suffix}4(h: vec4<u32>) -> vec4<u32> {
  let sign = (h & vec4<u32>(0x8000u)) << vec4<u32>(16u);
  let e = (h >> vec4<u32>(10u)) & vec4<u32>(0x1fu);
  let f = h & vec4<u32>(0x3ffu);
  let normal = ((e + vec4<u32>(112u)) << vec4<u32>(23u)) | (f << vec4<u32>(13u));
  let sub = bitcast<vec4<u32>>(bitcast<vec4<f32>>(vec4<u32>(0x38800000u) | (f << vec4<u32>(13u))) - vec4<f32>(bitcast<f32>(0x38800000u)));
  let tiny = select(sub & vec4<u32>(F32_ABS), vec4<u32>(0u), f == vec4<u32>(0u));
  let special = select(normal, vec4<u32>(F32_INF) | (f << vec4<u32>(13u)), e == vec4<u32>(31u));
  return sign | select(special, tiny, e == vec4<u32>(0u));
}
fn narrow${suffix}4(a: vec4<u32>) -> vec4<u32> {
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
`,
  },
];

/** Storage bits of `dtype` to float32 bits and back, one value and four,
 * named widen${suffix}, narrow${suffix}, widen${suffix}4 and narrow${suffix}4. */
function conversions(dtype, suffix) {
  const row = STORAGE[dtype];
  return `fn widen${suffix}(h: u32) -> u32 { return ${row.widen('h')}; }
fn narrow${suffix}(v: u32) -> u32 { return ${row.narrow('v')}; }
${row.four(suffix)}`;
}

/**
 * The shader of one RMSNorm variant (see the top of this file):
 * { residual, dtype (0 float32, 1 bfloat16, 2 float16), weight (null or
 * { dtype }), gemma, team, bindings: [{ access, atomic, words }] (binding
 * 1 on), roles: { x, residual, weight, out, rstd } each { binding, pairs }
 * or null }.
 */
export function rmsNormShader(v) {
  const { roles } = v;
  const team = v.team;
  const wide = STORAGE[v.dtype].bytes === 4;
  let decls = '';
  for (let i = 0; i < v.bindings.length; i++) decls += bindingDecl(i + 1, v.bindings[i]);
  let access = '';
  const role = (name, r, isWide) => {
    const b = v.bindings[r.binding - 1];
    access += roleAccess(name, r.binding, b.atomic, isWide, r.pairs, name !== 'x' && name !== 'w', b.words);
  };
  role('x', roles.x, wide);
  if (v.weight !== null) role('w', roles.weight, STORAGE[v.weight.dtype].bytes === 4);
  if (roles.residual !== null) role('r', roles.residual, wide);
  if (roles.out !== null) role('y', roles.out, wide);
  if (roles.rstd !== null) role('s', roles.rstd, true);
  const hasResidual = roles.residual !== null;
  const hasOut = roles.out !== null;
  // Llama rounds v to storage before the weight; float32 storage has nothing to round.
  const llamaRound = v.weight !== null && !v.gemma && !wide;
  return `${SOFTFLOAT_WGSL}${FASTFLOAT_WGSL}
${structOf(PARAMS)}
@group(0) @binding(0) var<uniform> P: Params;
${decls}
${access}
${conversions(v.dtype, '')}
${v.weight !== null ? conversions(v.weight.dtype, '_w') : ''}
${SUMS_WGSL}${FAST_SUMS_WGSL}
const TINY_SUM: u32 = 0x1f800000u; // 2^-64
const FLT_MAX: u32 = 0x7f7fffffu;
const TEAM: u32 = ${team}u;
const LOW_X: u32 = 0x1fffffffu; // nonzero |x| >= 2^-63: its bits - 1 are at least this

// The row's storage bits at elements i..i+3 (0 past the row): x's, or
// round(x + residual) for addRmsNorm (step 0), recomputed where needed
// rather than read back, so that no pass waits for another's stores.
fn h4(row: u32, i: u32) -> vec4<u32> {
  let n = select(0u, min(P.dim - i, 4u), i < P.dim);
  let xs = x_raw4(P.x_off + row * P.x_stride + i, n);
${hasResidual ? `  let rs = r_raw4(P.r_off + row * P.r_stride + i, n);
  var h: vec4<u32>;
  for (var k = 0u; k < 4u; k = k + 1u) { h[k] = narrow(f32_add(widen(xs[k]), widen(rs[k]))); }
  return h;` : '  return xs;'}
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

${v.weight !== null ? `// Whether the common path holds for four w': each zero or in [2^-40, 2^40).
fn weight_fits4(w: vec4<u32>) -> bool {
  let a = w & vec4<u32>(F32_ABS);
  let e = a >> vec4<u32>(23u);
  return all((a == vec4<u32>(0u)) | ((e >= vec4<u32>(87u)) & (e <= vec4<u32>(166u))));
}
fn w4(i: u32) -> vec4<u32> { return widen_w4(w_raw4(P.w_off + i, min(P.dim - i, 4u))); }

` : ''}// Step 4 on the common path for four values, from their storage bits (and w').
fn out_fast4(h: vec4<u32>${v.weight !== null ? ', w: vec4<u32>' : ''}, inv: vec4<u32>, tinv: vec4<u32>) -> vec4<u32> {
  var v = mul4(widen4(h), inv, tinv);
${v.weight !== null ? `${llamaRound ? '  v = widen4(narrow4(v));\n' : ''}  v = mul_free4(v, w);` : ''}
  return narrow4(v);
}

// Step 4 in softfloat for row element i, from its storage bits: x * scale
// (the rescue path's), * inv, then * w'; one multiplication in the loop.
fn out_value(h: u32, i: u32, inv: u32, scale: u32) -> u32 {
  var v = widen(h);
  for (var j = select(1u, 0u, scale != F32_ONE); j < ${v.weight !== null ? 3 : 2}u; j = j + 1u) {
${v.weight !== null ? `    var m = inv;
    if (j == 0u) { m = scale; }
    if (j == 2u) {
${llamaRound ? '      v = widen(narrow(v));\n' : ''}      m = widen_w(w_raw(P.w_off + i));
    }` : '    let m = select(inv, scale, j == 0u);'}
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
${hasOut || hasResidual ? `  let tinv = vec4<u32>(threshold47(inv));
  let inv4 = vec4<u32>(inv);
  let groups = (P.dim + 3u) / 4u;
  var left = !fast;
  if (fast) {
    for (var g = g0; g < groups; g = g + stride) {
      let i = 4u * g;
      let n = min(P.dim - i, 4u);
      let h = h4(row, i);
${v.weight !== null ? `      let w = w4(i);
      let fits = weight_fits4(w);
      left = left || !fits;
      if (fits) {
${hasResidual ? '        r_put4(P.r_off + row * P.r_stride + i, h, n);\n' : ''}        y_put4(P.y_off + row * P.y_stride + i, out_fast4(h, w, inv4, tinv), n);
      }
` : `${hasResidual ? '      r_put4(P.r_off + row * P.r_stride + i, h, n);\n' : ''}${hasOut ? '      y_put4(P.y_off + row * P.y_stride + i, out_fast4(h, inv4, tinv), n);\n' : ''}`}    }
  }
  for (var g = g0; left && g < groups; g = g + stride) {
    let i = 4u * g;
${v.weight !== null ? '    if (!fast || !weight_fits4(w4(i))) {\n' : '    {\n'}      let n = min(P.dim - i, 4u);
      let h = h4(row, i);
${hasResidual ? '      r_put4(P.r_off + row * P.r_stride + i, h, n);\n' : ''}${hasOut ? `      var y: vec4<u32>;
      for (var k = 0u; k < 4u; k = k + 1u) { y[k] = out_value(h[k], i + k, inv, scale); }
      y_put4(P.y_off + row * P.y_stride + i, y, n);
` : ''}    }
  }` : '  _ = row;'}
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

${team === 1 ? serialEntry(v) : teamEntry(v)}
`;
}

/** A row an invocation: its lane groups in registers, no barriers. */
function serialEntry(v) {
  return `@compute @workgroup_size(${WORKGROUP_SIZE})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) tid: u32) {
  let row = (wid.x + wid.y * P.groups_x) * ${WORKGROUP_SIZE}u + tid;
  if (row >= P.rows) { return; }
  // Step 1 on the common path: lanes 0-3, 4-7, 8-11, 12-15 of each block.
  let blocks = (P.dim + 255u) / 256u;
  var sums: Pairwise;
  var hi = vec4<u32>(0u);
  var lo = vec4<u32>(0xffffffffu);
  for (var block = 0u; block < blocks; block = block + 1u) {
    // Lane groups a, b, c, d: a is the current group's; after each group
    // they rotate, so that each 16 values bring every group round once.
    // The block's groups are padded to a multiple of four with zeros
    // (which leave a lane as it was): the rotation ends where it began.
    var a = vec4<u32>(0u);
    var b = vec4<u32>(0u);
    var c = vec4<u32>(0u);
    var d = vec4<u32>(0u);
    let end = block * 256u + min(P.dim - block * 256u + 15u, 256u) / 16u * 16u;
    for (var i = block * 256u; i < end; i = i + 4u) {
      let x = widen4(h4(row, i));
      let ax = x & vec4<u32>(F32_ABS);
      hi = max(hi, ax);
      lo = min(lo, ax - vec4<u32>(1u));
      let sum = add_pos4(a, square4(x));
      a = b;
      b = c;
      c = d;
      d = sum;
    }
    pairwise_push_fast(&sums, fold_fast(a, b, c, d));
  }
  let r = row_result(row, Fast(pairwise_total_fast(&sums), max(max(hi.x, hi.y), max(hi.z, hi.w)), min(min(lo.x, lo.y), min(lo.z, lo.w))));
${v.roles.rstd !== null ? '  s_put(P.s_off + row * P.s_step, f32_mul(r.x, r.y));\n' : ''}  finish_row(row, 0u, 1u, r.z != 0u, r.x, r.y);
}`;
}

/** TEAM invocations a row, 64 / TEAM rows a workgroup. A row that needs
 * softfloat is summed by its whole team too: one invocation on a long
 * row can outlast a driver's watchdog (lavapipe stops such a dispatch
 * part-way, leaving wrong results). */
function teamEntry(v) {
  const rowsPerGroup = WORKGROUP_SIZE / v.team;
  return `const ROWS: u32 = ${rowsPerGroup}u;
const BLOCKS_AT_ONCE: u32 = ${v.team / 4}u;
var<workgroup> lanes: array<vec4<u32>, ${WORKGROUP_SIZE}>;
var<workgroup> block_sums: array<u32, ${WORKGROUP_SIZE / 4}>;
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

// Steps 1 to 3 in softfloat for the rows in state \`want\`, on x * their
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

@compute @workgroup_size(${WORKGROUP_SIZE})
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
${v.roles.rstd !== null ? '  if (member == 0u) { s_put(P.s_off + row * P.s_step, f32_mul(s.x, s.y)); }\n' : ''}  finish_row(row, member, TEAM, fast, s.x, s.y);
}`;
}

/** The prologue: w' = weight_offset + widen(w), a value an invocation.
 * `dtype`: the weight's. */
export function prologueShader(dtype) {
  const raw = STORAGE[dtype].bytes === 4 ? 'wb[e]' : '(wb[e >> 1u] >> ((e & 1u) << 4u)) & 0xffffu';
  const widen = STORAGE[dtype].widen('h');
  return `${SOFTFLOAT_WGSL}
${structOf(PROLOGUE_PARAMS)}
@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> wb: array<u32>;
@group(0) @binding(2) var<storage, read_write> wv: array<u32>;

@compute @workgroup_size(${WORKGROUP_SIZE})
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  let j = gid.x + gid.y * P.groups_x * ${WORKGROUP_SIZE}u;
  if (j >= P.dim) { return; }
  let e = P.w_off + j;
  let h = ${raw};
  var w = ${widen};
  wv[j] = f32_add(P.weight_offset, w);
}
`;
}
