// The WGSL of the LayerNorm kernel (float32 storage), written for one
// variant of a call (which of weight, bias, out, mean and rstd it has, and
// which binding each role lives in): the numbers of
// src/kernels/f32-layernorm/layernorm_f32.h step by step, each float32
// operation one call of ./softfloat.js. One invocation normalizes a row of
// up to one block, a workgroup a longer row (one invocation on a long row
// may outlast a driver's watchdog: lavapipe stopped one of 16,385 values
// part-way). Each of the contract's blocked sums (S1, then E1 and E2) runs
// in the order of RMSNorm's step 1: 16 lanes of each 256-value block, the
// fixed fold, the block sums pairwise. E1 and E2 take a pass each rather
// than sharing one: every sum has its own lanes either way, so the bits
// are the same. x - y is computed as x + (-y), which IEEE defines it to be.
import { SOFTFLOAT_WGSL } from '../softfloat.js';
import { bindingDecl, roleAccess, structOf, SUMS_WGSL, WORKGROUP_SIZE } from '../wgsl.js';

/** The uniform block, in u32 slots. */
export const LAYERNORM_PARAMS = ['rows', 'dim', 'dim_f32', 'eps', 'groups_x',
  'x_off', 'x_stride', 'w_off', 'b_off', 'y_off', 'y_stride', 'm_off', 's_off', 'pad0', 'pad1', 'pad2'];

/** Rows up to this long take an invocation each, longer ones a workgroup. */
export const LAYERNORM_SERIAL_DIM = 256;

/**
 * The shader of one LayerNorm variant: { serial (an invocation a row, else
 * a workgroup a row), bindings: [{ access, atomic, words }] (binding 1 on),
 * roles: { x, weight, bias, out, mean, rstd } each { binding } or null }.
 */
export function layerNormShader(v) {
  const { roles } = v;
  let decls = '';
  for (let i = 0; i < v.bindings.length; i++) decls += bindingDecl(i + 1, v.bindings[i]);
  let access = '';
  const role = (name, r, writes) => {
    const b = r === null ? null : v.bindings[r.binding - 1];
    if (r !== null) access += roleAccess(name, r.binding, b.atomic, true, false, writes, b.words);
  };
  role('x', roles.x, false);
  role('w', roles.weight, false);
  role('b', roles.bias, false);
  role('y', roles.out, true);
  role('m', roles.mean, true);
  role('s', roles.rstd, true);
  return `${SOFTFLOAT_WGSL}
${structOf(LAYERNORM_PARAMS)}
@group(0) @binding(0) var<uniform> P: Params;
${decls}
${access}
${SUMS_WGSL}
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
${roles.out !== null ? `  let yb = P.y_off + row * P.y_stride;
  for (var i = first_lane; i < P.dim; i = i + stride) {
    var v = f32_mul(f32_sub(f32_sub(z_at(xb, i, scale), st.mean_hi), st.mean_lo), st.rstd);
${roles.weight !== null ? '    v = f32_mul(v, w_raw(P.w_off + i));\n' : ''}${roles.bias !== null ? '    v = f32_add(v, b_raw(P.b_off + i));\n' : ''}    y_put(yb + i, v);
  }` : '  _ = xb;'}
  if (first_lane != 0u) { return; }
${roles.mean !== null ? '  m_put(P.m_off + row, f32_div(f32_add(st.mean_hi, st.mean_lo), scale));\n' : ''}${roles.rstd !== null ? '  s_put(P.s_off + row, f32_mul(st.rstd, scale));\n' : ''}}

${v.serial ? serialEntry() : workgroupEntry()}
`;
}

function serialEntry() {
  return `// The contract's blocked sum over the row of a term, in one invocation.
fn blocked_sum(xb: u32, scale: u32, mean_hi: u32, term: u32) -> u32 {
  let blocks = (P.dim + 255u) / 256u;
  var sums: Pairwise;
  for (var block = 0u; block < blocks; block = block + 1u) {
    var t: array<u32, 31>;
    for (var k = 0u; k < 16u; k = k + 1u) { t[k] = 0u; }
    let end = min(P.dim, block * 256u + 256u);
    for (var i = block * 256u; i < end; i = i + 1u) {
      t[i & 15u] = f32_add(t[i & 15u], term_at(xb, i, scale, mean_hi, term));
    }
    pairwise_push(&sums, fold_lanes(&t));
  }
  return pairwise_total(&sums);
}

// Steps 1 to 5, and whether the plain result stands.
fn row_stats(xb: u32, scale: u32, eps: u32) -> Stats {
  let s1 = blocked_sum(xb, scale, 0u, 0u);
  let mean_hi = f32_div(s1, P.dim_f32);
  let e1 = blocked_sum(xb, scale, mean_hi, 1u);
  let e2 = blocked_sum(xb, scale, mean_hi, 2u);
  return finish_stats(s1, mean_hi, e1, e2, eps);
}

@compute @workgroup_size(${WORKGROUP_SIZE})
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  let row = gid.x + gid.y * P.groups_x * ${WORKGROUP_SIZE}u;
  if (row >= P.rows) { return; }
  let xb = P.x_off + row * P.x_stride;
  var scale = F32_ONE;
  var st = row_stats(xb, F32_ONE, P.eps);
  if (!st.ok) {
    var top = 0u;
    for (var i = 0u; i < P.dim; i = i + 1u) { top = max(top, x_raw(xb + i) & F32_ABS); }
    let r = rescue_of(top);
    if (r.x != F32_ONE) {
      scale = r.x;
      st = row_stats(xb, r.x, r.y);
    }
  }
  finish_row(row, st, scale, 0u, 1u);
}`;
}

function workgroupEntry() {
  return `const W: u32 = ${WORKGROUP_SIZE}u;
const BLOCKS_AT_ONCE: u32 = ${WORKGROUP_SIZE / 16}u;
var<workgroup> lanes: array<u32, ${WORKGROUP_SIZE}>;
var<workgroup> block_sums: array<u32, ${WORKGROUP_SIZE / 16}>;
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

@compute @workgroup_size(${WORKGROUP_SIZE})
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
}`;
}
