#!/usr/bin/env node
// Where the JS layer's time goes, per engine: the 1×896 zero-copy and
// copying rmsNorm calls taken apart into the steps of one call, and the
// same call prepared (rmsNorm.prepare(...).run()), each timed
// on its own in interleaved rounds (median µs a call). Each step includes
// the ones below it: the public call = reading arguments + resolve + run;
// resolve includes reading the options; run includes the kernel call
// through the description, which includes the export. A diagnostic: it
// imports the package's internals, so it measures this build only.
//
//   node tests/bench/layer.js [--engine node,chromium,firefox,webkit] [--rounds 15] [--shape 1x896]
import { median } from './measure.js';
import { timeSync } from './timing.js';

export async function measureLayer({ src, shape, rounds }) {
  const api = await import(`${src}index.js`);
  const { activeKernels } = await import(`${src}api/runtime.js`);
  const { OPS } = await import(`${src}ops/descriptions.js`);
  const { resolve } = await import(`${src}ops/resolve.js`);
  const { run } = await import(`${src}api/run.js`);
  await api.init({ backend: 'simd' });
  const memory = activeKernels('layer');
  const [rows, dim] = shape.split('x').map(Number);
  const n = rows * dim;
  const x = new Float32Array(n).map((_, i) => Math.sin(i) * 3);
  const w = new Float32Array(dim).map((_, i) => 1 + Math.cos(i) / 4);
  const out = new Float32Array(n);
  const tx = api.alloc(n);
  const tw = api.alloc(dim);
  const ty = api.alloc(n);
  tx.array.set(x);
  tw.array.set(w);
  const op = OPS.rmsNorm;
  const { rmsNorm } = api; // a binding, as `import { rmsNorm }` gives (a namespace's property is slower to read in SpiderMonkey)
  const { rmsnorm } = memory.exports;
  const eps = Math.fround(1e-6);
  const [xp, wp, yp] = [tx.byteOffset, tw.byteOffset, ty.byteOffset];
  const calls = {};
  // Each call writes its options afresh, as a decode loop does.
  for (const [kind, a, b, o] of [['zero-copy', tx, tw, ty], ['copying', x, w, out]]) {
    rmsNorm(a, b, { out: o }); // remembered from here on, as in a decode loop
    const call = resolve(op, 'rmsNorm', memory, a, b, { out: o });
    run(memory, call);
    const { pointers } = call.plan ?? { pointers: null };
    Object.assign(calls, {
      [`${kind}: public call`]: () => rmsNorm(a, b, { out: o }),
      [`${kind}: resolve`]: () => resolve(op, 'rmsNorm', memory, a, b, { out: o }),
      [`${kind}: options read`]: () => op.readOptions('rmsNorm', { out: o }, 'options', op.remembered.last.opts, op.remembered.last.count),
      [`${kind}: run`]: () => run(memory, call),
    });
    if (kind === 'zero-copy') calls[`${kind}: kernel through the description`] = () => op.kernel(memory.exports, call, pointers, rows);
  }
  // An engine's decode loop: every layer's norm has its own weight.
  const tw2 = api.alloc(dim);
  tw2.array.set(w);
  calls['zero-copy: two weights in turn, a call'] = () => {
    rmsNorm(tx, tw, { out: ty });
    rmsNorm(tx, tw2, { out: ty });
  };
  // The same call prepared once (rmsNorm.prepare): what a run still does.
  const prepared = rmsNorm.prepare(tx, tw, { out: ty });
  calls['zero-copy: prepared run'] = () => prepared.run();
  calls['export called directly'] = () => rmsnorm(xp, 0, wp, yp, 0, rows, dim, dim, eps, 0, 0, 0, 0);
  const keys = Object.keys(calls);
  const iters = keys.map((k) => {
    let i = 1;
    while (timeSync(calls[k], i) < 0.02) i *= 2;
    return i;
  });
  const seconds = keys.map(() => []);
  for (let r = 0; r < rounds; r++) {
    for (let j = 0; j < keys.length; j++) {
      const k = (j + r) % keys.length;
      seconds[k].push(timeSync(calls[keys[k]], iters[k]) / iters[k]);
    }
  }
  const turns = keys.indexOf('zero-copy: two weights in turn, a call');
  for (let r = 0; r < rounds; r++) seconds[turns][r] /= 2;
  const steps = keys.map((key, k) => ({ key, value: median(seconds[k]) * 1e6 }));
  // The goals' ratios, each the median of its per-round ratios.
  const ratio = (a, b) => median(seconds[keys.indexOf(a)].map((t, r) => t / seconds[keys.indexOf(b)][r]));
  steps.push({ key: 'zero-copy public call ÷ export (ratio)', value: ratio('zero-copy: public call', 'export called directly') });
  steps.push({ key: 'two weights in turn ÷ export (ratio)', value: ratio('zero-copy: two weights in turn, a call', 'export called directly') });
  steps.push({ key: 'prepared run ÷ export (ratio)', value: ratio('zero-copy: prepared run', 'export called directly') });
  steps.push({ key: 'copying ÷ zero-copy public call (ratio)', value: ratio('copying: public call', 'zero-copy: public call') });
  return steps;
}

async function main() {
  const { parseArgs } = await import('node:util');
  const { engineNamed, startTestServer } = await import('../helpers/engines.js');
  const { currentClock } = await import('./timing.js');
  const { values } = parseArgs({
    options: {
      engine: { type: 'string', default: 'node' },
      rounds: { type: 'string', default: '15' },
      shape: { type: 'string', default: '1x896' },
    },
  });
  const options = { shape: values.shape, rounds: Number(values.rounds) };
  const columns = [];
  for (const engine of values.engine.split(',')) {
    if (engine === 'node') {
      const src = new URL('../../src/', import.meta.url).href;
      columns.push({ name: `Node ${process.version} (${currentClock()})`, steps: await measureLayer({ src, ...options }) });
      continue;
    }
    const server = await startTestServer();
    const browser = await engineNamed(engine).launch({ optimizedWasm: true });
    try {
      const page = await browser.openPage(server.url('/tests/pages/blank.html', { isolated: true }));
      const steps = await page.evaluate(async (arg) => (await import('/tests/bench/layer.js')).measureLayer(arg),
        { src: '/src/', ...options });
      const problems = await page.problems();
      if (problems.length > 0) throw new Error(`${browser.version}: ${problems.join('; ')}`);
      await page.close();
      columns.push({ name: `${browser.version} (wall)`, steps });
    } finally {
      await browser.close();
      await server.close();
    }
  }
  console.log(`\n**${values.shape}**, µs per call (median of ${values.rounds} rounds), and two ratios\n`);
  console.log(`| step | ${columns.map((c) => c.name).join(' | ')} |`);
  console.log(`| --- | ${columns.map(() => '---:').join(' | ')} |`);
  for (let i = 0; i < columns[0].steps.length; i++) {
    console.log(`| ${columns[0].steps[i].key} | ${columns.map((c) => c.steps[i].value.toFixed(3)).join(' | ')} |`);
  }
}

if (typeof process !== 'undefined' && process.argv?.[1] && import.meta.url === (await import('node:url')).pathToFileURL(process.argv[1]).href) {
  await main();
}
