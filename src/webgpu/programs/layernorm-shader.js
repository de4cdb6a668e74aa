// The WGSL of the LayerNorm kernel (float32 storage), written for one
// variant of a call (which of weight, bias, out, mean and rstd it has, and
// which binding each role lives in): the numbers of
// src/kernels/f32-layernorm/layernorm_f32.h step by step, each float32
// operation one of ../wgsl/softfloat.js. One invocation normalizes a row of up
// to one block, a workgroup a longer row (one invocation on a long row may
// outlast a driver's watchdog: lavapipe stopped one of 16,385 values
// part-way). Each of the contract's blocked sums (S1, then E1 and E2) runs
// in the order of RMSNorm's step 1 (../wgsl/reduction.js): 16 lanes of each
// 256-value block, the fixed fold, the block sums pairwise; the steps from
// the sums to the statistics are the reducer's. E1 and E2 take a pass each
// rather than sharing one: every sum has its own lanes either way, so the
// bits are the same. x - y is computed as x + (-y), which IEEE defines it
// to be. Each softfloat operation is called at one site a loop
// (docs/webgpu.md, the compile-size rule).
import { DTYPE } from '../../loader/abi.js';
import { PAIRWISE_WGSL, reduceBlocks, reducerVars, reducerWgsl } from '../wgsl/reduction.js';
import { COMMON_WGSL, entryPoint, roleAccess, shaderHead, WORKGROUP_SIZE } from '../wgsl/wgsl.js';

/** The uniform block, in u32 slots. */
export const LAYERNORM_PARAMS = ['rows', 'dim', 'dim_f32', 'eps', 'groups_x',
  'x_off', 'x_stride', 'w_off', 'b_off', 'y_off', 'y_stride', 'm_off', 's_off', 'pad0', 'pad1', 'pad2'];

/** Rows up to this long take an invocation each, longer ones a workgroup. */
export const LAYERNORM_SERIAL_DIM = 256;

const F32 = DTYPE.float32.code;
/** The reducer's last step (stat_step below). */
const LAST_STEP = 10;

/**
 * The shader of one LayerNorm variant: { serial (an invocation a row, else
 * a workgroup a row), bindings: [{ access, atomic, words }] (binding 1 on),
 * roles: { x, weight, bias, out, mean, rstd } each { binding } or null }.
 */
export function layerNormShader(v) {
  const { roles } = v;
  let access = '';
  const role = (name, r, writes) => {
    if (r !== null) access += roleAccess(name, r.binding, v.bindings[r.binding - 1].atomic, F32, false, writes, v.bindings[r.binding - 1].words);
  };
  role('x', roles.x, false);
  role('w', roles.weight, false);
  role('b', roles.bias, false);
  role('y', roles.out, true);
  role('m', roles.mean, true);
  role('s', roles.rstd, true);
  // Step 6 and 7's operations on a value after x * scale, each (op, operand).
  let stages = `    if (k == 1u) { b = st.mean_hi ^ F32_SIGN; }
    if (k == 2u) { b = st.mean_lo ^ F32_SIGN; }
    if (k == 3u) { op = OP_MUL; b = st.rstd; }
`;
  let count = 4;
  if (roles.weight !== null) stages += `    if (k == ${count++}u) { op = OP_MUL; b = w_raw(P.w_off + i); }\n`;
  if (roles.bias !== null) stages += `    if (k == ${count++}u) { b = b_raw(P.b_off + i); }\n`;
  return `${shaderHead(LAYERNORM_PARAMS, v.bindings)}
${access}
${COMMON_WGSL}${PAIRWISE_WGSL}${reducerWgsl(LAST_STEP + 1, 4)}
// An addition or a multiplication: the per-value operations' one call.
fn f32_addmul(op: u32, a: u32, b: u32) -> u32 {
  if (op == OP_MUL) { return f32_mul(a, b); }
  return f32_add(a, b);
}

// The sum being made (S1, E1, E2: its term) and what its steps read: the
// rescue path's scale (1 on the plain path), mean_hi, E1.
const TERM_S1: u32 = 0u;
const TERM_E1: u32 = 1u;
const TERM_E2: u32 = 2u;
var<private> ln_term: u32;
var<private> ln_scale: u32;
var<private> ln_mean_hi: u32;
var<private> ln_e1: u32;

// Term i added to its lane's sum acc, an operation a round: z_i = x_i *
// scale (on the rescue path), e_i = z_i - mean_hi (E1, E2), e_i * e_i (E2),
// then into the lane.
fn term_into(acc: u32, x: u32) -> u32 {
  var v = x;
  for (var k = 0u; k < 4u; k = k + 1u) {
    if ((k == 0u && ln_scale == F32_ONE) || (k == 1u && ln_term == TERM_S1) || (k == 2u && ln_term != TERM_E2)) { continue; }
    var op = OP_MUL;
    var a = v;
    var b = v;
    if (k == 0u) { b = ln_scale; }
    if (k == 1u) {
      op = OP_ADD;
      b = ln_mean_hi ^ F32_SIGN;
    }
    if (k == 3u) {
      op = OP_ADD;
      a = acc;
    }
    v = f32_addmul(op, a, b);
  }
  return v;
}

// A variance below zero (not -0, not NaN) is zero (the contract's step 4).
fn clamped(variance: u32) -> u32 {
  let mag = variance & F32_ABS;
  return select(variance, 0u, (variance & F32_SIGN) != 0u && mag != 0u && mag <= F32_INF);
}

// The reducer's steps after each sum: after S1, mean_hi = S1 / dim (res[1]);
// after E2, steps 4 and 5 (mean_lo = E1 / dim, E2 / dim, mean_lo^2, the
// variance, + eps, its root, rstd: res[1..8)) and the outputs' mean =
// (mean_hi + mean_lo) / scale and rstd * scale (res[8..${LAST_STEP + 1})).
fn stat_step(s: u32, steps: ptr<function, Steps>, eps: u32) -> Round {
  let res = *steps;
  if (ln_term == TERM_S1 && s == 1u) { return Round(OP_DIV, res[0], P.dim_f32); }
  if (ln_term != TERM_E2 || s > ${LAST_STEP}u) { return Round(ROUND_DONE, 0u, 0u); }
  if (s == 1u) { return Round(OP_DIV, ln_e1, P.dim_f32); }
  if (s == 2u) { return Round(OP_DIV, res[0], P.dim_f32); }
  if (s == 3u) { return Round(OP_MUL, res[1], res[1]); }
  if (s == 4u) { return Round(OP_ADD, res[2], res[3] ^ F32_SIGN); }
  if (s == 5u) { return Round(OP_ADD, clamped(res[4]), eps); }
  if (s == 6u) { return Round(OP_SQRT, res[5], 0u); }
  if (s == 7u) { return Round(OP_DIV, F32_ONE, res[6]); }
  if (s == 8u) { return Round(OP_ADD, ln_mean_hi, res[1]); }
  if (s == 9u) { return Round(OP_DIV, res[8], ln_scale); }
  return Round(OP_MUL, res[7], ln_scale);
}

// A row's statistics, and whether the plain result stands.
struct Stats { mean_hi: u32, mean_lo: u32, rstd: u32, mean_out: u32, rstd_out: u32, ok: u32 }
fn stats_of(s1: u32, res: Steps) -> Stats {
  let e2 = res[0];
  let rstd = res[7];
  let ok = (s1 & F32_ABS) <= FLT_MAX && e2 >= TINY_SUM && e2 <= FLT_MAX && rstd != 0u;
  return Stats(ln_mean_hi, res[1], rstd, res[9], res[10], select(0u, 1u, ok));
}

// Steps 6 and 7 for element i of a row: x * scale, - mean_hi, - mean_lo,
// * rstd, then * w and + b where the call has them, an operation a round.
fn out_value(x: u32, i: u32, st: Stats) -> u32 {
  var v = x;
  for (var k = select(1u, 0u, ln_scale != F32_ONE); k < ${count}u; k = k + 1u) {
    var op = OP_ADD;
    var b = ln_scale;
    if (k == 0u) { op = OP_MUL; }
${stages}    v = f32_addmul(op, v, b);
  }
  return v;
}

// Steps 6 and 7 for a row, its elements shared out from first_lane by stride.
fn finish_row(row: u32, st: Stats, first_lane: u32, stride: u32) {
${roles.out !== null ? `  let xb = P.x_off + row * P.x_stride;
  let yb = P.y_off + row * P.y_stride;
  for (var i = first_lane; i < P.dim; i = i + stride) { y_put(yb + i, out_value(x_raw(xb + i), i, st)); }
` : '  _ = row;\n  _ = st;\n'}  if (first_lane != 0u) { return; }
${roles.mean !== null ? '  m_put(P.m_off + row, st.mean_out);\n' : ''}${roles.rstd !== null ? '  s_put(P.s_off + row, st.rstd_out);\n' : ''}}

${v.serial ? serialEntry() : workgroupEntry()}`;
}

/** Steps 1 to 5 of a row: its three blocked sums in a loop, each by
 * `sum` (WGSL, the reducer's results), read where `lead` (a WGSL condition) holds;
 * `share(name)`, the WGSL that gives every invocation that value. */
function rowStats(name, params, sum, lead, share) {
  return `fn ${name}(xb: u32, scale: u32, eps: u32${params}) -> Stats {
  ln_scale = scale;
  var s1 = 0u;
  var st: Stats;
  for (var term = TERM_S1; term <= TERM_E2; term = term + 1u) {
    ln_term = term;
    let res = ${sum};
    if (${lead} && term == TERM_S1) {
      s1 = res[0];
      ln_mean_hi = res[1];
    } else if (${lead} && term == TERM_E1) {
      ln_e1 = res[0];
    } else if (${lead}) {
      st = stats_of(s1, res);
    }
${share('ln_mean_hi')}  }
${share('st')}  return st;
}`;
}

/** Steps 1 to 7 of a row: the statistics by `stats` (WGSL, a call of
 * rowStats'), then on the rescue path if they fail, from max|x| by `top`. */
function rowSteps(stats, top, first, stride) {
  return `  let xb = P.x_off + row * P.x_stride;
  var scale = F32_ONE;
  var eps = P.eps;
  var st: Stats;
  for (var attempt = 0u; attempt < 2u; attempt = attempt + 1u) {
    st = ${stats};
    if (st.ok != 0u || attempt == 1u) { break; }
${top}    let rescue = rescue_of(top);
    if (rescue.x == F32_ONE) { break; }
    scale = rescue.x;
    eps = rescue.y;
  }
  finish_row(row, st, ${first}, ${stride});
`;
}

function serialEntry() {
  return `// The contract's blocked sum of the term over the row in one
// invocation, and the reducer's steps after it.
fn blocked_sum(xb: u32, eps: u32) -> Steps {
  let blocks = blocks_of(P.dim);
${reducerVars('  ', 'r', '0u', 'true')}  var block = 0u;
${reduceBlocks('  ', 'r', 'eps', 'block == blocks', 'true', `    for (var k = 0u; k < LANES; k = k + 1u) { r_t[k] = 0u; }
    let end = min(P.dim, block * BLOCK + BLOCK);
    for (var i = block * BLOCK; i < end; i = i + 1u) { r_t[i % LANES] = term_into(r_t[i % LANES], x_raw(xb + i)); }
    block = block + 1u;
`)}  return r_res;
}

${rowStats('row_stats', '', 'blocked_sum(xb, eps)', 'true', () => '')}

${entryPoint(`  let row = group * ${WORKGROUP_SIZE}u + tid;
  if (row >= P.rows) { return; }
${rowSteps('row_stats(xb, scale, eps)', `    var top = 0u;
    for (var i = 0u; i < P.dim; i = i + 1u) { top = max(top, x_raw(xb + i) & F32_ABS); }
`, '0u', '1u')}`)}`;
}

function workgroupEntry() {
  return `const W: u32 = ${WORKGROUP_SIZE}u;
const BLOCKS_AT_ONCE: u32 = ${WORKGROUP_SIZE / 16}u;
var<workgroup> lanes: array<u32, ${WORKGROUP_SIZE}>;
var<workgroup> max_abs: atomic<u32>;
var<workgroup> top_abs: u32;
var<workgroup> wg_ln_mean_hi: u32;
var<workgroup> wg_st: Stats;

// The contract's blocked sum of the term on the workgroup: invocation t
// owns lane t % LANES of block t / LANES of each pass, and invocation 0
// folds the blocks, adds their sums pairwise as they come and takes the
// reducer's steps. Uniform control flow.
fn wg_blocked_sum(xb: u32, eps: u32, tid: u32) -> Steps {
  let blocks = blocks_of(P.dim);
${reducerVars('  ', 'r', '0u', 'true')}  for (var p = 0u; p * BLOCKS_AT_ONCE < blocks; p = p + 1u) {
    let block = p * BLOCKS_AT_ONCE + tid / LANES;
    var acc = 0u;
    if (block < blocks) {
      let end = min(P.dim, block * BLOCK + BLOCK);
      for (var i = block * BLOCK + tid % LANES; i < end; i = i + LANES) { acc = term_into(acc, x_raw(xb + i)); }
    }
    lanes[tid] = acc;
    workgroupBarrier();
    if (tid == 0u) {
      let count = min(BLOCKS_AT_ONCE, blocks - p * BLOCKS_AT_ONCE);
      let last = (p + 1u) * BLOCKS_AT_ONCE >= blocks;
      var k = 0u; // the pass's blocks begun
${reduceBlocks('      ', 'r', 'eps', 'last && k == count', 'k < count', `          for (var q = 0u; q < LANES; q = q + 1u) { r_t[q] = lanes[k * LANES + q]; }
          k = k + 1u;
`)}    }
    workgroupBarrier();
  }
  return r_res;
}

${rowStats('wg_row_stats', ', tid: u32', 'wg_blocked_sum(xb, eps, tid)', 'tid == 0u', (name) => `    if (tid == 0u) { wg_${name} = ${name}; }
    ${name} = workgroupUniformLoad(&wg_${name});
`)}

${entryPoint(`  let row = group;
  if (row >= P.rows) { return; }
${rowSteps('wg_row_stats(xb, scale, eps, tid)', `    if (tid == 0u) { atomicStore(&max_abs, 0u); }
    workgroupBarrier();
    var m = 0u;
    for (var i = tid; i < P.dim; i = i + W) { m = max(m, x_raw(xb + i) & F32_ABS); }
    atomicMax(&max_abs, m);
    workgroupBarrier();
    if (tid == 0u) { top_abs = atomicLoad(&max_abs); }
    let top = workgroupUniformLoad(&top_abs);
`, 'tid', 'W')}`)}`;
}
