#!/usr/bin/env node
// The quantization error of the fused q8_0 output against what ggml's
// WebAssembly quantize_row_q8_0 would make of the same values (it truncates
// x·id toward zero, wasm_i32x4_trunc_sat_f32x4, where the reference
// rounds): RMS of (dequantized − float32 norm output), over normalized rows;
// the share of codes (qs) truncation changes; and the largest dequantize
// error of the fused blocks in units of each block's d (docs/numerics.md
// derives its bound; tests/q8.test.js asserts it).
// A measurement, not a test: docs/numerics.md reports its output.
//
//   node tests/bench/q8-error.js [--rows 2000] [--dim 4096] [--seed 1]
import { parseArgs } from 'node:util';
import { dequantize, init, rmsNorm } from '../../src/index.js';
import { numberToFloat16, float16ToNumber } from '../../src/reference/float16.js';
import { normalArray, prng } from '../helpers/random.js';

const { values } = parseArgs({ options: { rows: { type: 'string', default: '2000' }, dim: { type: 'string', default: '4096' }, seed: { type: 'string', default: '1' } } });
const rows = Number(values.rows);
const dim = Number(values.dim);
await init({ backend: 'simd' });
const rand = prng(Number(values.seed));
const x = normalArray(rand, rows * dim);
const weight = Float32Array.from(normalArray(rand, dim, 0.1), (v) => 1 + v); // a trained norm's weight: about 1
const y = rmsNorm(x, weight);
const blocks = rmsNorm(x, weight, { outDtype: 'q8_0' });
const fused = dequantize(blocks, { dtype: 'q8_0' });

/** ggml's wasm quantize_row_q8_0, dequantized: d = amax/127, qs = trunc_sat(x·id).
 * Counts the codes that differ from the fused blocks' (`changed`), and the
 * fused error's largest ratio to its block's float32 d (`worst`). */
let changed = 0;
let worst = 0;
function truncated(values) {
  const out = new Float32Array(values.length);
  const codes = new Int8Array(blocks.buffer, blocks.byteOffset, blocks.length);
  for (let b = 0; b < values.length; b += 32) {
    let amax = 0;
    for (let j = 0; j < 32; j++) amax = Math.max(amax, Math.abs(values[b + j]));
    const d = Math.fround(amax / 127);
    const id = d !== 0 ? Math.fround(1 / d) : 0;
    const dh = float16ToNumber(numberToFloat16(d));
    for (let j = 0; j < 32; j++) {
      const q = Math.trunc(Math.fround(values[b + j] * id));
      out[b + j] = Math.fround(q * dh);
      if (q !== codes[(b / 32) * 34 + 2 + j]) changed++;
      if (d !== 0) worst = Math.max(worst, Math.abs(fused[b + j] - values[b + j]) / d);
    }
  }
  return out;
}

const rms = (a) => {
  let s = 0;
  for (let i = 0; i < y.length; i++) s += (a[i] - y[i]) ** 2;
  return Math.sqrt(s / y.length);
};
const rounded = rms(fused);
const trunc = rms(truncated(y));
console.log(`${rows} rows × ${dim}, x ~ N(0, 1), weight 1 + N(0, 0.01):`);
console.log(`  RMS error, fused q8_0 (roundf, ggml's reference):    ${rounded.toExponential(4)}`);
console.log(`  RMS error, truncating (ggml's wasm quantize_row_q8_0): ${trunc.toExponential(4)}`);
console.log(`  ratio: ${(rounded / trunc).toFixed(3)}×`);
console.log(`  codes truncation changes: ${((100 * changed) / y.length).toFixed(1)}% of ${y.length}`);
console.log(`  largest dequantize error of the fused blocks: ${worst.toFixed(4)}·d`);
