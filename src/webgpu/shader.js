// The WGSL of the RMSNorm kernels: one shader for every call. Dtypes, which
// roles (x, residual, weight, out, rstd) a call has and which binding each
// lives in are uniforms, not variants: each pipeline costs seconds to build
// on a software adapter, and a uniform branch costs next to nothing. Roles
// in one GPUBuffer whose bound ranges would overlap share a binding (WebGPU
// forbids a writable binding overlapping another in a dispatch); every
// binding is read_write array<atomic<u32>>, so any role can live in any.
//
// The numbers are those of src/kernels/f32-rmsnorm/rmsnorm_f32.h, step by
// step, in its summation order, with every float32 operation one call of
// ./softfloat.js. One workgroup normalizes one row.
//
// Step 1's order on W invocations: invocation t of a pass owns lane
// (t mod 16) of block (W / 16 * pass + t / 16) and runs that lane's 16 (or
// fewer) additions in index order; W / 16 invocations then fold one block
// each in the contract's fixed tree, and invocation 0 adds the block sums
// pairwise with a binary-counter stack (the tree that splits at the largest
// power of two below n, as src/kernels/f32-rmsnorm/rows.h builds it).
//
// 16-bit values are packed two to a u32 (lower address in the low half). A
// word holding values of two rows, or of the row and a caller's neighbouring
// data, is written by atomically clearing and setting only this row's half,
// so concurrent workgroups never undo each other's halves; words wholly
// inside the row are written whole by the one invocation that owns them.
import { SOFTFLOAT_WGSL } from './softfloat.js';

/** Invocations a workgroup: 16 lanes of 4 blocks at once. */
export const WORKGROUP_SIZE = 64;
const BLOCKS_AT_ONCE = WORKGROUP_SIZE / 16;

/** The bindings after the uniform block: one per distinct buffer range. */
export const SLOTS = 5;

/** Dtype codes of the uniforms (src/loader/abi.js's DTYPE codes); NONE: no weight. */
export const NO_WEIGHT = 3;

/** The uniform block, in u32 slots (its WGSL struct is written from this list). */
export const PARAMS = ['rows', 'dim', 'dim_f32', 'eps', 'weight_offset', 'cast_gemma', 'groups_x',
  'dtype', 'weight_dtype', 'has_residual', 'has_out', 'has_rstd',
  'x_slot', 'r_slot', 'w_slot', 'y_slot', 's_slot',
  'x_off', 'r_off', 'w_off', 'y_off', 's_off', 'pad0', 'pad1'];

const slotCases = (body, slots = SLOTS) => Array.from({ length: slots }, (_, k) => `    case ${k}u: { ${body(`b${k}`)} }`).join('\n');

/** Whole-word loads and stores by binding slot, for a shader of `slots` bindings. */
export const wordAccess = (slots) => `
fn word_ld(slot: u32, i: u32) -> u32 {
  switch slot {
${slotCases((b) => `return atomicLoad(&${b}[i]);`, slots)}
    default: { return 0u; }
  }
}
fn word_st(slot: u32, i: u32, v: u32) {
  switch slot {
${slotCases((b) => `atomicStore(&${b}[i], v);`, slots)}
    default: {}
  }
}
`;

/** The contract's blocked sum, what every kernel shares of it: the fixed
 * fold of a block's 16 lane sums (the index tables: see FOLD_A below), and
 * the block sums added pairwise as they come, on a stack of partial sums
 * each covering a power of two of blocks (a binary counter). */
export const FOLD_WGSL = `
const FOLD_A = array<u32, 15>(0u, 8u, 16u, 1u, 9u, 19u, 2u, 10u, 22u, 3u, 11u, 25u, 18u, 21u, 28u);
const FOLD_B = array<u32, 15>(4u, 12u, 17u, 5u, 13u, 20u, 6u, 14u, 23u, 7u, 15u, 26u, 24u, 27u, 29u);

// t[0..15]: a block's lane sums; t[16..30] the fold's steps; returns t[30].
fn fold_lanes(t: ptr<function, array<u32, 31>>) -> u32 {
  for (var k = 0u; k < 15u; k = k + 1u) { (*t)[16u + k] = f32_add((*t)[FOLD_A[k]], (*t)[FOLD_B[k]]); }
  return (*t)[30];
}

struct Pairwise { stack: array<u32, 32>, sizes: array<u32, 32>, depth: u32 }

fn pairwise_push(p: ptr<function, Pairwise>, block_sum: u32) {
  var s = block_sum;
  var n = 1u;
  loop {
    // Merge while the top of the stack covers as many blocks.
    if ((*p).depth == 0u || (*p).sizes[(*p).depth - 1u] != n) { break; }
    (*p).depth = (*p).depth - 1u;
    s = f32_add((*p).stack[(*p).depth], s);
    n = n * 2u;
  }
  (*p).stack[(*p).depth] = s;
  (*p).sizes[(*p).depth] = n;
  (*p).depth = (*p).depth + 1u;
}

// One pass of a workgroup's blocked sum (the including shader declares the
// workgroup's lanes and block_sums): each invocation's lane sum folded by
// block, the block sums pushed in order by invocation 0. Called in uniform
// control flow: it holds the workgroup's barriers.
fn workgroup_pass(tid: u32, p: u32, blocks: u32, acc: u32, sums: ptr<function, Pairwise>) {
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
      pairwise_push(sums, block_sums[k]);
    }
  }
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
`;

/** WGSL statements: a workgroup's passes over one row's 256-value blocks
 * (each invocation's lane of BLOCKS_AT_ONCE blocks at a time, then
 * workgroup_pass), leaving invocation 0's pending block sums in `sums`.
 * `element` is WGSL that sets `v`, the term summed for row element i. */
export const workgroupBlocks = (element) => `
  let blocks = (P.dim + 255u) / 256u;
  let passes = (blocks + BLOCKS_AT_ONCE - 1u) / BLOCKS_AT_ONCE;
  var sums: Pairwise; // the pending block sums (invocation 0's, in a workgroup)
  for (var p = 0u; p < passes; p = p + 1u) {
    let block = p * BLOCKS_AT_ONCE + (tid >> 4u);
    var acc = 0u;
    if (block < blocks) {
      let end = min(P.dim, block * 256u + 256u);
      for (var i = block * 256u + (tid & 15u); i < end; i = i + 16u) {
        ${element.trim()}
        acc = f32_add(acc, v);
      }
    }
    workgroup_pass(tid, p, blocks, acc, &sums);
  }`;

const ACCESS = `
fn word_ld(slot: u32, i: u32) -> u32 {
  switch slot {
${slotCases((b) => `return atomicLoad(&${b}[i]);`)}
    default: { return 0u; }
  }
}
fn word_st(slot: u32, i: u32, v: u32) {
  switch slot {
${slotCases((b) => `atomicStore(&${b}[i], v);`)}
    default: {}
  }
}
// Half (g & 1) of word g >> 1 set to v, the other half left as it is.
fn half_st(slot: u32, g: u32, v: u32) {
  let shift = (g & 1u) * 16u;
  let i = g >> 1u;
  let keep = ~(0xffffu << shift);
  switch slot {
${slotCases((b) => `atomicAnd(&${b}[i], keep); atomicOr(&${b}[i], v << shift);`)}
    default: {}
  }
}
// The storage bits of element g of a role of dtype code dt.
fn ld(slot: u32, g: u32, dt: u32) -> u32 {
  if (dt == 0u) { return word_ld(slot, g); }
  return (word_ld(slot, g >> 1u) >> ((g & 1u) * 16u)) & 0xffffu;
}
fn st(slot: u32, g: u32, dt: u32, v: u32) {
  if (dt == 0u) { word_st(slot, g, v); } else { half_st(slot, g, v); }
}
// Elements g and g + 1 of a 16-bit role: one whole word when g is even.
fn st2(slot: u32, g: u32, v0: u32, v1: u32) {
  if ((g & 1u) == 0u) { word_st(slot, g >> 1u, v0 | (v1 << 16u)); } else { half_st(slot, g, v0); half_st(slot, g + 1u, v1); }
}
fn widen(bits: u32, dt: u32) -> u32 {
  if (dt == 1u) { return bf16_to_f32(bits); }
  if (dt == 2u) { return f16_to_f32(bits); }
  return bits;
}
fn narrow(v: u32, dt: u32) -> u32 {
  if (dt == 1u) { return f32_to_bf16(v); }
  if (dt == 2u) { return f32_to_f16(v); }
  return v;
}
`;

/** The shader (one for every call). */
export function rmsNormShader() {
  const decls = Array.from({ length: SLOTS },
    (_, k) => `@group(0) @binding(${k + 1}) var<storage, read_write> b${k}: array<atomic<u32>>;`).join('\n');
  return `${SOFTFLOAT_WGSL}
struct Params { ${PARAMS.map((p) => `${p}: u32`).join(', ')} }
@group(0) @binding(0) var<uniform> P: Params;
${decls}
${ACCESS}
const TINY_SUM: u32 = 0x1f800000u; // 2^-64
const FLT_MAX: u32 = 0x7f7fffffu;
const W: u32 = ${WORKGROUP_SIZE}u;
const BLOCKS_AT_ONCE: u32 = ${BLOCKS_AT_ONCE}u;

// The contract's block fold as 15 additions on t[0..31): t[16 + k] =
// t[FOLD_A[k]] + t[FOLD_B[k]]. Lanes are t[0..16); v_j is t[18 + 3j]
// = (L_j + L_{j+4}) + (L_{j+8} + L_{j+12}); the block, t[30], is
// (v_0 + v_2) + (v_1 + v_3). One call site keeps the shader small.
${FOLD_WGSL}
var<workgroup> lanes: array<u32, ${WORKGROUP_SIZE}>;
var<workgroup> block_sums: array<u32, ${BLOCKS_AT_ONCE}>;
var<workgroup> stats: vec2<u32>; // the sum of squares and inv, from invocation 0
var<workgroup> max_abs: atomic<u32>;
var<workgroup> top_abs: u32;

// The storage bits of row element i of the row normalized: x's, or
// round(x + residual) for addRmsNorm (step 0), recomputed where needed
// rather than read back, so that no pass waits for another's stores.
fn src_bits(xb: u32, rb: u32, i: u32) -> u32 {
  let x = ld(P.x_slot, xb + i, P.dtype);
  if (P.has_residual == 0u) { return x; }
  let r = ld(P.r_slot, rb + i, P.dtype);
  return narrow(f32_add(widen(x, P.dtype), widen(r, P.dtype)), P.dtype);
}

// Steps 1 to 3 on x_i * scale: (S, inv), the same in every invocation.
fn row_stats(xb: u32, rb: u32, scale: u32, eps: u32, tid: u32) -> vec2<u32> {${workgroupBlocks(`
        var x = widen(src_bits(xb, rb, i), P.dtype);
        if (scale != F32_ONE) { x = f32_mul(x, scale); }
        let v = f32_mul(x, x);`)}
  if (tid == 0u) {
    let total = pairwise_total(&sums);
    let ms = f32_div(total, P.dim_f32);
    stats = vec2<u32>(total, f32_div(F32_ONE, f32_sqrt(f32_add(ms, eps))));
  }
  return workgroupUniformLoad(&stats);
}

// Step 4 for row element i, from its storage bits.
fn out_value(bits: u32, i: u32, inv: u32, scale: u32) -> u32 {
  var x = widen(bits, P.dtype);
  if (scale != F32_ONE) { x = f32_mul(x, scale); }
  var v = f32_mul(x, inv);
  if (P.weight_dtype != ${NO_WEIGHT}u) {
    var w = widen(ld(P.w_slot, P.w_off + i, P.weight_dtype), P.weight_dtype);
    if ((P.weight_offset & F32_ABS) != 0u) { w = f32_add(P.weight_offset, w); }
    if (P.cast_gemma == 0u) { v = widen(narrow(v, P.dtype), P.dtype); }
    v = f32_mul(v, w);
  }
  return narrow(v, P.dtype);
}

// Steps 4 and 5 for a row, its elements (pairs, for 16-bit storage) shared
// out from first_lane by stride among the invocations writing it.
fn finish_row(row: u32, inv: u32, scale: u32, first_lane: u32, stride: u32) {
  let rowStart = row * P.dim;
  let xb = P.x_off + rowStart;
  let rb = P.r_off + rowStart;
  if (P.has_rstd != 0u && first_lane == 0u) { st(P.s_slot, P.s_off + row, 0u, f32_mul(inv, scale)); }
  if (P.has_out == 0u && P.has_residual == 0u) { return; }
  if (P.dtype == 0u) {
    for (var i = first_lane; i < P.dim; i = i + stride) {
      let bits = src_bits(xb, rb, i);
      if (P.has_residual != 0u) { word_st(P.r_slot, rb + i, bits); }
      if (P.has_out != 0u) { word_st(P.y_slot, P.y_off + rowStart + i, out_value(bits, i, inv, scale)); }
    }
    return;
  }
  // 16-bit: step 4 on word-aligned pairs of the output (or of the residual).
  let first = (select(rb, P.y_off + rowStart, P.has_out != 0u)) & 1u; // 1: the row starts in a word's upper half
  let pairs = (P.dim + first + 1u) / 2u;
  for (var c = first_lane; c < pairs; c = c + stride) {
    let i0 = 2u * c; // row index + first
    var ys = vec2<u32>(0u, 0u);
    var rs = vec2<u32>(0u, 0u);
    for (var h = 0u; h < 2u; h = h + 1u) {
      let k = i0 + h;
      if (k < first || k - first >= P.dim) { continue; }
      let i = k - first;
      let bits = src_bits(xb, rb, i);
      rs[h] = bits;
      if (P.has_out != 0u) { ys[h] = out_value(bits, i, inv, scale); }
    }
    let lo = i0 < first; // the pair starts before the row
    let hi = i0 + 1u - first >= P.dim; // the pair ends after it
    let i = i0 + select(0u, 1u, lo) - first;
    if (!lo && !hi) {
      if (P.has_out != 0u) { st2(P.y_slot, P.y_off + rowStart + i, ys[0], ys[1]); }
      if (P.has_residual != 0u) { st2(P.r_slot, rb + i, rs[0], rs[1]); }
    } else {
      let h = select(0u, 1u, lo);
      if (P.has_out != 0u) { half_st(P.y_slot, P.y_off + rowStart + i, ys[h]); }
      if (P.has_residual != 0u) { half_st(P.r_slot, rb + i, rs[h]); }
    }
  }
}

@compute @workgroup_size(${WORKGROUP_SIZE})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) tid: u32) {
  let row = wid.x + wid.y * P.groups_x;
  if (row >= P.rows) { return; }
  let rowStart = row * P.dim;
  let xb = P.x_off + rowStart;
  let rb = P.r_off + rowStart;
  var inv = 0u;
  var scale = F32_ONE;
  var eps = P.eps;
  // Once plainly; a second time on x * 2^k (the rescue path) when the sum
  // of squares or ms + eps left the safe range and the row is finite and
  // not all zeros, 2^k bringing max|x| into [1, 2).
  for (var attempt = 0u; attempt < 2u; attempt = attempt + 1u) {
    let s = row_stats(xb, rb, scale, eps, tid);
    inv = s.y;
    if (attempt == 1u) { break; }
    if (s.x >= TINY_SUM && s.x <= FLT_MAX && s.y != 0u) { break; }
    if (tid == 0u) { atomicStore(&max_abs, 0u); }
    workgroupBarrier();
    var m = 0u;
    for (var i = tid; i < P.dim; i = i + W) {
      m = max(m, widen(src_bits(xb, rb, i), P.dtype) & F32_ABS);
    }
    atomicMax(&max_abs, m);
    workgroupBarrier();
    if (tid == 0u) { top_abs = atomicLoad(&max_abs); }
    let top = workgroupUniformLoad(&top_abs);
    if (top == 0u || top >= F32_INF) { break; }
    let k = clamp(127 - i32(top >> 23u), -126, 126); // subnormals: exponent field 0
    let s2 = u32(k + 127) << 23u;
    let epsScaled = f32_mul(f32_mul(P.eps, s2), s2);
    if (epsScaled > FLT_MAX) { break; }
    scale = s2;
    eps = epsScaled;
  }
  finish_row(row, inv, scale, tid, W);
}

// Steps 1 to 3 for a whole row in one invocation, in the same order: the
// 16 lanes of each block in registers, no barriers (for rows of one block,
// where a workgroup would mostly wait at them).
fn row_stats_serial(xb: u32, rb: u32, scale: u32, eps: u32) -> vec2<u32> {
  let blocks = (P.dim + 255u) / 256u;
  var sums: Pairwise; // the pending block sums
  for (var block = 0u; block < blocks; block = block + 1u) {
    var t: array<u32, 31>;
    for (var k = 0u; k < 16u; k = k + 1u) { t[k] = 0u; }
    let end = min(P.dim, block * 256u + 256u);
    for (var i = block * 256u; i < end; i = i + 1u) {
      var v = widen(src_bits(xb, rb, i), P.dtype);
      if (scale != F32_ONE) { v = f32_mul(v, scale); }
      t[i & 15u] = f32_add(t[i & 15u], f32_mul(v, v));
    }
    pairwise_push(&sums, fold_lanes(&t));
  }
  let total = pairwise_total(&sums);
  let ms = f32_div(total, P.dim_f32);
  return vec2<u32>(total, f32_div(F32_ONE, f32_sqrt(f32_add(ms, eps))));
}

@compute @workgroup_size(${WORKGROUP_SIZE})
fn main_rows(@builtin(global_invocation_id) gid: vec3<u32>) {
  let row = gid.x + gid.y * P.groups_x * W;
  if (row >= P.rows) { return; }
  let rowStart = row * P.dim;
  let xb = P.x_off + rowStart;
  let rb = P.r_off + rowStart;
  var s = row_stats_serial(xb, rb, F32_ONE, P.eps);
  var scale = F32_ONE;
  if (!(s.x >= TINY_SUM && s.x <= FLT_MAX && s.y != 0u)) {
    var top = 0u;
    for (var i = 0u; i < P.dim; i = i + 1u) { top = max(top, widen(src_bits(xb, rb, i), P.dtype) & F32_ABS); }
    if (top != 0u && top < F32_INF) {
      let k = clamp(127 - i32(top >> 23u), -126, 126);
      let s2 = u32(k + 127) << 23u;
      let epsScaled = f32_mul(f32_mul(P.eps, s2), s2);
      if (epsScaled <= FLT_MAX) {
        s = row_stats_serial(xb, rb, s2, epsScaled);
        scale = s2;
      }
    }
  }
  finish_row(row, s.y, scale, 0u, 1u);
}
`;
}
