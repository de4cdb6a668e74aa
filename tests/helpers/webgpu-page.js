// The page side of the WebGPU tests and the tutorial's checks: runs calls
// sent from Node (inputs as base64 bits) through the array form of the
// backend and sends the outputs back the same way.
import { createArrayKernels, createGpuKernels } from '../../src/webgpu/index.js';

export function toBase64(view) {
  const bytes = new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
  let text = '';
  for (let i = 0; i < bytes.length; i += 0x8000) text += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(text);
}

export function fromBase64(text, kind) {
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return kind === 'float32' ? new Float32Array(bytes.buffer) : new Uint16Array(bytes.buffer);
}

/** A device on the default adapter, with the adapter's description. */
export async function openDevice() {
  if (!navigator.gpu) throw new Error('navigator.gpu is undefined: this engine has no WebGPU');
  const adapter = await navigator.gpu.requestAdapter();
  if (!adapter) throw new Error('navigator.gpu.requestAdapter() gave no adapter');
  const device = await adapter.requestDevice();
  const info = adapter.info ?? {};
  return { device, adapter: [info.vendor, info.architecture, info.device, info.description].filter(Boolean).join(' ') || 'unnamed adapter' };
}

/**
 * Runs each call { fn, x, residual, weight, kinds: { x, weight }, options:
 * { ..., rstd: rows or absent, out: 'x' for in place } } and returns
 * { out, residual, rstd } as base64, or { error } for a GPU validation error.
 */
export async function runCalls(calls) {
  const { device, adapter } = await openDevice();
  const arrays = createArrayKernels(createGpuKernels(device));
  const results = [];
  for (const call of calls) {
    const x = fromBase64(call.x, call.kinds.x);
    const weight = call.weight === null ? null : fromBase64(call.weight, call.kinds.weight);
    const options = { ...call.options };
    if (options.rstd !== undefined) options.rstd = new Float32Array(options.rstd);
    if (options.out === 'x') options.out = x;
    device.pushErrorScope('validation');
    let out;
    let residual;
    if (call.fn === 'addRmsNorm') {
      residual = fromBase64(call.residual, call.kinds.x);
      out = await arrays.addRmsNorm(x, residual, weight, options);
    } else {
      out = await arrays.rmsNorm(x, weight, options);
    }
    const error = await device.popErrorScope();
    if (error) {
      results.push({ error: error.message });
      continue;
    }
    results.push({
      out: toBase64(out),
      residual: residual && toBase64(residual),
      rstd: options.rstd && toBase64(options.rstd),
    });
  }
  device.destroy();
  return { adapter, results };
}
