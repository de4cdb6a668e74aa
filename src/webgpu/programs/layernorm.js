// The LayerNorm program: layerNorm (float32) on the GPU (docs/webgpu.md),
// in one pass; see ./rmsnorm.js for what a program record holds.
import { ceil, freeze, List } from '../../loader/intrinsics.js';
import { layerNorm } from '../../ops/descriptions.js';
import { bindingsOf, bitsOfFloat, declarationsOf, dispatchSize, keyOf, shaderRole } from './layout.js';
import { WORKGROUP_SIZE } from '../wgsl/wgsl.js';
import { LAYERNORM_PARAMS, LAYERNORM_SERIAL_DIM, layerNormShader } from './layernorm-shader.js';

const LN_ROLES = ['x', 'weight', 'bias', 'out', 'mean', 'rstd'];

/** The layout of a checked LayerNorm call. */
function layoutOf(call, limits) {
  const { fn, measured, rows, dim, stride } = call;
  const names = new List();
  for (let i = 0; i < LN_ROLES.length; i++) if (measured[LN_ROLES[i]] !== undefined) names[names.length] = LN_ROLES[i];
  // (Its shader reads a value at a time: no vector bindings.)
  const { bindings, roles } = bindingsOf(fn, limits, measured, names, rows, dim, stride, false);
  const serial = dim <= LAYERNORM_SERIAL_DIM;
  const r = (key) => shaderRole(roles[key]);
  const variant = {
    __proto__: null, program: 'layerNorm', serial, bindings: declarationsOf(bindings),
    roles: { __proto__: null, x: r('x'), weight: r('weight'), bias: r('bias'), out: r('out'), mean: r('mean'), rstd: r('rstd') },
  };
  return { __proto__: null, variant, bindings, roles, groups: dispatchSize(fn, serial ? ceil(rows / WORKGROUP_SIZE) : rows, rows) };
}

/** The one pass of a laid-out call (rows > 0). */
function passesOf(call, layout) {
  const { rows, dim, stride } = call;
  const { roles, bindings, groups, variant } = layout;
  const off = (key) => (roles[key] === undefined ? 0 : roles[key].offset);
  const passes = new List(1);
  passes[0] = {
    __proto__: null, key: keyOf(variant), code: () => layerNormShader(variant), names: LAYERNORM_PARAMS,
    values: {
      __proto__: null, rows, dim, dim_f32: bitsOfFloat(dim), eps: bitsOfFloat(call.eps), groups_x: groups[0],
      x_off: off('x'), x_stride: stride, w_off: off('weight'), b_off: off('bias'), y_off: off('out'), y_stride: stride,
      m_off: off('mean'), s_off: off('rstd'),
    },
    entries: bindings, groups,
  };
  return passes;
}

const forms = new List(1);
forms[0] = layerNorm;

// The options of layerNorm's description this program does not take yet: refused by the device form.
const unsupported = new List(2);
unsupported[0] = 'heads';
unsupported[1] = 'headStride';

export const LAYERNORM_PROGRAM = freeze({ __proto__: null, forms, layout: layoutOf, passes: passesOf, scratch: () => new List(), unsupported });
