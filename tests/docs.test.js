// The docs run as tests: every fenced block of README.md, CONTRIBUTING.md,
// docs/*.md, web/README.md and web/model/README.md, in document order, in a work
// directory per document where `rmsnorm-wasm` is this repository (a
// node_modules link, so imports and node_modules/rmsnorm-wasm/c resolve as
// in an installed copy). By language, unless a directive says otherwise
// (tests/docs/markdown.js):
//   js   runs in Node as an ES module; `// → VALUE` comments are checked
//        (tests/docs/expect.js); a block that imports nothing from the package
//        runs after `import { <every export> } from 'rmsnorm-wasm'; await init();`
//   ts   every function, class and property it names is in src/index.d.ts
//        (and every function exported by src/index.js)
//   c    compiled by emcc against c/rmsnorm_wasm.h; a whole program (main())
//        is also saved as the .c file the next shell block builds
//   sh   run when it runs here (emcc, and node on what it built; or marked
//        `doctest: run`); otherwise its commands name real make targets, npm
//        scripts, files and flags, and Debian packages (tests/docs/shell.js)
//   text must be marked: the output of the block run before it, or not run
// A block marked `not run` is still parsed (js: node --check) or compiled (c).
/* global document -- in the callbacks handed to a page */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, mkdir, readFile, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import * as api from '../src/index.js';
import { expectShown, withChecks } from './docs/expect.js';
import { fencedBlocks } from './docs/markdown.js';
import { checkCommands, commandsOf } from './docs/shell.js';

const run = promisify(execFile);
const repo = fileURLToPath(new URL('..', import.meta.url));
const env = { ...process.env, NODE_PATH: '/usr/share/nodejs' }; // Debian's emcc, for the test's own compiles
// A reader's shell: what a fresh login has, and nothing this test runner
// was given. A variable a command needs (Debian's emcc needs NODE_PATH) must
// be written in the docs, in the command or its line.
const readerEnv = { PATH: process.env.PATH, HOME: process.env.HOME };
// Each document is followed in two fresh folders: one with no package.json,
// and an ES module project, as the README's examples set one up; every shell
// block that runs must give the same output in both.
const PROJECTS = [['plain', null], ['esm', { name: 'my-app', private: true, type: 'module' }]];
const expectUrl = pathToFileURL(join(repo, 'tests', 'docs', 'expect.js')).href;
const EXPORTS = Object.keys(api).filter((name) => typeof api[name] === 'function' && name !== 'Tensor');

const documents = [
  'README.md',
  'CONTRIBUTING.md',
  ...(await readdir(join(repo, 'docs'))).filter((f) => f.endsWith('.md')).sort().map((f) => `docs/${f}`),
  ...(await readdir(join(repo, 'docs', 'history'))).filter((f) => f.endsWith('.md')).sort().map((f) => `docs/history/${f}`),
  'web/README.md',
  'web/model/README.md',
];

let work;
before(async () => {
  work = await mkdtemp(join(tmpdir(), 'rmsnorm-wasm-docs-'));
});
after(() => rm(work, { recursive: true, force: true }));

/** Compiles a C block; every rmsnorm_wasm_ function it declares or calls must be the header's (a
 * redeclaration of one the header dropped would compile). */
async function compileC(file, cwd) {
  const [code, header] = await Promise.all([readFile(join(cwd, file), 'utf8'), readFile(join(repo, 'c', 'rmsnorm_wasm.h'), 'utf8')]);
  for (const [, name] of code.matchAll(/\b(rmsnorm_wasm_\w+)\s*\(/g)) {
    assert.match(header, new RegExp(`\\b${name}\\s*\\(`), `c/rmsnorm_wasm.h declares ${name}`);
  }
  await run('emcc', ['-fsyntax-only', '-Wall', '-Werror', '-I', join(repo, 'c'), file], { env, cwd });
}

function checkTypes(code, dts) {
  const names = [];
  for (const [, fn] of code.matchAll(/\bfunction\s+(\w+)/g)) {
    assert.match(dts, new RegExp(`export function ${fn}\\b`), `src/index.d.ts declares ${fn}`);
    assert.equal(typeof api[fn], 'function', `src/index.js exports ${fn}`);
    names.push(fn);
  }
  for (const [, type] of code.matchAll(/\binterface\s+(\w+)/g)) {
    assert.match(dts, new RegExp(`export interface ${type}\\b`), `src/index.d.ts declares interface ${type}`);
    names.push(type);
  }
  for (const [, cls] of code.matchAll(/\bclass\s+(\w+)/g)) {
    assert.match(dts, new RegExp(`export class ${cls}\\b`), `src/index.d.ts declares class ${cls}`);
    names.push(cls);
  }
  for (const [, property] of code.matchAll(/\b(\w+)\??:\s/g)) {
    assert.match(dts, new RegExp(`\\b${property}\\??:|\\bget ${property}\\(`), `src/index.d.ts has ${property}`);
    names.push(property);
  }
  assert.ok(names.length > 0, 'the block declares something');
}

async function runJs(block, where, dir) {
  // What the given code holds after a line `// after the block:` runs after it (closing what it opened).
  const [given, epilogue = ''] = (block.directive?.kind === 'given' ? `${block.directive.arg}\n` : '').split(/^\/\/ after the block:.*$/m);
  const { source, checks } = withChecks(block.code, where);
  const importsPackage = /from\s+'rmsnorm-wasm(\/\w+)?'/.test(given + block.code);
  const prelude = [
    `import { expectShown as __expectShown, expectThrown as __expectThrown } from '${expectUrl}';`,
    importsPackage ? '' : `import { ${EXPORTS.join(', ')} } from 'rmsnorm-wasm';\nawait init();`,
  ].join('\n');
  const file = join(dir, `block-${block.line}.mjs`);
  await writeFile(file, `${prelude}\n${given}${source}\n${epilogue}`);
  const { stdout } = await run(process.execPath, [file], { cwd: dir, timeout: 60_000 });
  return { stdout, checks };
}

/** A CDN URL of the package names this version and a file it ships. */
async function checkCdnUrls(code) {
  const pkg = JSON.parse(await readFile(join(repo, 'package.json'), 'utf8'));
  for (const [url, name, version, path] of code.matchAll(/https:\/\/[\w.-]+\/npm\/([\w-]+)@([\w.-]+)\/([\w./-]+)/g)) {
    assert.equal(`${name}@${version}`, `${pkg.name}@${pkg.version}`, url);
    assert.ok(existsSync(join(repo, path)), `${url}: the package has ${path}`);
  }
}

async function parseJs(code, dir, line) {
  await checkCdnUrls(code);
  // A block that shows two files (`// worker.js` after the main thread's code) is parsed as each.
  const parts = code.split(/^(?=\/\/ [\w.-]+\.js\s*$)/m);
  for (const [i, part] of parts.entries()) {
    const file = join(dir, `parse-${line}-${i}.mjs`);
    await writeFile(file, part);
    await run(process.execPath, ['--check', file]);
  }
}

/** Whether every command of a shell block runs here: emcc on C files the document showed, and node on
 * what an emcc of the block wrote (each after any VAR=value it sets). */
function runsHere(code, dir) {
  const built = new Set();
  return commandsOf(code).every(([command, ...args]) => {
    if (command === 'emcc') {
      if (!args.filter((a) => a.endsWith('.c')).every((c) => existsSync(join(dir, c)))) return false;
      const out = args[args.indexOf('-o') + 1];
      if (args.includes('-o')) built.add(out);
      return true;
    }
    return command === 'node' && built.has(args[0]);
  });
}

const sameText = (text) => text.split('\n').map((l) => l.trimEnd()).join('\n').trim();

for (const document of documents) {
  test(`${document}: every code block runs, or is checked`, async (t) => {
    const text = await readFile(join(repo, document), 'utf8');
    const dts = await readFile(join(repo, 'src', 'index.d.ts'), 'utf8');
    const dirs = [];
    for (const [kind, pkg] of PROJECTS) {
      const folder = join(work, `${document.replace(/\//g, '_')}-${kind}`);
      await mkdir(join(folder, 'node_modules'), { recursive: true });
      await symlink(repo, join(folder, 'node_modules', 'rmsnorm-wasm'));
      if (pkg !== null) await writeFile(join(folder, 'package.json'), `${JSON.stringify(pkg, null, 2)}\n`);
      dirs.push(folder);
    }
    const [dir] = dirs; // where the JS blocks run: they are ES modules in any project
    const inEach = (write) => Promise.all(dirs.map(write));
    let lastOutput = null;
    const blocks = fencedBlocks(text);
    for (const block of blocks) {
      const where = `${document}:${block.line}`;
      const kind = block.directive?.kind;
      await t.test(`${where} ${block.lang}${kind ? ` (${kind}${block.directive.arg && kind !== 'given' ? ` ${block.directive.arg}` : ''})` : ''}`, async () => {
        if (kind === 'output') {
          assert.notEqual(lastOutput, null, `${where}: no block ran before this output`);
          assert.equal(sameText(lastOutput), sameText(block.code), `${where}: what the block before printed`);
          return;
        }
        if (kind === 'checked') {
          const [file] = block.directive.arg.replace(/^by\s+/, '').split(/[\s,]/);
          assert.ok(existsSync(join(repo, file)), `${where}: ${file}, which checks this block, exists`);
          return;
        }
        if (kind === 'file') {
          await inEach((d) => writeFile(join(d, block.directive.arg), `${block.code}\n`));
          if (block.lang === 'c') await compileC(block.directive.arg, dir);
          if (block.lang === 'js') await run(process.execPath, ['--check', join(dir, block.directive.arg)]);
          return;
        }
        if (kind === 'not run') {
          if (['js', 'mjs', 'javascript'].includes(block.lang)) await parseJs(block.code, dir, block.line);
          else if (block.lang === 'c') {
            await writeFile(join(dir, `parse-${block.line}.c`), `${block.code}\n`);
            await compileC(`parse-${block.line}.c`, dir);
          } else if (block.lang === 'sh') await run('bash', ['-n', '-c', block.code]);
          return;
        }
        if (block.lang === 'sh' && (kind === 'run' || (!kind && runsHere(block.code, dir)))) {
          const outputs = [];
          for (const [i, [project]] of PROJECTS.entries()) {
            const { stdout } = await run('bash', ['-e', '-c', block.code], { cwd: dirs[i], env: readerEnv, timeout: 120_000 }).catch((error) => {
              assert.fail(`${where}, copied into a fresh ${project} project folder: ${error.message}`);
            });
            outputs.push(stdout);
          }
          assert.equal(outputs[1], outputs[0], `${where}: the same output in an ES module project`);
          lastOutput = outputs[0];
          return;
        }
        switch (block.lang) {
          case 'js':
          case 'mjs':
          case 'javascript': {
            lastOutput = (await runJs(block, where, dir)).stdout;
            return;
          }
          case 'ts':
            checkTypes(block.code, dts);
            return;
          case 'c': {
            await writeFile(join(dir, `block-${block.line}.c`), `${block.code}\n`);
            await compileC(`block-${block.line}.c`, dir);
            // A whole program is the .c file the next shell block builds.
            const next = blocks.slice(blocks.indexOf(block) + 1).find((b) => b.lang === 'sh');
            const source = /\bint main\(/.test(block.code) && /(\S+\.c)\b/.exec(next?.code ?? '')?.[1];
            if (source) await inEach((d) => writeFile(join(d, source), `${block.code}\n`));
            return;
          }
          case 'sh':
            assert.ok(checkCommands(block.code, repo).length > 0, `${where}: no command`);
            return;
          default:
            assert.fail(`${where}: a ${block.lang} block must be marked <!-- doctest: output --> or <!-- doctest: not run: why -->`);
        }
      });
    }
  });
}

// The docs a user reads (the README and docs/, which the tarball ships; not
// the contributors' testing.md) import only what an installed copy has: the
// package's entry points, Node's modules, a CDN's copy, or a file the reader
// made in their own folder. docs/engines.md once imported tests/helpers/.
const SHIPPED = /^(rmsnorm-wasm(\/(reference|webgpu))?|node:[\w/]+|https:\/\/.+|\.\/[\w-]+\.(c?js|mjs))$/;
test('the user docs\' code imports nothing the package does not ship', async () => {
  for (const document of documents.filter((d) => d === 'README.md' || (d.startsWith('docs/') && d !== 'docs/testing.md'))) {
    for (const block of fencedBlocks(await readFile(join(repo, document), 'utf8'))) {
      if (!['js', 'mjs', 'javascript', 'ts'].includes(block.lang)) continue;
      const code = `${block.directive?.kind === 'given' ? block.directive.arg : ''}\n${block.code}`;
      for (const [, specifier] of code.matchAll(/(?:\bfrom\s+|\bimport\s*\(\s*|^\s*import\s+)'([^']+)'/gm)) {
        assert.match(specifier, SHIPPED, `${document}:${block.line} imports ${specifier}`);
      }
    }
  }
});

// What the README says of `make demo`: it installs only what the demo needs,
// and a port in use gets a sentence saying how to pick another, not a stack trace.
test('make demo installs only what the demo needs, each named by the README; make deps adds the test toolchain', async () => {
  const dryRun = async (target) => (await run('make', ['-n', '-o', 'node_modules/.package-lock.json', '-o', 'build', target], { cwd: repo, env })).stdout;
  const TEST_ONLY = ['chromium', 'firefox-esr', 'webkit2gtk-driver', 'xvfb', 'mesa-vulkan-drivers', 'libsimde-dev', 'clang-format', 'clang-14', 'libclang-rt-14-dev'];
  const demo = await dryRun('demo');
  assert.match(demo, /missing emscripten/);
  // The README's sentence on `make demo` names every Debian package it installs.
  const readme = await readFile(join(repo, 'README.md'), 'utf8');
  const sentence = /`make demo` installs what the tutorial needs \(([^)]*)\)/.exec(readme.replace(/\s+/g, ' '));
  assert.ok(sentence, 'README.md says what `make demo` installs');
  const installs = [...demo.matchAll(/missing="\$missing ([\w.+-]+)"/g)];
  assert.ok(installs.length >= 4, 'make -n demo lists the packages it installs');
  for (const [, name] of installs) {
    assert.match(sentence[1], new RegExp(`\\b${name.replace(/[.+]/g, '\\$&')}\\b`, 'i'), `README.md: make demo installs ${name}`);
  }
  for (const name of TEST_ONLY) assert.doesNotMatch(demo, new RegExp(`missing ${name}"`), `make demo installs no ${name}`);
  assert.match(demo, /node web\/serve\.js 8080/);
  const deps = await dryRun('deps');
  for (const name of ['emscripten', ...TEST_ONLY]) assert.match(deps, new RegExp(`missing ${name}"`), `make deps installs ${name}`);
  assert.match(await dryRun('test'), /missing chromium"/, 'make test installs the test toolchain');
  assert.match(await run('make', ['-n', '-o', 'node_modules/.package-lock.json', '-o', 'build', 'demo', 'PORT=9000'], { cwd: repo, env }).then((r) => r.stdout), /node web\/serve\.js 9000/);
});

test('web/serve.js on a port in use says so and how to pick another, with no stack trace', async () => {
  const { createServer } = await import('node:net');
  const taken = createServer();
  await new Promise((resolve) => taken.listen(0, '127.0.0.1', resolve));
  const { port } = taken.address();
  try {
    const result = await run(process.execPath, [join(repo, 'web', 'serve.js'), String(port)]).then(
      () => assert.fail('the server started on a port in use'),
      (error) => error,
    );
    assert.equal(result.code, 1);
    assert.equal(result.stdout, '');
    assert.equal(result.stderr.trim(), `rmsnorm-wasm demo: port ${port} is already in use (another server, or a demo still running). Pick another port: make demo PORT=9000 (or node web/serve.js 9000; 0 picks a free one).`);
  } finally {
    taken.close();
  }
});

// docs/models.md's Content-Security-Policy blocks, in Chromium: the policy it
// gives lets init() compile and the quick start's row come out; the policy it
// quotes rejects the compile with the message it shows.
test('docs/models.md: Chromium compiles under the policy shown and rejects with the message shown without it', async () => {
  const blocks = fencedBlocks(await readFile(join(repo, 'docs', 'models.md'), 'utf8')).filter((b) => b.directive?.kind === 'checked');
  const policy = blocks.find((b) => b.code.startsWith('Content-Security-Policy: ')).code.slice('Content-Security-Policy: '.length).trim();
  const shown = blocks.find((b) => b.code.startsWith('CompileError')).code.trim();
  const withoutWasm = /"(script-src [^"]+)"/.exec(shown)[1];
  const { launchBrowser, startDemoServer } = await import('./helpers/browser.js');
  const demo = await startDemoServer();
  const browser = await launchBrowser();
  try {
    const reportUnder = async (csp) => {
      const page = await browser.newPage();
      await page.route('**/csp.html', (route) => route.fulfill({
        contentType: 'text/html', headers: { 'content-security-policy': csp },
        body: '<!doctype html><title>csp</title><script type="module" src="/tests/docs/csp-page.js"></script>',
      }));
      await page.goto(demo.url('/csp.html'));
      const report = JSON.parse(await page.waitForFunction(() => document.body?.dataset.report).then((h) => h.jsonValue()));
      await page.close();
      return report;
    };
    const allowed = await reportUnder(policy);
    assert.equal(allowed.backend, 'simd');
    expectShown(Float32Array.from(allowed.y), 'Float32Array [0.5477, -0.3651, 1.0954, -2.9212]', `under ${policy}`);
    assert.deepEqual(await reportUnder(withoutWasm), { error: shown });
  } finally {
    await browser.close();
    demo.server.close();
  }
});

// docs/c-library.md's wasm64 engine, as a reader follows it: the C file the
// page shows, built by the page's commands in a fresh folder, run by the
// page's script in Chromium (Node 20 cannot compile the library's wasm64
// code), printing what the page says.
test('docs/c-library.md: the wasm64 engine builds with the commands shown and prints in Chromium what the page shows', async () => {
  const blocks = fencedBlocks(await readFile(join(repo, 'docs', 'c-library.md'), 'utf8'));
  const source = blocks.find((b) => b.directive?.kind === 'file' && b.directive.arg === 'engine64.c');
  const at = blocks.indexOf(source);
  const [build, script, shown] = blocks.slice(at + 1, at + 4);
  assert.ok(build.lang === 'sh' && /clang-19 --target=wasm64/.test(build.code) && /-o engine64\.wasm/.test(build.code), 'the build block follows the C file');
  assert.ok(script.lang === 'js' && shown.lang === 'text', 'then the page script and what it prints');
  assert.doesNotMatch(source.code, /#include <(stdio|stdlib|string)\.h>/, 'a freestanding engine includes no libc header');
  const folder = await mkdtemp(join(work, 'wasm64-'));
  await mkdir(join(folder, 'node_modules'));
  await symlink(repo, join(folder, 'node_modules', 'rmsnorm-wasm'));
  await writeFile(join(folder, 'engine64.c'), `${source.code}\n`);
  await run('bash', ['-e', '-c', build.code], { cwd: folder, env: readerEnv, timeout: 120_000 });
  const { launchBrowser, startDemoServer } = await import('./helpers/browser.js');
  const server = await startDemoServer(folder);
  const browser = await launchBrowser();
  try {
    const page = await browser.newPage();
    await page.route('**/index.html', (route) => route.fulfill({ contentType: 'text/html', body: '<!doctype html><title>engine64</title>' }));
    await page.goto(server.url('/index.html'));
    const printed = await page.evaluate(`(async () => {
      const lines = [];
      const console = { log: (...values) => lines.push(values.join(' ')) };
      ${script.code}
      return lines.join('\\n');
    })()`);
    assert.equal(sameText(printed), sameText(shown.code));
  } finally {
    await browser.close();
    server.server.close();
  }
});

// A file the docs cite that was renamed or removed leaves a reader looking
// for it (the CHANGELOG cited src/api/args.js and tests/adversarial.test.js
// long after both were gone): every repository path written in code in the
// docs and the CHANGELOG exists, or is one the build or the tests make
// (git-ignored, as c/ and tests/artifacts/ are).
test('every repository path the docs and the CHANGELOG cite exists', async () => {
  const cited = new Set();
  for (const document of [...documents, 'CHANGELOG.md']) {
    const text = await readFile(join(repo, document), 'utf8');
    for (const [, path] of text.matchAll(/`((?:src|tests|docs|web|c)\/[\w./-]*)(?::\d+)?`/g)) cited.add(`${document}: ${path}`);
  }
  assert.ok(cited.size > 50, `${cited.size} paths cited`);
  for (const entry of cited) {
    const path = entry.slice(entry.indexOf(': ') + 2);
    if (existsSync(join(repo, path))) continue;
    const ignored = await run('git', ['check-ignore', '-q', path], { cwd: repo }).then(() => true, () => false);
    assert.ok(ignored, `${entry} does not exist`);
  }
});

// docs/api.md lists what createKernels and bindMemory return; the lists
// once lacked toFloat32 and fromFloat32. Each list is the object's own keys.
test('docs/api.md: createKernels and bindMemory return the members their signatures list', async () => {
  const text = await readFile(join(repo, 'docs', 'api.md'), 'utf8');
  const listed = (fn) => {
    const block = fencedBlocks(text).find((b) => b.lang === 'ts' && b.code.startsWith(`function ${fn}(`));
    assert.ok(block, `docs/api.md shows ${fn}'s signature`);
    const members = /Promise<\{([^}]*)\}>/.exec(block.code);
    assert.ok(members, `${fn}'s signature lists what it returns`);
    return members[1].split(',').map((m) => m.trim()).filter((m) => m !== '');
  };
  // The prose says it again ("Resolves to `{ backend, memory, … }`"): every
  // such list in the function's section, too (the bindMemory one once lacked three).
  const prose = (fn) => {
    const start = text.indexOf(`## \`${fn}(`);
    const section = text.slice(start, text.indexOf('\n## ', start + 3));
    return [...section.matchAll(/`\{([^`{}]*)\}`/g)].map((m) => m[1].split(',').map((name) => name.trim()).filter((name) => name !== ''))
      .filter((names) => names.includes('backend'));
  };
  const kernels = await api.createKernels({ backend: 'scalar' });
  assert.deepEqual(listed('createKernels').sort(), Object.keys(kernels).sort());
  const memory = new WebAssembly.Memory({ initial: 4 });
  const bound = await api.bindMemory(memory, { scratch: { byteOffset: 65536, byteLength: 65536 } });
  assert.deepEqual(listed('bindMemory').sort(), Object.keys(bound).sort());
  assert.ok(prose('bindMemory').length > 0, 'docs/api.md says in prose what bindMemory resolves to');
  for (const names of prose('bindMemory')) assert.deepEqual(names.sort(), Object.keys(bound).sort(), 'bindMemory\'s prose list');
  for (const names of prose('createKernels')) assert.deepEqual(names.sort(), Object.keys(kernels).sort(), 'createKernels\'s prose list');
});

// The README's table of functions names every function the package exports
// (a row may name two, or `fn.prepare`, which every function has).
test('README.md: the table of functions names every exported function', async () => {
  const text = await readFile(join(repo, 'README.md'), 'utf8');
  const start = text.indexOf('## Functions');
  const table = text.slice(start, text.indexOf('\n## ', start + 3));
  const named = new Set();
  for (const [, cell] of table.matchAll(/^\| (.+?) \|/gm)) for (const [, name] of cell.matchAll(/`(\w+)\(/g)) named.add(name);
  assert.deepEqual(EXPORTS.filter((name) => !named.has(name)), [], 'exported functions the README\'s table does not name');
  assert.deepEqual([...named].filter((name) => !EXPORTS.includes(name)), [], 'names in the README\'s table the package does not export');
});

// docs/webgpu.md's page without a bundler: its import map resolves both
// entry points in Chromium (no WebGPU needed to import), and the webgpu
// entry imports by its path too, with no failed request or console error.
test('docs/webgpu.md: a page without a bundler imports rmsnorm-wasm/webgpu through the map shown, or by its path', async () => {
  const block = fencedBlocks(await readFile(join(repo, 'docs', 'webgpu.md'), 'utf8')).find((b) => b.lang === 'html' && b.code.includes('importmap'));
  assert.ok(block, 'docs/webgpu.md shows the page');
  const folder = await mkdtemp(join(work, 'importmap-'));
  await mkdir(join(folder, 'node_modules'));
  await symlink(repo, join(folder, 'node_modules', 'rmsnorm-wasm'));
  await writeFile(join(folder, 'index.html'), `<!doctype html>\n<title>no bundler</title>\n<link rel="icon" href="data:,">\n${block.code}\n`);
  const { launchBrowser, openCheckedPage, startDemoServer } = await import('./helpers/browser.js');
  const server = await startDemoServer(`${folder}/`);
  const browser = await launchBrowser();
  try {
    const { page, problems } = await openCheckedPage(browser, server.url('/index.html'));
    const kinds = await page.evaluate(async () => {
      const webgpu = await import('rmsnorm-wasm/webgpu');
      const main = await import('rmsnorm-wasm');
      const byPath = await import('./node_modules/rmsnorm-wasm/src/webgpu/index.js');
      await main.init();
      return [typeof webgpu.createGpuKernels, typeof webgpu.createArrayKernels, Array.from(main.rmsNorm(Float32Array.of(3, 4), null, { dim: 2 })), byPath.createGpuKernels === webgpu.createGpuKernels];
    });
    const { rmsNorm } = await import('../src/reference/index.js');
    assert.deepEqual(kinds, ['function', 'function', Array.from(rmsNorm(Float32Array.of(3, 4), null, { dim: 2 })), true]);
    assert.deepEqual(problems, []);
  } finally {
    await browser.close();
    server.server.close();
  }
});
