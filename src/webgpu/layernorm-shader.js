// The WGSL of the LayerNorm kernel (float32 storage): the numbers of
// src/kernels/f32-layernorm/layernorm_f32.h step by step, each float32
// operation one call of ./softfloat.js. One invocation normalizes a row of
// up to one block, a workgroup a longer row (main_wg), running each of the contract's blocked sums (S1, then E1 and E2) in the
// order of RMSNorm's step 1: 16 lanes of each 256-value block, the fixed
// fold, the block sums pairwise. E1 and E2 take a pass each rather than
// sharing one: every sum has its own lanes either way, so the bits are the
// same. x - y is computed as x + (-y), which IEEE defines it to be.
import { SOFTFLOAT_WGSL } from './softfloat.js';
import { FOLD_WGSL, WORKGROUP_SIZE, wordAccess, workgroupBlocks } from './shader.js';

/** Bindings after the uniform block: x, weight, bias, out, mean, rstd at most. */
export const LAYERNORM_SLOTS = 6;

/** The uniform block, in u32 slots. */
export const LAYERNORM_PARAMS = ['rows', 'dim', 'dim_f32', 'eps', 'groups_x',
  'has_weight', 'has_bias', 'has_out', 'has_mean', 'has_rstd',
  'x_slot', 'w_slot', 'b_slot', 'y_slot', 'm_slot', 's_slot',
  'x_off', 'w_off', 'b_off', 'y_off', 'm_off', 's_off', 'pad0', 'pad1'];

export function layerNormShader() {
  const decls = Array.from({ length: LAYERNORM_SLOTS },
    (_, k) => `@group(0) @binding(${k + 1}) var<storage, read_write> b${k}: array<atomic<u32>>;`).join('\n');
  return `${SOFTFLOAT_WGSL}
struct Params { ${LAYERNORM_PARAMS.map((p) => `${p}: u32`).join(', ')} }
@group(0) @binding(0) var<uniform> P: Params;
${decls}
${wordAccess(LAYERNORM_SLOTS)}
${FOLD_WGSL}
const TINY_SUM: u32 = 0x1f800000u; // 2^-64
const FLT_MAX: u32 = 0x7f7fffffu;

fn f32_sub(a: u32, b: u32) -> u32 { return f32_add(a, b ^ F32_SIGN); }

// z_i: x_i, or x_i * scale on the rescue path.
fn z_at(xb: u32, i: u32, scale: u32) -> u32 {
  let x = word_ld(P.x_slot, xb + i);
  if (scale == F32_ONE) { return x; }
  return f32_mul(x, scale);
}

// The contract's blocked sum over the row of term: 0 z_i, 1 e_i = z_i -
// mean_hi, 2 e_i * e_i.
fn blocked_sum(xb: u32, scale: u32, mean_hi: u32, term: u32) -> u32 {
  let blocks = (P.dim + 255u) / 256u;
  var sums: Pairwise; // the pending block sums
  for (var block = 0u; block < blocks; block = block + 1u) {
    var t: array<u32, 31>;
    for (var k = 0u; k < 16u; k = k + 1u) { t[k] = 0u; }
    let end = min(P.dim, block * 256u + 256u);
    for (var i = block * 256u; i < end; i = i + 1u) {
      var v = z_at(xb, i, scale);
      if (term != 0u) { v = f32_sub(v, mean_hi); }
      if (term == 2u) { v = f32_mul(v, v); }
      t[i & 15u] = f32_add(t[i & 15u], v);
    }
    pairwise_push(&sums, fold_lanes(&t));
  }
  return pairwise_total(&sums);
}

struct Stats { mean_hi: u32, mean_lo: u32, rstd: u32, ok: bool }

// Steps 1 to 5, and whether the plain result stands.
fn row_stats(xb: u32, scale: u32, eps: u32) -> Stats {
  let s1 = blocked_sum(xb, scale, 0u, 0u);
  let mean_hi = f32_div(s1, P.dim_f32);
  let e1 = blocked_sum(xb, scale, mean_hi, 1u);
  let e2 = blocked_sum(xb, scale, mean_hi, 2u);
  return finish_stats(s1, mean_hi, e1, e2, eps);
}

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

@compute @workgroup_size(${WORKGROUP_SIZE})
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  let row = gid.x + gid.y * P.groups_x * ${WORKGROUP_SIZE}u;
  if (row >= P.rows) { return; }
  let rowStart = row * P.dim;
  let xb = P.x_off + rowStart;
  var scale = F32_ONE;
  var st = row_stats(xb, F32_ONE, P.eps);
  if (!st.ok) {
    // The rescue path, with RMSNorm's power of two from max|x|.
    var top = 0u;
    for (var i = 0u; i < P.dim; i = i + 1u) { top = max(top, word_ld(P.x_slot, xb + i) & F32_ABS); }
    if (top != 0u && top < F32_INF) {
      let k = clamp(127 - i32(top >> 23u), -126, 126);
      let s2 = u32(k + 127) << 23u;
      let epsScaled = f32_mul(f32_mul(P.eps, s2), s2);
      if (epsScaled <= FLT_MAX) {
        scale = s2;
        st = row_stats(xb, s2, epsScaled);
      }
    }
  }
  finish_row(row, st, scale, 0u, 1u);
}

// Steps 6 and 7 for a row, its elements shared out from first_lane by stride.
fn finish_row(row: u32, st: Stats, scale: u32, first_lane: u32, stride: u32) {
  let rowStart = row * P.dim;
  let xb = P.x_off + rowStart;
  if (P.has_out != 0u) {
    for (var i = first_lane; i < P.dim; i = i + stride) {
      var v = f32_mul(f32_sub(f32_sub(z_at(xb, i, scale), st.mean_hi), st.mean_lo), st.rstd);
      if (P.has_weight != 0u) { v = f32_mul(v, word_ld(P.w_slot, P.w_off + i)); }
      if (P.has_bias != 0u) { v = f32_add(v, word_ld(P.b_slot, P.b_off + i)); }
      word_st(P.y_slot, P.y_off + rowStart + i, v);
    }
  }
  if (first_lane != 0u) { return; }
  if (P.has_mean != 0u) { word_st(P.m_slot, P.m_off + row, f32_div(f32_add(st.mean_hi, st.mean_lo), scale)); }
  if (P.has_rstd != 0u) { word_st(P.s_slot, P.s_off + row, f32_mul(st.rstd, scale)); }
}

// The same sums on a workgroup, for rows longer than one block (one
// invocation would take too long: drivers stop a dispatch that runs for
// seconds): the lanes and the cascade of the RMSNorm kernel's row_stats
// (./shader.js), the result the same in every invocation.
const W: u32 = ${WORKGROUP_SIZE}u;
const BLOCKS_AT_ONCE: u32 = ${WORKGROUP_SIZE / 16}u;
var<workgroup> lanes: array<u32, ${WORKGROUP_SIZE}>;
var<workgroup> block_sums: array<u32, ${WORKGROUP_SIZE / 16}>;
var<workgroup> total_sum: u32;
var<workgroup> max_abs: atomic<u32>;
var<workgroup> top_abs: u32;

fn wg_blocked_sum(xb: u32, scale: u32, mean_hi: u32, term: u32, tid: u32) -> u32 {${workgroupBlocks(`
        var v = z_at(xb, i, scale);
        if (term != 0u) { v = f32_sub(v, mean_hi); }
        if (term == 2u) { v = f32_mul(v, v); }`)}
  if (tid == 0u) {
    let total = pairwise_total(&sums);
    total_sum = total;
  }
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
fn main_wg(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) tid: u32) {
  let row = wid.x + wid.y * P.groups_x;
  if (row >= P.rows) { return; }
  let rowStart = row * P.dim;
  let xb = P.x_off + rowStart;
  var scale = F32_ONE;
  var eps = P.eps;
  var st: Stats;
  for (var attempt = 0u; attempt < 2u; attempt = attempt + 1u) {
    st = wg_row_stats(xb, scale, eps, tid);
    if (attempt == 1u || st.ok) { break; }
    if (tid == 0u) { atomicStore(&max_abs, 0u); }
    workgroupBarrier();
    var m = 0u;
    for (var i = tid; i < P.dim; i = i + W) { m = max(m, word_ld(P.x_slot, xb + i) & F32_ABS); }
    atomicMax(&max_abs, m);
    workgroupBarrier();
    if (tid == 0u) { top_abs = atomicLoad(&max_abs); }
    let top = workgroupUniformLoad(&top_abs);
    if (top == 0u || top >= F32_INF) { break; }
    let k = clamp(127 - i32(top >> 23u), -126, 126);
    let s2 = u32(k + 127) << 23u;
    let epsScaled = f32_mul(f32_mul(P.eps, s2), s2);
    if (epsScaled > FLT_MAX) { break; }
    scale = s2;
    eps = epsScaled;
  }
  finish_row(row, st, scale, tid, W);
}
`;
}
