// The tutorial's tiny Llama (web/model/) against PyTorch, and its norms
// across the package's implementations. The expected logits and greedy
// continuations are PyTorch's, written by web/model/train.py with the
// weights it committed (tests/fixtures/tiny-llama.json); torch is not
// needed here.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { before, test } from 'node:test';
import { createKernels } from '../src/index.js';
import * as reference from '../src/reference/index.js';
import { argmax, loadWeights, packageBfloat16Norms, packageNorms, softmax, TinyLlama } from '../web/model/llama.js';
import {
  compareOnBatch, generateNames, residualRms, SWITCH_BATCH, switchEffects, switchModels, timeDecodeStep,
} from '../web/model/experiments.js';

const read = (path) => readFileSync(new URL(path, import.meta.url));
const manifest = JSON.parse(read('../web/model/weights.json'));
const bytes = read('../web/model/weights.bin');
const fixture = JSON.parse(read('./fixtures/tiny-llama.json'));
const weights = loadWeights(manifest, bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));

const LOGIT_TOLERANCE = 1e-4;

// The package's kernels as the page uses them: an instance per backend.
const instances = {};
before(async () => {
  for (const backend of ['simd', 'scalar']) instances[backend] = await createKernels({ backend });
});

test('the weights file is the one the fixture was computed from, within the size budget', () => {
  const sha = createHash('sha256').update(bytes).digest('hex');
  assert.equal(sha, manifest.sha256, 'weights.bin does not match weights.json');
  assert.equal(sha, fixture.weights_sha256, 'tests/fixtures/tiny-llama.json was computed from other weights');
  assert.ok(bytes.byteLength <= 1 << 20, `weights.bin is ${bytes.byteLength} bytes, over 1 MB`);
  const counted = manifest.tensors.reduce((n, t) => n + t.shape.reduce((a, b) => a * b, 1), 0);
  assert.equal(counted, manifest.parameters);
});

for (const backend of ['simd', 'scalar', 'reference']) {
  test(`logits on ${fixture.cases.length} prompts match PyTorch within ${LOGIT_TOLERANCE} and greedy continuations are identical (norms: ${backend})`, async (t) => {
    assert.ok(fixture.cases.length >= 20);
    const model = new TinyLlama(weights, packageNorms(instances[backend] ?? reference, backend));
    let largest = 0;
    try {
      for (const { prompt, tokens, logits, greedy } of fixture.cases) {
        model.reset();
        tokens.forEach((token, pos) => {
          const got = model.step(token);
          logits[pos].forEach((want, j) => {
            const diff = Math.abs(got[j] - want);
            largest = Math.max(largest, diff);
            assert.ok(diff <= LOGIT_TOLERANCE,
              `prompt '${prompt}', position ${pos}, logit ${j} ('${weights.vocab[j]}'): ${got[j]} vs PyTorch ${want}`);
          });
        });
        assert.equal(model.complete(prompt, argmax), greedy, `greedy continuation of '${prompt}'`);
      }
    } finally {
      model.free();
    }
    t.diagnostic(`largest |logit - PyTorch| = ${largest}`);
  });
}

test('the bfloat16 stream stores a NaN of any payload as 0x7FC0, the NaN the package itself stores', () => {
  const norms = packageBfloat16Norms(instances.simd, 'simd');
  const [h, r, w, y] = [0, 1, 2, 3].map(() => norms.buffer(4));
  try {
    // A signaling NaN, a negative quiet one with a payload, all ones.
    for (const pattern of [0x7fa00001, 0xffc12345, 0x7fffffff]) {
      h.array.set([0, 1, 2, 3]);
      new Uint32Array(h.array.buffer)[0] = pattern;
      r.array.fill(0.5);
      w.array.fill(1);
      norms.addRmsNorm(h, r, w, y, 1e-5);
      const hex = (v) => `0x${v.toString(16)}`;
      assert.equal(hex(h.bits.array[0]), '0x7fc0', `NaN ${hex(pattern)} narrowed by the simulation`);
      assert.equal(hex(r.bits.array[0]), '0x7fc0', `NaN ${hex(pattern)} + 0.5 stored by the package`);
      assert.deepEqual([...y.bits.array].map(hex), Array(4).fill('0x7fc0'), 'a NaN row normalizes to NaN');
      assert.ok(Number.isNaN(r.array[0]) && y.array.every(Number.isNaN), 'widened back to NaN');
    }
  } finally {
    for (const buf of [h, r, w, y]) buf.free();
  }
});

/** Every norm's input stream and output, bit patterns, over decoding each prompt greedily. */
function traceNorms(model) {
  const trace = [];
  model.onNorm = (index, residual, normed) => {
    trace.push({ index, residual: new Uint32Array(Float32Array.from(residual).buffer), normed: new Uint32Array(Float32Array.from(normed).buffer) });
  };
  for (const { prompt } of fixture.cases) model.complete(prompt, argmax);
  model.onNorm = null;
  return trace;
}

for (const [storage, makeNorms] of [['float32', packageNorms], ['bfloat16', packageBfloat16Norms]]) {
  test(`every norm inside the model (${storage} stream) is bit-identical between the SIMD module, the scalar module and the reference`, async () => {
    const traces = {};
    for (const backend of ['simd', 'scalar']) {
      const model = new TinyLlama(weights, makeNorms(instances[backend], backend));
      traces[backend] = traceNorms(model);
      model.free();
    }
    traces.reference = traceNorms(new TinyLlama(weights, makeNorms(reference, 'reference')));
    const calls = traces.reference.length;
    assert.ok(calls > 1000, `only ${calls} norm calls traced`);
    for (const backend of ['simd', 'scalar']) {
      assert.equal(traces[backend].length, calls);
      traces[backend].forEach((call, n) => {
        for (const key of ['residual', 'normed']) {
          const want = traces.reference[n][key];
          const i = call[key].findIndex((bits, k) => bits !== want[k]);
          assert.equal(i, -1, `${backend} vs reference, ${storage} stream: call ${n} (norm ${call.index}), ${key}[${i}]: ` +
            `0x${call[key][i]?.toString(16)} vs 0x${want[i]?.toString(16)}`);
        }
      });
    }
  });
}

test('the panel\'s measurements: norms keep the stream the model was trained on; the switches change the predictions', (t) => {
  const models = switchModels(weights, instances.simd, 'simd');
  const model = models.package;
  try {
    const options = { count: 8, temperature: 0.8, seed: 7 };
    let names;
    const rms = residualRms(model, (m) => { names = generateNames(m, options); });
    assert.equal(names.length, 8);
    for (const name of names) assert.match(name, /^[a-z-]*$/);
    assert.deepEqual(names, generateNames(model, options), 'the same seed writes the same names');
    assert.equal(rms.length, 2 * manifest.config.n_layers + 1);
    for (const v of rms) assert.ok(Number.isFinite(v) && v > 0);

    const same = compareOnBatch(model, new TinyLlama(weights, packageNorms(reference, 'reference')), SWITCH_BATCH);
    assert.equal(same.agreement, 1);
    assert.equal(same.kl, 0);
    const effects = switchEffects(models);
    // Measured with the committed weights (see web/model/README.md): removing
    // the norms breaks the model, bf16 arithmetic perturbs it, ε's place
    // hardly matters at this stream's scale.
    assert.ok(effects.removed.agreement < 0.6, `norms removed: ${effects.removed.agreement}`);
    assert.ok(effects.removed.kl > 0.5, `norms removed: KL ${effects.removed.kl}`);
    assert.ok(effects.bfloat16.kl > effects.bfloat16Upcast.kl, 'on a bfloat16 stream, the float32 upcast moves the predictions less');
    assert.ok(effects.bfloat16.kl > effects.epsOutside.kl);
    assert.ok(effects.epsOutside.agreement > 0.99);
    t.diagnostic(JSON.stringify(effects));

    const { step, norms } = timeDecodeStep(model);
    assert.ok(step > norms && norms > 0, `step ${step} µs, norms ${norms} µs`);
  } finally {
    models.package.free();
    models.bfloat16Upcast.free();
  }
});

/** The next-character probabilities of `model` after `prefix`. */
function probabilitiesAfter(model, prefix) {
  model.reset();
  let logits;
  for (const token of [0, ...model.encode(prefix)]) logits = model.step(token);
  return softmax(logits);
}

/** `v` as panel 8's sentence writes it: one decimal, × 10 to a superscript power. */
function scientific(v) {
  const [mantissa, power] = v.toExponential(1).split('e');
  const superscript = { '-': '⁻', 0: '⁰', 1: '¹', 2: '²', 3: '³', 4: '⁴', 5: '⁵', 6: '⁶', 7: '⁷', 8: '⁸', 9: '⁹' };
  return `${mantissa} × 10${[...power.replace('+', '')].map((c) => superscript[c]).join('')}`;
}

test('panel 8\'s sentence on the upcast\'s 99.5% against 100% (the page and web/README.md) states what the model measures', () => {
  const page = read('../web/index.html').toString().match(/<p id="model-top1-note"[^>]*>([^<]*)<\/p>/)[1];
  const sentence = page.split(/\s+/).join(' ');
  const readme = read('../web/README.md').toString().split('\n').filter((line) => line.startsWith('> '))
    .map((line) => line.slice(2)).join(' ');
  assert.ok(readme.includes(sentence), `web/README.md quotes the page's sentence:\n${sentence}`);

  const models = switchModels(weights, instances.simd, 'simd');
  try {
    const { bfloat16: throughout, bfloat16Upcast: upcast } = switchEffects(models);
    const percent = (e) => `${(e.agreement * 100).toPrecision(3)}%`;
    assert.ok(sentence.includes(`upcast agrees on ${percent(upcast)} and bfloat16 throughout on ${percent(throughout)}`), sentence);
    assert.equal(throughout.flips.length, 0);
    assert.equal(upcast.flips.length, 1, JSON.stringify(upcast.flips));
    assert.ok(sentence.includes(`one prediction of ${upcast.positions}`) && sentence.includes(`all ${upcast.positions} predictions`));
    const [{ prefix, base, variant }] = upcast.flips;
    assert.deepEqual([base, variant], ['.', 'y'], 'the float32 model ends the name, the upcast writes “y”');
    assert.ok(sentence.includes(`after “${prefix}”`), `the flip is after “${prefix}”`);

    const [end, y] = ['.', 'y'].map((c) => weights.vocab.indexOf(c));
    const p = probabilitiesAfter(models.package, prefix);
    const ranked = [...p.keys()].sort((a, b) => p[b] - p[a]);
    assert.deepEqual(ranked.slice(0, 2), [end, y], 'the float32 model\'s two likeliest characters');
    const pct = (v) => `${(v * 100).toFixed(2)}%`;
    assert.ok(sentence.includes(`the end of the name ${pct(p[end])}, “y” ${pct(p[y])}`), `${pct(p[end])}, ${pct(p[y])}`);
    const up = probabilitiesAfter(models.bfloat16Upcast, prefix);
    assert.ok(sentence.includes(`“y” ahead by ${scientific(up[y] - up[end])} in probability`), scientific(up[y] - up[end]));
    const bf = probabilitiesAfter(models.bfloat16, prefix);
    assert.ok(bf[end] > bf[y], 'bfloat16 throughout keeps the end of the name ahead');

    assert.ok(sentence.includes(`KL ${scientific(upcast.kl)} nats against ${scientific(throughout.kl)}`), `${upcast.kl}, ${throughout.kl}`);
    const ratio = upcast.kl / throughout.kl;
    assert.ok(ratio > 0.4 && ratio < 0.6, `“half as far”: ${ratio}`);
  } finally {
    models.package.free();
    models.bfloat16Upcast.free();
  }
});
