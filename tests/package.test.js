// What the tarball holds, as properties of `npm pack`'s file list rather
// than a copy of it: every import of every shipped module resolves to a
// shipped file, every `exports` target ships, every module ships that an
// entry point reaches and none that it does not, and nothing a user does not
// need (tests, build output, the C sources, the development log). What
// ships is derived from package.json's `files` (folders and globs); a new
// module under src/ ships by being there. The tarball installed and used:
// tests/tarball.test.js.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFile, readdir } from 'node:fs/promises';
import { dirname, join, normalize, sep } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { importedPath, relativeImports } from './helpers/imports.js';

const run = promisify(execFile);
const repo = fileURLToPath(new URL('..', import.meta.url));
const pkg = JSON.parse(await readFile(join(repo, 'package.json'), 'utf8'));
// The list `npm pack` would write, from the files the build made (`make
// build` before the tests): no prepack here, whose build could race
// tests/tarball.test.js's when test files run in parallel.
const { stdout } = await run('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: repo, maxBuffer: 2 ** 26 });
const [packed] = JSON.parse(stdout);
const files = packed.files.map((f) => f.path).sort();
const shipped = new Set(files);
const posix = (path) => normalize(path).split(sep).join('/');

/** The shipped file an import of `specifier` from `file` loads: in a .d.ts,
 * TypeScript reads x.d.ts for an import of x.js. */
function resolveImport(file, specifier) {
  const target = importedPath(file, specifier);
  if (file.endsWith('.d.ts') && target.endsWith('.js') && !shipped.has(target)) return target.replace(/\.js$/, '.d.ts');
  return target;
}

/** Every string target of the exports map, by entry and condition. */
function exportTargets(value, at = []) {
  if (typeof value === 'string') return [{ at: at.join(' '), target: value }];
  return Object.entries(value).flatMap(([key, inner]) => exportTargets(inner, [...at, key]));
}

const isModule = (file) => /\.(m?js|d\.ts)$/.test(file);

test('the tarball is the package at its version, with its manifest, readme and licence', () => {
  assert.equal(packed.filename, `${pkg.name}-${pkg.version}.tgz`);
  for (const file of ['package.json', 'README.md', 'LICENSE', 'CHANGELOG.md']) assert.ok(shipped.has(file), file);
});

test('package.json\'s files names folders and globs, not files inside a folder: a new module ships by being there', () => {
  for (const entry of pkg.files) assert.ok(/\*|\/$/.test(entry) || !entry.includes('/'), `files: ${entry}`);
});

test('every relative import of every shipped module resolves to a shipped file', async () => {
  const modules = files.filter(isModule);
  assert.ok(modules.length > 40, `${modules.length} modules`);
  const broken = [];
  for (const file of modules) {
    for (const specifier of relativeImports(await readFile(join(repo, file), 'utf8'))) {
      if (!shipped.has(resolveImport(file, specifier))) broken.push(`${file} imports ${specifier}`);
    }
  }
  assert.deepEqual(broken, [], 'imports of files the tarball does not ship');
});

test('every exports target ships, and the ./c/* pattern matches the C library', () => {
  const targets = exportTargets(pkg.exports);
  assert.ok(targets.length >= 10, `${targets.length} targets`);
  for (const { at, target } of targets) {
    assert.match(target, /^\.\//, `exports ${at}`);
    const path = target.slice(2);
    if (path.includes('*')) {
      const [head, tail] = path.split('*');
      const matches = files.filter((f) => f.startsWith(head) && f.endsWith(tail));
      assert.deepEqual(matches, files.filter((f) => f.startsWith('c/')), `exports ${at}: ${target} matches the C library`);
    } else {
      assert.ok(shipped.has(path), `exports ${at}: ${target} is not in the tarball`);
    }
  }
  for (const field of ['main', 'types']) assert.ok(shipped.has(pkg[field].slice(2)), `package.json ${field}: ${pkg[field]}`);
});

test('the shipped modules are exactly those an entry point reaches, and every module under src/ ships', async () => {
  // The closure of the exports map's JS and type entries over their imports.
  const entries = exportTargets(pkg.exports).map(({ target }) => target.slice(2)).filter(isModule);
  const reached = new Set();
  const queue = [...entries];
  while (queue.length > 0) {
    const file = queue.pop();
    if (reached.has(file) || !shipped.has(file)) continue;
    reached.add(file);
    for (const specifier of relativeImports(await readFile(join(repo, file), 'utf8'))) queue.push(resolveImport(file, specifier));
  }
  assert.deepEqual(files.filter(isModule).filter((f) => !reached.has(f)), [], 'shipped modules no entry point imports');
  // Every module under src/ on disk (the generated ones included: the loader imports them) is in the tarball,
  // but for the folders `files` leaves out by a negated pattern (src/integrations/: build-time tools for engines).
  const leftOut = pkg.files.filter((f) => f.startsWith('!')).map((f) => f.slice(1));
  assert.ok(leftOut.every((folder) => folder.startsWith('src/') && folder.endsWith('/')), `negated files entries: ${leftOut}`);
  const onDisk = (await readdir(join(repo, 'src'), { recursive: true })).map((f) => posix(join('src', f)))
    .filter((f) => /\.js$|\.d\.ts$/.test(f) && !leftOut.some((folder) => f.startsWith(folder)));
  assert.ok(onDisk.some((f) => f.endsWith('.generated.js')), 'the built modules exist (make build)');
  assert.deepEqual(onDisk.filter((f) => !shipped.has(f)), [], 'modules under src/ the tarball leaves out');
});

test('nothing ships that a user does not need: no tests, build output, C sources or development log', async () => {
  for (const file of files) {
    assert.doesNotMatch(file, /(^|\/)(tests?|bench|web|build|history|node_modules)\//, file);
    assert.doesNotMatch(file, /\.(c|inc|o|wasm|wat|tgz|test\.js)$|development-log/, file);
    if (file.startsWith('src/')) assert.match(file, /\.js$|\.d\.ts$/, file);
    // C: the public header and the libraries only, wasm32 and wasm64 (docs/c-library.md).
    if (file.startsWith('c/')) assert.match(file, /^c\/(rmsnorm_wasm\.h|librmsnorm_wasm_(simd|scalar)(64)?\.a)$/, file);
  }
  assert.equal(files.filter((f) => f.startsWith('c/')).length, 5, 'the header and four libraries');
  // The user docs are the top of docs/, every page of it (the README links them).
  const docs = (await readdir(join(repo, 'docs'))).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`).sort();
  assert.deepEqual(files.filter((f) => f.startsWith('docs/')), docs);
});

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
const anchorOf = (heading) => heading.trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-');

test('every relative link in the packed README and docs resolves inside the tarball, anchors included; the others are absolute', async () => {
  const documents = files.filter((f) => f.endsWith('.md') && f !== 'CHANGELOG.md');
  for (const doc of documents) {
    const text = await readFile(join(repo, doc), 'utf8');
    const links = [...text.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]);
    if (doc === 'README.md') assert.ok(links.length >= 10, `${links.length} links`);
    for (const link of links) {
      if (/^https:\/\//.test(link)) continue;
      assert.doesNotMatch(link, /^[a-z]+:/, `${doc}: ${link}: absolute links are https`);
      const [path, anchor] = link.split('#');
      const target = path === '' ? doc : posix(join(dirname(doc), path));
      assert.ok(shipped.has(target), `${doc}: ${link}: ${target} is not in the tarball`);
      if (anchor !== undefined) {
        const headings = [...(await readFile(join(repo, target), 'utf8')).matchAll(/^#+ (.+)$/gm)].map((m) => anchorOf(m[1]));
        assert.ok(headings.includes(anchor), `${doc}: ${link}: ${target} has no heading #${anchor}`);
      }
    }
  }
});

test('package.json says where the repository, its home page and its issues are', () => {
  assert.match(pkg.repository.url, /^git\+https:\/\/github\.com\/[\w-]+\/rmsnorm-wasm\.git$/);
  assert.match(pkg.homepage, /^https:\/\//);
  assert.match(pkg.bugs.url, /^https:\/\/.+\/issues$/);
  assert.equal(dirname(pkg.homepage.replace(/#readme$/, '/x')), pkg.repository.url.replace(/^git\+/, '').replace(/\.git$/, ''));
});
