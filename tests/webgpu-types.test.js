// rmsnorm-wasm/webgpu's types (src/webgpu/index.d.ts) under tsc --strict:
// the documented calls compile and each misuse below is a type error
// (// @ts-expect-error fails the compile when the line type-checks).
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const index = fileURLToPath(new URL('../src/webgpu/index.js', import.meta.url));
const tsc = fileURLToPath(new URL('../node_modules/typescript/bin/tsc', import.meta.url));

const SOURCE = `
import { createArrayKernels, createGpuKernels } from ${JSON.stringify(index)};
declare const device: GPUDevice;
declare const buffer: GPUBuffer;
const gpu = createGpuKernels(device);
const encoder = device.createCommandEncoder();
gpu.rmsNorm(encoder, { x: buffer, weight: null, out: { buffer, offset: 256 } }, { rows: 1, dim: 4, dtype: 'bfloat16' });
gpu.addRmsNorm(encoder, { x: buffer, residual: { buffer, offset: 64 }, rstd: { buffer, offset: 128 } }, { rows: 1, dim: 4 });
const arrays = createArrayKernels(gpu);
const y32: Promise<Float32Array> = arrays.rmsNorm(new Float32Array(4), null, { dim: 4 });
const y16 = arrays.addRmsNorm(new Uint16Array(4), new Uint16Array(4), null, { dim: 4, dtype: 'bfloat16' });
const ln: Promise<Float32Array> = arrays.layerNorm(new Float32Array(4), null, new Float32Array(4));
gpu.layerNorm(encoder, { x: buffer, mean: { buffer, offset: 16 } }, { rows: 1, dim: 4, eps: 1e-5 });
const q: Promise<Uint8Array> = arrays.rmsNorm(new Uint16Array(64), null, { dim: 32, dtype: 'float16', outDtype: 'q8_0' });
const qk: Promise<Uint8Array> = arrays.addRmsNorm(new Float32Array(256), new Float32Array(256), null, { dim: 256, outDtype: 'q8_K' });
gpu.rmsNorm(encoder, { x: buffer, out: { buffer, offset: 3 } }, { rows: 2, dim: 32, outDtype: 'q8_1' });
void y32; void y16; void ln; void q; void qk;
const watched = createGpuKernels(device, { onProgress: ({ compiled, total, label }) => void [compiled, total, label], invocationsPerRow: 16 });
async function decode() {
  const step = await watched.rmsNorm.prepare({ x: buffer, out: { buffer, offset: 256 } }, { rows: 2, dim: 4, rowStride: 8 });
  const pass = encoder.beginComputePass();
  step.run(pass);
  step.run(encoder);
  step.destroy();
}
void decode;
// @ts-expect-error invocationsPerRow is one of 'auto', 1, 4, 16, 64
createGpuKernels(device, { invocationsPerRow: 8 });
// @ts-expect-error run() takes an encoder
watched.rmsNorm.prepare({ x: buffer }, { rows: 1, dim: 4 }).then((p) => p.run(buffer));
// @ts-expect-error 16-bit storage must name its dtype
arrays.rmsNorm(new Uint16Array(4), null, { dim: 4 });
// @ts-expect-error params.rows is required
gpu.rmsNorm(encoder, { x: buffer }, { dim: 4 });
// @ts-expect-error addRmsNorm needs buffers.residual
gpu.addRmsNorm(encoder, { x: buffer }, { rows: 1, dim: 4 });
// @ts-expect-error outDtype is a dtype or a block format
gpu.rmsNorm(encoder, { x: buffer, out: buffer }, { rows: 1, dim: 32, outDtype: 'q4_0' });
// @ts-expect-error blocks are a Uint8Array
arrays.rmsNorm(new Float32Array(32), null, { dim: 32, outDtype: 'q8_0' }).then((y: Float32Array) => y);
// @ts-expect-error castMode is 'llama' or 'gemma'
gpu.rmsNorm(encoder, { x: buffer, out: buffer }, { rows: 1, dim: 4, castMode: 'mistral' });
`;

test('the ./webgpu types compile under tsc --strict, and each misuse is a type error', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'rmsnorm-webgpu-types-'));
  try {
    const file = join(dir, 'use.ts');
    await writeFile(file, SOURCE);
    const args = [tsc, '--noEmit', '--strict', '--lib', 'es2022,dom', '--module', 'nodenext', '--moduleResolution', 'nodenext', file];
    const result = await promisify(execFile)(process.execPath, args).then(() => ({ code: 0, out: '' }),
      (error) => ({ code: error.code, out: `${error.stdout}${error.stderr}` }));
    assert.equal(result.code, 0, result.out);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

// An interface whose comment lists the wasm API's functions it has lists
// them all (ArrayKernels' once named rmsNorm and addRmsNorm, not layerNorm).
test('each ./webgpu interface\'s comment names exactly the norms it has', async () => {
  const { readFile } = await import('node:fs/promises');
  const dts = await readFile(fileURLToPath(new URL('../src/webgpu/index.d.ts', import.meta.url)), 'utf8');
  const NORMS = ['rmsNorm', 'addRmsNorm', 'layerNorm', 'rmsNormBackward', 'layerNormBackward'];
  let checked = 0;
  for (const [, comment, name, body] of dts.matchAll(/\/\*\*((?:(?!\*\/)[\s\S])*)\*\/\s*export interface (\w+)[^{]*\{([\s\S]*?)\n\}/g)) {
    const named = NORMS.filter((n) => new RegExp(`\\b${n}\\b`).test(comment));
    if (named.length === 0) continue;
    const members = NORMS.filter((n) => new RegExp(`^\\s+${n}\\s*[<(:]`, 'm').test(body));
    assert.deepEqual(named, members, `${name}: its comment names ${named.join(', ')}; it has ${members.join(', ')}`);
    checked++;
  }
  assert.ok(checked >= 1, 'ArrayKernels\' comment is checked');
});
