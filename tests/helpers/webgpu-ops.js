// Runs the soft-float's single operations (src/webgpu/wgsl/softfloat.js) and the
// common path's (src/webgpu/wgsl/fastfloat.js) on the GPU over arrays of bit
// patterns, in the page: the test compares each result with Math.fround in
// Node.
/* global GPUBufferUsage, GPUMapMode -- this module runs in the page */
import { FASTFLOAT_WGSL } from '../../src/webgpu/wgsl/fastfloat.js';
import { SOFTFLOAT_WGSL } from '../../src/webgpu/wgsl/softfloat.js';

/** The names of the operations, in the shader's op-code order. */
export const OPS = ['add', 'mul', 'div', 'sqrt', 'to_bf16', 'to_f16', 'from_f16', 'fast_square', 'fast_mul', 'fast_add', 'fast_mul_free'];

const SHADER = `${SOFTFLOAT_WGSL}${FASTFLOAT_WGSL}
@group(0) @binding(0) var<storage, read> a: array<u32>;
@group(0) @binding(1) var<storage, read> b: array<u32>;
@group(0) @binding(2) var<storage, read_write> out: array<u32>;
@group(0) @binding(3) var<uniform> op: vec4<u32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
  let i = id.x + id.y * 65535u * 64u;
  if (i >= arrayLength(&out)) { return; }
  let x = a[i];
  let y = b[i];
  var r = 0u;
  switch (op.x) {
    case 0u: { r = f32_add(x, y); }
    case 1u: { r = f32_mul(x, y); }
    case 2u: { r = f32_div(x, y); }
    case 3u: { r = f32_sqrt(x); }
    case 4u: { r = f32_to_bf16(x); }
    case 5u: { r = f32_to_f16(x); }
    case 6u: { r = f16_to_f32(x); }
    case 7u: { r = square(x); }
    case 8u: { r = mul(x, y, threshold47(y)); }
    case 9u: { r = add_pos(x, y); }
    default: { r = mul_free(x, y); }
  }
  out[i] = r;
}`;

/** out[i] = op(a[i], b[i]) on the GPU, for Uint32Arrays a and b of one length. */
export async function runOp(device, op, a, b) {
  const code = OPS.indexOf(op);
  if (code < 0) throw new RangeError(`runOp: unknown op ${op}`);
  const module = device.createShaderModule({ code: SHADER });
  const pipeline = device.createComputePipeline({ layout: 'auto', compute: { module, entryPoint: 'main' } });
  const upload = (data, usage) => {
    const buffer = device.createBuffer({ size: Math.max(16, data.byteLength), usage, mappedAtCreation: true });
    new Uint32Array(buffer.getMappedRange()).set(data);
    buffer.unmap();
    return buffer;
  };
  const S = GPUBufferUsage.STORAGE;
  const bufA = upload(a, S);
  const bufB = upload(b, S);
  const out = device.createBuffer({ size: a.byteLength, usage: S | GPUBufferUsage.COPY_SRC });
  const read = device.createBuffer({ size: a.byteLength, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  const uniform = upload(new Uint32Array([code, 0, 0, 0]), GPUBufferUsage.UNIFORM);
  const bindGroup = device.createBindGroup({
    layout: pipeline.getBindGroupLayout(0),
    entries: [bufA, bufB, out, uniform].map((buffer, binding) => ({ binding, resource: { buffer } })),
  });
  const encoder = device.createCommandEncoder();
  const pass = encoder.beginComputePass();
  pass.setPipeline(pipeline);
  pass.setBindGroup(0, bindGroup);
  const groups = Math.ceil(a.length / 64);
  pass.dispatchWorkgroups(Math.min(groups, 65535), Math.ceil(groups / 65535));
  pass.end();
  encoder.copyBufferToBuffer(out, 0, read, 0, a.byteLength);
  device.queue.submit([encoder.finish()]);
  await read.mapAsync(GPUMapMode.READ);
  const result = new Uint32Array(read.getMappedRange().slice(0));
  read.unmap();
  for (const buffer of [bufA, bufB, out, read, uniform]) buffer.destroy();
  return result;
}
