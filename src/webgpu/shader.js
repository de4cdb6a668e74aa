// The WGSL of the RMSNorm kernels, generated for one binding layout: which
// roles (x, residual, weight, out, rstd) a call has, their dtypes, and which
// GPU binding each role lives in (roles in one GPUBuffer share a binding:
// WebGPU forbids a writable binding overlapping any other in a dispatch).
//
// The numbers are those of src/kernels/f32-rmsnorm/rmsnorm_f32.h, step by
// step, in its summation order, with every float32 operation one call of
// ./softfloat.js. One workgroup normalizes one row.
//
// Step 1's order on 256 invocations: invocation t of a pass owns lane
// (t mod 16) of block (16 * pass + t / 16) and runs that lane's 16 (or fewer)
// additions in index order; 16 invocations then fold one block each in the
// contract's fixed tree, and invocation 0 adds the block sums pairwise with
// a binary-counter stack (the tree that splits at the largest power of two
// below n, as src/kernels/f32-rmsnorm/rows.h builds it).
//
// 16-bit values are packed two to a u32 (lower address in the low half). A
// word holding values of two rows, or of the row and a caller's neighbouring
// data, is written by atomically clearing and setting only this row's half,
// so concurrent workgroups never undo each other's halves; words wholly
// inside the row are written whole by the one invocation that owns them.
import { SOFTFLOAT_WGSL } from './softfloat.js';

export const WORKGROUP_SIZE = 256;

/** The uniform block, in u32 slots (its WGSL struct is written from this list). */
export const PARAMS = ['rows', 'dim', 'dim_f32', 'eps', 'weight_offset', 'cast_gemma', 'groups_x',
  'x_off', 'r_off', 'w_off', 'y_off', 's_off', 'pad0', 'pad1', 'pad2', 'pad3'];

const WIDEN = { float32: (v) => v, bfloat16: (v) => `bf16_to_f32(${v})`, float16: (v) => `f16_to_f32(${v})` };
const NARROW = { float32: (v) => v, bfloat16: (v) => `f32_to_bf16(${v})`, float16: (v) => `f32_to_f16(${v})` };

function bindingDecl(binding, index) {
  const access = binding.flavour === 'read' ? 'read' : 'read_write';
  const element = binding.flavour === 'atomic' ? 'atomic<u32>' : 'u32';
  return `@group(0) @binding(${index + 1}) var<storage, ${access}> b${index}: array<${element}>;`;
}

/** Load and store functions of one role: `ld_R(g)` gives the storage bits
 * of element g of the role's binding; stores write storage bits. */
function roleAccess(name, role, binding) {
  const b = `b${role.binding}`;
  const atomic = binding.flavour === 'atomic';
  const word = (i) => (atomic ? `atomicLoad(&${b}[${i}])` : `${b}[${i}]`);
  const lines = [];
  if (role.dtype === 'float32') {
    lines.push(`fn ld_${name}(g: u32) -> u32 { return ${word('g')}; }`);
    if (role.writes) {
      lines.push(atomic
        ? `fn st_${name}(g: u32, v: u32) { atomicStore(&${b}[g], v); }`
        : `fn st_${name}(g: u32, v: u32) { ${b}[g] = v; }`);
    }
  } else {
    lines.push(`fn ld_${name}(g: u32) -> u32 { return (${word('g >> 1u')} >> ((g & 1u) * 16u)) & 0xffffu; }`);
    if (role.writes) {
      // Half g & 1 of word g >> 1, the other half left as it is.
      lines.push(`fn st_${name}(g: u32, v: u32) {
  let shift = (g & 1u) * 16u;
  atomicAnd(&${b}[g >> 1u], ~(0xffffu << shift));
  atomicOr(&${b}[g >> 1u], v << shift);
}`);
      // Elements g and g + 1, whole word when g is even.
      lines.push(`fn st2_${name}(g: u32, v0: u32, v1: u32) {
  if ((g & 1u) == 0u) { atomicStore(&${b}[g >> 1u], v0 | (v1 << 16u)); } else { st_${name}(g, v0); st_${name}(g + 1u, v1); }
}`);
    }
  }
  return lines.join('\n');
}

/**
 * The shader for `layout`: { dtype, weightDtype (null: no weight),
 * residual, out, rstd (booleans: the role is present), roles: { x, residual,
 * weight, out, rstd } each { binding, dtype, writes }, bindings: [{ flavour:
 * 'read' | 'rw' | 'atomic' }] }.
 */
export function rmsNormShader(layout) {
  const { dtype, weightDtype, roles, bindings } = layout;
  const widen = WIDEN[dtype];
  const narrow = NARROW[dtype];
  const decls = bindings.map(bindingDecl).join('\n');
  const access = Object.entries(roles).map(([name, role]) => roleAccess(name, role, bindings[role.binding])).join('\n');
  const sixteen = dtype !== 'float32';

  // The storage bits of row element i of the row normalized: x's, or
  // round(x + residual) for addRmsNorm (step 0), recomputed where needed
  // rather than read back, so that no pass waits for another's stores.
  const srcBits = roles.residual
    ? `${narrow(`f32_add(${widen('ld_x(xb + i)')}, ${widen('ld_residual(rb + i)')})`)}`
    : 'ld_x(xb + i)';

  const weightTerm = weightDtype === null ? '' : `
    var wv = ${WIDEN[weightDtype]('ld_weight(P.w_off + i)')};
    if ((P.weight_offset & F32_ABS) != 0u) { wv = f32_add(P.weight_offset, wv); }
    if (P.cast_gemma == 0u) { v = ${widen(narrow('v'))}; }
    v = f32_mul(v, wv);`;

  const storePass = !roles.out && !roles.residual ? '' : sixteen ? `
  // Step 4 on word-aligned pairs of the output (or of the residual).
  let first = (${roles.out ? 'P.y_off' : 'P.r_off'} + rowStart) & 1u; // row index of the first word's upper half
  let pairs = (P.dim + first + 1u) / 2u;
  for (var c = tid; c < pairs; c = c + ${WORKGROUP_SIZE}u) {
    let i0 = 2u * c; // row index + first
    var ys = vec2<u32>(0u, 0u);
    var rs = vec2<u32>(0u, 0u);
    for (var h = 0u; h < 2u; h = h + 1u) {
      let k = i0 + h;
      if (k < first || k - first >= P.dim) { continue; }
      let i = k - first;
      let bits = ${srcBits};
      rs[h] = bits;
${roles.out ? '      ys[h] = out_value(bits, i, inv, scale);' : ''}
    }
    let lo = i0 < first; // the pair starts before the row
    let hi = i0 + 1u - first >= P.dim; // the pair ends after it
    let i = i0 + select(0u, 1u, lo) - first;
    if (!lo && !hi) {
${roles.out ? '      st2_out(P.y_off + rowStart + i, ys[0], ys[1]);' : ''}
${roles.residual ? '      st2_residual(P.r_off + rowStart + i, rs[0], rs[1]);' : ''}
    } else {
      let h = select(0u, 1u, lo);
${roles.out ? '      st_out(P.y_off + rowStart + i, ys[h]);' : ''}
${roles.residual ? '      st_residual(P.r_off + rowStart + i, rs[h]);' : ''}
    }
  }` : `
  for (var i = tid; i < P.dim; i = i + ${WORKGROUP_SIZE}u) {
    let bits = ${srcBits};
${roles.residual ? '    st_residual(P.r_off + rowStart + i, bits);' : ''}
${roles.out ? '    st_out(P.y_off + rowStart + i, out_value(bits, i, inv, scale));' : ''}
  }`;

  return `${SOFTFLOAT_WGSL}
struct Params { ${PARAMS.map((p) => `${p}: u32`).join(', ')} }
@group(0) @binding(0) var<uniform> P: Params;
${decls}
${access}

const TINY_SUM: u32 = 0x1f800000u; // 2^-64
const FLT_MAX: u32 = 0x7f7fffffu;

var<workgroup> lanes: array<u32, ${WORKGROUP_SIZE}>;
var<workgroup> block_sums: array<u32, 16>;
var<workgroup> stats: vec2<u32>; // the sum of squares and inv, from invocation 0
var<workgroup> max_abs: atomic<u32>;
var<workgroup> top_abs: u32;

fn src_bits(xb: u32, rb: u32, i: u32) -> u32 { return ${srcBits}; }

// Steps 1 to 3 on x_i * scale: (S, inv), the same in every invocation.
fn row_stats(xb: u32, rb: u32, scale: u32, eps: u32, tid: u32) -> vec2<u32> {
  let blocks = (P.dim + 255u) / 256u;
  let passes = (blocks + 15u) / 16u;
  var stack: array<u32, 32>; // invocation 0's pending block sums
  var sizes: array<u32, 32>; // and how many blocks each covers
  var depth = 0u;
  for (var p = 0u; p < passes; p = p + 1u) {
    let block = p * 16u + (tid >> 4u);
    var acc = 0u;
    if (block < blocks) {
      let end = min(P.dim, block * 256u + 256u);
      for (var i = block * 256u + (tid & 15u); i < end; i = i + 16u) {
        var v = ${widen('src_bits(xb, rb, i)')};
        if (scale != F32_ONE) { v = f32_mul(v, scale); }
        acc = f32_add(acc, f32_mul(v, v));
      }
    }
    lanes[tid] = acc;
    workgroupBarrier();
    if (tid < 16u) {
      let l = tid * 16u;
      let v0 = f32_add(f32_add(lanes[l], lanes[l + 4u]), f32_add(lanes[l + 8u], lanes[l + 12u]));
      let v1 = f32_add(f32_add(lanes[l + 1u], lanes[l + 5u]), f32_add(lanes[l + 9u], lanes[l + 13u]));
      let v2 = f32_add(f32_add(lanes[l + 2u], lanes[l + 6u]), f32_add(lanes[l + 10u], lanes[l + 14u]));
      let v3 = f32_add(f32_add(lanes[l + 3u], lanes[l + 7u]), f32_add(lanes[l + 11u], lanes[l + 15u]));
      block_sums[tid] = f32_add(f32_add(v0, v2), f32_add(v1, v3));
    }
    workgroupBarrier();
    if (tid == 0u) {
      for (var k = 0u; k < 16u && p * 16u + k < blocks; k = k + 1u) {
        var s = block_sums[k];
        var n = 1u;
        while (depth > 0u && sizes[depth - 1u] == n) {
          depth = depth - 1u;
          s = f32_add(stack[depth], s);
          n = n * 2u;
        }
        stack[depth] = s;
        sizes[depth] = n;
        depth = depth + 1u;
      }
    }
  }
  if (tid == 0u) {
    depth = depth - 1u;
    var total = stack[depth];
    while (depth > 0u) {
      depth = depth - 1u;
      total = f32_add(stack[depth], total);
    }
    let ms = f32_div(total, P.dim_f32);
    stats = vec2<u32>(total, f32_div(F32_ONE, f32_sqrt(f32_add(ms, eps))));
  }
  return workgroupUniformLoad(&stats);
}

// Step 4 for row element i, from its storage bits.
fn out_value(bits: u32, i: u32, inv: u32, scale: u32) -> u32 {
  var x = ${widen('bits')};
  if (scale != F32_ONE) { x = f32_mul(x, scale); }
  var v = f32_mul(x, inv);${weightTerm}
  return ${narrow('v')};
}

@compute @workgroup_size(${WORKGROUP_SIZE})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) tid: u32) {
  let row = wid.x + wid.y * P.groups_x;
  if (row >= P.rows) { return; }
  let rowStart = row * P.dim;
  let xb = P.x_off + rowStart;
  let rb = P.r_off + rowStart;
  let plain = row_stats(xb, rb, F32_ONE, P.eps, tid);
  var inv = plain.y;
  var scale = F32_ONE;
  if (!(plain.x >= TINY_SUM && plain.x <= FLT_MAX && inv != 0u)) {
    // The rescue path: redo the row on x * 2^k, 2^k bringing max|x| into
    // [1, 2), if the row is finite and not all zeros.
    if (tid == 0u) { atomicStore(&max_abs, 0u); }
    workgroupBarrier();
    var m = 0u;
    for (var i = tid; i < P.dim; i = i + ${WORKGROUP_SIZE}u) {
      m = max(m, ${widen('src_bits(xb, rb, i)')} & F32_ABS);
    }
    atomicMax(&max_abs, m);
    workgroupBarrier();
    if (tid == 0u) { top_abs = atomicLoad(&max_abs); }
    let top = workgroupUniformLoad(&top_abs);
    if (top != 0u && top < F32_INF) {
      let k = clamp(127 - i32(top >> 23u), -126, 126); // subnormals: exponent field 0
      let s = u32(k + 127) << 23u;
      let epsScaled = f32_mul(f32_mul(P.eps, s), s);
      if (epsScaled <= FLT_MAX) {
        inv = row_stats(xb, rb, s, epsScaled, tid).y;
        scale = s;
      }
    }
  }
${roles.rstd ? '  if (tid == 0u) { st_rstd(P.s_off + row, f32_mul(inv, scale)); }' : ''}
${storePass}
}
`;
}
