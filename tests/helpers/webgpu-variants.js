// Every shader variant the WebGPU backend can build, made by the programs'
// layouts themselves (src/webgpu/programs/) from calls of every kind, for the tests that hold the
// generated WGSL: equal keys give equal code (tests/webgpu-shaders.test.js),
// the golden shaders and the digest over every variant
// (tests/webgpu-golden.js), and every variant compiled on both adapters
// (tests/webgpu.test.js). Imports nothing from Node.
import { keyOf } from '../../src/webgpu/programs/layout.js';
import { LAYERNORM_PROGRAM } from '../../src/webgpu/programs/layernorm.js';
import { layerNormShader } from '../../src/webgpu/programs/layernorm-shader.js';
import { RMSNORM_PROGRAM } from '../../src/webgpu/programs/rmsnorm.js';
import { prologueShader, rmsNormShader } from '../../src/webgpu/programs/rmsnorm-shader.js';

const LIMITS = { align: 256, maxSize: 2 ** 27 };
const BYTES = { float32: 4, bfloat16: 2, float16: 2, q8_0: 1, q8_1: 1, q8_K: 1 };
const BLOCKS = { q8_0: [32, 34], q8_1: [32, 36], q8_K: [256, 292] }; // values and bytes a block
const DTYPES = ['float32', 'bfloat16', 'float16'];
const ROWS = 3;
const DTYPE_CODES = { float32: 0, bfloat16: 1, float16: 2 };

/** A measured role, as the device form's readCall records it (src/webgpu/args.js, Binding). */
function measuredRole(name, buffer, start, dtype, writes, runs, length, stride) {
  const bytes = BYTES[dtype];
  const end = start + (runs === 0 || length === 0 ? 0 : ((runs - 1) * stride + length) * bytes);
  return { name: `buffers.${name}`, buffer, bufferSize: buffer.size, start, end, bytes, writes, runs, length, stride, dtype };
}
const newBuffer = () => ({ size: 1 << 20 });

// Where the per-row roles lie, each placement a binding layout the layout
// makes: vector words, one value a word, 16-bit rows that start or end
// inside a word (written through atomics), in place.
const PLACEMENTS = [
  { name: 'vectors', dim: 64, start: 0, inPlace: false },
  { name: 'odd dim', dim: 63, start: 0, inPlace: false },
  { name: 'odd offset', dim: 64, start: 1, inPlace: false },
  { name: 'in place', dim: 64, start: 0, inPlace: true },
];

/** The layouts (src/webgpu/programs/rmsnorm.js) of calls of every
 * dtype, weight dtype and offset, cast mode, residual, statistic, team,
 * placement and block output (q8_0 with all of them but the Gemma cast;
 * q8_1 and q8_K, whose shaders differ from q8_0's in the quantizer alone,
 * with one team of each kind and no weight offset either): { variant, prologue (its
 * weight dtype code, or null) }; many calls have one variant. */
export function* rmsLayouts() {
  for (const dtype of DTYPES) {
    for (const weightDtype of [null, ...DTYPES]) {
      for (const weightOffset of weightDtype === null ? [0] : [0, 1]) {
        for (const gemma of weightDtype === null ? [false] : [false, true]) {
          for (const residual of [false, true]) {
            for (const [out, rstd] of [[true, false], [true, true], [false, true]]) {
              for (const team of [1, 4, 16, 64]) {
                for (const [p, outDtype] of PLACEMENTS.flatMap((p) => [[p, null], [p, 'q8_0'], [p, 'q8_1'], [p, 'q8_K']])) {
                  if (p.inPlace && !out) continue;
                  if (outDtype !== null && (!out || p.inPlace || p.dim % 32 !== 0)) continue;
                  if (outDtype !== null && gemma) continue; // (the cast mode is step 4's, the same code whatever out is)
                  if ((outDtype === 'q8_1' || outDtype === 'q8_K') && (weightOffset !== 0 || team === 4 || team === 16)) continue;
                  const { dim } = p;
                  const start = p.start * BYTES[dtype];
                  const x = newBuffer();
                  const measured = { x: measuredRole('x', x, start, dtype, false, ROWS, dim, dim) };
                  if (residual) measured.residual = measuredRole('residual', newBuffer(), start, dtype, true, ROWS, dim, dim);
                  if (weightDtype !== null) measured.weight = measuredRole('weight', newBuffer(), 0, weightDtype, false, 1, dim, 0);
                  if (out && outDtype !== null) measured.out = measuredRole('out', newBuffer(), p.start, outDtype, true, 1, Math.ceil(ROWS * dim / BLOCKS[outDtype][0]) * BLOCKS[outDtype][1], 0);
                  else if (out) measured.out = measuredRole('out', p.inPlace ? x : newBuffer(), start, dtype, true, ROWS, dim, dim);
                  if (rstd) measured.rstd = measuredRole('rstd', newBuffer(), 0, 'float32', true, 1, ROWS, 0);
                  const blockRowBytes = outDtype === null ? 0 : (dim / BLOCKS[outDtype][0]) * BLOCKS[outDtype][1];
                  const call = { fn: residual ? 'addRmsNorm' : 'rmsNorm', measured, rows: ROWS, tokens: ROWS, heads: 1, headStride: dim, dim, stride: dim, dtype, weightDtype, gemma, weightOffset, outDtype, blockRowBytes };
                  const layout = RMSNORM_PROGRAM.layout(call, LIMITS, 'gpu', team);
                  yield { variant: layout.variant, prologue: layout.prologue === null ? null : DTYPE_CODES[weightDtype] };
                }
              }
            }
          }
        }
      }
    }
  }
}


/** Every RMSNorm variant the layout makes, one a key. */
export function* rmsVariants() {
  const seen = new Set();
  for (const { variant } of rmsLayouts()) {
    const key = keyOf(variant);
    if (!seen.has(key)) yield variant;
    seen.add(key);
  }
}

/** The layouts of LayerNorm calls (src/webgpu/programs/layernorm.js): serial (dim <= 256)
 * or wide, each set of roles with an output, apart or in place. */
export function* layerNormLayouts() {
  for (const dim of [64, 300]) {
    for (let mask = 0; mask < 32; mask++) {
      for (const inPlace of [false, true]) {
        const has = (i) => (mask & (1 << i)) !== 0; // weight, bias, out, mean, rstd
        if (!has(2) && !has(3) && !has(4)) continue;
        if (inPlace && !has(2)) continue;
        const x = newBuffer();
        const measured = { x: measuredRole('x', x, 0, 'float32', false, ROWS, dim, dim) };
        if (has(0)) measured.weight = measuredRole('weight', newBuffer(), 0, 'float32', false, 1, dim, 0);
        if (has(1)) measured.bias = measuredRole('bias', newBuffer(), 0, 'float32', false, 1, dim, 0);
        if (has(2)) measured.out = measuredRole('out', inPlace ? x : newBuffer(), 0, 'float32', true, ROWS, dim, dim);
        if (has(3)) measured.mean = measuredRole('mean', newBuffer(), 0, 'float32', true, 1, ROWS, 0);
        if (has(4)) measured.rstd = measuredRole('rstd', newBuffer(), 0, 'float32', true, 1, ROWS, 0);
        yield LAYERNORM_PROGRAM.layout({ fn: 'layerNorm', measured, rows: ROWS, dim, stride: dim }, LIMITS).variant;
      }
    }
  }
}

/** Every LayerNorm variant the layout makes, one a key. */
export function* layerNormVariants() {
  const seen = new Set();
  for (const variant of layerNormLayouts()) {
    const key = keyOf(variant);
    if (!seen.has(key)) yield variant;
    seen.add(key);
  }
}

/** Every shader: { key, code }, RMSNorm's, LayerNorm's and the prologue's, in that order. */
export function* everyShader() {
  for (const variant of rmsVariants()) yield { key: keyOf(variant), code: rmsNormShader(variant) };
  for (const v of layerNormVariants()) yield { key: keyOf(v), code: layerNormShader(v) };
  for (const dtype of [0, 1, 2]) yield { key: keyOf({ program: 'prologue', dtype }), code: prologueShader(dtype) };
}

const find = (variants, test) => {
  for (const v of variants) if (test(v)) return v;
  throw new Error('no such variant');
};

/** The golden shaders (tests/webgpu-golden/): a handful of variants that
 * between them take every path a generator writes, by file name (WGSL
 * kept as data: `.wgsl.golden`, not source another tool lints or pairs). */
export function goldenShaders() {
  const rms = (test) => rmsNormShader(find(rmsVariants(), test));
  const words = (v, role) => v.bindings[v.roles[role].binding - 1].words;
  const atomic = (v, role) => v.bindings[v.roles[role].binding - 1].atomic;
  const ln = (test) => layerNormShader(find(layerNormVariants(), test));
  return {
    'rmsnorm-f32-one-invocation-no-weight.wgsl.golden': rms((v) => v.dtype === 0 && v.team === 1 && v.weight === null && !v.residual && v.roles.rstd === null
      && v.roles.out !== null && words(v, 'x') === 1),
    'rmsnorm-f32-team16-vec4-weight-rstd.wgsl.golden': rms((v) => v.dtype === 0 && v.team === 16 && v.weight?.dtype === 0 && !v.residual
      && v.roles.rstd !== null && v.roles.out !== null && words(v, 'x') === 4),
    'addrmsnorm-bf16-team64-f16-weight-gemma-atomic.wgsl.golden': rms((v) => v.dtype === 1 && v.team === 64 && v.weight?.dtype === 2 && v.gemma
      && v.residual && v.roles.out !== null && atomic(v, 'out')),
    'rmsnorm-f16-team4-in-place-bf16-weight.wgsl.golden': rms((v) => v.dtype === 2 && v.team === 4 && v.weight?.dtype === 1 && !v.residual
      && v.roles.out !== null && v.roles.out.binding === v.roles.x.binding),
    'rmsnorm-bf16-rstd-only.wgsl.golden': rms((v) => v.dtype === 1 && v.team === 16 && v.roles.out === null && !v.residual),
    'layernorm-serial-weight-bias-out.wgsl.golden': ln((v) => v.serial && v.roles.weight !== null && v.roles.bias !== null && v.roles.out !== null
      && v.roles.mean === null && v.roles.rstd === null),
    'layernorm-wide-every-role.wgsl.golden': ln((v) => !v.serial && Object.values(v.roles).every((r) => r !== null) && v.roles.out.binding !== v.roles.x.binding),
    'prologue-bf16.wgsl.golden': prologueShader(1),
    'rmsnorm-f32-q8_1-one-invocation-weight.wgsl.golden': rms((v) => v.dtype === 0 && v.team === 1 && v.blocks === 2 && v.weight?.dtype === 0
      && !v.residual && v.roles.rstd === null),
    'addrmsnorm-bf16-q8_K-team64-rstd.wgsl.golden': rms((v) => v.dtype === 1 && v.team === 64 && v.blocks === 3 && v.weight === null
      && v.residual && v.roles.rstd !== null),
  };
}
