// The GPU rows of the bench, measured in a page on one adapter, side by
// side in interleaved rounds: the exact kernel (src/webgpu, a prepared
// call as a decode loop makes one), a native-float WGSL kernel
// (web/lib/native-rmsnorm.js: tree reduction and inverseSqrt, what the peers
// do; prepared too, its bind group and uniforms made once, so that the
// two differ in their kernels alone), and onnxruntime-web's WebGPU backend running
// SimplifiedLayerNormalization. Each is timed on data already on the GPU,
// and its output read back once and compared with the JS reference, value
// by value.
//
// A call's time is the slope between two batches, n calls and 2n, each
// submitted and waited for: (T(2n) - T(n)) / n. The wait for the queue is
// a fixed cost that this takes out, and in Firefox it is large and comes
// in steps (the device is polled every 100 ms), so that a batch time alone
// measures the poll, not the kernels. n is chosen per row so that a batch
// takes well over that wait.
/* global GPUBufferUsage, GPUMapMode -- this module runs in the page */
import { createGpuKernels } from '../../../src/webgpu/index.js';
import { createNativeRmsNorm } from '../../../web/lib/native-rmsnorm.js';
import { rmsNorm } from '../../../src/reference/index.js';
import { normModel } from '../onnx-model.js';

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

const median = (a) => {
  const s = [...a].sort((p, q) => p - q);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

/** The queue's wait: an empty submit waited for, median of five, in ms. */
async function queueWait(device) {
  const times = [];
  for (let k = 0; k < 5; k++) {
    const start = performance.now();
    device.queue.submit([device.createCommandEncoder().finish()]);
    await device.queue.onSubmittedWorkDone();
    times.push(performance.now() - start);
  }
  return median(times);
}

/**
 * Measures every row at each shape ([rows, dim]): { adapter, wait (the
 * queue's, ms), shapes: [{ rows, dim, values, results: [{ id, name,
 * seconds: a call's, per round; batch: n; differing }] }] }. `batchMs`:
 * the least time of a batch of n calls (default: 400 ms, and 10 waits).
 */
/**
 * Each row's seconds a call, `rounds` times, rows interleaved: after a
 * warm-up call (pipelines built) and `check(row)` (its output against the
 * reference), the row's batch n is doubled from 2 until it takes `least`
 * ms (at most 65536 calls), and a round's time is the slope between n calls
 * and 2n (the header comment).
 */
async function timeRows(rowsToRun, rounds, least, check) {
  const timed = async (r, n) => {
    const start = performance.now();
    await r.call(n);
    return performance.now() - start;
  };
  const checks = [];
  for (const r of rowsToRun) {
    await r.call(1);
    checks.push(await check(r));
    r.n = 2;
    while (r.n < 65536 && (await timed(r, r.n)) < least) r.n *= 2;
  }
  const seconds = rowsToRun.map(() => []);
  for (let round = 0; round < rounds; round++) {
    for (const [k, r] of rowsToRun.entries()) {
      const once = await timed(r, r.n);
      const twice = await timed(r, 2 * r.n);
      seconds[k].push(Math.max(1e-9, (twice - once) / r.n / 1000));
    }
  }
  return { seconds, checks };
}

export async function measureGpu({ shapes, rounds = 7, batchMs }) {
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
  const wait = await queueWait(device);
  const least = batchMs ?? Math.max(400, 10 * wait);
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
    // n calls into one encoder, one submit, one wait.
    const batch = (kernel) => async (n) => {
      const encoder = device.createCommandEncoder();
      for (let k = 0; k < n; k++) kernel(encoder);
      device.queue.submit([encoder.finish()]);
      await device.queue.onSubmittedWorkDone();
    };
    const prepared = await exact.rmsNorm.prepare({ x: xb, weight: wb, out: yb }, { rows, dim, eps });
    const nativeCall = native.prepare({ x: xb, weight: wb, out: yb }, { rows, dim, eps });
    const rowsToRun = [
      { id: 'webgpu-exact', name: 'rmsnorm-wasm/webgpu (exact, prepared call)',
        call: batch((e) => prepared.run(e)), output: () => readBack(device, yb, x.length) },
      { id: 'webgpu-native', name: 'native-float WGSL (tree sum, inverseSqrt, prepared call)',
        call: batch(nativeCall.run), output: () => readBack(device, yb, x.length) },
      { id: 'ort-webgpu', name: `onnxruntime-web ${ort.env.versions.web} WebGPU, SimplifiedLayerNormalization`,
        call: async (n) => {
          for (let k = 0; k < n; k++) {
            ortY?.dispose();
            ortY = (await session.run(feeds)).Y;
          }
          await device.queue.onSubmittedWorkDone();
        },
        output: async () => new Float32Array(await ortY.getData()) },
    ];
    const { seconds, checks: differingCounts } = await timeRows(rowsToRun, rounds, least, async (r) => differing(await r.output(), want));
    out.push({
      rows, dim, values: x.length,
      results: rowsToRun.map((r, k) => ({ id: r.id, name: r.name, seconds: seconds[k], batch: r.n, differing: differingCounts[k] })),
    });
    ortY?.dispose();
    prepared.destroy();
    nativeCall.destroy();
    await session.release();
    for (const b of [xb, wb, yb]) b.destroy();
  }
  await first.release();
  return { adapter: [info.vendor, info.architecture].filter(Boolean).join(' ') || 'unnamed adapter', wait, shapes: out };
}

/** Bytes whose values differ between two byte arrays. */
function differingBytes(got, want) {
  let n = got.length === want.length ? 0 : Math.max(got.length, want.length);
  for (let i = 0; i < Math.min(got.length, want.length); i++) if (got[i] !== want[i]) n++;
  return n;
}

async function readBytes(device, buffer, length) {
  const size = Math.ceil(length / 4) * 4;
  const read = device.createBuffer({ size, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  const encoder = device.createCommandEncoder();
  encoder.copyBufferToBuffer(buffer, 0, read, 0, size);
  device.queue.submit([encoder.finish()]);
  await read.mapAsync(GPUMapMode.READ);
  const out = new Uint8Array(read.getMappedRange().slice(0, length));
  read.destroy();
  return out;
}

/** The block outputs the GPU rows of blocks measure, each against the storage dtype's out. */
export const BLOCK_ROWS = ['q8_0', 'q8_1', 'q8_K'];

/**
 * The GPU's ggml block outputs (params.outDtype) against the same call
 * with a float32 out, prepared device-form calls on data already on the
 * GPU, timed as measureGpu times its rows (the slope between batches of n
 * and 2n calls), in interleaved rounds: { adapter, wait, shapes: [{ rows,
 * dim, values, results: [{ id ('float32' or a format), seconds, batch,
 * differing (bytes unlike the JS reference's) }] }] }.
 */
export async function measureBlocks({ shapes, rounds = 7, batchMs }) {
  const adapter = await navigator.gpu.requestAdapter();
  const device = await adapter.requestDevice();
  const info = adapter.info ?? {};
  const wait = await queueWait(device);
  const least = batchMs ?? Math.max(400, 10 * wait);
  const gpu = createGpuKernels(device);
  const out = [];
  for (const [rows, dim] of shapes) {
    const eps = 1e-6;
    const { x, w } = inputs(rows, dim);
    const xb = upload(device, x);
    const wb = upload(device, w);
    const yb = device.createBuffer({ size: x.byteLength, usage: S() });
    const outs = [{ id: 'float32', outDtype: undefined }, ...BLOCK_ROWS.map((f) => ({ id: f, outDtype: f }))];
    const rowsToRun = [];
    for (const { id, outDtype } of outs) {
      const prepared = await gpu.rmsNorm.prepare({ x: xb, weight: wb, out: yb }, { rows, dim, eps, ...(outDtype ? { outDtype } : {}) });
      const want = rmsNorm(x, w, { eps, ...(outDtype ? { outDtype } : {}) });
      const bytes = new Uint8Array(want.buffer, want.byteOffset, want.byteLength);
      rowsToRun.push({
        id, prepared,
        call: async (n) => {
          const encoder = device.createCommandEncoder();
          for (let k = 0; k < n; k++) prepared.run(encoder);
          device.queue.submit([encoder.finish()]);
          await device.queue.onSubmittedWorkDone();
        },
        differing: async () => differingBytes(await readBytes(device, yb, bytes.length), bytes),
      });
    }
    const { seconds, checks: differingCounts } = await timeRows(rowsToRun, rounds, least, (r) => r.differing());
    out.push({ rows, dim, values: x.length, results: rowsToRun.map((r, k) => ({ id: r.id, seconds: seconds[k], batch: r.n, differing: differingCounts[k] })) });
    for (const r of rowsToRun) r.prepared.destroy();
    for (const b of [xb, wb, yb]) b.destroy();
  }
  device.destroy();
  return { adapter: [info.vendor, info.architecture].filter(Boolean).join(' ') || 'unnamed adapter', wait, shapes: out };
}

/**
 * What an engine waits for at load, on a new device: from createGpuKernels
 * to the first call's result read back (the device already made), and a
 * call after that (run, submit, read back), median of five; both in ms,
 * with the differing outputs.
 */
export async function measureSetup({ rows, dim }) {
  const device = await (await navigator.gpu.requestAdapter()).requestDevice();
  const { x, w } = inputs(rows, dim);
  const want = rmsNorm(x, w);
  const xb = upload(device, x);
  const wb = upload(device, w);
  const yb = device.createBuffer({ size: x.byteLength, usage: S() });
  await device.queue.onSubmittedWorkDone();
  const start = performance.now();
  const gpu = createGpuKernels(device);
  const prepared = await gpu.rmsNorm.prepare({ x: xb, weight: wb, out: yb }, { rows, dim });
  const call = async () => {
    const encoder = device.createCommandEncoder();
    prepared.run(encoder);
    device.queue.submit([encoder.finish()]);
    return readBack(device, yb, x.length);
  };
  const first = await call();
  const setup = performance.now() - start;
  const after = [];
  for (let k = 0; k < 5; k++) {
    const t = performance.now();
    await call();
    after.push(performance.now() - t);
  }
  prepared.destroy();
  device.destroy();
  return { setup, after: median(after), differing: differing(first, want) };
}
