#!/usr/bin/env node
// V8's collections per call shape, in Node (issue 30): each shape of
// tests/helpers/gc-probe.js runs 200,000 times after warm-up in a process of
// its own. With --probe, another checkout's copy of the probe (an older
// build, for a before/after table); shapes it cannot make are left blank.
//
//   node tests/bench/garbage.js [--calls 200000] [--probe /path/to/old/tests/helpers/gc-probe.js]
import { execFile } from 'node:child_process';
import { parseArgs, promisify } from 'node:util';

const run = promisify(execFile);
const { values } = parseArgs({
  options: {
    calls: { type: 'string', default: '200000' },
    probe: { type: 'string', multiple: true },
  },
});
const probes = [new URL('../helpers/gc-probe.js', import.meta.url).pathname, ...(values.probe ?? [])];
const shapes = JSON.parse((await run(process.execPath, [probes[0]])).stdout);

async function count(probe, shape) {
  try {
    const { stdout } = await run(process.execPath, [probe, shape, values.calls], { timeout: 600000 });
    return JSON.parse(stdout).collections;
  } catch {
    return null; // a shape this build cannot make
  }
}

console.log(`\n**Collections per ${Number(values.calls).toLocaleString('en')} calls at 1×896** (Node ${process.version}; one process a shape)\n`);
console.log(`| call shape | ${probes.map((p, i) => (i === 0 ? 'this build' : p)).join(' | ')} |`);
console.log(`| --- | ${probes.map(() => '---:').join(' | ')} |`);
for (const shape of shapes) {
  const counts = [];
  for (const probe of probes) counts.push(await count(probe, shape));
  console.log(`| ${shape} | ${counts.map((c) => (c === null ? '' : c)).join(' | ')} |`);
}
