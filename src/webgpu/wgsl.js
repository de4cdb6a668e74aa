// What the WGSL of every kernel shares: the uniform struct and binding
// declarations written from a variant, each role's element accessors, and
// the contract's fixed fold and pairwise sum of block sums
// (src/kernels/f32-rmsnorm/rmsnorm_f32.h, step 1).

/** Invocations a workgroup, in every variant. */
export const WORKGROUP_SIZE = 64;

export function structOf(names) {
  let s = 'struct Params {';
  for (let i = 0; i < names.length; i++) s += ` ${names[i]}: u32,`;
  return `${s} }`;
}

/** WGSL of a binding declaration: its words one by one, atomic, or four
 * (vec4) or two (vec2) at a time, for roles whose groups of four values
 * start on such a boundary (./layout.js, bindingsOf). */
export function bindingDecl(index, b) {
  const type = b.atomic ? 'array<atomic<u32>>' : b.words === 4 ? 'array<vec4<u32>>' : b.words === 2 ? 'array<vec2<u32>>' : 'array<u32>';
  return `@group(0) @binding(${index}) var<storage, ${b.access}> b${index}: ${type};\n`;
}

/**
 * The accessors of one role, named `name`: `${name}_raw(e)` (the storage
 * bits of element e of its binding), `${name}_raw4(e, n)` (elements e..e+3,
 * 0 from the n-th on), and for a role written `${name}_put(e, v)` and
 * `${name}_put4(e, v, n)`. `wide`: float32 storage (one value a word);
 * `pairs`: 16-bit and every group of four starts a word (e even).
 */
export function roleAccess(name, binding, atomic, wide, pairs, writes, words = 1) {
  const b = `b${binding}`;
  if (words > 1) return vectorAccess(name, b, wide, writes);
  const load = (i) => (atomic ? `atomicLoad(&${b}[${i}])` : `${b}[${i}]`);
  const store = (i, v) => (atomic ? `atomicStore(&${b}[${i}], ${v});` : `${b}[${i}] = ${v};`);
  const mask = 'select(vec4<u32>(0u), v, vec4<u32>(0u, 1u, 2u, 3u) < vec4<u32>(n))';
  let code = '';
  if (wide) {
    code += `fn ${name}_raw(e: u32) -> u32 { return ${load('e')}; }
fn ${name}_raw4(e: u32, n: u32) -> vec4<u32> {
  let v = vec4<u32>(${load('e')}, ${load('e + 1u')}, ${load('e + 2u')}, ${load('e + 3u')});
  return ${mask};
}
`;
    if (!writes) return code;
    code += `fn ${name}_put(e: u32, v: u32) { ${store('e', 'v')} }
fn ${name}_put4(e: u32, v: vec4<u32>, n: u32) {
  ${store('e', 'v.x')}
  if (n > 1u) { ${store('e + 1u', 'v.y')} }
  if (n > 2u) { ${store('e + 2u', 'v.z')} }
  if (n > 3u) { ${store('e + 3u', 'v.w')} }
}
`;
    return code;
  }
  code += `fn ${name}_raw(e: u32) -> u32 { return (${load('e >> 1u')} >> ((e & 1u) << 4u)) & 0xffffu; }\n`;
  if (pairs) {
    code += `fn ${name}_raw4(e: u32, n: u32) -> vec4<u32> {
  let w0 = ${load('e >> 1u')};
  let w1 = ${load('(e >> 1u) + 1u')};
  let v = vec4<u32>(w0 & 0xffffu, w0 >> 16u, w1 & 0xffffu, w1 >> 16u);
  return ${mask};
}
`;
  } else {
    code += `fn ${name}_raw4(e: u32, n: u32) -> vec4<u32> {
  let v = vec4<u32>(${name}_raw(e), ${name}_raw(e + 1u), ${name}_raw(e + 2u), ${name}_raw(e + 3u));
  return ${mask};
}
`;
  }
  if (!writes) return code;
  if (atomic) {
    code += `fn ${name}_put(e: u32, v: u32) {
  let shift = (e & 1u) << 4u;
  atomicAnd(&${b}[e >> 1u], ~(0xffffu << shift));
  atomicOr(&${b}[e >> 1u], v << shift);
}
`;
  } else {
    // The word's other half is this invocation's too (pairs), or the caller's, unchanged.
    code += `fn ${name}_put(e: u32, v: u32) {
  let shift = (e & 1u) << 4u;
  ${b}[e >> 1u] = (${b}[e >> 1u] & ~(0xffffu << shift)) | (v << shift);
}
`;
  }
  if (pairs) {
    code += `fn ${name}_put4(e: u32, v: vec4<u32>, n: u32) {
  ${store('e >> 1u', 'v.x | (v.y << 16u)')}
  if (n > 2u) { ${store('(e >> 1u) + 1u', 'v.z | (v.w << 16u)')} }
}
`;
  } else {
    code += `fn ${name}_put4(e: u32, v: vec4<u32>, n: u32) {
  ${name}_put(e, v.x);
  if (n > 1u) { ${name}_put(e + 1u, v.y); }
  if (n > 2u) { ${name}_put(e + 2u, v.z); }
  if (n > 3u) { ${name}_put(e + 3u, v.w); }
}
`;
  }
  return code;
}

/** roleAccess for a binding read a vector at a time: a group of four
 * values is one vec4 of float32 words, or one vec2 of 16-bit pairs. */
function vectorAccess(name, b, wide, writes) {
  const mask = 'select(vec4<u32>(0u), v, vec4<u32>(0u, 1u, 2u, 3u) < vec4<u32>(n))';
  let code;
  if (wide) {
    code = `fn ${name}_raw(e: u32) -> u32 { return ${b}[e >> 2u][e & 3u]; }
fn ${name}_raw4(e: u32, n: u32) -> vec4<u32> {
  let v = ${b}[e >> 2u];
  return ${mask};
}
`;
    if (!writes) return code;
    return `${code}fn ${name}_put(e: u32, v: u32) { ${b}[e >> 2u][e & 3u] = v; }
fn ${name}_put4(e: u32, v: vec4<u32>, n: u32) {
  if (n == 4u) {
    ${b}[e >> 2u] = v;
  } else {
    ${b}[e >> 2u].x = v.x;
    if (n > 1u) { ${b}[e >> 2u].y = v.y; }
    if (n > 2u) { ${b}[e >> 2u].z = v.z; }
  }
}
`;
  }
  code = `fn ${name}_raw(e: u32) -> u32 { return (${b}[e >> 2u][(e >> 1u) & 1u] >> ((e & 1u) << 4u)) & 0xffffu; }
fn ${name}_raw4(e: u32, n: u32) -> vec4<u32> {
  let w = ${b}[e >> 2u];
  let v = vec4<u32>(w.x & 0xffffu, w.x >> 16u, w.y & 0xffffu, w.y >> 16u);
  return ${mask};
}
`;
  if (!writes) return code;
  // The word's other half is this invocation's too: rows start and end on word boundaries.
  return `${code}fn ${name}_put(e: u32, v: u32) {
  let shift = (e & 1u) << 4u;
  let i = (e >> 1u) & 1u;
  ${b}[e >> 2u][i] = (${b}[e >> 2u][i] & ~(0xffffu << shift)) | (v << shift);
}
fn ${name}_put4(e: u32, v: vec4<u32>, n: u32) {
  if (n == 4u) {
    ${b}[e >> 2u] = vec2<u32>(v.x | (v.y << 16u), v.z | (v.w << 16u));
  } else {
    ${b}[e >> 2u].x = v.x | (v.y << 16u);
  }
}
`;
}

/** The contract's fixed fold of a block's 16 lane sums and its pairwise
 * sum of block sums (a binary-counter stack), in softfloat. Each float
 * operation sits in one place: an adapter compiles a copy of a softfloat
 * function at every call (docs/webgpu.md, the cost of a pipeline). */
export const SUMS_WGSL = `
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
`;

/** The same fold and pairwise sum with the common path's add_pos
 * (./fastfloat.js), for non-negative lane sums in its range. */
export const FAST_SUMS_WGSL = `
// The same fold on lane groups L0..L3 (lanes 0-3, 4-7, 8-11, 12-15): v = (L0 + L1) + (L2 + L3) lane-wise.
// The block is (v_0 + v_2) + (v_1 + v_3). A loop over the lanes, so that
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
