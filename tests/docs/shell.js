// A shell block's commands, checked without running them: each names make
// targets, npm scripts, files and flags that exist in the repository, or
// Debian packages apt knows. A command of any other kind fails the check:
// the block must then run (doctest: run) or say why not (doctest: not run).
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The block's commands: comments dropped, continued lines joined, split on && and ;, each
 * without the VAR=value words that set its environment (`NODE_PATH=… emcc …`). */
export function commandsOf(code) {
  return code.replace(/\\\n/g, ' ').split('\n')
    .map((line) => line.replace(/(^|\s)#.*$/, '').trim())
    .filter((line) => line !== '')
    .flatMap((line) => line.split(/\s*(?:&&|;)\s*/))
    .map((command) => command.split(/\s+/).filter((w) => w !== ''))
    .map((words) => {
      while (words.length > 1 && /^[A-Z_][A-Z0-9_]*=/.test(words[0])) words.shift();
      return words;
    });
}

function makeTargets(repo) {
  const makefile = readFileSync(join(repo, 'Makefile'), 'utf8');
  const targets = new Set();
  for (const m of makefile.matchAll(/^([\w./%-]+(?:\s+[\w./%-]+)*)\s*:(?!=)/gm)) {
    for (const t of m[1].split(/\s+/)) targets.add(t);
  }
  const variables = new Set([...makefile.matchAll(/^(\w+)\s*\?=/gm)].map((m) => m[1]));
  return { targets, variables };
}

/** Every --flag of `args` must be read by `file`. */
function flagsReadBy(repo, file, args) {
  const source = readFileSync(join(repo, file), 'utf8');
  // As a literal, or as a parseArgs option (`name: { type: ... }`).
  const reads = (flag) => source.includes(`'${flag}'`) || source.includes(`"${flag}"`)
    || new RegExp(`['"]?${flag.slice(2)}['"]?\\s*:\\s*\\{\\s*type`).test(source);
  const unread = args.filter((a) => a.startsWith('--')).map((a) => a.split('=')[0]).filter((f) => !reads(f));
  if (unread.length > 0) throw new Error(`${file} does not read ${unread.join(', ')}`);
}

/** Throws, naming the command, unless every command of `code` checks out. */
export function checkCommands(code, repo) {
  const pkg = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8'));
  const { targets, variables } = makeTargets(repo);
  const checked = [];
  for (const [command, ...args] of commandsOf(code)) {
    const text = [command, ...args].join(' ');
    const fail = (why) => {
      throw new Error(`\`${text}\`: ${why}`);
    };
    if (command === 'make') {
      for (const a of args) {
        if (a.includes('=')) {
          if (!variables.has(a.split('=')[0])) fail(`the Makefile has no variable ${a.split('=')[0]}`);
        } else if (!targets.has(a)) fail(`the Makefile has no target ${a}`);
      }
    } else if (command === 'npm') {
      const [sub, name, ...rest] = args;
      if (sub === 'run') {
        if (!pkg.scripts?.[name]) fail(`package.json has no script ${name}`);
        const script = /node (tests\/\S+\.js)/.exec(pkg.scripts[name]);
        if (script) flagsReadBy(repo, script[1], rest.filter((a) => a !== '--'));
      } else if (sub === 'test') {
        if (!pkg.scripts?.test) fail('package.json has no test script');
      } else if (sub === 'ci') {
        if (!existsSync(join(repo, 'package-lock.json'))) fail('no package-lock.json');
      } else if (sub === 'pack') {
        // always there
      } else if (sub === 'install' && name && /\.tgz$/.test(name)) {
        if (!name.endsWith(`${pkg.name}-${pkg.version}.tgz`)) fail(`npm pack writes ${pkg.name}-${pkg.version}.tgz`);
      } else if (sub === 'install' && name && /^\.{0,2}\//.test(name)) {
        if (!name.endsWith(`/${pkg.name}`)) fail(`a clone's folder is ${pkg.name}`);
      } else fail('an npm command this check does not know');
    } else if (command === 'cd' || command === 'mkdir') {
      // moves between the user's folders: nothing of the repository's to check
    } else if (command === 'node' || /(^|\/)python3$/.test(command)) {
      const [file, ...rest] = args;
      if (!existsSync(join(repo, file))) fail(`no file ${file}`);
      if (command === 'node') flagsReadBy(repo, file, rest);
    } else if (command === 'emcc') {
      // The package's files it names exist (an installed copy's node_modules/rmsnorm-wasm is this repository).
      for (const a of args.filter((w) => w.includes('node_modules/rmsnorm-wasm/'))) {
        const inRepo = join(repo, a.replace(/^.*node_modules\/rmsnorm-wasm\//, ''));
        if (!existsSync(inRepo)) fail(`the package has no ${a}`);
      }
    } else if (command === 'apt-get') {
      const packages = args.filter((a) => !a.startsWith('-') && a !== 'install');
      for (const p of packages) {
        try {
          execFileSync('apt-cache', ['show', p], { stdio: 'ignore' });
        } catch {
          fail(`apt knows no package ${p}`);
        }
      }
    } else {
      fail('a command this check does not know: run the block (doctest: run) or mark it (doctest: not run: why)');
    }
    checked.push(text);
  }
  return checked;
}
