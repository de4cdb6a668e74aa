// The rows of the ggml block outputs (tests/bench/q8.js): the fused norm to
// q8_0 and q8_K blocks, against the zero-copy float32 norm followed by the
// package's own quantizer (two calls, the float32 row through memory), and
// against plain JS (the naive row's loops, then a quantizer as one would
// write it), and q8_0's floor: a kernel doing less than ggml's rule
// (tests/bench/q8-floor/q8_0_floor.c, built by `make` into
// build/q8-floor.wasm), the least a fused kernel could cost. Each row's
// output is its blocks dequantized, checked against the float64 oracle
// within the quantization's error.
import { alloc, dequantize, fromFloat32, init, quantize, rmsNorm, toFloat32 } from '../../../src/index.js';
import { BLOCK_FORMAT } from '../../../src/loader/abi.js';
import { naiveJs } from './js.js';
import { standaloneExports } from './standalone.js';
import { simdExport, simdZeroCopy } from './wasm.js';

/** The formats benched (q8_1 is q8_0 with a sum), each block's values and bytes the package's table's. */
export const FORMATS = { q8_0: BLOCK_FORMAT.q8_0, q8_K: BLOCK_FORMAT.q8_K };

/** The q8 rows' tolerance against the oracle, relative to the output's largest value: half a step of amax/127, and float16 d. */
const Q8_TOLERANCE = 1 / 127;

const blockBytes = (format, { rows, dim }) => rows * (dim / FORMATS[format].values) * FORMATS[format].bytes;

/** A Uint8Array view of a tensor's bytes (the tensor holds float32 values: bytes / 4 of them, rounded up). */
function byteTensor(bytes) {
  const tensor = alloc(Math.ceil(bytes / 4));
  return { tensor, view: () => new Uint8Array(tensor.array.buffer, tensor.byteOffset, bytes) };
}

/** Row ids and names of a weight and storage dtype: float32's are the plain ones. */
const suffix = (weightDtype, storage = 'float32') => {
  if (storage !== 'float32') return { id: `-${storage}-storage`, name: `, ${storage} rows and weight` };
  return weightDtype === 'float32' ? { id: '', name: '' } : { id: `-${weightDtype}`, name: `, ${weightDtype} weight` };
};

/** Bits of float32 values rounded to a 16-bit dtype (where the engine has Float16Array, fromFloat32 returns one). */
const bits16 = (values, dtype) => {
  const rounded = fromFloat32(values, { dtype });
  return new Uint16Array(rounded.buffer, rounded.byteOffset, rounded.length);
};

/** The weight in a tensor of its dtype (16-bit weights rounded from the shape's float32 ones) and the options naming it. */
function weightTensor(shape, weightDtype) {
  const wt = alloc(shape.dim, weightDtype);
  // The bits first: converting may grow wasm memory, which detaches an array taken before.
  const values = weightDtype === 'float32' ? shape.w : bits16(shape.w, weightDtype);
  wt.array.set(values);
  return { wt, options: weightDtype === 'float32' ? {} : { weightDtype } };
}

/** x in a tensor of the storage dtype, the options naming it, and what the oracle must normalize (x and w as rounded). */
function rowsTensor(shape, storage, weightDtype) {
  const xt = alloc(shape.x.length, storage);
  if (storage === 'float32') {
    xt.array.set(shape.x);
    return { xt, options: {}, expected: { tolerance: Q8_TOLERANCE } };
  }
  const xBits = bits16(shape.x, storage);
  xt.array.set(xBits);
  const widened = (bits) => toFloat32(bits, { dtype: storage });
  const expected = { tolerance: Q8_TOLERANCE, input: widened(xBits), weight: weightDtype === storage ? widened(bits16(shape.w, storage)) : shape.w };
  return { xt, options: { dtype: storage }, expected };
}

function fused(format, weightDtype = 'float32', storage = 'float32') {
  const { id, name } = suffix(weightDtype, storage);
  return {
    id: `${format}-fused${id}`,
    name: `SIMD zero-copy, fused norm → ${format}${name}`,
    format,
    weightDtype,
    storage,
    fusedId: `${format}-fused${id}`,
    bytes: (shape) => 4 * (shape.rows * shape.dim + shape.dim) + blockBytes(format, shape),
    async setup(shape) {
      await init({ backend: 'simd' });
      const { xt, options: rowOptions, expected } = rowsTensor(shape, storage, weightDtype);
      const { wt, options: weightOptions } = weightTensor(shape, weightDtype);
      const out = byteTensor(blockBytes(format, shape));
      const options = { eps: shape.eps, outDtype: format, out: out.view(), ...rowOptions, ...weightOptions };
      return {
        call: () => rmsNorm(xt, wt, options),
        output: () => dequantize(out.view(), { dtype: format }),
        expected,
        // A view of wasm memory detaches when another row's tensors grow it: a new one before each timed loop.
        prepare: () => {
          options.out = out.view();
          return init({ backend: 'simd' });
        },
        dispose: () => [xt, wt, out.tensor].forEach((t) => t.free()),
      };
    },
  };
}

/**
 * The fused call prepared once and run, as an engine's decode loop makes it:
 * the kernel with the least of the JS layer (the floor, a bare export, is
 * compared with this row).
 */
function fusedPrepared(format) {
  return {
    id: `${format}-fused-prepared`,
    name: `SIMD zero-copy, fused norm → ${format}, prepared (rmsNorm.prepare(...).run())`,
    format,
    fusedId: `${format}-fused`,
    bytes: (shape) => 4 * (shape.rows * shape.dim + shape.dim) + blockBytes(format, shape),
    async setup(shape) {
      await init({ backend: 'simd' });
      const { xt, expected } = rowsTensor(shape, 'float32', 'float32');
      const { wt } = weightTensor(shape, 'float32');
      const out = byteTensor(blockBytes(format, shape));
      let prepared = null;
      return {
        call: () => prepared.run(),
        output: () => dequantize(out.view(), { dtype: format }),
        expected,
        // Prepared again before each timed loop: a grown memory detaches the view it holds.
        prepare: async () => {
          await init({ backend: 'simd' });
          prepared = rmsNorm.prepare(xt, wt, { eps: shape.eps, outDtype: format, out: out.view() });
        },
        dispose: () => [xt, wt, out.tensor].forEach((t) => t.free()),
      };
    },
  };
}

/** The norm, then quantize(): 16-bit rows' norm widened to float32 first (toFloat32), as quantize() takes float32 values. */
function normThenQuantize(format, weightDtype = 'float32', storage = 'float32') {
  const { id, name } = suffix(weightDtype, storage);
  return {
    id: `${format}-norm-then-quantize${id}`,
    name: `SIMD zero-copy norm, then quantize() → ${format}${name}`,
    format,
    weightDtype,
    storage,
    fusedId: `${format}-fused${id}`,
    bytes: (shape) => 4 * (3 * shape.rows * shape.dim + shape.dim) + blockBytes(format, shape),
    async setup(shape) {
      await init({ backend: 'simd' });
      const { xt, options: rowOptions, expected } = rowsTensor(shape, storage, weightDtype);
      const { wt, options: weightOptions } = weightTensor(shape, weightDtype);
      const yt = alloc(shape.x.length, storage);
      const wide = storage === 'float32' ? yt : alloc(shape.x.length);
      const out = byteTensor(blockBytes(format, shape));
      const normOptions = { eps: shape.eps, out: yt, ...rowOptions, ...weightOptions };
      const widenOptions = { dtype: storage, out: wide };
      const quantizeOptions = { dtype: format, out: out.view() };
      return {
        call: () => {
          rmsNorm(xt, wt, normOptions);
          if (wide !== yt) toFloat32(yt, widenOptions);
          quantize(wide, quantizeOptions);
        },
        output: () => dequantize(out.view(), { dtype: format }),
        expected,
        prepare: () => {
          quantizeOptions.out = out.view();
          return init({ backend: 'simd' });
        },
        dispose: () => [...new Set([xt, wt, yt, wide, out.tensor])].forEach((t) => t.free()),
      };
    },
  };
}

/** Blocks as a plain JS quantizer would make them: amax, d, round(x / d). */
function plainQuantize(y, format, bytes) {
  const { values, bytes: size } = FORMATS[format];
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let b = 0, at = 0; b < y.length; b += values, at += size) {
    let amax = 0;
    for (let j = 0; j < values; j++) amax = Math.max(amax, Math.abs(y[b + j]));
    const d = amax / 127;
    const id = d ? 1 / d : 0;
    const qs = at + (format === 'q8_K' ? 4 : 2);
    for (let j = 0; j < values; j++) bytes[qs + j] = Math.round(y[b + j] * id) & 0xff;
    if (format === 'q8_K') {
      view.setFloat32(at, d, true);
      for (let g = 0; g < 16; g++) {
        let sum = 0;
        for (let j = 16 * g; j < 16 * g + 16; j++) sum += (bytes[qs + j] << 24) >> 24;
        view.setInt16(at + 260 + 2 * g, sum, true);
      }
    } else {
      view.setUint16(at, float16Bits(d), true);
    }
  }
}

/** float16 bits of a positive value (truncating: a baseline, not a reference). */
function float16Bits(v) {
  if (v < 2 ** -14) return Math.round(v * 2 ** 24);
  const e = Math.floor(Math.log2(v));
  return ((e + 15) << 10) | Math.floor((v / 2 ** e - 1) * 1024);
}

function plainJs(format) {
  return {
    id: `${format}-plain-js`,
    name: `plain JS norm, then a JS quantizer → ${format}`,
    format,
    fusedId: `${format}-fused`,
    setup(shape) {
      const norm = naiveJs.setup(shape);
      const bytes = new Uint8Array(blockBytes(format, shape));
      return {
        call: () => {
          norm.call();
          plainQuantize(norm.output(), format, bytes);
        },
        output: () => dequantize(bytes, { dtype: format }),
        expected: { tolerance: Q8_TOLERANCE },
      };
    },
  };
}

/** q8_0's floor (see the top): not ggml's bytes, and so only within the oracle's tolerance. */
const q8_0Floor = {
  id: 'q8_0-floor',
  name: 'floor: y in registers, nearest-even, one division, no float16 rounding (not ggml\'s bytes) → q8_0',
  format: 'q8_0',
  fusedId: 'q8_0-fused-prepared',
  async setup({ x, w, rows, dim, eps }) {
    const exports = await standaloneExports('q8-floor.wasm');
    const bytes = blockBytes('q8_0', { rows, dim });
    const [xp, wp, qp] = [4 * x.length, 4 * w.length, bytes].map((n) => exports.malloc(n));
    // Views made after every malloc: a grown memory detaches the old buffer.
    new Float32Array(exports.memory.buffer, xp, x.length).set(x);
    new Float32Array(exports.memory.buffer, wp, w.length).set(w);
    return {
      call: () => exports.q8_0_floor(xp, wp, qp, rows, dim, eps),
      output: () => dequantize(new Uint8Array(exports.memory.buffer, qp, bytes).slice(), { dtype: 'q8_0' }),
      expected: { tolerance: Q8_TOLERANCE },
      dispose: () => [xp, wp, qp].forEach((p) => exports.free(p)),
    };
  },
};

/**
 * The float32 norm alone (the package's zero-copy row, and its export called
 * directly: the floor has no JS layer to pay for), then each format's three
 * rows, q8_0's two with a bfloat16 and a float16 weight and with 16-bit rows
 * and weight, and q8_K's with a float16 weight (issue 47: every weight
 * dtype's and storage's fused call against its norm then quantize()), and
 * q8_0's floor. Each row names the
 * fused row it is compared with (fusedId).
 */
const WEIGHT_ROWS = [
  ...['bfloat16', 'float16'].map((weightDtype) => ['q8_0', weightDtype, 'float32']),
  ...['bfloat16', 'float16'].map((storage) => ['q8_0', storage, storage]),
  ['q8_K', 'float16', 'float32'],
].flatMap(([format, weightDtype, storage]) => [fused(format, weightDtype, storage), normThenQuantize(format, weightDtype, storage)]);
export const Q8_ROWS = [simdZeroCopy, simdExport, ...Object.keys(FORMATS).flatMap((format) => [fused(format), normThenQuantize(format), plainJs(format)]), fusedPrepared('q8_0'), ...WEIGHT_ROWS, q8_0Floor];
