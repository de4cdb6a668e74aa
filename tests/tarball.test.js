// The package as users get it: `npm pack` (prepack builds), installed into
// a fresh project, and every entry of its exports map imported and called:
// from Node ESM and CommonJS (`.`, `./reference`, `./webgpu`,
// `./package.json`, `./c/*`), from C (a program built by emcc against
// node_modules/rmsnorm-wasm/c/, run in Node), from TypeScript, from an
// esbuild bundle in Chromium, Firefox and WebKit, and in Chromium with
// WebGPU from an import-map page and a bundled page, each with one call on
// the GPU. Offline: the package has no dependencies, so installing the
// tarball needs no registry. What the tarball holds: tests/package.test.js.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, sep } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { ENGINES, startTestServer } from './helpers/engines.js';
import { launchGpuBrowser } from './helpers/webgpu-engines.js';

const run = promisify(execFile);
const repo = fileURLToPath(new URL('..', import.meta.url));
const consumerFiles = fileURLToPath(new URL('./consumer/', import.meta.url));
const tsc = join(repo, 'node_modules', 'typescript', 'bin', 'tsc');
const { version } = JSON.parse(await readFile(join(repo, 'package.json'), 'utf8'));
const env = { ...process.env, NODE_PATH: '/usr/share/nodejs' }; // Debian's emcc

// The README's worked example, to the four places it shows.
const EXAMPLE = ['0.5477', '-0.3651', '1.0954', '-2.9212'];
const fourPlaces = (values) => values.map((v) => v.toFixed(4));

let work; // the temporary folder: the tarball, and app/ that installs it
let app;
let installed; // app/node_modules/rmsnorm-wasm
before(async () => {
  work = await mkdtemp(join(tmpdir(), 'rmsnorm-wasm-tarball-'));
  app = join(work, 'app');
  installed = join(app, 'node_modules', 'rmsnorm-wasm');
  // prepack runs `make build`, so the tarball holds the current modules.
  const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', work], { cwd: repo, maxBuffer: 2 ** 26 });
  const [packed] = JSON.parse(stdout);
  assert.equal(packed.filename, `rmsnorm-wasm-${version}.tgz`);
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

test('Node ESM imports every exports entry and calls it: the worked example from . and ./reference bit for bit, ./webgpu refusing a non-device by name, ./package.json, ./c/*', async () => {
  const out = await node('esm.mjs');
  assert.equal(out.backend, 'simd');
  assert.deepEqual(fourPlaces(out.wasm), EXAMPLE);
  assert.deepEqual(out.reference, out.wasm, 'reference and wasm agree bit for bit');
  assert.deepEqual(out.exports['./webgpu'], ['createArrayKernels', 'createGpuKernels']);
  assert.deepEqual(out.webgpuCalls, {
    createGpuKernels: 'TypeError: createGpuKernels: device must be a GPUDevice, got Object',
    createArrayKernels: 'TypeError: rmsnorm-wasm/webgpu: this engine had no WebGPU when the package loaded',
  });
  assert.equal(out.version, version);
  assert.equal(out.header, pathToFileURL(join(installed, 'c', 'rmsnorm_wasm.h')).href);
  assert.ok(existsSync(fileURLToPath(out.header)));
  assert.equal(out.deepImport, 'ERR_PACKAGE_PATH_NOT_EXPORTED', 'only the exports map is public');
});

test('every runtime export of each entry is declared in its shipped .d.ts', async () => {
  const { exports } = await node('esm.mjs');
  const typesOf = { '.': 'src/index.d.ts', './reference': 'src/reference/index.d.ts', './webgpu': 'src/webgpu/index.d.ts' };
  for (const [entry, file] of Object.entries(typesOf)) {
    const types = await readFile(join(installed, file), 'utf8');
    const declared = [...types.matchAll(/^export (?:declare )?(?:function|const|class) (\w+)/gm)].map((m) => m[1]);
    assert.deepEqual([...new Set(declared)].sort(), exports[entry], `${entry}: runtime exports vs ${file}`);
  }
});

test('CommonJS: await import() computes the worked example and loads ./webgpu; require() returns the same module where Node supports it', async () => {
  const out = await node('commonjs.cjs');
  assert.equal(out.backend, 'simd');
  assert.deepEqual(fourPlaces(out.wasm), EXAMPLE);
  assert.deepEqual(out.reference, out.wasm);
  assert.deepEqual(out.webgpu, ['createArrayKernels', 'createGpuKernels']);
  assert.equal(out.version, version);
  assert.equal(out.header, join(installed, 'c', 'rmsnorm_wasm.h'));
  // Node >= 20.19 / 22.12 can require() an ES module; older ones refuse it.
  assert.deepEqual(out.required, out.canRequireEsm ? { sameModule: true } : { error: 'ERR_REQUIRE_ESM' });
});

test('C: a program built by emcc against node_modules/rmsnorm-wasm/c/ with each wasm32 library prints the worked example', async () => {
  const c = join(installed, 'c');
  for (const [backend, flags] of [['simd', ['-msimd128']], ['scalar', []]]) {
    const out = join(work, `engine-${backend}.cjs`);
    await run('emcc', ['-O2', ...flags, '-I', c, 'engine.c', join(c, `librmsnorm_wasm_${backend}.a`), '-sSINGLE_FILE=1', '-o', out], { cwd: app, env });
    const { stdout } = await run(process.execPath, [out]);
    const [example, refused] = stdout.trim().split('\n');
    assert.equal(example, `0 ${EXAMPLE.join(' ')}`, backend);
    assert.match(refused, /^dim refused: \S/, backend);
  }
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
  for (const [tsVersion, pkg] of TYPESCRIPTS) {
    const { stdout } = await run(process.execPath, [tscOf(pkg), '--version']);
    assert.match(stdout, new RegExp(`^Version ${tsVersion.replace('.', '\\.')}\\.`), pkg);
    const withGpuTypes = Number(tsVersion) < 6 ? ['--types', '@webgpu/types'] : [];
    for (const resolution of [['--module', 'nodenext'], ['--module', 'esnext', '--moduleResolution', 'bundler']]) {
      assert.equal(await tscIn(pkg, ...resolution, '--lib', 'es2022', 'types.mts'), '', `TypeScript ${tsVersion} ${resolution.join(' ')}: types.mts`);
      assert.equal(await tscIn(pkg, ...resolution, '--lib', 'es2022,dom', ...withGpuTypes, 'webgpu.mts'), '', `TypeScript ${tsVersion} ${resolution.join(' ')}: webgpu.mts`);
    }
  }
  // What the docs warn of: without @webgpu/types, TypeScript 5.9 knows no GPUBuffer.
  assert.match(await tscIn('typescript-5.9', '--module', 'nodenext', '--lib', 'es2022,dom', 'webgpu.mts'), /Cannot find name 'GPUBuffer'/);
  for (const doc of ['README.md', 'docs/engines.md']) {
    const text = (await readFile(join(installed, doc), 'utf8')).replace(/\s+/g, ' ');
    assert.match(text, /TypeScript 5\.4/, `${doc} names the oldest TypeScript`);
    assert.match(text, /`@webgpu\/types`[^.]*before TypeScript 6\.0|before TypeScript 6\.0[^.]*`@webgpu\/types`/, `${doc} says what TypeScript below 6.0 needs for the WebGPU types`);
  }
});

/** esbuild's browser bundle of `entries` (files of the app) into `outdir`, checked free of Node-only code. */
async function bundle(entries, outdir) {
  const result = await build({
    entryPoints: entries.map((entry) => join(app, entry)),
    outdir,
    bundle: true,
    format: 'esm',
    platform: 'browser',
    write: true,
    logLevel: 'silent',
  });
  assert.deepEqual(result.errors, []);
  assert.deepEqual(result.warnings, []);
  for (const entry of entries) {
    const file = entry.replace(/\.mjs$/, '.js');
    const code = await readFile(join(outdir, file), 'utf8');
    assert.doesNotMatch(code, /\bnode:|\brequire\(|\bprocess\./, `${file} has no Node-only code`);
  }
}

test('esbuild bundles it for the browser: in Chromium, Firefox and WebKit the page computes the worked example with SIMD, and a module Web Worker the same bits', async () => {
  const dist = join(app, 'dist');
  await bundle(['page.mjs', 'worker.mjs'], dist);
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
        assert.deepEqual(fourPlaces(report.wasm), EXAMPLE, what);
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

test('Chromium with WebGPU (SwiftShader): an import-map page and an esbuild bundle each compute the worked example from ., ./reference and ./webgpu, the same bits', async () => {
  // The import map, from the installed package's exports: each JS entry's `import` target.
  const manifest = JSON.parse(await readFile(join(installed, 'package.json'), 'utf8'));
  const imports = {};
  for (const [entry, target] of Object.entries(manifest.exports)) {
    if (typeof target === 'object' && target.import) imports[`rmsnorm-wasm${entry.slice(1)}`] = `./node_modules/rmsnorm-wasm/${target.import.slice(2)}`;
  }
  assert.deepEqual(Object.keys(imports).sort(), ['rmsnorm-wasm', 'rmsnorm-wasm/reference', 'rmsnorm-wasm/webgpu']);
  const html = (head) => `<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>rmsnorm-wasm</title>\n<link rel="icon" href="data:,">\n${head}\n</head>\n<body></body>\n</html>\n`;
  await writeFile(join(app, 'importmap.html'), html(`<script type="importmap">${JSON.stringify({ imports })}</script>\n<script type="module" src="./gpu-page.mjs"></script>`));
  const bundled = join(app, 'gpu-bundle');
  await mkdir(bundled);
  await bundle(['gpu-page.mjs'], bundled);
  await writeFile(join(bundled, 'index.html'), html('<script type="module" src="./gpu-page.js"></script>'));
  const server = await startTestServer(app + sep);
  const browser = await launchGpuBrowser('chromium');
  try {
    for (const path of ['/importmap.html', '/gpu-bundle/index.html']) {
      const page = await browser.openPage(server.url(path));
      const report = JSON.parse(await page.evaluate(async () => {
        for (let i = 0; i < 1200 && document.body.dataset.report === undefined; i++) await new Promise((resolve) => setTimeout(resolve, 50));
        return document.body.dataset.report ?? '{"error":"no report within 60 s"}';
      }));
      const what = `${browser.version} ${path}`;
      assert.equal(report.error, undefined, what);
      assert.equal(report.backend, 'simd', what);
      assert.deepEqual(fourPlaces(report.wasm), EXAMPLE, what);
      assert.deepEqual(report.reference, report.wasm, `${what}: reference and wasm`);
      assert.deepEqual(report.gpu, report.wasm, `${what}: GPU and wasm`);
      // (Chromium warns that powerPreference is ignored on Linux: not the page's.)
      assert.deepEqual((await page.problems()).filter((p) => !/powerPreference/.test(p)), [], what);
      await page.close();
    }
  } finally {
    await browser.close();
    await server.close();
  }
});
