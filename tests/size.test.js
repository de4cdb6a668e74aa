// Size budget: what a browser downloads. The SIMD module is the one nearly
// every engine runs; the budget leaves room for the kernels still to come
// while catching accidental bloat (libc's printf, a debug build, names).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { gzipSync } from 'node:zlib';

const SIMD_GZIP_BUDGET = 25 * 1024;

test(`the gzipped SIMD module stays within ${SIMD_GZIP_BUDGET} bytes`, (t) => {
  const raw = readFileSync(new URL('../build/rmsnorm-simd.wasm', import.meta.url));
  const gzipped = gzipSync(raw, { level: 9 }).length;
  t.diagnostic(`rmsnorm-simd.wasm: ${raw.length} bytes raw, ${gzipped} gzipped`);
  assert.ok(gzipped <= SIMD_GZIP_BUDGET, `rmsnorm-simd.wasm is ${gzipped} bytes gzipped, over the ${SIMD_GZIP_BUDGET}-byte budget`);
});
