#!/usr/bin/env node
// This build against another build of the package (a checkout, built), side
// by side in one run: the calls an engine makes on every token, and what
// alloc() costs (./versus-cases.js). With --engine, each browser engine of
// tests/helpers/engines.js loads both builds in one page and compares them
// there the same way (wall time: a page's only clock).
//
//   node tests/bench/versus.js --baseline /path/to/other/checkout [--rounds 15] [--shapes 1x896]
//                              [--engine node,chromium,firefox,webkit]
import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';
import path from 'node:path';
import { engineNamed, startTestServer } from '../helpers/engines.js';
import { measureVersus } from './versus-cases.js';
import { currentClock } from './timing.js';

const { values: args } = parseArgs({
  options: {
    baseline: { type: 'string' },
    rounds: { type: 'string', default: '15' },
    shapes: { type: 'string', default: '1x896' },
    engine: { type: 'string', default: 'node' },
  },
});
const here = path.resolve(new URL('../..', import.meta.url).pathname);
const dirs = [['this', here]];
if (args.baseline) dirs.push(['baseline', path.resolve(args.baseline)]);
const options = { shapes: args.shapes.split(','), rounds: Number(args.rounds) };

/** The longest directory holding every build, which the page's server serves. */
function commonRoot(paths) {
  let root = paths[0];
  while (!paths.every((p) => p === root || p.startsWith(`${root}${path.sep}`))) root = path.dirname(root);
  return root;
}

async function inBrowser(engineName) {
  const root = commonRoot(dirs.map(([, dir]) => dir));
  const server = await startTestServer(root);
  const browser = await engineNamed(engineName).launch({ optimizedWasm: true });
  try {
    const url = (p) => server.url(`/${path.relative(root, p)}`, { isolated: true });
    const page = await browser.openPage(url(path.join(here, 'tests/pages/blank.html')));
    const builds = dirs.map(([name, dir]) => [name, `${url(path.join(dir, 'src'))}/`]);
    const results = await page.evaluate(async (arg) => (await import(arg.module)).measureVersus(arg.builds, arg.options),
      { module: url(path.join(here, 'tests/bench/versus-cases.js')), builds, options });
    const problems = await page.problems();
    if (problems.length > 0) throw new Error(`${browser.version}: ${problems.join('; ')}`);
    await page.close();
    return { version: browser.version, clock: 'wall', results };
  } finally {
    await browser.close();
    await server.close();
  }
}

for (const engine of args.engine.split(',')) {
  const run = engine === 'node'
    ? { version: `Node ${process.version}`, clock: currentClock(),
      results: await measureVersus(dirs.map(([name, dir]) => [name, `${pathToFileURL(path.join(dir, 'src')).href}/`]), options) }
    : await inBrowser(engine);
  for (const { label, builds, rows } of run.results) {
    console.log(`\n**${label}** (rows × dim), ${run.version}, ${run.clock} time, µs per call (median of ${args.rounds} rounds)\n`);
    const vs = builds.slice(1).map((b) => ` this ÷ ${b} |`).join('');
    console.log(`| call | ${builds.join(' | ')} |${vs}`);
    console.log(`| --- | ${builds.map(() => '---:').join(' | ')} |${builds.slice(1).map(() => ' ---: |').join('')}`);
    // A case a build lacks is NaN, which a page sends back as null: shown as –.
    const cell = (v) => (Number.isFinite(v) ? v.toFixed(3) : '–');
    for (const { key, micros, ratios } of rows) {
      console.log(`| ${key} | ${micros.map(cell).join(' | ')} |${ratios.map((r) => ` ${cell(r)} |`).join('')}`);
    }
  }
}
