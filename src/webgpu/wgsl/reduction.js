// The contract's blocked sum in WGSL (src/kernels/f32-rmsnorm/rmsnorm_f32.h,
// step 1), written once for every shader: a block's 16 lane sums folded in
// a fixed tree, the block sums added pairwise as they come. Two forms: the
// common path's (./fastfloat.js's add_pos, for non-negative lane sums in
// its range), and the reducer, softfloat one operation a round, which also
// takes the program's steps from the sum to the row's statistics.
//
// Why one operation a round: an adapter compiles a copy of a softfloat
// operation at each call site (docs/webgpu.md, the compile-size rule), so
// the reducer asks its caller for one operation at a time, and the caller's
// loop does it through its one call of f32_op.

/** The fold and the pairwise stack, shared by both forms. */
export const PAIRWISE_WGSL = `
// t[0..LANES): a block's lane sums; node k of the fold is
// t[LANES + k] = t[FOLD_A[k]] + t[FOLD_B[k]]; v_j is t[18 + 3j] =
// (L_j + L_{j+4}) + (L_{j+8} + L_{j+12}); the block, t[FOLD_ROOT], is
// (v_0 + v_2) + (v_1 + v_3).
const FOLD_NODES: u32 = 15u;
const FOLD_ROOT: u32 = 30u;
const FOLD_A = array<u32, 15>(0u, 8u, 16u, 1u, 9u, 19u, 2u, 10u, 22u, 3u, 11u, 25u, 18u, 21u, 28u);
const FOLD_B = array<u32, 15>(4u, 12u, 17u, 5u, 13u, 20u, 6u, 14u, 23u, 7u, 15u, 26u, 24u, 27u, 29u);
// Block sums added pairwise as they come: a stack of partial sums, each
// over a power of two of blocks, merged while the top covers as many.
struct Pairwise { stack: array<u32, 32>, sizes: array<u32, 32>, depth: u32 }
// Whether a sum over n blocks merges with the stack's top next (n 0: the
// final merge, of everything left, the last (smallest) first).
fn pairwise_merge(p: ptr<function, Pairwise>, n: u32) -> bool {
  return (*p).depth != 0u && (n == 0u || (*p).sizes[(*p).depth - 1u] == n);
}
fn pairwise_store(p: ptr<function, Pairwise>, s: u32, n: u32) {
  (*p).stack[(*p).depth] = s;
  (*p).sizes[(*p).depth] = n;
  (*p).depth = (*p).depth + 1u;
}
`;

/** The common path's fold and pairwise sum, with add_pos. */
export const FAST_SUMS_WGSL = `
// The fold on lane groups L0..L3 (lanes 0-3, 4-7, 8-11, 12-15): v = (L0 + L1) + (L2 + L3) lane-wise,
// the block (v_0 + v_2) + (v_1 + v_3). A loop over the lanes, so that
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
`;

// The softfloat operations a round may ask for, by code, and each's call.
const OPS = [
  { name: 'OP_ADD', call: 'f32_add(a, b)' },
  { name: 'OP_DIV', call: 'f32_div(a, b)' },
  { name: 'OP_SQRT', call: 'f32_sqrt(a)' },
  { name: 'OP_MUL', call: 'f32_mul(a, b)' },
];

/**
 * The reducer, for a program whose steps after the sum fill `slots`
 * results (slot 0 is the sum): it declares `stat_step(step, res, eps) ->
 * Round`, which gives the step's operation (from res) or ROUND_DONE. With it,
 * f32_op(op, a, b) over the first `ops` operations of OPS (3: add, div,
 * root; 4: and mul), the one place a shader's loop does them.
 */
export function reducerWgsl(slots, ops) {
  let codes = '';
  let body = '';
  for (let k = 0; k < ops; k++) {
    codes += `const ${OPS[k].name}: u32 = ${k + 1}u;\n`;
    body += k === ops - 1 ? `  return ${OPS[k].call};\n` : `  if (op == ${OPS[k].name}) { return ${OPS[k].call}; }\n`;
  }
  return `
// A round's operation (f32_op), or what the reducer asks of its caller instead.
${codes}const ROUND_AGAIN: u32 = 8u; // its state moved without an operation: ask again
const ROUND_BLOCK: u32 = 9u; // the next block's lane sums, in t[0..LANES), then j = 0
const ROUND_DONE: u32 = 10u; // the sum and the program's steps are made
struct Round { op: u32, a: u32, b: u32 }
fn f32_op(op: u32, a: u32, b: u32) -> u32 {
${body}}

// Where the round's result goes: a node of the block's fold, the sum being
// merged (over n blocks; n 0 for the final merge of everything), or the
// program's step.
const INTO_FOLD: u32 = 0u;
const INTO_MERGE: u32 = 1u;
const INTO_STEP: u32 = 2u;
// The reducer's state is four variables of its caller (reducerVars): its
// scalars (a Reducer), the block's lanes and fold nodes t (t[0..LANES) the
// lanes, t[LANES + k] node k), the steps' results (a Steps: res[0] the
// sum, res[k] step k's), and the pairwise stack (a variable of its own:
// a pointer argument names a whole variable, and pairwise_merge takes it by
// one).
alias Fold = array<u32, 31>;
alias Steps = array<u32, ${slots}>;
struct Reducer {
  j: u32, // the fold's next node (FOLD_NODES: no block being folded)
  merged: u32,
  n: u32,
  holding: bool, // whether merged is yet to be stored
  step: u32, // 0 while the sum is made, then the program's step
  into: u32,
}

// A reducer for a sum (summing), or for the steps alone (from res[0]).
fn reducer_new(summing: bool) -> Reducer {
  return Reducer(FOLD_NODES, 0u, 0u, false, select(1u, 0u, summing), INTO_FOLD);
}

// The next round: an operation, or ROUND_AGAIN, ROUND_BLOCK (only while
// more blocks are to come: !last), ROUND_DONE.
fn reduce_next(r: ptr<function, Reducer>, t: ptr<function, Fold>, res: ptr<function, Steps>, sums: ptr<function, Pairwise>, eps: u32, last: bool) -> Round {
  if ((*r).j < FOLD_NODES) {
    (*r).into = INTO_FOLD;
    return Round(OP_ADD, (*t)[FOLD_A[(*r).j]], (*t)[FOLD_B[(*r).j]]);
  }
  if ((*r).holding) {
    if (pairwise_merge(sums, (*r).n)) {
      (*sums).depth = (*sums).depth - 1u;
      (*r).into = INTO_MERGE;
      return Round(OP_ADD, (*sums).stack[(*sums).depth], (*r).merged);
    }
    (*r).holding = false;
    if ((*r).n != 0u) {
      pairwise_store(sums, (*r).merged, (*r).n);
    } else {
      (*res)[0] = (*r).merged;
      (*r).step = 1u;
    }
    return Round(ROUND_AGAIN, 0u, 0u);
  }
  if (!last) { return Round(ROUND_BLOCK, 0u, 0u); }
  if ((*r).step == 0u) {
    // The pending sums added from the top down: one more merge, of everything.
    (*sums).depth = (*sums).depth - 1u;
    (*r).merged = (*sums).stack[(*sums).depth];
    (*r).n = 0u;
    (*r).holding = true;
    return Round(ROUND_AGAIN, 0u, 0u);
  }
  (*r).into = INTO_STEP;
  return stat_step((*r).step, res, eps);
}

// The round's result, where reduce_next said.
fn reduce_take(r: ptr<function, Reducer>, t: ptr<function, Fold>, res: ptr<function, Steps>, v: u32) {
  if ((*r).into == INTO_FOLD) {
    (*t)[LANES + (*r).j] = v;
    (*r).j = (*r).j + 1u;
    if ((*r).j == FOLD_NODES) {
      (*r).merged = (*t)[FOLD_ROOT];
      (*r).n = 1u;
      (*r).holding = true;
    }
  } else if ((*r).into == INTO_MERGE) {
    (*r).merged = v;
    (*r).n = (*r).n * 2u;
  } else {
    (*res)[(*r).step] = v;
    (*r).step = (*r).step + 1u;
  }
}
`;
}

/** The declarations of a reducer's variables, named `name`, name_t,
 * name_res and name_sums, for a sum (`summing`, WGSL) or for the steps
 * alone from name_res[0] = `given`; each line opens with `pad`. */
export function reducerVars(pad, name, given, summing) {
  return `${pad}var ${name} = reducer_new(${summing});
${pad}var ${name}_t: Fold;
${pad}var ${name}_res: Steps;
${pad}var ${name}_sums: Pairwise;
${pad}${name}_res[0] = ${given};
`;
}

/**
 * The loop of a caller whose blocks come whole (the reducer's variables
 * named `r`: reducerVars), its lines opening with `pad`: `load` (WGSL
 * lines, opening with pad too) puts the next block's lane sums in
 * r_t[0..LANES) and is run while `more` holds; `last` says no block is to
 * come after those. Ends when the reducer is done, or wants a block that
 * has not come yet.
 */
export function reduceBlocks(pad, r, eps, last, more, load) {
  return `${pad}loop {
${pad}  let o = reduce_next(&${r}, &${r}_t, &${r}_res, &${r}_sums, ${eps}, ${last});
${pad}  if (o.op == ROUND_BLOCK) {
${pad}    if (!(${more})) { break; }
${load}${pad}    ${r}.j = 0u;
${pad}    continue;
${pad}  }
${pad}  if (o.op == ROUND_DONE) { break; }
${pad}  if (o.op == ROUND_AGAIN) { continue; }
${pad}  reduce_take(&${r}, &${r}_t, &${r}_res, f32_op(o.op, o.a, o.b));
${pad}}
`;
}
