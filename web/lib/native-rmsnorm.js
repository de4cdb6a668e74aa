// The peers' method, for comparison only (the bench, the tutorial; not in
// the npm package): RMSNorm in native WGSL float32 as GPU engines write it,
// a workgroup tree
// reduction of x * x and inverseSqrt. WGSL lets every one of these
// operations round either way, flush subnormals, and reassociate, so its
// bits are the adapter's; it is not part of the contract and has no checks.
// float32 storage, a float32 weight, one row per workgroup.
const SHADER = /* wgsl */ `
struct Params { rows: u32, dim: u32, eps: f32, pad: u32 }
@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read> w: array<f32>;
@group(0) @binding(3) var<storage, read_write> y: array<f32>;
var<workgroup> partial: array<f32, 256>;
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) tid: u32) {
  let row = wid.x + wid.y * 65535u;
  if (row >= P.rows) { return; }
  let base = row * P.dim;
  var s = 0.0;
  for (var i = tid; i < P.dim; i = i + 256u) { let v = x[base + i]; s = s + v * v; }
  partial[tid] = s;
  workgroupBarrier();
  for (var half = 128u; half > 0u; half = half / 2u) {
    if (tid < half) { partial[tid] = partial[tid] + partial[tid + half]; }
    workgroupBarrier();
  }
  let inv = inverseSqrt(partial[0] / f32(P.dim) + P.eps);
  for (var i = tid; i < P.dim; i = i + 256u) { y[base + i] = x[base + i] * inv * w[i]; }
}`;

/**
 * nativeRmsNorm(encoder, { x, weight, out } GPUBuffers, { rows, dim, eps })
 * records one pass, making its uniform buffer and bind group;
 * nativeRmsNorm.prepare(buffers, shape) makes them once and returns
 * { run(encoder), destroy() }, as a decode loop would (the bench times
 * that, beside the exact kernel's prepared call).
 */
export function createNativeRmsNorm(device) {
  const module = device.createShaderModule({ code: SHADER, label: 'native-float rmsNorm (peers)' });
  const pipeline = device.createComputePipeline({ layout: 'auto', compute: { module, entryPoint: 'main' } });
  const prepare = ({ x, weight, out }, { rows, dim, eps = 1e-6 }) => {
    const uniform = device.createBuffer({ size: 16, usage: GPUBufferUsage.UNIFORM, mappedAtCreation: true });
    const view = new DataView(uniform.getMappedRange());
    view.setUint32(0, rows, true);
    view.setUint32(4, dim, true);
    view.setFloat32(8, eps, true);
    uniform.unmap();
    const bindGroup = device.createBindGroup({
      layout: pipeline.getBindGroupLayout(0),
      entries: [uniform, x, weight, out].map((buffer, binding) => ({ binding, resource: { buffer } })),
    });
    const run = (encoder) => {
      const pass = encoder.beginComputePass();
      pass.setPipeline(pipeline);
      pass.setBindGroup(0, bindGroup);
      pass.dispatchWorkgroups(Math.min(rows, 65535), Math.ceil(rows / 65535));
      pass.end();
    };
    return { run, destroy: () => uniform.destroy() };
  };
  // (The call form's uniform buffer is left to the collector: destroyed
  // before its pass is submitted, it would make the submit fail.)
  const nativeRmsNorm = (encoder, buffers, shape) => prepare(buffers, shape).run(encoder);
  nativeRmsNorm.prepare = prepare;
  return nativeRmsNorm;
}
