// The WebGPU backend (src/webgpu/) in real browser engines: headless
// Chromium (SwiftShader) and Firefox ESR (Mesa lavapipe), each compared bit
// for bit with the JS reference computed here in Node. The soft-float's
// single operations against Math.fround, the portable bit-exactness suite's
// calls, the GPU-specific calls (odd and long rows, many rows, every dtype,
// in place, special rows), the device form on shared buffers at odd offsets
// (neighbouring bytes untouched), and both forms' argument checks.
// WebKitGTK has no WebGPU: the last test holds it to that, so that the day
// it gains one this suite is told.
/* global GPUBufferUsage, GPUMapMode -- used in page.evaluate callbacks, which run in the page */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, describe, test } from 'node:test';
import * as reference from '../src/reference/index.js';
import { numberToBfloat16, numberToFloat16, float16ToNumber } from '../src/reference/float16.js';
import { prng } from '../web/lib/random.js';
import { engineNamed, startTestServer } from './helpers/engines.js';
import { packageNames } from './helpers/package-names.js';
import { portableNormal } from './helpers/bit-exact-suite.js';
import { gpuCalls, portableCalls, TEAMS } from './helpers/webgpu-cases.js';
import { GPU_ENGINES, launchGpuBrowser } from './helpers/webgpu-engines.js';

const PAGE = '/tests/pages/blank.html';
const bytesOf = (text) => Uint8Array.from(Buffer.from(text, 'base64'));
const b64 = (v) => Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('base64');

/** The differences between a GPU result (base64) and the reference's array:
 * float32 words equal or both NaN; 16-bit patterns equal; 'bytes' (ggml's
 * blocks) equal. */
function differences(text, expected, dtype) {
  if (dtype === 'bytes') return byteDifferences(text, expected);
  const bytes = bytesOf(text);
  const got = dtype === 'float32' ? new Float32Array(bytes.buffer) : new Uint16Array(bytes.buffer);
  const want = dtype === 'float32' ? Float32Array.from(expected) : new Uint16Array(expected.buffer, expected.byteOffset, expected.length);
  if (got.length !== want.length) return [`length ${got.length}, expected ${want.length}`];
  const gotBits = dtype === 'float32' ? new Uint32Array(got.buffer) : got;
  const wantBits = dtype === 'float32' ? new Uint32Array(want.buffer) : want;
  const out = [];
  for (let i = 0; i < got.length; i++) {
    if (gotBits[i] === wantBits[i] || (dtype === 'float32' && Number.isNaN(got[i]) && Number.isNaN(want[i]))) continue;
    out.push(`[${i}] 0x${gotBits[i].toString(16)}, expected 0x${wantBits[i].toString(16)}`);
  }
  return out;
}

/** Batches of at most 40 calls and about 8 MB of base64 inputs (a page
 * holds a batch's inputs, outputs and GPU buffers at once). */
function batchesOf(cases) {
  const batches = [];
  let size = 0;
  for (const c of cases) {
    const bytes = c.call.x.length + (c.call.residual?.length ?? 0);
    if (batches.length === 0 || batches.at(-1).length === 40 || size + bytes > 8e6) {
      batches.push([]);
      size = 0;
    }
    batches.at(-1).push(c);
    size += bytes;
  }
  return batches;
}

/** Runs `cases` (makeCall results) in the page in batches; returns the mismatches and the value count. */
async function runAndCompare(page, cases) {
  const mismatches = [];
  let values = 0;
  let adapter;
  let start = 0;
  for (const batch of batchesOf(cases)) {
    const reply = await page.evaluate(async (calls) => (await import('/tests/helpers/webgpu-page.js')).runCalls(calls), batch.map((c) => c.call));
    adapter = reply.adapter;
    if (reply.errors.length > 0) mismatches.push(`calls ${start}..${start + batch.length - 1}: GPU errors ${reply.errors.join('; ')}`);
    reply.results.forEach((result, i) => {
      const c = batch[i];
      const parts = [['out', result.out, c.expected.out, c.outKind ?? c.dtype], ['rstd', result.rstd, c.expected.rstd, 'float32']];
      if (c.expected.residual) parts.push(['residual', result.residual, c.expected.residual, c.dtype]);
      if (c.expected.mean) parts.push(['mean', result.mean, c.expected.mean, 'float32']);
      for (const [part, text, expected, dtype] of parts) {
        values += expected.length;
        const diff = differences(text, expected, dtype);
        if (diff.length > 0) mismatches.push(`${c.what} ${part}: ${diff.length} differ, first ${diff.slice(0, 3).join('; ')}`);
      }
    });
    start += batch.length;
  }
  return { mismatches, values, adapter };
}

// ---- ggml block outputs (options.outDtype) -----------------------------------

const Q8_FORMATS = ['q8_0', 'q8_1', 'q8_K'];

/** The first differing bytes of a GPU result (base64) against the reference's. */
function byteDifferences(text, expected) {
  const got = bytesOf(text);
  if (got.length !== expected.length) return [`length ${got.length}, expected ${expected.length}`];
  const out = [];
  for (let i = 0; i < got.length && out.length < 3; i++) if (got[i] !== expected[i]) out.push(`[${i}] ${got[i]}, expected ${expected[i]}`);
  return out;
}

/**
 * Weights for rows of x = ±1 with eps 0, whose rms is exactly 1: the
 * output is ±w itself, so each block's values are chosen here. Rows of 256
 * values (eight q8_0 or q8_1 blocks, one q8_K block) that put the rule's
 * edges in the blocks: halves (127 the largest, so that d = 1 and id = 1;
 * for q8_K iscale = -1), +amax and -amax both in a block (the first one is
 * q8_K's max), blocks of zeros, subnormals (1/d overflows), huge values
 * (the float16 d overflows), NaN and infinities.
 */
function q8EdgeRows() {
  const dim = 256;
  const rows = [];
  const row = (what, f) => rows.push({ what, w: Float32Array.from({ length: dim }, (_, j) => f(j)) });
  row('halves', (j) => (j % 32 === 0 ? 127 : (j % 2 ? -1 : 1) * ((j % 11) + 0.5)));
  row('+amax and -amax', (j) => (j % 32 === 3 ? -127 : j % 32 === 10 ? 127 : (j % 7) - 3.25));
  row('zero blocks', (j) => (j < 64 || j >= 192 ? 0 : (j % 5) - 2));
  row('subnormals', (j) => (j % 3 === 0 ? 1e-40 * ((j % 7) - 3) : j % 3 === 1 ? 1.4e-45 : -2.5e-39));
  row('huge', (j) => (j % 4 === 0 ? 3.4e38 : j % 4 === 1 ? -1e38 : j));
  row('NaN and infinities', (j) => (j === 5 ? NaN : j === 40 ? Infinity : j === 77 ? -Infinity : j === 200 ? NaN : (j % 9) - 4));
  row('one NaN block', (j) => (j < 32 ? NaN : j / 7));
  // Products of the scale and a value below 2^-125, beside normal ones: their integer is 0.
  row('tiny beside huge', (j) => (j % 32 === 7 ? 1e30 : j % 32 === 9 ? -3e29 : ((j % 5) - 2) * 1e-12 * (1 + j / 256)));
  return { dim, rows };
}

/** Cases of `fn` with ggml block outputs, through the array form: the
 * edge rows above, then random rows of every dtype, weight mode, residual
 * and layout, each against the reference's bytes. */
function q8Cases() {
  const cases = [];
  const { dim, rows } = q8EdgeRows();
  const sign = prng(0x98);
  for (const outDtype of Q8_FORMATS) {
    for (const { what, w } of rows) {
      const x = Float32Array.from({ length: 2 * dim }, () => (sign() < 0.5 ? -1 : 1));
      const options = { dim, eps: 0, outDtype };
      cases.push({ what: `${outDtype} ${what}`, fn: 'rmsNorm', x, weight: w, options, kinds: { x: 'float32', weight: 'float32' } });
    }
  }
  const rand = prng(0x9b);
  const encode = { float32: (v) => v, bfloat16: numberToBfloat16, float16: numberToFloat16 };
  const values = (n, dtype, scale) => {
    const f = Array.from({ length: n }, () => Math.fround((rand() - 0.5) * scale));
    return dtype === 'float32' ? Float32Array.from(f) : Uint16Array.from(f, encode[dtype]);
  };
  let k = 0;
  for (const outDtype of Q8_FORMATS) {
    for (const dtype of ['float32', 'bfloat16', 'float16']) {
      for (const mode of ['none', 'same', 'float32 weight', 'gemma offset']) {
        for (const fn of ['rmsNorm', 'addRmsNorm']) {
          k++;
          const dim = outDtype === 'q8_K' ? 256 * (1 + (k % 3)) : 32 * (1 + (k % 9));
          const layout = ['packed', 'rowStride', 'heads'][k % 3];
          const heads = layout === 'heads' ? 2 : 1;
          const headStride = dim + 32;
          const tokens = 3 + (k % 4);
          const stride = layout === 'rowStride' ? dim + 8 : layout === 'heads' ? 2 * headStride + 16 : dim;
          const x = values(tokens * stride, dtype, 8);
          const weightDtype = mode === 'float32 weight' || mode === 'gemma offset' ? 'float32' : dtype;
          const weight = mode === 'none' ? null : values(dim, weightDtype, 3);
          const options = { dim, eps: 1e-6, dtype, outDtype, rstd: tokens * heads };
          if (mode !== 'none') Object.assign(options, { weightDtype, castMode: mode === 'gemma offset' ? 'gemma' : 'llama' });
          if (mode === 'gemma offset') options.weightOffset = 1;
          if (layout !== 'packed') options.rowStride = stride;
          if (layout === 'heads') Object.assign(options, { heads, headStride });
          const c = { what: `${outDtype} ${dtype} ${mode} ${fn} ${layout} ${tokens}x${dim}`, fn, x, weight, options, kinds: { x: dtype, weight: weightDtype } };
          if (fn === 'addRmsNorm') c.residual = values(tokens * stride, dtype, 8);
          cases.push(c);
        }
      }
    }
  }
  // Each team size (invocations a row) with rows of fewer blocks than the
  // team, as many, and more (not a multiple); one row, and rows over more
  // than one workgroup: the blocks of a row are shared by its team.
  k = 0;
  for (const outDtype of Q8_FORMATS) {
    const per = outDtype === 'q8_K' ? 256 : 32;
    for (const team of [1, 4, 16, 64]) {
      for (const blocks of outDtype === 'q8_K' ? [1, 5] : [1, team, team + 3]) {
        k++;
        const dtype = ['float32', 'bfloat16', 'float16'][k % 3];
        const dim = per * blocks;
        const tokens = k % 2 === 0 ? 1 : 70;
        const x = values(tokens * dim, dtype, 8);
        const weight = values(dim, 'float32', 3);
        const options = { dim, eps: 1e-6, dtype, outDtype, weightDtype: 'float32', rstd: tokens };
        const fn = k % 4 === 1 ? 'addRmsNorm' : 'rmsNorm';
        const c = { what: `${outDtype} ${dtype} team ${team} ${fn} ${tokens}x${dim}`, fn, x, weight, options, team, kinds: { x: dtype, weight: 'float32' } };
        if (fn === 'addRmsNorm') c.residual = values(tokens * dim, dtype, 8);
        cases.push(c);
      }
    }
  }
  for (const c of cases) {
    const options = { ...c.options };
    if (options.rstd !== undefined) options.rstd = new Float32Array(options.rstd);
    const residual = c.residual?.slice();
    c.expected = c.fn === 'addRmsNorm' ? reference.addRmsNorm(c.x, residual, c.weight, options) : reference.rmsNorm(c.x, c.weight, options);
    c.expectedResidual = residual;
    c.expectedRstd = options.rstd;
  }
  return cases;
}

/** Runs q8Cases through the array form in the page; returns the mismatches. */
async function runQ8Cases(page, cases) {
  const mismatches = [];
  for (let start = 0; start < cases.length; start += 24) {
    const batch = cases.slice(start, start + 24);
    const reply = await page.evaluate(async (calls) => (await import('/tests/helpers/webgpu-page.js')).runCalls(calls), batch.map((c) => ({
      fn: c.fn, x: b64(c.x), weight: c.weight && b64(c.weight), residual: c.residual && b64(c.residual), kinds: c.kinds, options: c.options, team: c.team,
    })));
    if (reply.errors.length > 0) mismatches.push(`GPU errors ${reply.errors.join('; ')}`);
    reply.results.forEach((result, i) => {
      const c = batch[i];
      const diff = byteDifferences(result.out, c.expected);
      if (diff.length > 0) mismatches.push(`${c.what}: blocks differ, first ${diff.join('; ')}`);
      if (c.expectedResidual) {
        const d = differences(result.residual, c.expectedResidual, c.options.dtype ?? 'float32');
        if (d.length > 0) mismatches.push(`${c.what}: residual differs, first ${d.slice(0, 3).join('; ')}`);
      }
      if (c.expectedRstd) {
        const d = differences(result.rstd, c.expectedRstd, 'float32');
        if (d.length > 0) mismatches.push(`${c.what}: rstd differs, first ${d.slice(0, 3).join('; ')}`);
      }
    });
  }
  return mismatches;
}

/**
 * Device-form calls with block outputs on one caller buffer: x (rows
 * rowStride apart), the weight, addRmsNorm's residual, and out at a byte
 * offset that is no multiple of 4 (q8_0's 34-byte blocks share words with
 * each other and with the bytes around the output), the arena's other
 * bytes random: each against the reference's bytes with every other byte
 * of the buffer as it was.
 */
function q8DeviceCases() {
  const rand = prng(0x9d);
  const cases = [];
  let k = 0;
  for (const outDtype of Q8_FORMATS) {
    for (const fn of ['rmsNorm', 'addRmsNorm']) {
      k++;
      const dim = outDtype === 'q8_K' ? 512 : 96;
      const rows = 5;
      const stride = dim + 4 * (k % 2);
      const xOff = 16;
      const rOff = xOff + rows * stride * 4 + 8;
      const wOff = rOff + rows * stride * 4;
      const outOff = wOff + dim * 4 + 1 + (k % 3); // 1 to 3 bytes past a word
      const { values: per, bytes: blockBytes } = { q8_0: { values: 32, bytes: 34 }, q8_1: { values: 32, bytes: 36 }, q8_K: { values: 256, bytes: 292 } }[outDtype];
      const outBytes = (rows * dim / per) * blockBytes;
      const size = Math.ceil((outOff + outBytes + 7) / 4) * 4;
      const arena = Uint8Array.from({ length: size }, () => Math.floor(rand() * 256));
      const view = new DataView(arena.buffer);
      const x = new Float32Array(rows * stride);
      const residual = new Float32Array(rows * stride);
      const weight = new Float32Array(dim);
      for (let i = 0; i < x.length; i++) {
        x[i] = Math.fround((rand() - 0.5) * 6);
        residual[i] = Math.fround((rand() - 0.5) * 6);
        view.setFloat32(xOff + 4 * i, x[i], true);
        view.setFloat32(rOff + 4 * i, residual[i], true);
      }
      for (let i = 0; i < dim; i++) view.setFloat32(wOff + 4 * i, (weight[i] = Math.fround(rand() * 2)), true);
      const options = { dim, eps: 1e-6, outDtype, rowStride: stride };
      const expected = arena.slice();
      const updated = residual.slice();
      const blocks = fn === 'addRmsNorm' ? reference.addRmsNorm(x, updated, weight, options) : reference.rmsNorm(x, weight, options);
      expected.set(blocks, outOff);
      if (fn === 'addRmsNorm') for (let i = 0; i < rows; i++) for (let j = 0; j < dim; j++) new DataView(expected.buffer).setFloat32(rOff + 4 * (i * stride + j), updated[i * stride + j], true);
      const roles = fn === 'addRmsNorm' ? ['x', 'residual', 'weight', 'out'] : ['x', 'weight', 'out'];
      cases.push({
        what: `${fn} ${outDtype} ${rows}x${dim} out at byte ${outOff}`, expected,
        spec: { fn, arena: b64(arena), groups: [roles], offsets: { x: xOff, residual: rOff, weight: wOff, out: outOff }, params: { rows, dim, rowStride: stride, outDtype } },
      });
    }
  }
  return cases;
}

// ---- The soft-float's operations --------------------------------------------

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);
const asFloat = (bits) => ((u32[0] = bits), f32[0]);
const bitsOfFloat = (v) => ((f32[0] = v), u32[0]);
const OPS = {
  add: (a, b) => bitsOfFloat(asFloat(a) + asFloat(b)),
  mul: (a, b) => bitsOfFloat(asFloat(a) * asFloat(b)),
  div: (a, b) => bitsOfFloat(asFloat(a) / asFloat(b)),
  sqrt: (a) => bitsOfFloat(Math.sqrt(asFloat(a))),
  to_bf16: (a) => numberToBfloat16(asFloat(a)),
  to_f16: (a) => numberToFloat16(asFloat(a)),
  from_f16: (a) => bitsOfFloat(float16ToNumber(a)),
};
// The common path's operations (src/webgpu/wgsl/fastfloat.js), on operands of
// their domain only: zero or normal, with normal results.
const FAST_OPS = {
  fast_square: (a) => bitsOfFloat(asFloat(a) * asFloat(a)),
  fast_mul: (a, b) => bitsOfFloat(asFloat(a) * asFloat(b)),
  fast_add: (a, b) => bitsOfFloat(asFloat(a) + asFloat(b)),
  fast_mul_free: (a, b) => bitsOfFloat(asFloat(a) * asFloat(b)),
};

/** Operand pairs in each fast operation's domain: random exponents in the
 * range, random signs (none for fast_add), zeros, and significands cut to
 * a random width, so that exact results and ties come often. */
function fastOperands(op, n) {
  const rand = prng(0xfa57 + op.length);
  const word = () => Math.floor(rand() * 2 ** 32) >>> 0;
  const int = (lo, hi) => lo + Math.floor(rand() * (hi - lo + 1));
  const value = (field, signed) => {
    let mant = word() & 0x7fffff;
    if (rand() < 0.5) mant &= ~((1 << int(0, 23)) - 1) & 0x7fffff; // few significant bits
    if (rand() < 0.02) return signed && rand() < 0.5 ? 0x80000000 : 0;
    return ((signed && rand() < 0.5 ? 0x80000000 : 0) | (field << 23) | mant) >>> 0;
  };
  const a = new Uint32Array(n);
  const b = new Uint32Array(n);
  for (let i = 0; i < n; i++) {
    if (op === 'fast_square') {
      a[i] = value(int(127 - 63, 127 + 63), true);
    } else if (op === 'fast_mul' || op === 'fast_mul_free') {
      const ea = int(2, 253);
      const eb = int(Math.max(2, 130 - ea), Math.min(253, 251 + 127 - ea)); // ea + eb - 127 in [3, 251]
      a[i] = value(ea, true);
      b[i] = value(eb, true);
      if (i % 8 === 6) {
        // Significand products just below or above 2^47: rounding into the next binade, or starting it.
        const mb = 0x800000 | (b[i] & 0x7fffff);
        const ma = Math.floor((2 ** 47 - 1) / mb) + (i % 16 === 6 ? 0 : 1);
        if (ma < 0x1000000 && (a[i] & 0x7f800000) !== 0 && (b[i] & 0x7f800000) !== 0) a[i] = ((a[i] & 0xff800000) | (ma & 0x7fffff)) >>> 0;
      }
    } else {
      const ea = int(1, 253);
      a[i] = value(ea, false);
      b[i] = value(rand() < 0.5 ? int(1, 253) : int(Math.max(1, ea - 30), Math.min(253, ea + 30)), false);
    }
  }
  return [a, b];
}
const SPECIAL = [0, 0x80000000, 0x7f800000, 0xff800000, 0x7fc00000, 0xffc00001, 1, 0x80000001, 0x007fffff,
  0x00800000, 0x3f800000, 0x7f7fffff, 0xff7fffff, 0x33800000, 0x477ff000, 0x477fefff, 0x38800000, 0x387fffff, 0x0b800000];

/** Operand pairs: every pair of special values, then random bit patterns,
 * a share of them with near exponents (cancellation, ties) or subnormal. */
function operands(op, n) {
  const rand = prng(0x5eed + op.length);
  const word = () => Math.floor(rand() * 2 ** 32) >>> 0;
  const a = new Uint32Array(n);
  const b = new Uint32Array(n);
  for (let i = 0; i < n; i++) {
    let x = word();
    let y = word();
    if (i % 4 === 1) y = ((x & 0xff800000) + ((i % 3) << 23) - 0x800000) ^ (word() & 0x807fffff);
    if (i % 8 === 3) x &= 0x807fffff;
    if (i % 8 === 5) y &= 0x807fffff;
    if (i % 16 === 7) y = (x & 0xffffff00) | (word() & 0xff);
    if (i < SPECIAL.length ** 2) [x, y] = [SPECIAL[i % SPECIAL.length], SPECIAL[Math.floor(i / SPECIAL.length)]];
    a[i] = op === 'from_f16' ? x & 0xffff : x;
    b[i] = y;
  }
  return [a, b];
}

const isNaN32 = (bits) => (bits & 0x7fffffff) > 0x7f800000;


// ---- The device form on caller buffers ---------------------------------------

/** Values of `dtype` as bytes: float32 values or 16-bit patterns. */
function valuesOf(rand, n, dtype, sigma) {
  const v = new Float32Array(n).map(() => (rand() + rand() + rand() + rand() - 2) * sigma);
  return dtype === 'float32' ? v : Uint16Array.from(v, (x) => (dtype === 'bfloat16' ? numberToBfloat16(x) : numberToFloat16(x)));
}

/** A device-form call: the arena every group's buffer starts as (the roles
 * at their offsets: no two roles share a byte, even in different groups), and each
 * group's bytes expected afterwards (the reference's results written over
 * the roles written, every other byte as it was). */
function bufferCase({ what, fn, dtype, weightDtype = dtype, rows: tokens, dim, groups, offsets, params = {}, size = 1024 }) {
  const rand = prng(tokens * 131 + dim);
  const arena = new Uint8Array(size).map((_, i) => (i * 37 + 11) & 0xff);
  const { heads = 1, headStride = dim, ...rest } = params;
  const { rowStride = (heads - 1) * headStride + dim, ...options16 } = rest;
  const rows = tokens * heads;
  const bytesOf16 = (v) => new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
  // Per-row roles: row (t, h) at the role's offset + t * rowStride + h * headStride values (the reference computes them packed).
  const perRow = (role) => role === 'x' || role === 'residual' || role === 'out';
  const place = (target, role, values) => {
    const bits = values instanceof Float32Array && role !== 'rstd' && dtype !== 'float32' ? new Uint16Array(values.buffer) : values;
    if (!perRow(role)) return target.set(bytesOf16(bits), offsets[role]);
    const each = dim * bits.BYTES_PER_ELEMENT;
    for (let r = 0; r < rows; r++) {
      const at = Math.floor(r / heads) * rowStride + (r % heads) * headStride;
      target.set(bytesOf16(bits).subarray(r * each, (r + 1) * each), offsets[role] + at * bits.BYTES_PER_ELEMENT);
    }
  };
  const x = valuesOf(rand, rows * dim, dtype, 2);
  place(arena, 'x', x);
  const residual = fn === 'addRmsNorm' ? valuesOf(rand, rows * dim, dtype, 3) : undefined;
  if (residual) place(arena, 'residual', residual);
  const hasWeight = offsets.weight !== undefined;
  const weight = hasWeight ? valuesOf(rand, dim, weightDtype, 1) : null;
  if (weight) place(arena, 'weight', weight);
  const rstd = new Float32Array(rows);
  const options = { dim, dtype, rstd, ...(hasWeight ? { weightDtype } : {}), ...options16 };
  const r = residual?.slice();
  const out = fn === 'addRmsNorm' ? reference.addRmsNorm(x, r, weight, options) : reference.rmsNorm(x, weight, options);
  const written = { out, residual: r, rstd };
  const expected = groups.map((roles) => {
    const bytes = arena.slice();
    for (const role of roles) {
      const v = written[role];
      if (v !== undefined && offsets[role] !== undefined && rows > 0) place(bytes, role, v);
    }
    return bytes;
  });
  const sent = { fn, arena: b64(arena), groups, offsets, params: { rows: tokens, dim, dtype, ...(hasWeight ? { weightDtype } : {}), ...params } };
  return { what, sent, expected };
}

const BUFFER_CASES = [
  { what: 'bfloat16, one buffer for all, odd element offsets', fn: 'rmsNorm', dtype: 'bfloat16', weightDtype: 'float32', rows: 3, dim: 5,
    groups: [['x', 'weight', 'out', 'rstd']], offsets: { x: 2, weight: 40, out: 66, rstd: 100 } },
  { what: 'float16 in place at offset 6, bfloat16 weight apart', fn: 'rmsNorm', dtype: 'float16', weightDtype: 'bfloat16', rows: 4, dim: 7,
    groups: [['x', 'out', 'rstd'], ['weight']], offsets: { x: 6, out: 6, weight: 402, rstd: 300 }, params: { castMode: 'gemma', weightOffset: 1 } },
  { what: 'float16 addRmsNorm, residual and out of different parities in one buffer', fn: 'addRmsNorm', dtype: 'float16', rows: 3, dim: 7,
    groups: [['x', 'residual', 'out', 'weight']], offsets: { x: 0, residual: 46, out: 92, weight: 140 } },
  { what: 'bfloat16 addRmsNorm, rstd only (no out)', fn: 'addRmsNorm', dtype: 'bfloat16', rows: 5, dim: 3,
    groups: [['x'], ['residual', 'rstd']], offsets: { x: 110, residual: 2, rstd: 64 } },
  { what: 'float32 addRmsNorm, four buffers past the offset alignment', fn: 'addRmsNorm', dtype: 'float32', rows: 2, dim: 300,
    groups: [['x'], ['residual'], ['out'], ['rstd', 'weight']], offsets: { x: 4, residual: 2412, out: 4868, rstd: 7300, weight: 7316 }, size: 12288 },
  { what: 'float32 rstd only', fn: 'rmsNorm', dtype: 'float32', rows: 6, dim: 33,
    groups: [['x', 'rstd']], offsets: { x: 260, rstd: 8 }, size: 2048 },
  { what: 'bfloat16 addRmsNorm, rows of 301 (a workgroup a row), odd offsets in one buffer', fn: 'addRmsNorm', dtype: 'bfloat16',
    weightDtype: 'float16', rows: 3, dim: 301, groups: [['x', 'residual', 'out', 'weight', 'rstd']],
    offsets: { x: 2, residual: 1810, out: 3620, weight: 5430, rstd: 6040 }, params: { castMode: 'gemma', weightOffset: 1 }, size: 8192 },
  { what: 'float16 in place, rows of 1000 at offset 6', fn: 'rmsNorm', dtype: 'float16', rows: 3, dim: 1000,
    groups: [['x', 'out'], ['weight', 'rstd']], offsets: { x: 6, out: 6, weight: 8002, rstd: 10004 }, size: 12288 },
  { what: 'rows = 0 writes nothing', fn: 'rmsNorm', dtype: 'float16', rows: 0, dim: 9,
    groups: [['x', 'out', 'weight']], offsets: { x: 2, out: 2, weight: 100 } },
  { what: 'float32, rowStride: out rows in the gaps of x rows, one buffer', fn: 'rmsNorm', dtype: 'float32', rows: 5, dim: 12,
    groups: [['x', 'out', 'weight', 'rstd']], offsets: { x: 0, out: 48, weight: 500, rstd: 600 }, params: { rowStride: 24 } },
  { what: 'bfloat16 addRmsNorm, rowStride 301 for rows of 300 (odd strides: half words)', fn: 'addRmsNorm', dtype: 'bfloat16', rows: 3, dim: 300,
    groups: [['x', 'residual'], ['out', 'rstd']], offsets: { x: 2, residual: 2000, out: 6, rstd: 4000 }, params: { rowStride: 301 }, size: 8192 },
  { what: 'float16 in place at rowStride 1030 for rows of 1024, gaps untouched', fn: 'rmsNorm', dtype: 'float16', rows: 3, dim: 1024,
    groups: [['x', 'out'], ['weight']], offsets: { x: 8, out: 8, weight: 6200 }, params: { rowStride: 1030 }, size: 8448 },
  // Heads (QK-norm in a fused QKV buffer): a pass a head, rstd a value a row in the order (t, h).
  { what: 'float32 heads: 3 tokens of 4 heads of 16, 24 apart, tokens 160 apart, rstd', fn: 'rmsNorm', dtype: 'float32', rows: 3, dim: 16,
    groups: [['x', 'rstd', 'weight'], ['out']], offsets: { x: 0, out: 2400, rstd: 2048, weight: 2200 }, params: { heads: 4, headStride: 24, rowStride: 160 }, size: 4096 },
  { what: 'bfloat16 addRmsNorm heads in place, odd head stride (half words), tokens 101 apart', fn: 'addRmsNorm', dtype: 'bfloat16', rows: 2, dim: 20,
    groups: [['x', 'out'], ['residual', 'rstd', 'weight']], offsets: { x: 2, out: 2, residual: 400, rstd: 1000, weight: 1200 },
    params: { heads: 3, headStride: 23, rowStride: 101 }, size: 2048 },
  { what: 'float16 heads evenly spaced (plain rows), weight offset', fn: 'rmsNorm', dtype: 'float16', rows: 2, dim: 32,
    groups: [['x'], ['out', 'weight']], offsets: { x: 0, out: 1152, weight: 1024 }, params: { heads: 4, headStride: 32, rowStride: 128, weightOffset: 1 }, size: 2048 },
  // One row: its span is dim values, whatever the stride (src/ops/options.js, rowSpan); the buffer after it is not the call's.
  { what: 'float32 one row at rowStride 2^40, the buffer ending with the row', fn: 'rmsNorm', dtype: 'float32', rows: 1, dim: 64,
    groups: [['x', 'out', 'weight', 'rstd']], offsets: { x: 512, out: 0, weight: 256, rstd: 768 }, params: { rowStride: 2 ** 40 }, size: 772 },
  { what: 'bfloat16 addRmsNorm one row at rowStride 9 for rows of 5', fn: 'addRmsNorm', dtype: 'bfloat16', rows: 1, dim: 5,
    groups: [['x', 'residual', 'out', 'weight']], offsets: { x: 2, residual: 16, out: 30, weight: 44 }, params: { rowStride: 9 }, size: 64 },
];


// ---- Argument checks -----------------------------------------------------------

// The device form's mistakes (tests/helpers/webgpu-page.js, deviceMistakes)
// and the error each must raise.
const DEVICE_MISTAKES = {
  'encoder not an encoder': 'TypeError: rmsNorm: encoder must be a GPUCommandEncoder or a GPUComputePassEncoder, got Object',
  'x a typed array': 'TypeError: rmsNorm: buffers.x must be a GPUBuffer or { buffer: GPUBuffer, offset }, got Float32Array(64)',
  'x offset not a multiple of 4': 'RangeError: rmsNorm: buffers.x.offset must be a non-negative multiple of 4 (the bytes of a float32 value), got 2',
  'x offset not a number': 'TypeError: rmsNorm: buffers.x.offset must be a number, got string "0"',
  'x without STORAGE usage': 'RangeError: rmsNorm: buffers.x must be a buffer with GPUBufferUsage.STORAGE',
  'out too small from its offset': 'RangeError: rmsNorm: buffers.out needs 256 bytes from offset 8, but the buffer has 256',
  'out over the weight': 'RangeError: rmsNorm: buffers.out must not overlap buffers.weight',
  'out partly over x': 'RangeError: rmsNorm: buffers.rstd must not overlap buffers.x',
  'rstd over x': 'RangeError: rmsNorm: buffers.rstd must not overlap buffers.x',
  'weight mapped': "RangeError: rmsNorm: buffers.weight must be unmapped, but its mapState is 'mapped'",
  'rows negative': 'RangeError: rmsNorm: params.rows must be a non-negative integer, got -1',
  'rowStride below dim': "RangeError: rmsNorm: params.rowStride must be an integer >= dim (16), the values from one row's start to the next's; got 15",
  'rowStride a string': 'TypeError: rmsNorm: params.rowStride must be a number, got string "16"',
  'heads running into the next token': "RangeError: rmsNorm: params.rowStride (32) must be at least (heads - 1) * headStride + dim (40) for 2 tokens: a token's heads would run into the next token's",
  'headStride below dim': "RangeError: rmsNorm: params.headStride must be an integer >= dim (16), the values from one head's start to the next's within a token; got 8",
  'headStride without heads': 'TypeError: rmsNorm: params.headStride needs params.heads',
  'heads zero': 'RangeError: rmsNorm: params.heads must be a positive integer, the rows each token holds; got 0',
  'outDtype with dim not a multiple of its block': "RangeError: rmsNorm: params.outDtype 'q8_0' needs dim (16) to be a multiple of 32, its block size: leave outDtype out for float32 rows",
  'outDtype unknown': `TypeError: rmsNorm: params.outDtype must be 'float32' or 'q8_0' or 'q8_1' or 'q8_K', got string "q4_0"`,
  'outDtype without out': 'TypeError: rmsNorm: params.outDtype needs an output, but buffers.out is undefined',
  'out too small for its blocks': 'RangeError: rmsNorm: buffers.out needs 68 bytes from offset 200, but the buffer has 256',
  'layerNorm headStride on the device form': 'RangeError: layerNorm: params.headStride is not on the GPU yet; the wasm kernels take it',
  'rows at rowStride past the buffer': 'RangeError: rmsNorm: buffers.x needs 376 bytes from offset 0, but the buffer has 256',
  'out rows interleaved with x, overlapping': 'RangeError: rmsNorm: buffers.out must be buffers.x itself or not overlap buffers.x',
  'dim zero': 'RangeError: rmsNorm: params.dim must be a positive integer, got 0',
  'dim a string': 'TypeError: rmsNorm: params.dim must be a number, got string "16"',
  'eps NaN': 'RangeError: rmsNorm: params.eps must be a finite float32 >= 0, got NaN',
  'eps negative': 'RangeError: rmsNorm: params.eps must be a finite float32 >= 0, got -1',
  'dtype unknown': `TypeError: rmsNorm: params.dtype must be 'float32' or 'bfloat16' or 'float16', got string "half"`,
  'castMode unknown': `TypeError: rmsNorm: params.castMode must be 'llama' or 'gemma', got string "mistral"`,
  'weightOffset infinite': 'RangeError: rmsNorm: params.weightOffset must be a finite float32, got Infinity',
  'weightDtype without weight': 'TypeError: rmsNorm: params.weightDtype needs a weight, but buffers.weight is null',
  'neither out nor rstd': 'TypeError: rmsNorm: buffers.out or buffers.rstd is required',
  'addRmsNorm without residual': 'TypeError: addRmsNorm: buffers.residual must be a GPUBuffer or { buffer: GPUBuffer, offset }, got undefined',
  'addRmsNorm out over the residual': 'RangeError: addRmsNorm: buffers.out must not overlap buffers.residual',
  'addRmsNorm residual over x': 'RangeError: addRmsNorm: buffers.residual must not overlap buffers.x',
  'params missing': 'TypeError: rmsNorm: params must be an object, got undefined',
  'layerNorm mean over out': 'RangeError: layerNorm: buffers.mean must not overlap buffers.out',
  'layerNorm bias a number': 'TypeError: layerNorm: buffers.bias must be a GPUBuffer or { buffer: GPUBuffer, offset }, got number 3',
  'layerNorm nothing to write': 'TypeError: layerNorm: buffers.out, buffers.mean or buffers.rstd is required',
};

// The array form's mistakes, as plain data ([kind, length] for an array,
// 'undefined' for undefined): each must raise what the reference (the wasm
// API's checks) raises in Node. The one engine difference: where the engine
// has Float16Array, the weight's message offers it too.
const ARRAY_MISTAKES = [
  { fn: 'rmsNorm', args: [['Float32Array', 10], ['Float32Array', 3]] },
  { fn: 'rmsNorm', args: [['Float32Array', 8], ['Float32Array', 4]], options: { eps: -1 } },
  { fn: 'rmsNorm', args: [[1, 2, 3], null], options: { dim: 3 } },
  { fn: 'rmsNorm', args: [['Float32Array', 8]] },
  { fn: 'rmsNorm', args: [['Float32Array', 8], ['Float32Array', 4]], options: { castMode: 'mistral' } },
  { fn: 'rmsNorm', args: [['Float32Array', 8], ['Float32Array', 4]], options: { out: ['Float32Array', 7] } },
  { fn: 'rmsNorm', args: [['Float32Array', 8], ['Float32Array', 4]], options: { rstd: ['Float32Array', 3] } },
  { fn: 'rmsNorm', args: [['Float32Array', 8], ['Float32Array', 4]], options: { dtype: 'bfloat16' } },
  { fn: 'rmsNorm', args: [['Float32Array', 8], ['Uint16Array', 4]] },
  { fn: 'rmsNorm', args: [['Uint16Array', 8], ['Uint16Array', 4]], options: { dtype: 'float16', weightOffset: 1e39 } },
  { fn: 'rmsNorm', args: [['Float32Array', 8], ['Float32Array', 4]], options: { bogus: 1 } },
  { fn: 'addRmsNorm', args: [['Float32Array', 8], 'undefined', ['Float32Array', 4]] },
  { fn: 'addRmsNorm', args: [['Float32Array', 8], ['Float32Array', 4], ['Float32Array', 4]] },
  { fn: 'layerNorm', args: [['Float32Array', 8], ['Float32Array', 4], ['Float32Array', 3]] },
  { fn: 'layerNorm', args: [['Float32Array', 8], null, null], options: { dim: 4, mean: ['Float32Array', 1] } },
  { fn: 'layerNorm', args: [['Uint16Array', 8], null, null], options: { dim: 4 } },
];

function referenceError(spec) {
  const make = (a) => (a === 'undefined' ? undefined : Array.isArray(a) && typeof a[0] === 'string' ? new globalThis[a[0]](a[1]).fill(a[0] === 'Float32Array' ? 0.5 : 0x3c00) : a);
  const options = spec.options && Object.fromEntries(Object.entries(spec.options).map(([k, v]) => [k, make(v)]));
  try {
    reference[spec.fn](...spec.args.map(make), options);
    return null;
  } catch (error) {
    return `${error.constructor.name}: ${error.message}`;
  }
}

const server = await startTestServer();
after(() => server.close());

for (const name of GPU_ENGINES) {
  describe(`WebGPU in ${name}`, () => {
    let browser;
    let page;
    before(async () => {
      browser = await launchGpuBrowser(name);
      page = await browser.openPage(server.url(PAGE));
    });
    after(async () => {
      await page?.close();
      await browser?.close();
    });

    test('docs/webgpu.md: the engine block, as written, gives the reference\'s bits', async () => {
      const text = await readFile(new URL('../docs/webgpu.md', import.meta.url), 'utf8');
      const block = /## Calling it from an engine\n\n(?:<!--[^]*?-->\n)?```js\n([^]*?)\n```/.exec(text)[1];
      const importLine = "import { createGpuKernels, createArrayKernels } from 'rmsnorm-wasm/webgpu';";
      assert.ok(block.startsWith(importLine), 'the block imports the package entry point');
      const tokens = 3;
      const dim = 2048;
      const rand = prng(2051);
      const bf16 = (n, s) => Uint16Array.from({ length: n }, () => numberToBfloat16(Math.fround((rand() - 0.5) * s)));
      const x = bf16(tokens * dim, 6);
      const residual = bf16(tokens * dim, 6);
      const weight = bf16(dim, 2);
      const reply = await page.evaluate(async ({ code, x, residual, weight, dim }) => {
        const { fromBase64, openDevice, toBase64 } = await import('/tests/helpers/webgpu-page.js');
        const { device } = await openDevice();
        const buffer = (bits, extra = 0) => {
          const b = device.createBuffer({ size: extra + bits.byteLength, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST });
          device.queue.writeBuffer(b, extra, bits);
          return b;
        };
        const hidden = buffer(fromBase64(x));
        const resid = buffer(fromBase64(residual), 4096); // the block's residual sits at byte 4096
        const normWeight = buffer(fromBase64(weight));
        const act = device.createBuffer({ size: fromBase64(x).byteLength, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC });
        const tokens = fromBase64(x).length / dim;
        // The block itself, its import made the page's path to the same module.
        const run = new (Object.getPrototypeOf(async () => {}).constructor)('device', 'hidden', 'resid', 'normWeight', 'act', 'tokens', code);
        await run(device, hidden, resid, normWeight, act, tokens);
        const read = async (b, offset, size) => {
          const r = device.createBuffer({ size, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
          const e = device.createCommandEncoder();
          e.copyBufferToBuffer(b, offset, r, 0, size);
          device.queue.submit([e.finish()]);
          await r.mapAsync(GPUMapMode.READ);
          return toBase64(new Uint16Array(r.getMappedRange().slice(0)));
        };
        return { out: await read(act, 0, act.size), residual: await read(resid, 4096, act.size) };
      }, { code: block.replace(importLine, "const { createGpuKernels, createArrayKernels } = await import('/src/webgpu/index.js');"),
        x: b64(x), residual: b64(residual), weight: b64(weight), dim });
      const expectedResidual = residual.slice();
      const expected = reference.addRmsNorm(x, expectedResidual, weight,
        { dim, eps: 1e-6, dtype: 'bfloat16', weightDtype: 'bfloat16', castMode: 'llama' });
      assert.deepEqual(differences(reply.out, expected, 'bfloat16'), [], 'act');
      assert.deepEqual(differences(reply.residual, expectedResidual, 'bfloat16'), [], 'the residual, updated in place');
    });

    test('each soft-float operation, and each common-path one in its domain, matches IEEE float32 (Math.fround) on 2^16 operand pairs', async (t) => {
      for (const op of [...Object.keys(OPS), ...Object.keys(FAST_OPS)]) {
        const [a, b] = op in FAST_OPS ? fastOperands(op, 1 << 16) : operands(op, 1 << 16);
        const got = new Uint32Array(bytesOf(await page.evaluate(async ({ op, a, b }) => {
          const { runOp } = await import('/tests/helpers/webgpu-ops.js');
          const { fromBase64, openDevice, toBase64 } = await import('/tests/helpers/webgpu-page.js');
          const { device } = await openDevice();
          const words = (text) => new Uint32Array(fromBase64(text, 'float32').buffer);
          const out = await runOp(device, op, words(a), words(b));
          return toBase64(out);
        }, { op, a: b64(a), b: b64(b) })).buffer);
        let bad = 0;
        let first = '';
        for (let i = 0; i < a.length; i++) {
          const want = (OPS[op] ?? FAST_OPS[op])(a[i], b[i]);
          const same = got[i] === want || (!op.startsWith('to_') && isNaN32(want) && isNaN32(got[i]));
          if (!same && bad++ === 0) first = `${op}(0x${a[i].toString(16)}, 0x${b[i].toString(16)}) = 0x${got[i].toString(16)}, expected 0x${want.toString(16)}`;
        }
        assert.equal(bad, 0, `${bad} of ${a.length} ${op} results differ; first ${first}`);
      }
      t.diagnostic(`${Object.keys(OPS).length + Object.keys(FAST_OPS).length} operations x 65536 operand pairs, all exact`);
    });

    test('every shader variant the backend can build compiles: getCompilationInfo() holds no error', async (t) => {
      const { count, failed } = await page.evaluate(async () => (await import('/tests/helpers/webgpu-page.js')).compileEveryShader());
      t.diagnostic(`${count} shaders compiled`);
      assert.ok(count > 1000, `${count} shaders`);
      assert.deepEqual(failed.slice(0, 5), [], `${failed.length} shaders with errors`);
    });

    test('the portable bit-exactness suite: every rmsNorm, addRmsNorm and layerNorm call bit for bit', async (t) => {
      const cases = portableCalls();
      const { mismatches, values, adapter } = await runAndCompare(page, cases);
      t.diagnostic(`${browser.version}, adapter: ${adapter}; ${cases.length} calls, ${values} values`);
      assert.deepEqual(mismatches.slice(0, 10), [], `${mismatches.length} calls differ`);
    });

    test('GPU cases: odd and long rows, 70001 rows, every dtype and weight dtype, in place, special rows', async (t) => {
      const cases = gpuCalls();
      const { mismatches, values } = await runAndCompare(page, cases);
      t.diagnostic(`${cases.length} calls, ${values} values`);
      assert.deepEqual(mismatches.slice(0, 10), [], `${mismatches.length} calls differ`);
    });

    test('accessors the page defines on Array.prototype and Object.prototype steer neither form, nor the wasm API', async () => {
      // A page of its own: the accessors would outlive a failed run.
      const own = await browser.openPage(server.url(PAGE));
      try {
        const result = await own.evaluate(async (names) => {
          const { attackPrototypes } = await import('/tests/helpers/prototype-attack.js');
          return attackPrototypes({ names, gpu: true });
        }, packageNames());
        assert.deepEqual(result.differences, [], browser.version);
        assert.ok(result.same && result.accessors > 400);
        assert.equal(result.hits, 0, `${browser.version}: an accessor of the page ran`);
      } finally {
        await own.close();
      }
    });

    test('device form: caller buffers at odd offsets, shared, in place; every other byte untouched', async () => {
      // Each case as the layout lays it out, and with 1, 4, 16 or 64 invocations a row fixed.
      const cases = BUFFER_CASES.map(bufferCase);
      const teamed = cases.map((c, k) => ({ ...c, what: `${c.what}, team=${TEAMS[k % TEAMS.length]}`, sent: { ...c.sent, team: TEAMS[k % TEAMS.length] } }));
      for (const c of [...cases, ...teamed]) {
        const reply = await page.evaluate(async (arg) => (await import('/tests/helpers/webgpu-page.js')).runOnBuffers(arg), c.sent);
        assert.equal(reply.error, undefined, `${c.what}: ${reply.error}`);
        reply.buffers.forEach((text, g) => {
          const got = bytesOf(text);
          const bad = c.expected[g].findIndex((v, i) => v !== got[i]);
          assert.equal(bad, -1, `${c.what}: buffer ${g} differs from byte ${bad} (${got.slice(bad, bad + 8)}, expected ${c.expected[g].slice(bad, bad + 8)})`);
        });
      }
    });

    test('device form: every mistake a TypeError or RangeError naming the argument, and nothing recorded', async () => {
      const { results, untouched } = await page.evaluate(async () => (await import('/tests/helpers/webgpu-page.js')).deviceMistakes());
      assert.deepEqual(Object.fromEntries(results.map((r) => [r.name, r.error])), DEVICE_MISTAKES);
      assert.ok(untouched, 'a bad call wrote to buffers.out');
    });

    test('prepared calls: the bits of the one-shot call, recorded into a command encoder or the caller\'s compute pass, creating nothing', async () => {
      const rows = 3;
      const dim = 300;
      const rand = prng(4099);
      const x = portableNormal(rand, rows * dim, 2);
      const weight = portableNormal(rand, dim, 1);
      const bf16 = (n, s) => Uint16Array.from(portableNormal(rand, n, s), (v) => numberToBfloat16(v));
      const x16 = bf16(rows * dim, 3);
      const w16 = bf16(dim, 1);
      const residual16 = bf16(rows * dim, 2);
      const reply = await page.evaluate(async (arg) => (await import('/tests/helpers/webgpu-page.js')).preparedCalls(arg),
        { x: b64(x), weight: b64(weight), x16: b64(x16), w16: b64(w16), residual16: b64(residual16), rows, dim });
      // y2 = rmsNorm(rmsNorm(x)): the second dispatch of the pass reads what the first wrote.
      const rstd = new Float32Array(rows);
      const y2 = reference.rmsNorm(reference.rmsNorm(x, weight, { dim }), weight, { dim, rstd });
      assert.deepEqual(differences(reply.results.y2, y2, 'float32'), [], 'two prepared calls in one pass');
      assert.deepEqual(differences(reply.results.rstd, rstd, 'float32'), [], 'rstd');
      const r = residual16.slice();
      const y16 = reference.addRmsNorm(x16, r, w16, { dim, dtype: 'bfloat16', castMode: 'gemma' });
      assert.deepEqual(differences(reply.results.y16, y16, 'bfloat16'), [], 'bfloat16 addRmsNorm');
      assert.deepEqual(differences(reply.results.residual16, r, 'bfloat16'), [], 'its residual, updated in place');
      assert.deepEqual(reply.counts, { createBuffer: 0, createBindGroup: 0, createShaderModule: 0, createComputePipeline: 0, createComputePipelineAsync: 0 },
        `${reply.runs * 2 + 1} runs after prepare`);
      const last = reply.progress.at(-1);
      assert.ok(last.total >= 2 && last.compiled === last.total, `progress ${JSON.stringify(reply.progress)}`);
      assert.equal(reply.afterDestroy, 'TypeError: rmsNorm: this prepared call was destroyed');
    });

    test('array form: like calls reuse their staging, creating nothing on the GPU after the first', async () => {
      const dim = 256;
      const x = portableNormal(prng(77), 8 * dim, 2);
      const weight = portableNormal(prng(78), dim, 1);
      const reply = await page.evaluate(async (arg) => (await import('/tests/helpers/webgpu-page.js')).arrayStaging(arg),
        { x: b64(x), weight: b64(weight), dim });
      assert.deepEqual(reply.counts, { createBuffer: 0, createBindGroup: 0, createShaderModule: 0, createComputePipeline: 0, createComputePipelineAsync: 0 });
      const want = reference.rmsNorm(x, weight, { dim });
      for (const out of reply.outs) assert.deepEqual(differences(out, want, 'float32'), []);
    });

    test('what WebGPU validates after the call returns (a destroyed or foreign buffer, a finished or locked encoder): nothing written', async (t) => {
      const got = await page.evaluate(async () => (await import('/tests/helpers/webgpu-page.js')).deferredValidation());
      assert.equal(Object.keys(got).length, 6);
      for (const [what, r] of Object.entries(got)) {
        assert.ok(r.untouched, `${what}: nothing written`);
        t.diagnostic(`${what}: ${r.error ?? 'no validation error reported'}`);
      }
      // Both engines report these; Firefox reports no error for recording into a locked encoder or an ended pass.
      for (const what of ['x destroyed after prepare', 'out destroyed after prepare, rstd written beside it', "another device's buffer", 'an encoder already finished']) {
        assert.equal(got[what].error, 'GPUValidationError', `${what}: the error WebGPU reports`);
      }
    });

    test('WebGPU methods, getters and limits replaced after load change no bit; forged WebGPU objects are TypeErrors naming the function', async () => {
      const dim = 96;
      const x = portableNormal(prng(4111), 3 * dim, 2);
      const weight = portableNormal(prng(4112), dim, 1);
      // A page of its own: the replacements would outlive a failed run.
      const own = await browser.openPage(server.url(PAGE));
      try {
        const got = await own.evaluate(async (arg) => (await import('/tests/helpers/webgpu-page.js')).replacedBuiltins(arg), { x: b64(x), weight: b64(weight), dim });
        assert.deepEqual(got.errors, [], browser.version);
        assert.equal(got.lies, 0, 'a replaced method or getter ran');
        const want = reference.rmsNorm(x, weight, { dim });
        assert.deepEqual(differences(got.array, want, 'float32'), [], 'array form');
        assert.deepEqual(differences(got.device, want, 'float32'), [], 'device form, prepared');
        assert.match(got.forged.buffer, /^TypeError: rmsNorm: buffers\.x must be a GPUBuffer or \{ buffer: GPUBuffer, offset \}, got /);
        assert.match(got.forged['buffer in { buffer, offset }'], /^TypeError: rmsNorm: buffers\.x must be a GPUBuffer or \{ buffer: GPUBuffer, offset \}, got /);
        assert.match(got.forged.encoder, /^TypeError: rmsNorm: encoder must be a GPUCommandEncoder or a GPUComputePassEncoder, got /);
        assert.match(got.forged.pass, /^TypeError: rmsNorm: encoder must be a GPUCommandEncoder or a GPUComputePassEncoder, got /);
        assert.match(got.forged.device, /^TypeError: createGpuKernels: device must be a GPUDevice, got /);
      } finally {
        await own.close();
      }
    });

    test('array form: a lost device is an Error naming the function, before a call and while one computes; nothing written', async () => {
      const got = await page.evaluate(async () => (await import('/tests/helpers/webgpu-page.js')).lostDevice());
      assert.match(got.before, /^Error: rmsNorm: the GPUDevice was lost \(destroyed: .*\); nothing was written$/);
      assert.match(got.during, /^Error: addRmsNorm: (the GPUDevice was lost \(destroyed: .*\)|reading the result back failed \(.*\)); nothing was written$/);
      assert.ok(got.outUntouched, 'out kept its values');
    });

    test('array form: arrays freed or detached while the GPU computes are refused, and nothing is written', async () => {
      const got = await page.evaluate(async () => (await import('/tests/helpers/webgpu-page.js')).changedWhileComputing());
      const refused = /^TypeError: rmsNorm: options\.out was detached, shrunk or freed while the GPU computed; nothing was written$/;
      for (const what of ['a tensor freed', 'a view of a tensor freed', 'an out detached']) assert.match(got[what], refused, what);
    });

    test("array form: ggml block outputs (options.outDtype) have the reference's bytes: halves, ±amax, zero, subnormal, huge, tiny and non-finite blocks, every dtype, weight mode, residual, layout and team", async (t) => {
      const cases = q8Cases();
      const mismatches = await runQ8Cases(page, cases);
      assert.deepEqual(mismatches.slice(0, 5), [], `${mismatches.length} of ${cases.length} calls differ`);
      t.diagnostic(`${cases.length} calls, every block byte the reference's`);
    });

    test("device form: ggml block outputs have the reference's bytes at byte offsets inside a word, and every other byte of the buffer is untouched", async (t) => {
      const cases = q8DeviceCases();
      for (const c of cases) {
        const got = await page.evaluate(async (spec) => (await import('/tests/helpers/webgpu-page.js')).runOnBuffers(spec), c.spec);
        assert.equal(got.error, undefined, `${c.what}: ${got.error}`);
        assert.deepEqual(byteDifferences(got.buffers[0], c.expected), [], c.what);
      }
      t.diagnostic(`${cases.length} calls (q8_0, q8_1, q8_K; rmsNorm and addRmsNorm), the whole buffer compared`);
    });

    test("array form: the wasm API's errors for the same mistakes", async () => {
      const got = (await page.evaluate(async (specs) => (await import('/tests/helpers/webgpu-page.js')).arrayMistakes(specs), ARRAY_MISTAKES))
        .map((e) => e?.replace('a Uint16Array or Float16Array of 16-bit values', 'a Uint16Array of 16-bit values'));
      const want = ARRAY_MISTAKES.map(referenceError);
      assert.ok(want.every((e) => e !== null), 'every spec is a mistake');
      assert.deepEqual(got, want);
    });

    test('the GPU bench rows run on a small shape: three rows timed, the exact one with no differing output', async () => {
      const { shapes } = await page.evaluate(async (arg) => (await import('/tests/bench/rows/webgpu-page.js')).measureGpu(arg),
        { shapes: [[3, 300]], rounds: 1, batchMs: 0 });
      const results = shapes[0].results;
      assert.deepEqual(results.map((r) => r.id), ['webgpu-exact', 'webgpu-native', 'ort-webgpu']);
      for (const r of results) assert.ok(r.seconds.every((t) => t > 0), `${r.id} timed`);
      assert.equal(results[0].differing, 0);
    });

    test("the GPU bench's block output rows run on a small shape: a float32 out and each format timed, every byte the reference's", async () => {
      const { shapes } = await page.evaluate(async (arg) => (await import('/tests/bench/rows/webgpu-page.js')).measureBlocks(arg),
        { shapes: [[3, 512]], rounds: 1, batchMs: 0 });
      const results = shapes[0].results;
      assert.deepEqual(results.map((r) => r.id), ['float32', 'q8_0', 'q8_1', 'q8_K']);
      for (const r of results) {
        assert.ok(r.seconds.every((t) => t > 0), `${r.id} timed`);
        assert.equal(r.differing, 0, `${r.id}: bytes unlike the reference's`);
      }
    });
  });
}

test('WebKitGTK has no WebGPU (navigator.gpu is undefined): the backend is not tested there', async (t) => {
  const browser = await engineNamed('webkit').launch();
  try {
    const page = await browser.openPage(server.url(PAGE));
    const gpu = await page.evaluate(() => typeof navigator.gpu);
    t.diagnostic(`${browser.version}: typeof navigator.gpu is '${gpu}'`);
    assert.equal(gpu, 'undefined', 'WebKitGTK now has WebGPU: add it to GPU_ENGINES in tests/helpers/webgpu-engines.js');
  } finally {
    await browser.close();
  }
});
