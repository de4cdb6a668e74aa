// The bit-exactness suite, one list of cases for every engine: Node runs it
// in tests/bit-exact.test.js, each browser in a page of tests/engines.test.js
// that imports this module. Seeded cases over float32 and the 16-bit dtypes,
// both cast modes, views, chunked batches, special values, the fused residual
// add and LayerNorm; each case is computed by every implementation of
// tests/helpers/implementations.js and checked by its assertAllAgree, and the
// SIMD outputs are folded into one digest that must be the same in every
// engine.
//
// Inputs avoid Math.log and Math.cos (web/lib/random.js's Box-Muller): the
// engines' libm differ in the last bit, so the same seed would not give the
// same floats everywhere. Normal-ish values here are an Irwin-Hall sum of
// four uniforms, which is exact in float64, then scaled and rounded by
// IEEE operations only.
import { narrow } from '../../src/reference/float16.js';
import { prng, uniformArray } from '../../web/lib/random.js';
import { assertAllAgree, implementations } from './implementations.js';
import { EDGE_POWERS, q8EdgeWeight, signedPowerRows } from './q8-edges.js';

const DTYPES16 = ['bfloat16', 'float16'];
const CAST_MODES = ['llama', 'gemma'];

/** n float32 values, mean 0 and standard deviation `sigma`, from IEEE arithmetic only. */
export function portableNormal(rand, n, sigma = 1) {
  const a = new Float32Array(n);
  const unit = sigma * Math.sqrt(3); // sqrt is correctly rounded in every engine
  for (let i = 0; i < n; i++) a[i] = (rand() + rand() + rand() + rand() - 2) * unit;
  return a;
}

/** The same as `dtype` bit patterns (Uint16Array), rounded by the reference's conversion. */
function portableNormal16(rand, n, dtype, sigma) {
  return Uint16Array.from(portableNormal(rand, n, sigma), (v) => narrow(v, dtype));
}

const to16 = (values, dtype) => Uint16Array.from(values, (v) => narrow(Math.fround(v), dtype));

/** Every case: { what, dtype ('bytes' for ggml's blocks), run(impl) → an output array or several, same?: pairs
 * of outputs that must have the same bits within each implementation }. */
export function bitExactCases() {
  const cases = [];
  const add = (what, dtype, run, same = []) => cases.push({ what, dtype, run, same });

  // float32 over the dims that break kernels: every tail of the 16-wide step
  // and of the 4-wide output loop, block edges, long rows; eps = 0 at the
  // extreme scales sends rows through the rescue path.
  const dims = [...Array.from({ length: 40 }, (_, i) => i + 1),
    63, 64, 65, 127, 255, 256, 257, 896, 1024, 4095, 4096, 8192, 16384];
  const scales = [1e-30, 1e-20, 1e-10, 1, 1e10, 1e20, 1e30];
  for (const dim of dims) {
    for (const rows of dim <= 257 ? [0, 1, 2, 3, 7, 33] : [1, 2, 7]) {
      for (const [s, scale] of scales.entries()) {
        const seed = dim * 1000 + rows * 10 + s;
        const rand = prng(seed);
        const x = portableNormal(rand, rows * dim, scale);
        const w = uniformArray(rand, dim, 0.5, 1.5);
        const eps = s % 2 === 0 ? 0 : 1e-6;
        add(`float32 rows=${rows} dim=${dim} scale=${scale} eps=${eps} seed=${seed}`, 'float32',
          (impl) => impl.rmsNorm(x, w, { eps }));
      }
    }
  }
  for (const dim of [1, 5, 16, 17, 300, 4096]) {
    const seed = 7 + dim;
    const x = portableNormal(prng(seed), 3 * dim, 2);
    add(`float32 rows=3 dim=${dim} weight=null seed=${seed}`, 'float32', (impl) => impl.rmsNorm(x, null, { dim }));
  }

  // Views at any byte offset, in place, and into an offset `out`: the bits
  // of a fresh result in every implementation.
  for (const dim of [3, 16, 33, 1024]) {
    for (const offset of [1, 2, 3, 5]) {
      const seed = dim + 100 * offset;
      const rand = prng(seed);
      const rows = 7;
      const backing = portableNormal(rand, rows * dim + 2 * offset, 3);
      const wBacking = uniformArray(rand, dim + offset, 0.5, 1.5);
      const view = () => new Float32Array(backing.buffer.slice(0), offset * 4, rows * dim);
      const w = new Float32Array(wBacking.buffer, offset * 4, dim);
      add(`float32 views rows=${rows} dim=${dim} byteOffset=${offset * 4} seed=${seed}: fresh, in place, out at byteOffset 4`, 'float32', (impl) => {
        const inPlace = view();
        if (impl.rmsNorm(inPlace, w, { out: inPlace }) !== inPlace) throw new Error(`${impl.name}: an in-place call must return x`);
        const out = new Float32Array(new ArrayBuffer((rows * dim + 1) * 4), 4, rows * dim);
        return [impl.rmsNorm(view(), w), inPlace, impl.rmsNorm(view(), w, { out })];
      }, [[0, 1], [0, 2]]);
    }
  }

  // A batch staged in several chunks (2^18 / 1000 is not a whole number of
  // rows, so chunk edges fall inside it): each row has the bits of the row
  // normalized alone.
  {
    const dim = 1000;
    const rows = 700;
    const seed = 99;
    const rand = prng(seed);
    const x = portableNormal(rand, rows * dim, 5);
    const w = uniformArray(rand, dim, 0.5, 1.5);
    const picked = [0, 261, 262, 263, 699];
    add(`float32 rows=${rows} dim=${dim} seed=${seed}: the batch, then rows ${picked} of it and alone`, 'float32', (impl) => {
      const whole = impl.rmsNorm(x, w);
      const row = (a, r) => a.subarray(r * dim, (r + 1) * dim);
      return [whole, ...picked.map((r) => row(whole, r)), ...picked.map((r) => impl.rmsNorm(row(x, r), w))];
    }, picked.map((_, k) => [1 + k, 1 + picked.length + k]));
  }

  // 16-bit storage: every weight kind, weight offset and cast mode.
  for (const dtype of DTYPES16) {
    for (const dim of [1, 7, 16, 17, 33, 64, 257, 896]) {
      const seed = dim * 7 + (dtype === 'float16' ? 1 : 0);
      const rand = prng(seed);
      const x = portableNormal16(rand, 3 * dim, dtype, 3);
      const weights = { none: null, float32: uniformArray(rand, dim, 0.5, 1.5), [dtype]: to16(uniformArray(rand, dim, 0.5, 1.5), dtype) };
      for (const [kind, weight] of Object.entries(weights)) {
        for (const castMode of CAST_MODES) {
          for (const weightOffset of weight === null ? [undefined] : [undefined, 1]) {
            const options = { dtype, castMode, weightOffset, dim };
            add(`${dtype} rows=3 dim=${dim} weight=${kind} castMode=${castMode} weightOffset=${weightOffset} seed=${seed}`,
              dtype, (impl) => impl.rmsNorm(x, weight, options));
          }
        }
      }
    }
    // Every bit pattern as an input (NaN, infinities, subnormals), and as weights.
    const all = new Uint16Array(65536).map((_, i) => i);
    const dim = 256;
    for (const [castMode, eps] of [['llama', 0], ['gemma', 1e-6]]) {
      add(`${dtype} all 65536 patterns dim=${dim} castMode=${castMode} eps=${eps}`, dtype,
        (impl) => impl.rmsNorm(all, all.subarray(dim * 3, dim * 4), { dtype, castMode, eps }));
    }
  }

  // Special values: zero and -0 rows, NaN and infinities spoiling their row,
  // squares that overflow or underflow, subnormals.
  const specialRows = [
    [0, 0, 0, 0], [-0, -0, -0, -0], [1, NaN, 2, 3], [Infinity, 1, 2, 3], [-Infinity, 1, -2, 3],
    [3e38, -3.3e38, 1e38, 2e38], [1e-40, -3e-41, 1e-45, 2e-40], [1e-30, -2e-30, 3e-30, 4e-30],
    [0.5, -1.25, 0.25, 0.375], [-0, 0, -0, 1e-45],
  ];
  for (const dim of [4, 17, 300]) {
    const x = new Float32Array(specialRows.length * dim);
    specialRows.forEach((row, r) => {
      for (let i = 0; i < dim; i++) x[r * dim + i] = row[i % 4];
    });
    const w = uniformArray(prng(dim), dim, -1.5, 1.5);
    for (const eps of [0, 1e-6]) {
      add(`float32 special rows dim=${dim} eps=${eps}`, 'float32', (impl) => impl.rmsNorm(x, w, { eps }));
      for (const dtype of DTYPES16) {
        const x16 = Uint16Array.from(x, (v) => narrow(v, dtype));
        for (const castMode of CAST_MODES) {
          add(`${dtype} special rows dim=${dim} eps=${eps} castMode=${castMode}`, dtype,
            (impl) => impl.rmsNorm(x16, w, { dtype, castMode, eps }));
        }
      }
    }
  }

  // The fused residual add: y and the updated residual.
  for (const dtype of ['float32', ...DTYPES16]) {
    for (const dim of [1, 17, 896]) {
      const seed = 500 + dim;
      const rand = prng(seed);
      const make = (sigma) => (dtype === 'float32' ? portableNormal(rand, 3 * dim, sigma) : portableNormal16(rand, 3 * dim, dtype, sigma));
      const x = make(1);
      const residual = make(3);
      const w = uniformArray(rand, dim, 0.5, 1.5);
      const options = dtype === 'float32' ? {} : { dtype };
      add(`addRmsNorm ${dtype} rows=3 dim=${dim} seed=${seed}`, dtype, (impl) => {
        const r = residual.slice();
        return [impl.addRmsNorm(x, r, w, options), r];
      });
    }
  }

  // LayerNorm, with and without weight and bias, on N(0, 9) and far from zero.
  for (const dim of [1, 5, 16, 17, 64, 257, 1000]) {
    for (const [m, mean] of [0, 1e4].entries()) {
      const seed = 900 + dim * 2 + m;
      const rand = prng(seed);
      const x = portableNormal(rand, 3 * dim, mean === 0 ? 3 : 1).map((v) => v + mean);
      const w = uniformArray(rand, dim, 0.5, 1.5);
      const b = uniformArray(rand, dim, -0.5, 0.5);
      for (const [weight, bias, kind] of [[w, b, 'w,b'], [null, b, 'null,b'], [w, null, 'w,null'], [null, null, 'null,null']]) {
        add(`layerNorm rows=3 dim=${dim} mean=${mean} ${kind} seed=${seed}`, 'float32',
          (impl) => impl.layerNorm(x, weight, bias, { dim }));
      }
    }
  }

  // Row strides: rows `stride` values apart in one buffer, the gaps holding
  // other values (a fused QKV buffer's), in place and into a fresh result;
  // each function, each the bits of the same rows packed.
  for (const [dim, stride, rows] of [[1, 3, 5], [17, 20, 3], [64, 128, 16], [128, 512, 8], [257, 300, 3], [896, 1024, 2]]) {
    const seed = 3000 + dim;
    const rand = prng(seed);
    const length = (rows - 1) * stride + dim;
    const x = portableNormal(rand, length, 2);
    const dy = portableNormal(rand, length, 1);
    const w = uniformArray(rand, dim, 0.5, 1.5);
    const b = uniformArray(rand, dim, -0.5, 0.5);
    const packed = (a) => {
      const p = new (a.constructor)(rows * dim);
      for (let r = 0; r < rows; r++) p.set(a.subarray(r * stride, r * stride + dim), r * dim);
      return p;
    };
    const o = { rowStride: stride };
    add(`rowStride rmsNorm rows=${rows} dim=${dim} stride=${stride} seed=${seed}: strided, in place, packed`, 'float32', (impl) => {
      const inPlace = x.slice();
      impl.rmsNorm(inPlace, w, { ...o, out: inPlace });
      return [packed(impl.rmsNorm(x, w, o)), packed(inPlace), impl.rmsNorm(packed(x), w)];
    }, [[0, 1], [0, 2]]);
    for (const dtype of DTYPES16) {
      const x16 = to16(x, dtype);
      const r16 = to16(dy, dtype);
      add(`rowStride addRmsNorm ${dtype} rows=${rows} dim=${dim} stride=${stride} seed=${seed}`, dtype, (impl) => {
        const residual = r16.slice();
        const y = impl.addRmsNorm(x16, residual, w, { ...o, dtype });
        const packedResidual = packed(r16);
        return [packed(y), packed(residual), impl.addRmsNorm(packed(x16), packedResidual, w, { dtype }), packedResidual];
      }, [[0, 2], [1, 3]]);
    }
    add(`rowStride layerNorm and the backward passes rows=${rows} dim=${dim} stride=${stride} seed=${seed}`, 'float32', (impl) => {
      const rstd = new Float32Array(rows);
      const y = impl.layerNorm(x, w, b, { ...o, rstd });
      const g = impl.rmsNormBackward(dy, x, w, o);
      const h = impl.layerNormBackward(dy, x, w, b, o);
      const gp = impl.rmsNormBackward(packed(dy), packed(x), w);
      return [packed(y), impl.layerNorm(packed(x), w, b), rstd, packed(g.dx), gp.dx, g.dweight, gp.dweight, packed(h.dx), h.dweight, h.dbias];
    }, [[0, 1], [3, 4], [5, 6]]);
  }

  // Prepared calls: each run the bits of the call itself.
  {
    const dim = 300;
    const rand = prng(4000);
    const x = portableNormal(rand, 5 * dim, 2);
    const w = uniformArray(rand, dim, 0.5, 1.5);
    add('prepared rmsNorm rows=5 dim=300 seed=4000: run twice, and the call itself', 'float32', (impl) => {
      const out = new Float32Array(x.length);
      const prepared = impl.rmsNorm.prepare(x, w, { eps: 1e-5, out });
      const first = prepared.run().slice();
      const fresh = impl.rmsNorm.prepare(x, w, { eps: 1e-5 });
      return [first, prepared.run(), fresh.run(), fresh.run(), impl.rmsNorm(x, w, { eps: 1e-5 })];
    }, [[0, 1], [0, 2], [0, 3], [0, 4]]);
  }

  // The converters: every 16-bit pattern widened; float32 patterns (random
  // bits: NaNs, infinities, subnormals) and the rounding edges narrowed.
  {
    const all = new Uint16Array(65536).map((_, i) => i);
    const rand = prng(4100);
    const bits = new Uint32Array(1 << 17);
    for (let i = 0; i < bits.length; i++) bits[i] = (rand() * 2 ** 32) >>> 0;
    const edges = [0, -0, 1, -1, 65504, 65519.996, 65520, 65536, 3.3895314e38, 3.4028235e38, Infinity, -Infinity, NaN,
      2 ** -14, 2 ** -24, 2 ** -25, 1.5 * 2 ** -25, 2 ** -126, 2 ** -149, 1 + 2 ** -8, 1 + 2 ** -9, 1 + 3 * 2 ** -9, 1 + 2 ** -11, 1 + 3 * 2 ** -11];
    const values = new Float32Array(bits.length + 2 * edges.length);
    values.set(new Float32Array(bits.buffer));
    for (let i = 0; i < edges.length; i++) {
      values[bits.length + 2 * i] = edges[i];
      values[bits.length + 2 * i + 1] = -edges[i];
    }
    for (const dtype of DTYPES16) {
      add(`toFloat32 every ${dtype} pattern`, 'float32', (impl) => impl.toFloat32(all, { dtype }));
      add(`fromFloat32 ${values.length} float32 values (random bits and rounding edges) to ${dtype}`, dtype,
        (impl) => impl.fromFloat32(values, { dtype }));
    }
  }
  // ggml's blocks (options.outDtype): a million random rows, each of its own
  // scale, through the fused q8_0 and q8_1 (32 values) and q8_K (256)
  // outputs, the weight mode changing with the batch; each batch's input made
  // inside run (a million rows held at once would be 200 MB). Then the rows
  // whose blocks sit on the rule's edges (./q8-edges.js), and NaN and Inf in
  // the weight.
  const weightModes = [
    (rand, dim) => [uniformArray(rand, dim, -2, 2), {}],
    (rand, dim) => [to16(uniformArray(rand, dim, -2, 2), 'bfloat16'), { weightDtype: 'bfloat16' }],
    () => [null, {}],
    (rand, dim) => [uniformArray(rand, dim, -0.1, 0.1), { weightOffset: 1, castMode: 'gemma' }],
  ];
  for (const [format, dim, rows, batches] of [['q8_0', 32, 50_000, 9], ['q8_1', 32, 50_000, 9], ['q8_K', 256, 10_000, 10]]) {
    for (let b = 0; b < batches; b++) {
      const seed = 38_000 + 100 * dim + b;
      add(`${format} ${rows} random rows of ${dim}, weight mode ${b % weightModes.length}, seed=${seed}`, 'bytes', (impl) => {
        const rand = prng(seed);
        const x = portableNormal(rand, rows * dim);
        for (let r = 0; r < rows; r++) {
          const scale = 2 ** Math.floor(rand() * 41 - 20);
          for (let i = r * dim; i < (r + 1) * dim; i++) x[i] = Math.fround(x[i] * scale);
        }
        const [w, options] = weightModes[b % weightModes.length](rand, dim);
        return impl.rmsNorm(x, w, { ...options, dim, outDtype: format });
      });
    }
    const weight = q8EdgeWeight(dim);
    for (const k of EDGE_POWERS) {
      const x = signedPowerRows(prng(4242 + k), 4, weight.length, k);
      add(`${format} edge blocks (ties, ±amax, zero, subnormal, huge, Inf), rows ±2^${k}`, 'bytes',
        (impl) => impl.rmsNorm(x, weight, { eps: 0, outDtype: format }));
    }
    const rand = prng(99 + dim);
    const nanWeight = uniformArray(rand, 2 * dim, -2, 2);
    nanWeight[dim + 1] = NaN;
    nanWeight[2] = Infinity;
    const x = portableNormal(rand, 3 * 2 * dim);
    add(`${format} NaN and Inf in the weight`, 'bytes', (impl) => impl.rmsNorm(x, nanWeight, { outDtype: format }));
  }
  return cases;
}

const NAN16 = { bfloat16: [0x7f80, 0x7fc0], float16: [0x7c00, 0x7e00] }; // [infinity, canonical NaN]

/** The array's words with every NaN replaced by one canonical NaN (engines may differ in sign and payload). */
function canonicalWords(array, dtype) {
  if (dtype === 'bytes') return array; // ggml's blocks: one NaN pattern already (src/kernels/q8_blocks.h)
  if (dtype === 'float32') {
    const words = new Uint32Array(array.buffer, array.byteOffset, array.length).slice();
    for (let i = 0; i < array.length; i++) if (Number.isNaN(array[i])) words[i] = 0x7fc00000;
    return words;
  }
  const [infinity, nan] = NAN16[dtype];
  // The bits, whatever the array: a new float16 result is a Float16Array where the engine has one.
  const bits = new Uint16Array(array.buffer, array.byteOffset, array.length);
  return bits.map((v) => ((v & infinity) === infinity && (v & 0x7fff) !== infinity ? nan : v));
}

/** FNV-1a over 32-bit words (16-bit patterns widened), seeded by `hash`. */
function fnv1a(hash, words) {
  let h = hash;
  for (let i = 0; i < words.length; i++) h = Math.imul(h ^ words[i], 0x01000193) >>> 0;
  return Math.imul(h ^ words.length, 0x01000193) >>> 0;
}

const FNV_OFFSET = 0x811c9dc5;
const asList = (out) => (Array.isArray(out) ? out : [out]);

const bytesOf = (a) => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
const sameBytes = (a, b) => a.length === b.length && a.every((v, i) => v === b[i]);

/**
 * Runs every case on every implementation (tests/helpers/implementations.js);
 * returns { backends, cases, values, mismatchCount, mismatches (the first
 * 10, each from assertAllAgree or naming the outputs that must be the same),
 * digest (8 hex digits, over the SIMD outputs) }.
 */
export async function runBitExactSuite() {
  const impls = await implementations();
  const backends = Object.fromEntries(impls.filter((impl) => impl.alloc !== undefined).map((impl) => [impl.name, impl.name]));
  const mismatches = [];
  let mismatchCount = 0;
  let digest = FNV_OFFSET;
  let values = 0;
  const fail = (message) => {
    mismatchCount += 1;
    if (mismatches.length < 10) mismatches.push(message);
  };
  const cases = bitExactCases();
  for (const c of cases) {
    const results = {};
    for (const impl of impls) results[impl.name] = asList(c.run(impl));
    try {
      assertAllAgree(results, c.what);
    } catch (error) {
      fail(error.message);
    }
    for (const [name, outputs] of Object.entries(results)) {
      for (const [a, b] of c.same) {
        if (!sameBytes(bytesOf(outputs[a]), bytesOf(outputs[b]))) fail(`${c.what}: ${name}: outputs ${a} and ${b} differ`);
      }
    }
    for (const output of results.reference) values += output.length;
    for (const output of results.simd) digest = fnv1a(digest, canonicalWords(output, c.dtype));
  }
  return { backends, cases: cases.length, values, mismatchCount, mismatches, digest: digest.toString(16).padStart(8, '0') };
}
