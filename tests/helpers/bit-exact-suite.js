// The bit-exactness suite every engine runs: Node (tests/engines.test.js)
// and each browser, in a page that imports this module, /src/index.js and
// /src/reference/index.js. Seeded cases over float32 and the 16-bit dtypes,
// both cast modes, views, special values, the fused residual add and
// LayerNorm; each case is computed by the SIMD module, the scalar module and
// the JS reference and compared bit for bit (a NaN matches a NaN), and the
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

/** Every case: { what, dtype, run(impl) → an output array or several }. */
export function bitExactCases() {
  const cases = [];
  const add = (what, dtype, run) => cases.push({ what, dtype, run });

  // float32 over the dims that break kernels: every tail of the 16-wide step,
  // block edges, long rows; eps = 0 at the extreme scales sends rows through
  // the rescue path.
  const dims = [...Array.from({ length: 33 }, (_, i) => i + 1), 63, 64, 65, 255, 256, 257, 896, 4096, 16384];
  const scales = [1e-30, 1e-10, 1, 1e10, 1e30];
  for (const dim of dims) {
    for (const rows of dim <= 257 ? [0, 1, 3] : [1, 2]) {
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

  // Views at odd byte offsets, in place, and into an offset `out`.
  for (const dim of [3, 33, 1024]) {
    const seed = 31 * dim;
    const rand = prng(seed);
    const rows = 5;
    const backing = portableNormal(rand, rows * dim + 3, 3);
    const wBacking = uniformArray(rand, dim + 1, 0.5, 1.5);
    const view = () => new Float32Array(backing.buffer.slice(0), 12, rows * dim);
    const w = new Float32Array(wBacking.buffer, 4, dim);
    add(`float32 views rows=${rows} dim=${dim} seed=${seed}`, 'float32', (impl) => {
      const inPlace = view();
      impl.rmsNorm(inPlace, w, { out: inPlace });
      const out = new Float32Array(new ArrayBuffer((rows * dim + 1) * 4), 4, rows * dim);
      return [impl.rmsNorm(view(), w), inPlace, impl.rmsNorm(view(), w, { out })];
    });
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
  return cases;
}

const NAN16 = { bfloat16: [0x7f80, 0x7fc0], float16: [0x7c00, 0x7e00] }; // [infinity, canonical NaN]

/** The array's words with every NaN replaced by one canonical NaN (engines may differ in sign and payload). */
function canonicalWords(array, dtype) {
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

/** Index of the first differing word, or -1, after NaN canonicalisation. */
function firstDifference(a, b) {
  if (a.length !== b.length) return Math.min(a.length, b.length);
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return i;
  return -1;
}

/**
 * Runs every case on `wasm` (the package's index module: init, rmsNorm, ...)
 * for each backend and on `reference`; returns { backends, cases, values,
 * mismatchCount, mismatches (the first 10, each naming the case and index), digest (8 hex
 * digits, over the SIMD outputs) }.
 */
export async function runBitExactSuite({ wasm, reference }) {
  const cases = bitExactCases();
  const outputs = { reference: cases.map((c) => asList(c.run(reference)).map((a) => canonicalWords(a, c.dtype))) };
  const backends = {};
  for (const backend of ['simd', 'scalar']) {
    backends[backend] = (await wasm.init({ backend })).backend;
    outputs[backend] = cases.map((c) => asList(c.run(wasm)).map((a) => canonicalWords(a, c.dtype)));
  }
  const mismatches = [];
  let mismatchCount = 0;
  let digest = FNV_OFFSET;
  let values = 0;
  cases.forEach((c, k) => {
    outputs.reference[k].forEach((ref, part) => {
      values += ref.length;
      digest = fnv1a(digest, outputs.simd[k][part]);
      for (const backend of ['simd', 'scalar']) {
        const i = firstDifference(outputs[backend][k][part], ref);
        if (i >= 0) mismatchCount += 1;
        if (i >= 0 && mismatches.length < 10) {
          mismatches.push(`${c.what} output ${part}: ${backend} vs reference first differ at index ${i}: ` +
            `0x${outputs[backend][k][part][i]?.toString(16)} vs 0x${ref[i]?.toString(16)}`);
        }
      }
    });
  });
  return { backends, cases: cases.length, values, mismatchCount, mismatches, digest: digest.toString(16).padStart(8, '0') };
}
