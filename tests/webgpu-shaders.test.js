// The WebGPU backend's shader variants and layouts, in Node (no GPU): a
// pipeline is cached by its variant's key, so two variants with one key
// must be one shader; and the layout rules (src/webgpu/layout.js) that
// decide how each role is bound. The shaders' bits are tested on real
// adapters by tests/webgpu.test.js.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { layerNormKey, layerNormShader } from '../src/webgpu/layernorm-shader.js';
import { bindingsOf, teamOf } from '../src/webgpu/layout.js';
import { prologueShader, rmsNormShader, variantKey } from '../src/webgpu/rmsnorm-shader.js';

const binding = (access, atomic, words) => ({ access, atomic, words });
const role = (b, pairs = false) => ({ binding: b, pairs });

/** Every combination of the variant's parts, a few bindings layouts each. */
function* rmsVariants() {
  const layouts = [
    // x read-only, out apart; x and out in one binding (in place); 16-bit out with atomics; vectors.
    { bindings: [binding('read', false, 1), binding('read_write', false, 1)], x: role(1), out: role(2), pairs: false },
    { bindings: [binding('read_write', false, 1)], x: role(1), out: role(1), pairs: false },
    { bindings: [binding('read', false, 2), binding('read_write', true, 1)], x: role(1, true), out: role(2), pairs: true },
    { bindings: [binding('read', false, 4), binding('read_write', false, 4)], x: role(1), out: role(2), pairs: false },
  ];
  for (const dtype of [0, 1, 2]) {
    for (const team of [1, 4, 16, 64]) {
      for (const weight of [null, 0, 1, 2]) {
        for (const residual of [false, true]) {
          for (const rstd of [false, true]) {
            for (const gemma of weight === null ? [false] : [false, true]) {
              for (const l of layouts) {
                const bindings = [...l.bindings];
                const roles = { x: l.x, residual: null, weight: null, out: l.out, rstd: null };
                if (residual) {
                  bindings.push(binding('read_write', false, 1));
                  roles.residual = role(bindings.length, l.pairs);
                }
                if (weight !== null) {
                  bindings.push(binding('read', false, 1));
                  roles.weight = role(bindings.length);
                }
                if (rstd) {
                  bindings.push(binding('read_write', false, 1));
                  roles.rstd = role(bindings.length);
                }
                yield { residual, dtype, weight: weight === null ? null : { dtype: weight }, gemma, team, bindings, roles };
              }
            }
          }
        }
      }
    }
  }
}

test('RMSNorm variants: equal keys are equal shaders (a pipeline is cached by its key)', () => {
  const byKey = new Map();
  let count = 0;
  for (const v of rmsVariants()) {
    const key = variantKey(v);
    const code = rmsNormShader(v);
    if (byKey.has(key)) assert.equal(byKey.get(key), code, `two shaders for the key ${key}`);
    byKey.set(key, code);
    count++;
  }
  assert.equal(byKey.size, count, 'each variant its own key');
});

test('LayerNorm variants: equal keys are equal shaders', () => {
  const byKey = new Map();
  let count = 0;
  for (const serial of [false, true]) {
    for (const words of [1, 4]) {
      for (const mask of [0, 1, 2, 3, 4, 5, 6, 7, 15, 31]) {
        const bindings = [binding('read', false, words)];
        const roles = { x: role(1), weight: null, bias: null, out: null, mean: null, rstd: null };
        ['weight', 'bias', 'out', 'mean', 'rstd'].forEach((name, i) => {
          if (mask & (1 << i)) {
            bindings.push(binding(name === 'weight' || name === 'bias' ? 'read' : 'read_write', false, words));
            roles[name] = role(bindings.length);
          }
        });
        if (!roles.out && !roles.mean && !roles.rstd) continue;
        const v = { serial, bindings, roles };
        const key = layerNormKey(v);
        const code = layerNormShader(v);
        if (byKey.has(key)) assert.equal(byKey.get(key), code, key);
        byKey.set(key, code);
        count++;
      }
    }
  }
  assert.equal(byKey.size, count);
});

test('the prologue shader exists for each weight dtype', () => {
  for (const dtype of [0, 1, 2]) assert.match(prologueShader(dtype), /fn main/);
});

// A device and buffers with only what the layout reads.
const device = { limits: { minStorageBufferOffsetAlignment: 256, maxStorageBufferBindingSize: 1 << 27 } };
const buffer = (size) => ({ size });
const measured = (entries) => Object.fromEntries(entries.map(([name, buf, start, bytes, writes, runs, length, stride]) => {
  const end = start + (runs === 0 ? 0 : ((runs - 1) * stride + length) * bytes);
  return [name, { name: `buffers.${name}`, buffer: buf, start, end, bytes, writes, runs, length, stride }];
}));

test('layout: roles whose bound ranges meet share a binding, read-only only when nothing in the buffer is written', () => {
  const a = buffer(8192);
  const b = buffer(8192);
  const m = measured([['x', a, 0, 4, false, 4, 100, 100], ['out', a, 4096, 4, true, 4, 100, 100], ['weight', b, 0, 4, false, 1, 100, 0]]);
  const { bindings, roles } = bindingsOf('rmsNorm', device, m, ['x', 'weight', 'out'], 4, 100, 100);
  assert.equal(bindings.length, 3, 'x and out are 4096 bytes apart: bound apart');
  assert.equal(bindings[roles.x.binding - 1].access, 'read_write', 'x shares its buffer with a written binding');
  assert.equal(bindings[roles.weight.binding - 1].access, 'read');
  const near = measured([['x', a, 0, 4, false, 4, 100, 100], ['out', a, 1600, 4, true, 4, 100, 100]]);
  const merged = bindingsOf('rmsNorm', device, near, ['x', 'out'], 4, 100, 100);
  assert.equal(merged.bindings.length, 1, 'within one offset alignment: one binding');
  assert.equal(merged.roles.out.offset, 400, 'out 1600 bytes into the binding: element 400');
});

test('layout: a 16-bit role written whose rows start or end inside a word has an atomic binding; vectors where aligned', () => {
  const a = buffer(8192);
  const at = (start, dim, stride, rows = 3) => bindingsOf('rmsNorm', device,
    measured([['out', a, start, 2, true, rows, dim, stride]]), ['out'], rows, dim, stride);
  assert.equal(at(0, 8, 8).bindings[0].atomic, false);
  assert.equal(at(0, 8, 8).bindings[0].words, 2, 'rows of whole vec2 words');
  assert.equal(at(2, 8, 8).bindings[0].atomic, true, 'odd element offset');
  assert.equal(at(0, 7, 8).bindings[0].atomic, true, 'odd dim');
  assert.equal(at(0, 8, 9).bindings[0].atomic, true, 'odd stride');
  assert.equal(at(0, 8, 9, 1).bindings[0].atomic, false, 'one row: its stride is never used');
  assert.equal(at(4, 8, 10).bindings[0].words, 1, 'rows of whole words, but not of whole vec2s');
  const f32 = bindingsOf('rmsNorm', device, measured([['x', a, 16, 4, false, 2, 6, 8]]), ['x'], 2, 6, 8);
  assert.equal(f32.bindings[0].words, 4, 'float32 rows starting on vec4 boundaries');
  const odd = bindingsOf('rmsNorm', device, measured([['x', a, 16, 4, false, 2, 6, 6]]), ['x'], 2, 6, 6);
  assert.equal(odd.bindings[0].words, 1, 'a stride of 6 starts the second row mid-vec4');
  const tight = bindingsOf('rmsNorm', device, measured([['x', buffer(68), 0, 4, false, 1, 17, 17]]), ['x'], 1, 17, 17);
  assert.equal(tight.bindings[0].words, 1, 'a buffer too short for whole vec4s');
});

test('layout: invocations a row', () => {
  assert.equal(teamOf(512, 2048, 'cpu', 'auto'), 1, 'a CPU adapter with rows to fill it: a row an invocation');
  assert.equal(teamOf(512, 2048, 'swiftshader', 'auto'), 1);
  assert.equal(teamOf(1, 4096, 'swiftshader', 'auto'), 64);
  assert.equal(teamOf(1, 1536, 'swiftshader', 'auto'), 1, 'SwiftShader, a short row: one invocation');
  assert.equal(teamOf(1, 1537, 'swiftshader', 'auto'), 16);
  assert.equal(teamOf(1, 896, 'cpu', 'auto'), 16, 'lavapipe, a short row: a team');
  assert.equal(teamOf(1, 896, 'gpu', 'auto'), 16);
  assert.equal(teamOf(512, 2048, 'gpu', 'auto'), 16);
  assert.equal(teamOf(3, 200, 'gpu', 'auto'), 4);
  assert.equal(teamOf(3, 200, 'gpu', 64), 64, 'fixed by the option');
});
