// The RMSNorm program: rmsNorm and addRmsNorm on the GPU (docs/webgpu.md).
// Its record says everything the device layer (../kernels.js) needs and
// nothing of devices: the forms (their descriptions, src/ops/), how a
// checked call is laid out, and the passes that run it, each with its
// shader, uniform values, bindings and workgroups. With a weight offset,
// a prologue pass first makes w' = weight_offset + w into a scratch buffer,
// from the weight as it is at that run, and the main pass reads w' as a
// float32 weight. With ggml blocks out (call.outDtype), the main pass
// writes the blocks itself, from the values it makes (./rmsnorm-shader.js,
// ../wgsl/blocks.js): no pass and no buffer between.
import { BLOCK_FORMAT, DTYPE } from '../../loader/abi.js';
import { ceil, freeze, List } from '../../loader/intrinsics.js';
import { addRmsNorm, rmsNorm } from '../../ops/descriptions.js';
import { bindingsOf, bitsOfFloat, declarationsOf, dispatchSize, fastBound, keyOf, shaderRole, teamOf } from './layout.js';
import { WORKGROUP_SIZE } from '../wgsl/wgsl.js';
import { PARAMS, PROLOGUE_PARAMS, prologueShader, rmsNormShader } from './rmsnorm-shader.js';

const RMS_ROLES = ['x', 'residual', 'weight', 'out', 'rstd'];

/**
 * The layout of a checked RMSNorm call: { variant, bindings, roles, groups,
 * prologue }. The weight matters only to out (a call without out
 * ignores it). With a weight offset, the prologue makes w' into a scratch
 * buffer (prologue: { binding of the weight alone, its offset }) and the
 * main pass reads that as a float32 weight, bound after the call's own.
 * With blocks out, out is bound as bytes (its offset a byte's, its
 * binding atomic words: ./layout.js).
 */
function layoutOf(call, limits, adapter, invocationsPerRow) {
  const { fn, measured, rows, dim, stride } = call;
  const weighted = measured.weight !== undefined && measured.out !== undefined;
  const prologue = weighted && call.weightOffset !== 0;
  const blocked = call.outDtype !== null;
  const names = new List();
  for (let i = 0; i < RMS_ROLES.length; i++) {
    const key = RMS_ROLES[i];
    if (measured[key] !== undefined && (key !== 'weight' || (weighted && !prologue))) names[names.length] = key;
  }
  // With heads, a binding's words line up only where every head's rows do.
  const { bindings, roles } = bindingsOf(fn, limits, measured, names, rows, dim, call.heads > 1 ? gcd(stride, call.headStride) : stride);
  let weight = weighted ? roles.weight : null;
  let alone = null;
  if (prologue) {
    const one = new List(1);
    one[0] = 'weight';
    const w = bindingsOf(fn, limits, measured, one, 1, dim, dim);
    alone = { __proto__: null, binding: w.bindings[0], offset: w.roles.weight.offset };
    bindings[bindings.length] = { __proto__: null, buffer: null, offset: 0, size: dim * 4, access: 'read', atomic: false, words: dim % 4 === 0 ? 4 : 1, names: one };
    weight = { __proto__: null, binding: bindings.length, offset: 0, pairs: false };
    roles.weight = weight;
  }
  const { tokens } = call; // a dispatch's rows: a head of every token
  const team = teamOf(tokens, dim, adapter, invocationsPerRow);
  const variant = {
    __proto__: null,
    program: 'rmsNorm',
    residual: measured.residual !== undefined,
    dtype: DTYPE[call.dtype].code,
    weight: weighted ? { __proto__: null, dtype: prologue ? 0 : DTYPE[call.weightDtype].code } : null,
    gemma: weighted && call.gemma,
    team,
    blocks: blocked ? BLOCK_FORMAT[call.outDtype].code : null,
    bindings: declarationsOf(bindings),
    roles: {
      __proto__: null, x: shaderRole(roles.x), residual: shaderRole(roles.residual), weight: shaderRole(weight), out: shaderRole(roles.out),
      rstd: shaderRole(roles.rstd),
    },
  };
  const perGroup = team === 1 ? WORKGROUP_SIZE : WORKGROUP_SIZE / team;
  return { __proto__: null, variant, bindings, roles, prologue: alone, groups: dispatchSize(fn, ceil(tokens / perGroup), tokens) };
}

function gcd(a, b) {
  while (b !== 0) {
    const r = a % b;
    a = b;
    b = r;
  }
  return a;
}

/** The passes of a laid-out call (rows > 0): the prologue's, if any, then
 * the main one, once for each head: head h of every token, its rows
 * `stride` apart from the head's first, its statistics `heads` apart (and
 * for blocks out, y_off and y_stride in bytes, the blocks of row (t, h)
 * the (t·heads + h)-th row of blocks). */
function passesOf(call, layout) {
  const { fn, rows, tokens, heads, headStride, dim, stride } = call;
  const { roles, bindings, groups, variant, prologue } = layout;
  const rowBytes = call.outDtype === null ? 0 : call.blockRowBytes;
  const off = (key) => (roles[key] === undefined ? 0 : roles[key].offset);
  const passes = new List();
  const entries = new List(bindings.length);
  for (let k = 0; k < bindings.length; k++) entries[k] = bindings[k];
  if (prologue !== null) {
    const code = DTYPE[call.weightDtype].code;
    const proGroups = dispatchSize(fn, ceil(dim / WORKGROUP_SIZE), rows);
    const proEntries = new List(2);
    proEntries[0] = prologue.binding;
    proEntries[1] = SCRATCH_W;
    passes[0] = {
      __proto__: null, key: keyOf({ __proto__: null, program: 'prologue', dtype: code }), code: () => prologueShader(code),
      names: PROLOGUE_PARAMS, values: { __proto__: null, dim, w_off: prologue.offset, weight_offset: bitsOfFloat(call.weightOffset), groups_x: proGroups[0] },
      entries: proEntries, groups: proGroups,
    };
    entries[bindings.length - 1] = SCRATCH_W; // after the call's own bindings
  }
  const key = keyOf(variant);
  const code = () => rmsNormShader(variant);
  for (let h = 0; h < heads; h++) {
    const at = h * headStride;
    passes[passes.length] = {
      __proto__: null, key, code, names: PARAMS,
      values: {
        __proto__: null, rows: tokens, dim, dim_f32: bitsOfFloat(dim), eps: bitsOfFloat(call.eps), groups_x: groups[0],
        x_hi: fastBound(dim), x_off: off('x') + at, x_stride: stride, r_off: off('residual') + at, r_stride: stride,
        y_off: rowBytes === 0 ? off('out') + at : off('out') + h * rowBytes, y_stride: rowBytes === 0 ? stride : heads * rowBytes,
        s_off: off('rstd') + h, w_off: off('weight'), s_step: heads,
      },
      entries, groups,
    };
  }
  return passes;
}

// The prologue's w', scratch buffer 0 of a call that has one.
const SCRATCH_W = freeze({ __proto__: null, scratch: 0 });

/** The scratch buffers of a laid-out call: w' (dim float32 values) with a
 * weight offset. */
function scratchOf(call, layout) {
  const sizes = new List();
  if (layout.prologue !== null) sizes[0] = { __proto__: null, size: call.dim * 4, label: "w'" };
  return sizes;
}

const forms = new List(2);
forms[0] = rmsNorm;
forms[1] = addRmsNorm;

// The options of the forms' descriptions no pass of this program writes yet: refused by the device form (none).
const unsupported = new List();

export const RMSNORM_PROGRAM = freeze({ __proto__: null, forms, layout: layoutOf, passes: passesOf, scratch: scratchOf, unsupported });
