// The threat model's one undefended case (docs/api.md, "Threat model"): a
// page that replaced built-ins before the package loaded. The package
// computes with what it saved at load, so a replacement that gives other
// answers than the built-in's fails the import, naming it, rather than
// giving other bits silently; one that gives the built-in's answers changes
// nothing. Each case runs in a fresh Node process.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { test } from 'node:test';
import { promisify } from 'node:util';

const run = promisify(execFile);
const entry = (path) => new URL(`../src/${path}`, import.meta.url).href;

/** Runs `replace` (code), then imports `path` and prints its bits of a 64-value row, or the error. */
async function loadAfter(replace, path = 'index.js') {
  const code = `${replace}
    try {
      const api = await import(${JSON.stringify(entry(path))});
      await api.init?.();
      const ref = await import(${JSON.stringify(entry('reference/index.js'))});
      const x = new Float32Array(64).map((_, i) => Math.sin(i + 1) * 3), w = new Float32Array(64).map((_, i) => 0.5 + i / 64);
      const bits = (a) => Array.from(new Uint32Array(a.buffer));
      console.log(JSON.stringify({ y: bits(api.rmsNorm(x, w)), reference: bits(ref.rmsNorm(x, w)) }));
    } catch (error) {
      console.log(JSON.stringify({ error: error.constructor.name + ': ' + error.message }));
    }`;
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', code]);
  return JSON.parse(stdout);
}

const refused = (name) => `Error: rmsnorm-wasm: ${name} was replaced before rmsnorm-wasm loaded, by one that gives other answers than the built-in's; the package computes with what it saves at load, so it would give other bits. Load it before the code that replaces ${name}, or without it`;

test('built-ins replaced before load by ones that give other answers: the import fails, naming the built-in', async () => {
  const cases = [
    ['Math.fround', 'Math.fround = (x) => x;'],
    ['Math.fround', 'Math.fround = (x) => Number(x.toPrecision(7));'],
    ['Math.sqrt', 'const { sqrt } = Math; Math.sqrt = (x) => sqrt(x) * (1 + 2 ** -52);'],
    ['Float32Array', 'globalThis.Float32Array = class extends Float64Array {};'],
    ['Math', 'Math.log2 = (x) => Math.log(x) / Math.LN2 + 1e-12;'],
    // Right on the known answers, wrong elsewhere: caught by fround and Float32Array checked against each other.
    ['Math.fround or Float32Array', 'const { fround } = Math; Math.fround = (x) => (x > 1e3 && x < 1e6 ? x : fround(x));'],
  ];
  for (const [name, replace] of cases) {
    for (const path of ['index.js', 'reference/index.js', 'webgpu/index.js']) {
      assert.deepEqual(await loadAfter(replace, path), { error: refused(name) }, `${replace} then ${path}`);
    }
  }
});

test('a built-in replaced before load by one that gives its answers: the same bits', async () => {
  const out = await loadAfter('Math.fround = (x) => new Float32Array([x])[0];');
  assert.equal(out.error, undefined, out.error);
  assert.deepEqual(out.y, out.reference);
  assert.deepEqual(out, await loadAfter(''), 'the bits with the built-in');
});
