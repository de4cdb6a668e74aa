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
// (../wgsl/fastfloat.js: a vec4 at a time, branch-free), after checking that
// every value of the row is zero or in the range where that path holds;
// a row that is not, and every row that takes the rescue path, is computed
// by ../wgsl/softfloat.js operations instead, in the same order. Both give the
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
//
// With ggml blocks out (v.blocks, a format's code), step 4 makes a block's
// values at a time into a private array, each rounded to the storage
// dtype as a storage out would store it, and the quantizer of
// ../wgsl/blocks.js writes the block's bytes from them: the blocks of a
// row are shared by its team as its groups of four are otherwise, and no
// value goes through memory between.
import { blocksWgsl } from '../wgsl/blocks.js';
import { FASTFLOAT_WGSL } from '../wgsl/fastfloat.js';
import { FAST_SUMS_WGSL, PAIRWISE_WGSL, reduceBlocks, reducerVars, reducerWgsl } from '../wgsl/reduction.js';
import { DTYPE } from '../../loader/abi.js';
import { List } from '../../loader/intrinsics.js';
import { COMMON_WGSL, conversions, entryPoint, roleAccess, shaderHead, STORAGE, WORKGROUP_SIZE } from '../wgsl/wgsl.js';

const F32 = DTYPE.float32.code;
/** The reducer's step whose result is inv (stat_step below). */
const STEP_INV = 4;

/** The uniform block, in u32 slots (its WGSL struct is written from this list). */
export const PARAMS = ['rows', 'dim', 'dim_f32', 'eps', 'groups_x', 'x_hi',
  'x_off', 'x_stride', 'r_off', 'r_stride', 'y_off', 'y_stride', 's_off', 'w_off', 's_step', 'pad1'];

/** The prologue's uniform block. */
export const PROLOGUE_PARAMS = ['dim', 'w_off', 'weight_offset', 'groups_x'];

/**
 * The shader of one RMSNorm variant (see the top of this file):
 * { residual, dtype (0 float32, 1 bfloat16, 2 float16), weight (null or
 * { dtype }), gemma, team, blocks (null, or the code of out's block
 * format), bindings: [{ access, atomic, words }] (binding 1 on), roles: {
 * x, residual, weight, out, rstd } each { binding, pairs } or null }.
 */
export function rmsNormShader(v) {
  const { roles } = v;
  const team = v.team;
  const wide = STORAGE[v.dtype].bytes === 4;
  let access = '';
  const role = (name, r, dtype) => {
    const b = v.bindings[r.binding - 1];
    access += roleAccess(name, r.binding, b.atomic, dtype, r.pairs, name !== 'x' && name !== 'w', b.words);
  };
  role('x', roles.x, v.dtype);
  if (v.weight !== null) role('w', roles.weight, v.weight.dtype);
  if (roles.residual !== null) role('r', roles.residual, v.dtype);
  const blocked = v.blocks !== null;
  if (roles.out !== null && !blocked) role('y', roles.out, v.dtype);
  if (roles.rstd !== null) role('s', roles.rstd, F32);
  const hasResidual = roles.residual !== null;
  // Llama rounds v to storage before the weight; float32 storage has nothing to round.
  const llamaRound = v.weight !== null && !v.gemma && !wide;
  return `${shaderHead(PARAMS, v.bindings, FASTFLOAT_WGSL)}
${access}
${conversions(v.dtype, '')}
${v.weight !== null ? conversions(v.weight.dtype, '_w') : ''}
${COMMON_WGSL}${PAIRWISE_WGSL}${FAST_SUMS_WGSL}${reducerWgsl(STEP_INV + 1, 3)}${blocked ? blocksWgsl(v.blocks, roles.out.binding) : ''}
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

${blocked ? finishBlocks(v) : finishValues(v)}
// Step 1's term in softfloat: (x * scale) squared, one multiplication in the loop.
fn square_of(h: u32, scale: u32) -> u32 {
  var x = widen(h);
  for (var j = select(1u, 0u, scale != F32_ONE); j < 2u; j = j + 1u) { x = f32_mul(x, select(x, scale, j == 0u)); }
  return x;
}

// Steps 2 and 3 (the reducer's steps, ../wgsl/reduction.js): res[1] = S / dim,
// res[2] = res[1] + eps, res[3] its root, res[STEP_INV] = 1 / res[3].
const STEP_INV: u32 = ${STEP_INV}u;
fn stat_step(s: u32, res: ptr<function, Steps>, eps: u32) -> Round {
  let last = (*res)[s - 1u];
  if (s == 1u) { return Round(OP_DIV, last, P.dim_f32); }
  if (s == 2u) { return Round(OP_ADD, last, eps); }
  if (s == 3u) { return Round(OP_SQRT, last, 0u); }
  if (s == STEP_INV) { return Round(OP_DIV, F32_ONE, last); }
  return Round(ROUND_DONE, 0u, 0u);
}

// Steps 1 to 3 in softfloat for a whole row in one invocation, on
// x * scale (with no sum asked for, steps 2 and 3 alone from S = given).
// Returns (S, inv). Its one softfloat operation a round: a value's square
// into its lane, or the reducer's (the block's fold, the pairwise merge,
// an inv step).
fn general_row(row: u32, scale: u32, eps: u32, sum_it: bool, given: u32) -> vec2<u32> {
  let blocks = select(0u, blocks_of(P.dim), sum_it);
${reducerVars('  ', 'r', 'given', 'sum_it')}  var h = vec4<u32>(0u);
  var block = 0u; // blocks begun
  var i = 0u; // the block's next value, to end
  var end = 0u;
  loop {
    var o: Round;
    let lane = i < end;
    if (lane) {
      if ((i & 3u) == 0u) { h = h4(row, i); }
      o = Round(OP_ADD, r_t[i % LANES], square_of(h[i & 3u], scale));
    } else {
      o = reduce_next(&r, &r_t, &r_res, &r_sums, eps, block == blocks);
      if (o.op == ROUND_BLOCK) {
        for (var k = 0u; k < LANES; k = k + 1u) { r_t[k] = 0u; }
        i = block * BLOCK;
        end = min(P.dim, i + BLOCK);
        r.j = 0u; // folded once its lanes are summed: the lanes' rounds come first
        block = block + 1u;
        continue;
      }
      if (o.op == ROUND_DONE) { break; }
      if (o.op == ROUND_AGAIN) { continue; }
    }
    let v = f32_op(o.op, o.a, o.b);
    if (lane) {
      r_t[i % LANES] = v;
      i = i + 1u;
    } else {
      reduce_take(&r, &r_t, &r_res, v);
    }
  }
  return vec2<u32>(r_res[0], r_res[STEP_INV]);
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

/** finish_row for a storage-dtype out (or none: rstd, the residual). */
function finishValues(v) {
  const hasResidual = v.roles.residual !== null;
  const hasOut = v.roles.out !== null;
  return `// Steps 0 (the residual's store) and 4 for the groups of four of a row
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
`;
}

/** finish_row for ggml blocks out: a block of the row at a time, its
 * values made as finishValues makes a group's, into vals. */
function finishBlocks(v) {
  const hasResidual = v.roles.residual !== null;
  return `// Steps 0 (the residual's store) and 4 for the blocks of a row from
// block b0 by stride, then each block's bytes: its groups of four on the
// common path where the row (fast) and the group's w' allow it, then in
// softfloat for the groups left, if any, each group's values into vals
// (widened again from the storage dtype: what the quantizer reads) and
// their |v| range (../wgsl/blocks.js, fast_block), then put_block. Each group is stored once, after its values are read (the
// residual may be x's own bytes).
fn finish_row(row: u32, b0: u32, stride: u32, fast: bool, inv: u32, scale: u32) {
  let tinv = vec4<u32>(threshold47(inv));
  let inv4 = vec4<u32>(inv);
  let blocks = P.dim / BLOCK_VALUES;
  for (var b = b0; b < blocks; b = b + stride) {
    let e0 = b * BLOCK_VALUES;
    var left = !fast;
    var hi = vec4<u32>(0u);
    var lo = vec4<u32>(0xffffffffu);
    for (var i = e0; fast && i < e0 + BLOCK_VALUES; i = i + 4u) {
      let h = h4(row, i);
${v.weight !== null ? `      let w = w4(i);
      let fits = weight_fits4(w);
      left = left || !fits;
      if (fits) {
${hasResidual ? '        r_put4(P.r_off + row * P.r_stride + i, h, 4u);\n' : ''}        let y = widen4(out_fast4(h, w, inv4, tinv));
        for (var k = 0u; k < 4u; k = k + 1u) { vals[i - e0 + k] = y[k]; }
        hi = max(hi, y & vec4<u32>(F32_ABS));
        lo = min(lo, (y & vec4<u32>(F32_ABS)) - vec4<u32>(1u));
      }
` : `${hasResidual ? '      r_put4(P.r_off + row * P.r_stride + i, h, 4u);\n' : ''}      let y = widen4(out_fast4(h, inv4, tinv));
      for (var k = 0u; k < 4u; k = k + 1u) { vals[i - e0 + k] = y[k]; }
      hi = max(hi, y & vec4<u32>(F32_ABS));
      lo = min(lo, (y & vec4<u32>(F32_ABS)) - vec4<u32>(1u));
`}    }
    for (var i = e0; left && i < e0 + BLOCK_VALUES; i = i + 4u) {
${v.weight !== null ? '      if (!fast || !weight_fits4(w4(i))) {\n' : '      {\n'}        let h = h4(row, i);
${hasResidual ? '        r_put4(P.r_off + row * P.r_stride + i, h, 4u);\n' : ''}        var y: vec4<u32>;
        for (var k = 0u; k < 4u; k = k + 1u) {
          y[k] = widen(out_value(h[k], i + k, inv, scale));
          vals[i - e0 + k] = y[k];
        }
        hi = max(hi, y & vec4<u32>(F32_ABS));
        lo = min(lo, (y & vec4<u32>(F32_ABS)) - vec4<u32>(1u));
      }
    }
    put_block(P.y_off + row * P.y_stride + b * BLOCK_BYTES, vec2<u32>(max(max(hi.x, hi.y), max(hi.z, hi.w)), min(min(lo.x, lo.y), min(lo.z, lo.w))));
  }
}
`;
}

/** A row an invocation: its lane groups in registers, no barriers. */
function serialEntry(v) {
  return entryPoint(`  let row = group * ${WORKGROUP_SIZE}u + tid;
  if (row >= P.rows) { return; }
  // Step 1 on the common path: lanes 0-3, 4-7, 8-11, 12-15 of each block.
  let blocks = blocks_of(P.dim);
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
    let end = block * BLOCK + min(P.dim - block * BLOCK + LANES - 1u, BLOCK) / LANES * LANES;
    for (var i = block * BLOCK; i < end; i = i + 4u) {
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
`);
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
// A row's state: its S is the common path's, steps 1 to 3 in softfloat
// are next, the rescue pass is next, or inv is made. A row that needs a
// pass sets its state's bit of \`pending\`.
const STATE_COMMON: u32 = 0u;
const STATE_SOFT: u32 = 1u;
const STATE_RESCUE: u32 = 2u;
const STATE_DONE: u32 = 3u;
// Each row's S (inv once done), scale, eps and state, whether step 4
// takes the common path, and the common path's statistics.
var<workgroup> row_stats: array<vec4<u32>, ROWS>;
var<workgroup> row_fast: array<u32, ROWS>;
var<workgroup> row_ok: array<Fast, ROWS>;
var<workgroup> pending: atomic<u32>;
var<workgroup> pending_now: u32;

// What the rows of the workgroup still need (bits STATE_SOFT and
// STATE_RESCUE), the same in every invocation. Uniform control flow.
fn pending_all(tid: u32) -> u32 {
  workgroupBarrier();
  if (tid == 0u) { pending_now = atomicLoad(&pending); }
  return workgroupUniformLoad(&pending_now);
}

// Steps 1 to 3 in softfloat for the rows in state \`want\`, on x * their
// scale: each lane group as on the common path, a lane at a time
// (STATE_COMMON: steps 2 and 3 alone, from the common path's S). The team
// leader then folds each block's lanes, adds the block sums pairwise as
// they come, and makes the total and inv through the reducer, one
// operation a round (../wgsl/reduction.js; the leader's share is a sixteenth
// of the row's additions). Called in uniform control flow (it holds the
// workgroup's barriers).
fn general_pass(row: u32, member: u32, tid: u32, want: u32, live: bool) {
  let team = tid / TEAM;
  // (STATE_COMMON is the team leader's own, just written: it alone reads it.)
  let leads = live && member == 0u;
  var s = vec4<u32>(0u);
  if (want != STATE_COMMON || leads) { s = row_stats[team]; }
  let mine = live && s.w == want;
  let blocks = select(blocks_of(P.dim), 0u, want == STATE_COMMON);
  let lane = member & 3u;
  // The leader's reducer, from chunk to chunk.
${reducerVars('  ', 'r', 's.x', 'want != STATE_COMMON')}  // (With no blocks, one round: the leader's steps 2 and 3 alone.)
  for (var c = 0u; c == 0u || c * BLOCKS_AT_ONCE < blocks; c = c + 1u) {
    let summing = c * BLOCKS_AT_ONCE < blocks;
    if (summing) {
      let block = c * BLOCKS_AT_ONCE + (member >> 2u);
      var acc = vec4<u32>(0u);
      if (mine && block < blocks) {
        let end = min(P.dim, block * BLOCK + BLOCK);
        for (var i = block * BLOCK + 4u * lane; i < end; i = i + LANES) {
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
      // Block k's 16 lane sums: lane group g is member 4k + g's.
${reduceBlocks('      ', 'r', 's.z', 'last && k == count', 'k < count', `          for (var q = 0u; q < LANES; q = q + 1u) { r_t[q] = lanes[tid + 4u * k + (q >> 2u)][q & 3u]; }
          k = k + 1u;
`)}    }
    if (summing) { workgroupBarrier(); }
  }
  if (mine && member == 0u) {
    let sum = r_res[0];
    let inv = r_res[STEP_INV];
    var next = vec4<u32>(inv, s.y, s.z, STATE_DONE);
    if (want == STATE_COMMON) {
      // The common path's S: its inv, unless ms + eps overflows.
      if (inv == 0u) {
        next = vec4<u32>(sum, s.y, s.z, STATE_SOFT);
        row_fast[team] = 0u;
        atomicOr(&pending, STATE_SOFT);
      } else {
        row_fast[team] = select(0u, 1u, out_fast_ok(row_ok[team], inv));
      }
    } else if (want == STATE_SOFT && !plain_ok(sum, inv)) {
      let rescue = rescue_of(atomicLoad(&row_hi[team]));
      if (rescue.x != F32_ONE) {
        next = vec4<u32>(inv, rescue.x, rescue.y, STATE_RESCUE);
        atomicOr(&pending, STATE_RESCUE);
      }
    }
    row_stats[team] = next;
  }
}

${entryPoint(`  let team = tid / TEAM;
  let member = tid % TEAM;
  let row = group * ROWS + team;
  let live = row < P.rows;
  if (member == 0u) {
    atomicStore(&row_hi[team], 0u);
    atomicStore(&row_lo[team], 0xffffffffu);
  }
  if (tid == 0u) { atomicStore(&pending, 0u); } // (the chunk loop's barriers order these stores before any use)
  // Step 1 on the common path: this invocation's lane group of
  // BLOCKS_AT_ONCE blocks at a time, folded by block, pushed in order.
  let blocks = blocks_of(P.dim);
  let lane = member & 3u;
  var sums: Pairwise;
  var hi = vec4<u32>(0u);
  var lo = vec4<u32>(0xffffffffu);
  for (var c = 0u; c * BLOCKS_AT_ONCE < blocks; c = c + 1u) {
    let block = c * BLOCKS_AT_ONCE + (member >> 2u);
    var acc = vec4<u32>(0u);
    if (live && block < blocks) {
      let end = min(P.dim, block * BLOCK + BLOCK);
      for (var i = block * BLOCK + 4u * lane; i < end; i = i + LANES) {
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
    // The common path's inv is made by general_pass(STATE_COMMON) below, with the others.
    row_stats[team] = vec4<u32>(f.sum, F32_ONE, P.eps, select(STATE_SOFT, STATE_COMMON, ok));
    row_fast[team] = select(0u, 1u, ok);
    row_ok[team] = f;
    if (!ok) { atomicOr(&pending, STATE_SOFT); }
  }
  // Steps 2 and 3 from the common path's S; then steps 1 to 3 in softfloat
  // for the rows that need it, and the rescue pass for those whose S or
  // ms + eps left the safe range.
  for (var want = STATE_COMMON; want < STATE_DONE; want = want + 1u) {
    if (want != STATE_COMMON && (pending_all(tid) & want) == 0u) { break; }
    general_pass(row, member, tid, want, live);
  }
  workgroupBarrier();
  let s = row_stats[team];
  let fast = row_fast[team] != 0u;
  if (!live) { return; }
${v.roles.rstd !== null ? '  if (member == 0u) { s_put(P.s_off + row * P.s_step, f32_mul(s.x, s.y)); }\n' : ''}  finish_row(row, member, TEAM, fast, s.x, s.y);
`)}`;
}

/** The prologue: w' = weight_offset + widen(w), a value an invocation.
 * `dtype`: the weight's. */
export function prologueShader(dtype) {
  const bindings = new List(2);
  bindings[0] = { __proto__: null, access: 'read', atomic: false, words: 1 };
  bindings[1] = { __proto__: null, access: 'read_write', atomic: false, words: 1 };
  return `${shaderHead(PROLOGUE_PARAMS, bindings)}
${roleAccess('w', 1, false, dtype, false, false)}${roleAccess('v', 2, false, F32, false, true)}
${entryPoint(`  let j = group * ${WORKGROUP_SIZE}u + tid;
  if (j >= P.dim) { return; }
  v_put(j, f32_add(P.weight_offset, ${STORAGE[dtype].widen(`w_raw(P.w_off + j)`)}));
`)}`;
}
