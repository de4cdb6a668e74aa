// Panel: the same bits on the GPU. One random batch through the wasm kernel,
// the exact WebGPU kernel (rmsnorm-wasm/webgpu) and a native-float WGSL
// kernel (tree reduction, inverseSqrt: what GPU engines do), showing which
// outputs differ from the wasm kernel's bits. Shown only where the browser
// has WebGPU (navigator.gpu); it asks for an adapter, and builds anything,
// only when asked to run (Chromium warns on the console when it has none).

import { createArrayKernels, createGpuKernels } from '../../src/webgpu/index.js';
import { createNativeRmsNorm } from '../../src/webgpu/native.js';
import { newSeed, normalArray, prng, uniformArray } from '../lib/random.js';
import { cell, find, report } from '../lib/dom.js';
import { kernels as wasmKernels } from '../lib/kernels.js';

const ROWS = 32;
const DIM = 1024;
const SHOWN = 4;

const hex = (v) => {
  const u = new Uint32Array(Float32Array.of(v).buffer)[0];
  return `0x${u.toString(16).padStart(8, '0')}`;
};

/** Indices whose bits differ from `base` (a NaN matching a NaN is equal). */
function differences(y, base) {
  const a = new Uint32Array(y.buffer, y.byteOffset, y.length);
  const b = new Uint32Array(base.buffer, base.byteOffset, base.length);
  const out = [];
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i] && !(Number.isNaN(y[i]) && Number.isNaN(base[i]))) out.push(i);
  return out;
}

async function nativeOnGpu(device, native, x, w) {
  const usage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;
  const make = (data) => {
    const b = device.createBuffer({ size: data.byteLength, usage, mappedAtCreation: true });
    new Float32Array(b.getMappedRange()).set(data);
    b.unmap();
    return b;
  };
  const xb = make(x);
  const wb = make(w);
  const yb = device.createBuffer({ size: x.byteLength, usage });
  const read = device.createBuffer({ size: x.byteLength, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  const encoder = device.createCommandEncoder();
  native(encoder, { x: xb, weight: wb, out: yb }, { rows: ROWS, dim: DIM, eps: 1e-6 });
  encoder.copyBufferToBuffer(yb, 0, read, 0, x.byteLength);
  device.queue.submit([encoder.finish()]);
  await read.mapAsync(GPUMapMode.READ);
  const y = new Float32Array(read.getMappedRange().slice(0));
  for (const b of [xb, wb, yb, read]) b.destroy();
  return y;
}

export async function mountGpu(section) {
  if (!navigator.gpu) return; // no WebGPU here: the panel stays hidden
  section.hidden = false;
  const button = find(section, '#gpu-run');
  const table = find(section, '#gpu-table');
  const summary = find(section, '#gpu-summary');
  const message = find(section, '.message');
  let kernels = null;

  async function run() {
    if (kernels === null) {
      const adapter = await navigator.gpu.requestAdapter();
      if (adapter === null) throw new Error('this browser has WebGPU but gives no adapter (a GPU or a software one)');
      const device = await adapter.requestDevice();
      kernels = { arrays: createArrayKernels(createGpuKernels(device)), native: createNativeRmsNorm(device), device };
    }
    const seed = newSeed();
    const rand = prng(seed);
    const x = normalArray(rand, ROWS * DIM, 3);
    const w = uniformArray(rand, DIM, 0.5, 1.5);
    const wasm = wasmKernels().rmsNorm(x, w); // the page's own instance (web/lib/kernels.js)
    const outputs = [
      ['wasm kernel', wasm],
      ['exact WebGPU kernel', await kernels.arrays.rmsNorm(x, w)],
      ['native-float WebGPU kernel', await nativeOnGpu(kernels.device, kernels.native, x, w)],
    ];
    const head = document.createElement('thead');
    const headRow = document.createElement('tr');
    headRow.append(cell('th', 'implementation', 'left'), cell('th', 'outputs differing from the wasm kernel'),
      cell('th', 'first differing outputs (index: bits, wasm bits)', 'left'));
    head.append(headRow);
    const body = document.createElement('tbody');
    const counts = [];
    for (const [name, y] of outputs) {
      const diff = differences(y, wasm);
      counts.push(diff.length);
      const tr = document.createElement('tr');
      const shown = diff.slice(0, SHOWN).map((i) => `${i}: ${hex(y[i])}, ${hex(wasm[i])}`).join('; ');
      tr.append(cell('th', name, 'left'), cell('td', `${diff.length} of ${y.length}`, 'num'), cell('td', shown || '—', 'left mono'));
      body.append(tr);
    }
    table.replaceChildren(head, body);
    summary.textContent = `Batch ${ROWS} × ${DIM}, seed ${seed}: the exact GPU kernel differs from the wasm kernel in ${counts[1]} outputs, `
      + `the native-float GPU kernel in ${counts[2]} (on this adapter: WGSL lets each float operation round either way).`;
    section.dataset.exactDiffering = String(counts[1]);
  }

  button.addEventListener('click', async () => {
    button.disabled = true;
    report(message, '');
    try {
      await run();
    } catch (err) {
      report(message, `The GPU run failed: ${err.message}`);
    } finally {
      button.disabled = false;
    }
  });
}
