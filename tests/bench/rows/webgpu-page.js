// The GPU rows of the bench, measured in a page on one adapter, side by
// side in interleaved rounds (16 calls a sample): the exact kernel (src/webgpu), a native-float
// WGSL kernel (src/webgpu/native.js: tree reduction and inverseSqrt, what
// the peers do), and onnxruntime-web's WebGPU backend running
// SimplifiedLayerNormalization. Each is timed on data already on the GPU,
// from submit to the queue's completion, and its output read back once and
// compared with the JS reference, value by value.
/* global GPUBufferUsage, GPUMapMode -- this module runs in the page */
import { createGpuKernels } from '../../../src/webgpu/index.js';
import { createNativeRmsNorm } from '../../../src/webgpu/native.js';
import { rmsNorm } from '../../../src/reference/index.js';
import { normModel } from '../onnx-model.js';

const REPEAT = 16;
const S = () => GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;

function upload(device, array) {
  const buffer = device.createBuffer({ size: array.byteLength, usage: S(), mappedAtCreation: true });
  new Float32Array(buffer.getMappedRange()).set(array);
  buffer.unmap();
  return buffer;
}

async function readBack(device, buffer, length) {
  const read = device.createBuffer({ size: length * 4, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  const encoder = device.createCommandEncoder();
  encoder.copyBufferToBuffer(buffer, 0, read, 0, length * 4);
  device.queue.submit([encoder.finish()]);
  await read.mapAsync(GPUMapMode.READ);
  const out = new Float32Array(read.getMappedRange().slice(0));
  read.destroy();
  return out;
}

/** Outputs whose bits differ from the reference's (a NaN matches a NaN). */
function differing(got, want) {
  const g = new Uint32Array(got.buffer, got.byteOffset, got.length);
  const w = new Uint32Array(want.buffer, want.byteOffset, want.length);
  let n = 0;
  for (let i = 0; i < g.length; i++) if (g[i] !== w[i] && !(Number.isNaN(got[i]) && Number.isNaN(want[i]))) n++;
  return n;
}

function inputs(rows, dim) {
  let s = rows * 7919 + dim;
  const rand = () => ((s = (Math.imul(s, 1103515245) + 12345) >>> 0) / 2 ** 32);
  const x = new Float32Array(rows * dim).map(() => (rand() + rand() + rand() + rand() - 2) * 1.7);
  const w = new Float32Array(dim).map(() => 0.5 + rand());
  return { x, w };
}

/**
 * Measures every row at each shape ([rows, dim]): { adapter, shapes: [{
 * rows, dim, results: [{ id, name, seconds: per-round medians, differing }] }] }.
 */
export async function measureGpu({ shapes, rounds = 7, minSeconds = 0.05 }) {
  const ort = await import('/node_modules/onnxruntime-web/dist/ort.webgpu.bundle.min.mjs');
  ort.env.logLevel = 'error';
  ort.env.wasm.numThreads = 1;
  // onnxruntime makes its own device on the first WebGPU session; every
  // row then runs on that one device.
  const sessionFor = (dim, eps) => ort.InferenceSession.create(normModel('SimplifiedLayerNormalization', { dim, eps, opset: 23 }), {
    executionProviders: ['webgpu'], graphOptimizationLevel: 'all', preferredOutputLocation: 'gpu-buffer',
  });
  const first = await sessionFor(16, 1e-6); // kept open: the device lives as long as a session does
  const device = await ort.env.webgpu.device;
  const info = (await navigator.gpu.requestAdapter())?.info ?? {}; // the same default adapter, for its name
  const exact = createGpuKernels(device);
  const native = createNativeRmsNorm(device);
  const out = [];
  for (const [rows, dim] of shapes) {
    const eps = 1e-6;
    const { x, w } = inputs(rows, dim);
    const want = rmsNorm(x, w, { eps });
    const xb = upload(device, x);
    const wb = upload(device, w);
    const yb = device.createBuffer({ size: x.byteLength, usage: S() });
    const session = await sessionFor(dim, eps);
    const feeds = {
      X: ort.Tensor.fromGpuBuffer(xb, { dataType: 'float32', dims: [rows, dim] }),
      scale: ort.Tensor.fromGpuBuffer(wb, { dataType: 'float32', dims: [dim] }),
    };
    let ortY = null;
    // REPEAT calls a sample, then one wait for the queue: a single call's
    // time would be mostly the wait's latency (milliseconds in Firefox).
    const record = (kernel) => async () => {
      const encoder = device.createCommandEncoder();
      for (let k = 0; k < REPEAT; k++) kernel(encoder);
      device.queue.submit([encoder.finish()]);
      await device.queue.onSubmittedWorkDone();
    };
    // The exact kernel as an engine's decode loop calls it: prepared once, each step recorded.
    const prepared = await exact.rmsNorm.prepare({ x: xb, weight: wb, out: yb }, { rows, dim, eps });
    const rowsToRun = [
      { id: 'webgpu-exact', name: 'rmsnorm-wasm/webgpu (exact, prepared call)',
        call: record((e) => prepared.run(e)),
        output: () => readBack(device, yb, x.length) },
      { id: 'webgpu-native', name: 'native-float WGSL (tree sum, inverseSqrt)',
        call: record((e) => native(e, { x: xb, weight: wb, out: yb }, { rows, dim, eps })),
        output: () => readBack(device, yb, x.length) },
      { id: 'ort-webgpu', name: `onnxruntime-web ${ort.env.versions.web} WebGPU, SimplifiedLayerNormalization`,
        call: async () => {
          for (let k = 0; k < REPEAT; k++) {
            ortY?.dispose();
            ortY = (await session.run(feeds)).Y;
          }
          await device.queue.onSubmittedWorkDone();
        },
        output: async () => new Float32Array(await ortY.getData()) },
    ];
    const seconds = rowsToRun.map(() => []);
    for (const r of rowsToRun) await r.call(); // warm-up: pipelines built
    const differingCounts = [];
    for (const r of rowsToRun) {
      await r.call();
      differingCounts.push(differing(await r.output(), want));
    }
    for (let round = 0; round < rounds; round++) {
      for (const [k, r] of rowsToRun.entries()) {
        let calls = 0;
        const start = performance.now();
        let now = start;
        while (now - start < minSeconds * 1000 || calls < 2) {
          await r.call();
          calls++;
          now = performance.now();
        }
        seconds[k].push((now - start) / 1000 / calls / REPEAT);
      }
    }
    out.push({
      rows, dim, values: x.length,
      results: rowsToRun.map((r, k) => ({ id: r.id, name: r.name, seconds: seconds[k], differing: differingCounts[k] })),
    });
    ortY?.dispose();
    prepared.destroy();
    await session.release();
    for (const b of [xb, wb, yb]) b.destroy();
  }
  await first.release();
  return { adapter: [info.vendor, info.architecture].filter(Boolean).join(' ') || 'unnamed adapter', shapes: out };
}
