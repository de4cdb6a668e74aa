// The README as a five-minute page (issue 29): at most 12 KB; a quick
// start for every entry point the package exports; one line per guarantee,
// each with a link to where it is proven; the two set-up commands; and no
// size or speed figure but the size table tests/figures.js measures, which
// must be what it measures now (a figure nothing holds drifts: the tarball
// was said to be 222 kB when `npm pack` made 265.7 kB).
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { test } from 'node:test';
import { BEGIN, END, measure, shown, table } from './figures.js';

const read = (path) => readFile(new URL(`../${path}`, import.meta.url), 'utf8');
const readme = await read('README.md');
const MAX_BYTES = 12_000;

/** The text of the section under `## heading`, up to the next `## `. */
function section(heading) {
  const from = readme.indexOf(`\n## ${heading}\n`);
  assert.ok(from >= 0, `README.md has a section ${heading}`);
  const to = readme.indexOf('\n## ', from + 1);
  return readme.slice(from, to < 0 ? undefined : to);
}

test(`README.md is at most ${MAX_BYTES} bytes`, () => {
  const size = Buffer.byteLength(readme);
  assert.ok(size <= MAX_BYTES, `README.md is ${size} bytes: move depth into docs/`);
});

test('the quick start starts every entry point the package exports', async () => {
  const pkg = JSON.parse(await read('package.json'));
  const quick = section('Quick start');
  for (const entry of Object.keys(pkg.exports)) {
    if (entry === './package.json') continue;
    const name = entry === '.' ? '`rmsnorm-wasm`' : entry === './c/*' ? '`c/rmsnorm_wasm.h`' : `\`rmsnorm-wasm/${entry.slice(2)}\``;
    assert.ok(quick.includes(name), `the quick start shows ${name}`);
  }
});

test('one line per guarantee, each linking to where it is proven', () => {
  const items = section('Guarantees').split('\n- ').slice(1);
  assert.ok(items.length >= 6, `${items.length} guarantees`);
  for (const item of items) assert.match(item, /\]\((docs\/[\w-]+\.md|#[\w-]+)(#[\w-]+)?\)/, `a link in: ${item}`);
});

test('the README gives the two set-up commands, and CI runs the test one', async () => {
  assert.match(readme, /`make demo`/);
  assert.match(readme, /`make test`/);
  assert.match(await read('.ci/run'), /^make test$/m);
});

test('no size or speed figure but the measured size table, and that table is what tests/figures.js measures now', async () => {
  const figures = shown(readme);
  const rest = readme.replace(BEGIN, '').replace(figures, '').replace(END, '');
  const unmeasured = /\d[\d,.]*\s?(?:[kKMG]i?B|bytes|B\b|µs|ms|ns|GB\/s)|\d×(?!\d)|\btimes (?:faster|slower)\b/g;
  assert.deepEqual(rest.match(unmeasured) ?? [], [], 'a size or speed figure outside the measured table: measure it, or link to the doc that does');
  // Sizes as they round now; a size within 0.5% of a rounding boundary
  // may show either side of it (a build's gzipped bytes move by a few).
  const rows = await measure();
  const near = [0.995, 1, 1.005].map((f) => table(rows, f).split('\n'));
  const lines = figures.split('\n');
  const fits = lines.length === near[1].length && lines.every((line, i) => near.some((t) => t[i] === line));
  assert.ok(fits, `README.md's sizes are not what they measure now: node tests/figures.js --write\n${figures}\n${table(rows)}`);
});
