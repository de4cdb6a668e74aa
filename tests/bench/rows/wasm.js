// The package's own rows: each wasm backend zero-copy (tensors from alloc(),
// the data already in wasm memory, as an engine keeping its activations there
// calls rmsNorm) and through the copying API (Float32Array in, Float32Array
// out); the prepared call; the rows at a row stride. One diagnostic row calls
// the SIMD module's export directly, to show what the JS API itself costs
// per call, and one makes the allocating call's result array alone.
import { alloc, init, rmsNorm } from '../../../src/index.js';
import { activeKernels } from '../../../src/api/runtime.js';
import { CAST_MODE, DTYPE } from '../../../src/loader/abi.js';

const label = (backend) => (backend === 'simd' ? 'SIMD' : 'scalar');

/** x, w and y as tensors of `backend`'s memory, x and w filled. */
async function tensors(backend, x, w) {
  await init({ backend });
  const xt = alloc(x.length);
  const wt = alloc(w.length);
  const yt = alloc(x.length);
  xt.array.set(x);
  wt.array.set(w);
  return { xt, wt, yt, free: () => [xt, wt, yt].forEach((t) => t.free()) };
}

function zeroCopy(backend) {
  return {
    id: `${backend}-zero-copy`,
    name: `${label(backend)} wasm, zero-copy (alloc tensors)`,
    async setup({ x, w, eps }) {
      const { xt, wt, yt, free } = await tensors(backend, x, w);
      const options = { eps, out: yt };
      return {
        call: () => rmsNorm(xt, wt, options),
        output: () => yt.array.slice(),
        // rmsNorm runs on the backend of the last init(): select ours first.
        prepare: () => init({ backend }),
        dispose: free,
      };
    },
  };
}

function copying(backend) {
  return {
    id: `${backend}-copying`,
    name: `${label(backend)} wasm, copying API`,
    async setup({ x, w, eps }) {
      const y = new Float32Array(x.length);
      const options = { eps, out: y };
      return {
        call: () => rmsNorm(x, w, options),
        output: () => y,
        prepare: () => init({ backend }),
      };
    },
  };
}

// The quick start's form, `y = rmsNorm(x, w)`: the copying call, with a new
// result array each call instead of a reused `out`.
export const simdAllocating = {
  id: 'simd-allocating',
  name: 'SIMD wasm, copying API, a new result per call (no out)',
  async setup({ x, w, eps }) {
    const options = { eps };
    let y;
    return {
      call: () => {
        y = rmsNorm(x, w, options);
      },
      output: () => y,
      prepare: () => init({ backend: 'simd' }),
    };
  },
};

// What the allocating call cannot avoid: making its result. Not RMSNorm.
export const newArray = {
  id: 'new-array',
  name: 'new Float32Array(rows × dim) alone (no norm)',
  expects: 'nothing',
  async setup({ x }) {
    let y;
    return { call: () => { y = new Float32Array(x.length); }, output: () => y };
  },
};

// A new array with every value written once (a copy of x): what any
// call that returns a new result pays at least, whatever computes the
// values. An engine may give a new array its memory only when it is first
// written (Chromium does for large ones), so new-array alone can cost
// much less than this.
export const newArrayWritten = {
  id: 'new-array-written',
  name: 'new Float32Array(rows × dim), then x copied into it (no norm)',
  expects: 'copy',
  async setup({ x }) {
    let y;
    return {
      call: () => {
        y = new Float32Array(x.length);
        y.set(x);
      },
      output: () => y,
    };
  },
};

// The same two parts done together in one call, as the allocating call
// does them: a new array made, then the copying call (into a reused out).
// Alone, each leaves the engine's allocator and cache in a state the
// other does not meet, so their sum understates what the two cost together.
export const newArrayThenCopying = {
  id: 'new-array-then-copying',
  name: 'new Float32Array, then the copying call (into out)',
  async setup({ x, w, eps }) {
    const out = new Float32Array(x.length);
    const options = { eps, out };
    const made = { array: null }; // kept, as the caller keeps a result
    return {
      call: () => {
        made.array = new Float32Array(x.length);
        rmsNorm(x, w, options);
      },
      output: () => out,
      prepare: () => init({ backend: 'simd' }),
    };
  },
};

// What the allocating call is bounded by (target 7): the same result made
// by the caller, `y = new Float32Array(n); rmsNorm(x, w, { out: y })`, as
// a user writes it (a new options object, a new out each call).
export const userNewArrayOut = {
  id: 'user-new-array-out',
  name: 'y = new Float32Array(n); rmsNorm(x, w, { eps, out: y }) (the caller makes the result)',
  async setup({ x, w, eps }) {
    let y;
    return {
      call: () => {
        y = new Float32Array(x.length);
        rmsNorm(x, w, { eps, out: y });
      },
      output: () => y,
      prepare: () => init({ backend: 'simd' }),
    };
  },
};

// An engine's decode loop: the call prepared once, run every token.
export const simdPrepared = {
  id: 'simd-prepared',
  name: 'SIMD wasm, zero-copy, prepared (rmsNorm.prepare(...).run())',
  async setup({ x, w, eps }) {
    const { xt, wt, yt, free } = await tensors('simd', x, w);
    const prepared = rmsNorm.prepare(xt, wt, { eps, out: yt });
    return { call: () => prepared.run(), output: () => yt.array.slice(), dispose: free };
  },
};

// QK-norm's layout: the shape's rows inside a buffer twice as wide (each
// row followed by dim values of another tensor), zero-copy, in place.
export const simdStrided = {
  id: 'simd-strided',
  name: 'SIMD wasm, zero-copy, rows 2 × dim apart (rowStride)',
  async setup({ x, w, rows, dim, eps }) {
    await init({ backend: 'simd' });
    const stride = 2 * dim;
    const length = (rows - 1) * stride + dim;
    const [xt, wt, yt] = [alloc(length), alloc(dim), alloc(length)];
    for (let r = 0; r < rows; r++) xt.array.set(x.subarray(r * dim, (r + 1) * dim), r * stride);
    wt.array.set(w);
    const options = { eps, rowStride: stride, out: yt };
    const packed = () => {
      const y = new Float32Array(rows * dim);
      for (let r = 0; r < rows; r++) y.set(yt.array.subarray(r * stride, r * stride + dim), r * dim);
      return y;
    };
    return {
      call: () => rmsNorm(xt, wt, options),
      output: packed,
      prepare: () => init({ backend: 'simd' }),
      dispose: () => [xt, wt, yt].forEach((t) => t.free()),
    };
  },
};

const DTYPE_F32 = DTYPE.float32.code;
const CAST_LLAMA = CAST_MODE.llama;

export const simdExport = {
  id: 'simd-export',
  name: 'SIMD wasm export called directly (no JS API)',
  async setup({ x, w, rows, dim, eps }) {
    const { xt, wt, yt, free } = await tensors('simd', x, w);
    const kernel = activeKernels('bench').exports.rmsnorm;
    const [xp, wp, yp] = [xt.byteOffset, wt.byteOffset, yt.byteOffset];
    return {
      call: () => kernel(xp, 0, wp, yp, 0, rows, dim, dim, eps, DTYPE_F32, DTYPE_F32, CAST_LLAMA, 0),
      output: () => yt.array.slice(),
      dispose: free,
    };
  },
};

export const simdZeroCopy = zeroCopy('simd');
export const simdCopying = copying('simd');
export const scalarZeroCopy = zeroCopy('scalar');
export const scalarCopying = copying('scalar');
