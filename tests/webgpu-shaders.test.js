// The WebGPU backend's shader variants and layouts, in Node (no GPU): a
// pipeline is cached by its variant's key, so two variants with one key
// must be one shader; the generated WGSL is the golden set in the tree
// (tests/webgpu-golden.js); and the layout rules (src/webgpu/programs/layout.js) that
// decide how each role is bound. The shaders' bits are tested on real
// adapters by tests/webgpu.test.js.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { layerNormShader } from '../src/webgpu/programs/layernorm-shader.js';
import { bindingsOf, keyOf, teamOf } from '../src/webgpu/programs/layout.js';
import { prologueShader, rmsNormShader } from '../src/webgpu/programs/rmsnorm-shader.js';
import { layerNormLayouts, rmsLayouts } from './helpers/webgpu-variants.js';
import { staleGoldens } from './webgpu-golden.js';

test('equal keys are equal shaders (a pipeline is cached by its key), over the layouts of calls of every kind', () => {
  for (const [what, layouts, shaderOf] of [['RMSNorm', rmsLayouts(), rmsNormShader], ['LayerNorm', layerNormLayouts(), layerNormShader]]) {
    const byKey = new Map();
    let calls = 0;
    for (const layout of layouts) {
      const variant = layout.variant ?? layout;
      const key = keyOf(variant);
      const code = shaderOf(variant);
      if (byKey.has(key)) assert.equal(byKey.get(key), code, `${what}: two shaders for the key ${key}`);
      byKey.set(key, code);
      calls++;
    }
    assert.ok(byKey.size > (what === 'RMSNorm' ? 1000 : 50) && calls >= byKey.size, `${what}: ${byKey.size} variants of ${calls} calls`);
  }
});

test('the generated WGSL is the tree\'s: the golden shaders and the digest over every variant (node tests/webgpu-golden.js --write after a change made on purpose)', async () => {
  assert.deepEqual(await staleGoldens(), []);
});

test('the prologue shader exists for each weight dtype', () => {
  for (const dtype of [0, 1, 2]) assert.match(prologueShader(dtype), /fn main/);
});

// The device's limits and the buffers, with only what the layout reads.
const limits = { align: 256, maxSize: 1 << 27 };
const buffer = (size) => ({ size });
const measured = (entries) => Object.fromEntries(entries.map(([name, buf, start, bytes, writes, runs, length, stride]) => {
  const end = start + (runs === 0 ? 0 : ((runs - 1) * stride + length) * bytes);
  return [name, { name: `buffers.${name}`, buffer: buf, bufferSize: buf.size, start, end, bytes, writes, runs, length, stride }];
}));

test('layout: roles whose bound ranges meet share a binding, read-only only when nothing in the buffer is written', () => {
  const a = buffer(8192);
  const b = buffer(8192);
  const m = measured([['x', a, 0, 4, false, 4, 100, 100], ['out', a, 4096, 4, true, 4, 100, 100], ['weight', b, 0, 4, false, 1, 100, 0]]);
  const { bindings, roles } = bindingsOf('rmsNorm', limits, m, ['x', 'weight', 'out'], 4, 100, 100);
  assert.equal(bindings.length, 3, 'x and out are 4096 bytes apart: bound apart');
  assert.equal(bindings[roles.x.binding - 1].access, 'read_write', 'x shares its buffer with a written binding');
  assert.equal(bindings[roles.weight.binding - 1].access, 'read');
  const near = measured([['x', a, 0, 4, false, 4, 100, 100], ['out', a, 1600, 4, true, 4, 100, 100]]);
  const merged = bindingsOf('rmsNorm', limits, near, ['x', 'out'], 4, 100, 100);
  assert.equal(merged.bindings.length, 1, 'within one offset alignment: one binding');
  assert.equal(merged.roles.out.offset, 400, 'out 1600 bytes into the binding: element 400');
});

test('layout: a 16-bit role written whose rows start or end inside a word has an atomic binding; vectors where aligned', () => {
  const a = buffer(8192);
  const at = (start, dim, stride, rows = 3) => bindingsOf('rmsNorm', limits,
    measured([['out', a, start, 2, true, rows, dim, stride]]), ['out'], rows, dim, stride);
  assert.equal(at(0, 8, 8).bindings[0].atomic, false);
  assert.equal(at(0, 8, 8).bindings[0].words, 2, 'rows of whole vec2 words');
  assert.equal(at(2, 8, 8).bindings[0].atomic, true, 'odd element offset');
  assert.equal(at(0, 7, 8).bindings[0].atomic, true, 'odd dim');
  assert.equal(at(0, 8, 9).bindings[0].atomic, true, 'odd stride');
  assert.equal(at(0, 8, 9, 1).bindings[0].atomic, false, 'one row: its stride is never used');
  assert.equal(at(4, 8, 10).bindings[0].words, 1, 'rows of whole words, but not of whole vec2s');
  const f32 = bindingsOf('rmsNorm', limits, measured([['x', a, 16, 4, false, 2, 6, 8]]), ['x'], 2, 6, 8);
  assert.equal(f32.bindings[0].words, 4, 'float32 rows starting on vec4 boundaries');
  const odd = bindingsOf('rmsNorm', limits, measured([['x', a, 16, 4, false, 2, 6, 6]]), ['x'], 2, 6, 6);
  assert.equal(odd.bindings[0].words, 1, 'a stride of 6 starts the second row mid-vec4');
  const tight = bindingsOf('rmsNorm', limits, measured([['x', buffer(68), 0, 4, false, 1, 17, 17]]), ['x'], 1, 17, 17);
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
