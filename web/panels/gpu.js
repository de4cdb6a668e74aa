// Panel: the same bits on the GPU. One random batch through the wasm kernel,
// the exact WebGPU kernel (rmsnorm-wasm/webgpu) and a native-float WGSL
// kernel (tree reduction, inverseSqrt: what GPU engines do), showing which
// outputs differ from the wasm kernel's bits, and by how much. It asks for
// an adapter, and builds anything, only when asked to run (Chromium warns
// on the console when it has none), and says what it is doing meanwhile:
// the first run compiles the exact kernel's pipeline, seconds on a
// software adapter.

import { createArrayKernels, createGpuKernels } from '../../src/webgpu/index.js';
import { createNativeRmsNorm } from '../lib/native-rmsnorm.js';
import { newSeed, normalArray, prng, uniformArray } from '../lib/random.js';
import { cell, find, report } from '../lib/dom.js';
import { kernels as wasmKernels } from '../lib/kernels.js';

const ROWS = 32;
const DIM = 1024;
const SHOWN = 3;

const bitsOf = (v) => new Uint32Array(Float32Array.of(v).buffer)[0];
const hex = (u) => `0x${u.toString(16).padStart(8, '0')}`;

/** Floats between a and b (both finite, float32): how many ulps apart. */
function ulpsApart(a, b) {
  const order = (u) => (u & 0x80000000 ? 0x80000000 - (u & 0x7fffffff) : 0x80000000 + u);
  return Math.abs(order(bitsOf(a)) - order(bitsOf(b)));
}

/** One differing output, readable: its index, both values, their distance, then the bits. */
function describeDifference(i, y, base) {
  const apart = Number.isFinite(y[i]) && Number.isFinite(base[i]) ? `, ${ulpsApart(y[i], base[i])} ulp apart` : '';
  return `y[${i}] = ${y[i].toPrecision(9)} vs ${base[i].toPrecision(9)}${apart} (${hex(bitsOf(y[i]))} vs ${hex(bitsOf(base[i]))})`;
}

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
  const button = find(section, '#gpu-run');
  const table = find(section, '#gpu-table');
  const summary = find(section, '#gpu-summary');
  const status = find(section, '#gpu-status');
  const message = find(section, '.message');
  if (!navigator.gpu) {
    status.textContent = 'This browser has no WebGPU (navigator.gpu is undefined), so this panel cannot run here. '
      + 'The kernels above are WebAssembly and need no GPU.';
    button.disabled = true;
    section.dataset.state = 'no-webgpu';
    return;
  }
  status.textContent = 'This browser has WebGPU. Nothing runs on the GPU until you ask.';
  let kernels = null;
  let reports = 0;

  async function open() {
    status.textContent = 'Asking the browser for a GPU adapter…';
    const adapter = await navigator.gpu.requestAdapter();
    if (adapter === null) {
      section.dataset.state = 'no-adapter';
      throw new Error('this browser has WebGPU (navigator.gpu) but gave this page no adapter: '
        + 'it found no GPU it will use, and offers no software one. Nothing ran on the GPU.');
    }
    const device = await adapter.requestDevice();
    const info = adapter.info ?? {};
    const name = [info.vendor, info.architecture, info.description].filter(Boolean).join(' ') || 'an unnamed adapter';
    const onProgress = ({ compiled, total }) => {
      reports++;
      section.dataset.compileReports = String(reports);
      status.textContent = compiled < total
        ? `Compiling the exact kernel's GPU pipeline for ${name} (${compiled} of ${total} built; seconds on a software adapter)…`
        : `Pipeline built (${compiled} of ${total}); running…`;
    };
    kernels = { arrays: createArrayKernels(createGpuKernels(device, { onProgress })), native: createNativeRmsNorm(device), device, name };
  }

  async function run() {
    const started = performance.now();
    if (kernels === null) await open();
    const seed = newSeed();
    const rand = prng(seed);
    const x = normalArray(rand, ROWS * DIM, 3);
    const w = uniformArray(rand, DIM, 0.5, 1.5);
    const wasm = wasmKernels().rmsNorm(x, w); // the page's own instance (web/lib/kernels.js)
    status.textContent = `Running on ${kernels.name}…`;
    const exact = await kernels.arrays.rmsNorm(x, w);
    const took = performance.now() - started;
    const outputs = [
      ['wasm kernel', wasm],
      ['exact WebGPU kernel', exact],
      ['native-float WebGPU kernel', await nativeOnGpu(kernels.device, kernels.native, x, w)],
    ];
    const head = document.createElement('thead');
    const headRow = document.createElement('tr');
    headRow.append(cell('th', 'implementation', 'left'), cell('th', 'outputs differing from the wasm kernel'),
      cell('th', 'first differing outputs: this one vs the wasm kernel\'s', 'left'));
    head.append(headRow);
    const body = document.createElement('tbody');
    const counts = [];
    for (const [name, y] of outputs) {
      const diff = differences(y, wasm);
      counts.push(diff.length);
      const tr = document.createElement('tr');
      const shown = diff.slice(0, SHOWN).map((i) => describeDifference(i, y, wasm)).join('; ');
      tr.append(cell('th', name, 'left'), cell('td', `${diff.length} of ${y.length}`, 'num'), cell('td', shown || '—', 'left mono'));
      body.append(tr);
    }
    table.replaceChildren(head, body);
    status.textContent = `Ran on ${kernels.name}; this run took ${(took / 1000).toFixed(2)} s`
      + (reports > 0 ? ', the first one including the pipeline\'s compilation.' : '.');
    summary.textContent = `Batch ${ROWS} × ${DIM}, seed ${seed}: the exact GPU kernel differs from the wasm kernel in ${counts[1]} outputs, `
      + `the native-float GPU kernel in ${counts[2]}: it sums in a tree, not the contract's order, and uses inverseSqrt (2 ulp in WGSL); `
      + 'WGSL promises only that + and * round to one of the two nearest floats, so a float kernel\'s bits are its adapter\'s.';
    section.dataset.exactDiffering = String(counts[1]);
    section.dataset.state = 'ran';
  }

  button.addEventListener('click', async () => {
    button.disabled = true;
    report(message, '');
    try {
      await run();
    } catch (err) {
      status.textContent = 'The GPU run did not complete.';
      report(message, `The GPU run failed: ${err.message}`);
    } finally {
      button.disabled = false;
    }
  });
}
