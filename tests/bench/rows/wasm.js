// The package's own rows: each wasm backend zero-copy (data already in wasm
// memory, the kernel export called directly) and through the copying API
// (Float32Array in, Float32Array out, as an app calls rmsNorm).
import { init, rmsNorm } from '../../../src/index.js';
import { activeKernels } from '../../../src/api/runtime.js';

const FLOAT_BYTES = 4;

async function kernelsOf(backend) {
  await init({ backend });
  return activeKernels('bench');
}

function zeroCopy(backend) {
  return {
    id: `${backend}-zero-copy`,
    name: `${backend === 'simd' ? 'SIMD' : 'scalar'} wasm, zero-copy`,
    async setup({ x, w, rows, dim, eps }) {
      const kernels = await kernelsOf(backend);
      const { malloc, free, rmsnorm_f32: kernel } = kernels.exports;
      const xPtr = malloc(x.byteLength) >>> 0;
      const wPtr = malloc(w.byteLength) >>> 0;
      const yPtr = malloc(x.byteLength) >>> 0;
      if (xPtr === 0 || wPtr === 0 || yPtr === 0) throw new Error(`${backend}: wasm malloc failed`);
      kernels.heap.set(x, xPtr / FLOAT_BYTES);
      kernels.heap.set(w, wPtr / FLOAT_BYTES);
      const call = () => kernel(xPtr, wPtr, yPtr, rows, dim, eps);
      return {
        call,
        output: () => kernels.heap.slice(yPtr / FLOAT_BYTES, yPtr / FLOAT_BYTES + x.length),
        dispose: () => [xPtr, wPtr, yPtr].forEach((p) => free(p)),
      };
    },
  };
}

function copying(backend) {
  return {
    id: `${backend}-copying`,
    name: `${backend === 'simd' ? 'SIMD' : 'scalar'} wasm, copying API`,
    async setup({ x, w, eps }) {
      const y = new Float32Array(x.length);
      const call = () => rmsNorm(x, w, { eps, out: y });
      return {
        call,
        output: () => y,
        // rmsNorm runs on the backend of the last init(): select ours first.
        prepare: () => init({ backend }),
      };
    },
  };
}

export const simdZeroCopy = zeroCopy('simd');
export const simdCopying = copying('simd');
export const scalarZeroCopy = zeroCopy('scalar');
export const scalarCopying = copying('scalar');
