// The package as users get it: `npm pack`, installed into a fresh project,
// then imported from Node ESM, CommonJS and TypeScript, and bundled by
// esbuild for a browser page with a Web Worker. Offline: the package has no
// dependencies, so installing the tarball needs no registry.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { cp, mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, normalize, sep } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { ENGINES, startTestServer } from './helpers/engines.js';

const run = promisify(execFile);
const repo = fileURLToPath(new URL('..', import.meta.url));
const consumerFiles = fileURLToPath(new URL('./consumer/', import.meta.url));
const tsc = join(repo, 'node_modules', 'typescript', 'bin', 'tsc');
const { version } = JSON.parse(await readFile(join(repo, 'package.json'), 'utf8'));

// Exactly what users need: the JS, its types, the embedded modules, the C
// library (tests/c-library.test.js), the docs (every docs/*.md: the README
// links them).
const DOCS = (await readdir(join(repo, 'docs'))).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`);
const WHITELIST = [
  'CHANGELOG.md',
  'LICENSE',
  'README.md',
  'c/librmsnorm_wasm_scalar.a',
  'c/librmsnorm_wasm_scalar64.a',
  'c/librmsnorm_wasm_simd.a',
  'c/librmsnorm_wasm_simd64.a',
  'c/rmsnorm_wasm.h',
  ...DOCS,
  'package.json',
  'src/api/bind.js',
  'src/api/functions.js',
  'src/api/run.js',
  'src/api/runtime.js',
  'src/index.d.ts',
  'src/index.js',
  'src/loader/abi.js',
  'src/loader/intrinsics.js',
  'src/loader/load.js',
  'src/loader/memory.js',
  'src/loader/modules-imported.generated.js',
  'src/loader/modules-memory64.generated.js',
  'src/loader/modules.generated.js',
  'src/loader/tensor.js',
  'src/ops/arrays.js',
  'src/ops/descriptions.js',
  'src/ops/options.js',
  'src/ops/overlap.js',
  'src/ops/prepared.js',
  'src/ops/resolve.js',
  'src/reference/backward.js',
  'src/reference/blocked-sum.js',
  'src/reference/calls.js',
  'src/reference/convert.js',
  'src/reference/float16.js',
  'src/reference/index.d.ts',
  'src/reference/index.js',
  'src/reference/layernorm.js',
  'src/reference/q8.js',
  'src/reference/rmsnorm.js',
  'src/webgpu/args.js',
  'src/webgpu/arrays.js',
  'src/webgpu/gpu.js',
  'src/webgpu/index.d.ts',
  'src/webgpu/index.js',
  'src/webgpu/kernels.js',
  'src/webgpu/programs/index.js',
  'src/webgpu/programs/layernorm-shader.js',
  'src/webgpu/programs/layernorm.js',
  'src/webgpu/programs/layout.js',
  'src/webgpu/programs/rmsnorm-shader.js',
  'src/webgpu/programs/rmsnorm.js',
  'src/webgpu/wgsl/blocks.js',
  'src/webgpu/wgsl/fastfloat.js',
  'src/webgpu/wgsl/reduction.js',
  'src/webgpu/wgsl/softfloat.js',
  'src/webgpu/wgsl/wgsl.js',
];
const EXAMPLE = ['0.55', '-0.37', '1.10', '-2.92'];

let work; // the temporary folder: the tarball, and app/ that installs it
let app;
let packed; // npm pack's report: filename, size, files
before(async () => {
  work = await mkdtemp(join(tmpdir(), 'rmsnorm-wasm-package-'));
  app = join(work, 'app');
  // prepack runs `make build`, so the tarball holds the current modules.
  const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', work], { cwd: repo });
  [packed] = JSON.parse(stdout);
  await cp(consumerFiles, app, { recursive: true });
  const npm = (...args) => run('npm', [...args, '--offline', '--no-audit', '--no-fund'], { cwd: app });
  await npm('init', '-y');
  await npm('install', join(work, packed.filename));
});
after(() => rm(work, { recursive: true, force: true }));

async function node(script) {
  const { stdout } = await run(process.execPath, [script], { cwd: app });
  return JSON.parse(stdout);
}

const twoDecimals = (values) => values.map((v) => v.toFixed(2));

test('the tarball holds exactly the whitelisted files', () => {
  assert.equal(packed.filename, `rmsnorm-wasm-${version}.tgz`);
  const files = packed.files.map((f) => f.path).sort();
  assert.deepEqual(files, WHITELIST, 'update WHITELIST here and "files" in package.json together');
  for (const file of files) {
    // C: the public header and the libraries only, wasm32 and wasm64 (docs/c-library.md).
    if (file.startsWith('c/')) assert.match(file, /^c\/(rmsnorm_wasm\.h|librmsnorm_wasm_(simd|scalar)(64)?\.a)$/, file);
    else assert.doesNotMatch(file, /(^|\/)(tests?|bench|web)\/|\.(c|h|wasm|test\.js)$/, file);
  }
});

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
const anchorOf = (heading) => heading.trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-');

test('every relative link in the packed README and docs resolves inside the tarball, anchors included; the others are absolute', async () => {
  const installed = join(app, 'node_modules', 'rmsnorm-wasm');
  const files = new Set(packed.files.map((f) => f.path));
  for (const doc of ['README.md', ...DOCS]) {
    const text = await readFile(join(installed, doc), 'utf8');
    const links = [...text.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]);
    if (doc === 'README.md') assert.ok(links.length >= 10, `${links.length} links`);
    for (const link of links) {
      if (/^https:\/\//.test(link)) continue;
      assert.doesNotMatch(link, /^[a-z]+:/, `${doc}: ${link}: absolute links are https`);
      const [path, anchor] = link.split('#');
      const target = path === '' ? doc : normalize(join(dirname(doc), path)).split(sep).join('/');
      assert.ok(files.has(target), `${doc}: ${link}: ${target} is not in the tarball`);
      if (anchor !== undefined) {
        const headings = [...(await readFile(join(installed, target), 'utf8')).matchAll(/^#+ (.+)$/gm)].map((m) => anchorOf(m[1]));
        assert.ok(headings.includes(anchor), `${doc}: ${link}: ${target} has no heading #${anchor}`);
      }
    }
  }
});

test('package.json says where the repository, its home page and its issues are', async () => {
  const pkg = JSON.parse(await readFile(join(app, 'node_modules', 'rmsnorm-wasm', 'package.json'), 'utf8'));
  assert.match(pkg.repository.url, /^git\+https:\/\/github\.com\/[\w-]+\/rmsnorm-wasm\.git$/);
  assert.match(pkg.homepage, /^https:\/\//);
  assert.match(pkg.bugs.url, /^https:\/\/.+\/issues$/);
  assert.equal(dirname(pkg.homepage.replace(/#readme$/, '/x')), pkg.repository.url.replace(/^git\+/, '').replace(/\.git$/, ''));
});

test('Node ESM imports the package and its reference, and computes the worked example', async () => {
  const out = await node('esm.mjs');
  assert.equal(out.backend, 'simd');
  assert.deepEqual(twoDecimals(out.wasm), EXAMPLE);
  assert.deepEqual(out.reference, out.wasm, 'reference and wasm agree bit for bit');
  assert.equal(out.deepImport, 'ERR_PACKAGE_PATH_NOT_EXPORTED', 'only the exports map is public');
});

test('every runtime export is declared in the shipped .d.ts', async () => {
  const { exports } = await node('esm.mjs');
  const typesOf = { '.': 'src/index.d.ts', './reference': 'src/reference/index.d.ts' };
  for (const [entry, file] of Object.entries(typesOf)) {
    const types = await readFile(join(app, 'node_modules', 'rmsnorm-wasm', file), 'utf8');
    const declared = [...types.matchAll(/^export (?:declare )?(?:function|const|class) (\w+)/gm)].map((m) => m[1]);
    assert.deepEqual([...new Set(declared)].sort(), exports[entry], `${entry}: runtime exports vs ${file}`);
  }
});

test('CommonJS: await import() computes the worked example; require() returns the same module where Node supports it', async () => {
  const out = await node('commonjs.cjs');
  assert.equal(out.backend, 'simd');
  assert.deepEqual(twoDecimals(out.wasm), EXAMPLE);
  assert.deepEqual(out.reference, out.wasm);
  assert.equal(out.version, version);
  // Node >= 20.19 / 22.12 can require() an ES module; older ones refuse it.
  assert.deepEqual(out.required, out.canRequireEsm ? { sameModule: true } : { error: 'ERR_REQUIRE_ESM' });
});

test('the types compile under tsc --strict, and each misuse is a type error', async () => {
  // Once with the DOM lib (browser code) and once without it (Node code).
  for (const lib of ['es2022,dom', 'es2022']) {
    const args = ['--noEmit', '--strict', '--module', 'nodenext', '--target', 'es2022', '--lib', lib, 'types.mts'];
    await run(process.execPath, [tsc, ...args], { cwd: app }).catch((err) => {
      assert.fail(`tsc --lib ${lib}:\n${err.stdout}${err.stderr}`);
    });
  }
});

// Every TypeScript the docs name (README, docs/engines.md): the oldest
// supported, the last before the DOM lib had WebGPU, the first with it, and
// the one the repository builds with. Below 6.0, rmsnorm-wasm/webgpu's types
// need @webgpu/types, as the docs say; from 6.0 on nothing is added.
const TYPESCRIPTS = [['5.4', 'typescript-5.4'], ['5.9', 'typescript-5.9'], ['6.0', 'typescript-6.0'], ['7.0', 'typescript']];
const tscOf = (pkg) => join(repo, 'node_modules', pkg, 'bin', 'tsc');

test('the types compile under TypeScript 5.4, 5.9, 6.0 and 7.0, the WebGPU types with @webgpu/types below 6.0 as documented', async () => {
  await cp(join(repo, 'node_modules', '@webgpu'), join(app, 'node_modules', '@webgpu'), { recursive: true });
  const tscIn = (pkg, ...args) => run(process.execPath, [tscOf(pkg), '--noEmit', '--strict', '--target', 'es2022', ...args], { cwd: app })
    .then(() => '', (err) => `${err.stdout}${err.stderr}`);
  for (const [version, pkg] of TYPESCRIPTS) {
    const { stdout } = await run(process.execPath, [tscOf(pkg), '--version']);
    assert.match(stdout, new RegExp(`^Version ${version.replace('.', '\\.')}\\.`), pkg);
    const withGpuTypes = Number(version) < 6 ? ['--types', '@webgpu/types'] : [];
    for (const resolution of [['--module', 'nodenext'], ['--module', 'esnext', '--moduleResolution', 'bundler']]) {
      assert.equal(await tscIn(pkg, ...resolution, '--lib', 'es2022', 'types.mts'), '', `TypeScript ${version} ${resolution.join(' ')}: types.mts`);
      assert.equal(await tscIn(pkg, ...resolution, '--lib', 'es2022,dom', ...withGpuTypes, 'webgpu.mts'), '', `TypeScript ${version} ${resolution.join(' ')}: webgpu.mts`);
    }
  }
  // What the docs warn of: without @webgpu/types, TypeScript 5.9 knows no GPUBuffer.
  assert.match(await tscIn('typescript-5.9', '--module', 'nodenext', '--lib', 'es2022,dom', 'webgpu.mts'), /Cannot find name 'GPUBuffer'/);
  for (const doc of ['README.md', 'docs/engines.md']) {
    const text = (await readFile(join(app, 'node_modules', 'rmsnorm-wasm', doc), 'utf8')).replace(/\s+/g, ' ');
    assert.match(text, /TypeScript 5\.4/, `${doc} names the oldest TypeScript`);
    assert.match(text, /`@webgpu\/types`[^.]*before TypeScript 6\.0|before TypeScript 6\.0[^.]*`@webgpu\/types`/, `${doc} says what TypeScript below 6.0 needs for the WebGPU types`);
  }
});

test('esbuild bundles it for the browser: in Chromium, Firefox and WebKit the page computes the worked example with SIMD, and a module Web Worker the same bits', async () => {
  const dist = join(app, 'dist');
  const result = await build({
    entryPoints: [join(app, 'page.mjs'), join(app, 'worker.mjs')],
    outdir: dist,
    bundle: true,
    format: 'esm',
    platform: 'browser',
    write: true,
    logLevel: 'silent',
  });
  assert.deepEqual(result.errors, []);
  assert.deepEqual(result.warnings, []);
  for (const file of ['page.js', 'worker.js']) {
    const code = await readFile(join(dist, file), 'utf8');
    assert.doesNotMatch(code, /\bnode:|\brequire\(|\bprocess\./, `${file} has no Node-only code`);
  }
  await cp(join(app, 'index.html'), join(dist, 'index.html'));
  const server = await startTestServer(dist + sep);
  try {
    for (const engine of ENGINES) {
      const browser = await engine.launch();
      try {
        const page = await browser.openPage(server.url('/index.html'));
        const report = JSON.parse(await page.waitFor(() => document.body.dataset.report, null, 60_000));
        const what = browser.version;
        assert.equal(report.error, undefined, what);
        assert.equal(report.backend, 'simd', what);
        assert.deepEqual(twoDecimals(report.wasm), EXAMPLE, what);
        assert.deepEqual(report.reference, report.wasm, what);
        assert.equal(report.worker.backend, 'simd', what);
        assert.equal(report.worker.y.length, report.long.length, what);
        const i = report.worker.y.findIndex((v, j) => !Object.is(v, report.long[j]));
        assert.equal(i, -1, `${what}: worker and main thread differ first at index ${i} (rows=4 dim=1000)`);
        assert.deepEqual(await page.problems(), [], what);
        await page.close();
      } finally {
        await browser.close();
      }
    }
  } finally {
    await server.close();
  }
});
