// The README's size table, measured: `node tests/figures.js` prints it,
// `node tests/figures.js --write` writes it into README.md between its
// `<!-- figures: sizes -->` markers, and tests/readme.test.js fails when the
// README's table is not what this measures now. After `make build`.
// Figures have two significant digits: a table that changed with every
// edit of the docs (which the tarball holds) would hold nothing.
import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';

const repo = fileURLToPath(new URL('..', import.meta.url));
export const BEGIN = '<!-- figures: sizes (node tests/figures.js --write) -->';
export const END = '<!-- /figures -->';

/** 1234567 → '1.2 MB', 265712 → '270 kB', 9783 → '9.8 kB', 512 → '510 B': two significant digits. */
export function bytes(n) {
  const [unit, scale] = n >= 1e6 ? ['MB', 1e6] : n >= 1e3 ? ['kB', 1e3] : ['B', 1];
  return `${Number((n / scale).toPrecision(2))} ${unit}`;
}

const gzipped = (buffer) => gzipSync(buffer, { level: 9 }).length;

/** A bundle of `entry` as a bundler that splits dynamic imports makes it
 * (esbuild, as Vite and webpack do by default): [what a page loads at
 * import (the entry and its static imports), the chunks loaded only when
 * first needed (bindMemory's modules)], each as one buffer of their bytes. */
async function bundle(entry) {
  const result = await build({
    entryPoints: [join(repo, entry)], bundle: true, minify: true, format: 'esm', platform: 'browser', splitting: true,
    outdir: join(repo, 'build', 'figures'), write: false, metafile: true, logLevel: 'silent',
  });
  const code = new Map(result.outputFiles.map((f) => [relative(repo, f.path), Buffer.from(f.contents)]));
  const outputs = result.metafile.outputs;
  const start = Object.keys(outputs).find((o) => outputs[o].entryPoint !== undefined);
  const upfront = new Set([start]);
  for (const o of upfront) {
    for (const i of outputs[o].imports) if (i.kind === 'import-statement') upfront.add(i.path);
  }
  const lazy = Object.keys(outputs).filter((o) => !upfront.has(o) && o.endsWith('.js'));
  return [Buffer.concat([...upfront].map((o) => code.get(o))), Buffer.concat(lazy.map((o) => code.get(o)))];
}

/** [what, raw, gzipped] rows, measured now, the sizes in bytes (the
 * tarball's raw size is its unpacked one). */
export async function measure() {
  const { stdout } = await promisify(execFile)('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: repo });
  const [{ size, unpackedSize, version }] = JSON.parse(stdout);
  const rows = [[`\`npm pack\` tarball (version ${version}: the JS, the types, the C library, \`docs/\`)`, unpackedSize, size]];
  for (const [what, file] of [['SIMD128 module (what nearly every engine runs)', 'rmsnorm-simd.wasm'], ['scalar module', 'rmsnorm-scalar.wasm']]) {
    const wasm = await readFile(join(repo, 'build', file));
    rows.push([what, wasm.length, gzipped(wasm)]);
  }
  const [main, lazy] = await bundle('src/index.js');
  rows.push(['a bundle of `rmsnorm-wasm` (esbuild `--minify --splitting`, its modules embedded): what a page loads', main.length, gzipped(main)]);
  rows.push(['… and the chunks `bindMemory` loads the first time (its wasm32 and memory64 modules)', lazy.length, gzipped(lazy)]);
  const [reference] = await bundle('src/reference/index.js');
  rows.push(['a bundle of `rmsnorm-wasm/reference`', reference.length, gzipped(reference)]);
  return rows;
}

/** The table of measured rows; `scale` multiplies every size first. */
export function table(rows, scale = 1) {
  const size = (n) => bytes(Math.round(n * scale));
  // (The first row, the tarball's, gives its unpacked size as raw.)
  const line = (r, i) => `| ${r[0]} | ${size(r[1])}${i === 0 ? ' unpacked' : ''} | ${size(r[2])} |`;
  return ['| what | raw | gzipped |', '| --- | ---: | ---: |', ...rows.map(line)].join('\n');
}

/** The README's text between the markers, trimmed. */
export function shown(readme) {
  const from = readme.indexOf(BEGIN);
  const to = readme.indexOf(END, from);
  if (from < 0 || to < 0) throw new Error(`README.md has no ${BEGIN} … ${END} block`);
  return readme.slice(from + BEGIN.length, to).trim();
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const text = table(await measure());
  if (process.argv.includes('--write')) {
    const path = join(repo, 'README.md');
    const readme = await readFile(path, 'utf8');
    const from = readme.indexOf(BEGIN) + BEGIN.length;
    await writeFile(path, `${readme.slice(0, from)}\n${text}\n${readme.slice(readme.indexOf(END, from))}`);
  }
  console.log(text);
}
