// CONTRIBUTING.md's maps stay true of the tree: every suite has its row in
// the suite table (and every row a suite), every source file is named in
// the layout table. (That every path a doc cites exists is tests/docs.test.js's.)
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

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
