// What the WGSL of every shader shares but its arithmetic (./softfloat.js,
// ./fastfloat.js) and its reductions (./reduction.js): the opening (the
// uniform struct and binding declarations written from a variant), each
// role's element accessors, the storage dtypes (a row each), the named
// constants, the rescue path's power of two and the entry point.
import { SOFTFLOAT_WGSL } from './softfloat.js';

/** Invocations a workgroup, in every variant. */
export const WORKGROUP_SIZE = 64;

function structOf(names) {
  let s = 'struct Params {';
  for (let i = 0; i < names.length; i++) s += ` ${names[i]}: u32,`;
  return `${s} }`;
}

/** What opens every shader: softfloat, `more` (WGSL), the uniform block
 * of `params` (u32 slots, binding 0; each has groups_x, entryPoint's) and
 * the declarations of `bindings` ([{ access, atomic, words }], binding 1 on). */
export function shaderHead(params, bindings, more = '') {
  let decls = '';
  for (let i = 0; i < bindings.length; i++) decls += bindingDecl(i + 1, bindings[i]);
  return `${SOFTFLOAT_WGSL}${more}
${structOf(params)}
@group(0) @binding(0) var<uniform> P: Params;
${decls}`;
}

/** The entry point of every shader, around `body`: `group` is the
 * workgroup's place in the dispatch (../programs/layout.js, dispatchSize), `tid` the
 * invocation's in it. */
export function entryPoint(body) {
  return `@compute @workgroup_size(${WORKGROUP_SIZE})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) tid: u32) {
  let group = wid.x + wid.y * P.groups_x;
${body}}
`;
}

/** WGSL of a binding declaration: its words one by one, atomic, or four
 * (vec4) or two (vec2) at a time, for roles whose groups of four values
 * start on such a boundary (../programs/layout.js, bindingsOf). */
function bindingDecl(index, b) {
  const type = b.atomic ? 'array<atomic<u32>>' : b.words === 4 ? 'array<vec4<u32>>' : b.words === 2 ? 'array<vec2<u32>>' : 'array<u32>';
  return `@group(0) @binding(${index}) var<storage, ${b.access}> b${index}: ${type};\n`;
}

/**
 * The accessors of one role, named `name`: `${name}_raw(e)` (the storage
 * bits of element e of its binding), `${name}_raw4(e, n)` (elements e..e+3,
 * 0 from the n-th on), and for a role written `${name}_put(e, v)` and
 * `${name}_put4(e, v, n)`. `dtype`: its storage's code (STORAGE below);
 * `pairs`: 16-bit and every group of four starts a word (e even).
 */
export function roleAccess(name, binding, atomic, dtype, pairs, writes, words = 1) {
  const b = `b${binding}`;
  const wide = STORAGE[dtype].bytes === 4;
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

// The storage dtypes, a row each by code (src/loader/abi.js): bytes a
// value, one value's widening to float32 bits and narrowing back
// (softfloat: any value), and the same for four values (the common path:
// finite values only), written as widen${suffix}4 and narrow${suffix}4. A
// new dtype is a row here (and its conversions in ./softfloat.js).
export const STORAGE = [
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
  // float, is what "correctly rounded" returns (./fastfloat.js says why
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
export function conversions(dtype, suffix) {
  const row = STORAGE[dtype];
  return `fn widen${suffix}(h: u32) -> u32 { return ${row.widen('h')}; }
fn narrow${suffix}(v: u32) -> u32 { return ${row.narrow('v')}; }
${row.four(suffix)}`;
}

/** The constants every shader names, and the rescue path's power of two
 * (src/kernels/common.h) with eps * 4^k: scale 1 where the plain result
 * stands (no finite nonzero max, or eps * 4^k overflows). Its two
 * multiplications are one call site, in a loop (docs/webgpu.md, the
 * compile-size rule). */
export const COMMON_WGSL = `
const BLOCK: u32 = 256u; // values a block of the contract's blocked sum
const LANES: u32 = 16u; // lane sums a block: value i of a block goes to lane i % LANES
const TINY_SUM: u32 = 0x1f800000u; // 2^-64: a sum below it takes the rescue path
const FLT_MAX: u32 = 0x7f7fffffu;
fn blocks_of(n: u32) -> u32 { return (n + BLOCK - 1u) / BLOCK; }
fn rescue_of(top: u32) -> vec2<u32> {
  if (top == 0u || top >= F32_INF) { return vec2<u32>(F32_ONE, P.eps); }
  let k = clamp(127 - i32(top >> 23u), -126, 126); // subnormals: exponent field 0
  let s2 = u32(k + 127) << 23u;
  var eps = P.eps;
  for (var j = 0u; j < 2u; j = j + 1u) { eps = f32_mul(eps, s2); }
  if (eps > FLT_MAX) { return vec2<u32>(F32_ONE, P.eps); }
  return vec2<u32>(s2, eps);
}
`;
