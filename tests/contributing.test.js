// CONTRIBUTING.md's maps stay true of the tree: every suite has its row in
// the suite table (and every row a suite), every source file is named in
// the layout table, and the folders under src/ import one way, as it says.
// (That every path a doc cites exists is tests/docs.test.js's.)
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { importedPath, relativeImports } from './helpers/imports.js';

const repo = fileURLToPath(new URL('..', import.meta.url));
const page = await readFile(join(repo, 'CONTRIBUTING.md'), 'utf8');
const tracked = (await promisify(execFile)('git', ['ls-files', '--cached', '--others', '--exclude-standard'], { cwd: repo })).stdout.split('\n').filter(Boolean);
const section = (heading) => page.slice(page.indexOf(`## ${heading}`), page.indexOf('\n## ', page.indexOf(`## ${heading}`) + 3));

test('every tests/*.test.js suite has its row in the suite table', () => {
  const rows = new Set([...section('Tests').matchAll(/^\| `([a-z0-9-]+)` \|/gm)].map((m) => m[1]));
  const suites = tracked.filter((f) => /^tests\/[^/]+\.test\.js$/.test(f)).map((f) => basename(f, '.test.js'));
  assert.deepEqual(suites.filter((s) => !rows.has(s)), [], 'suites without a row');
  assert.deepEqual([...rows].filter((r) => !suites.includes(r)), [], 'rows without a suite');
});

test('every source file under src/ is named in the layout table', () => {
  const layout = section('Layout');
  const sources = tracked.filter((f) => f.startsWith('src/') && !f.endsWith('.generated.js'));
  assert.ok(sources.length > 50);
  assert.deepEqual(sources.filter((f) => !layout.includes(basename(f))), [], 'files the layout does not name');
});

/** The folders of src/ a folder's modules import from, by folder (imports within a folder left out). */
async function folderGraph() {
  const graph = new Map();
  for (const file of tracked.filter((f) => f.startsWith('src/') && f.endsWith('.js'))) {
    const from = dirname(file);
    if (!graph.has(from)) graph.set(from, new Set());
    for (const specifier of relativeImports(await readFile(join(repo, file), 'utf8'))) {
      const to = dirname(importedPath(file, specifier));
      if (to !== from) graph.get(from).add(to);
    }
  }
  return graph;
}

/** A cycle of `graph` as a list of folders (first = last), or null. */
function cycleOf(graph) {
  const state = new Map(); // folder -> 'open' while on the path, 'done' after
  const path = [];
  const visit = (folder) => {
    if (state.get(folder) === 'done') return null;
    if (state.get(folder) === 'open') return [...path.slice(path.indexOf(folder)), folder];
    state.set(folder, 'open');
    path.push(folder);
    for (const next of graph.get(folder) ?? []) {
      const cycle = visit(next);
      if (cycle !== null) return cycle;
    }
    path.pop();
    state.set(folder, 'done');
    return null;
  };
  for (const folder of graph.keys()) {
    const cycle = visit(folder);
    if (cycle !== null) return cycle;
  }
  return null;
}

test('the folders under src/ import each other without a cycle, in the directions the page states', async () => {
  const graph = await folderGraph();
  assert.ok(graph.size >= 8, `${graph.size} folders`);
  assert.equal(cycleOf(graph)?.join(' -> ') ?? null, null, 'a cycle of folders importing each other');
  // "Imports run one way": every edge the page draws with an arrow, and no edge against one.
  const oneWay = section('Layout').match(/^Imports run one way: [^]*?\n\n/m)?.[0];
  assert.ok(oneWay, 'the page says which way imports run');
  const chains = [...oneWay.matchAll(/((?:`src\/[\w/]*`(?: and `src\/[\w/]*`)? → )+`src\/[\w/]*`)/g)].map((m) => m[1]);
  assert.ok(chains.length >= 2, oneWay);
  for (const chain of chains) {
    const links = chain.split(' → ').map((link) => [...link.matchAll(/`(src\/[\w/]*?)\/?`/g)].map((m) => m[1]));
    for (let i = 1; i < links.length; i++) {
      for (const later of links[i]) for (const earlier of links[i - 1]) {
        assert.ok(!graph.get(later)?.has(earlier), `${later} imports ${earlier}, against the page's ${chain}`);
      }
    }
  }
});
