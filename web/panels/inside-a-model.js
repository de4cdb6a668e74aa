// Panel 8: the tiny Llama of web/model/, generating names with every RMSNorm
// computed by the package (rmsNorm and addRmsNorm on alloc() tensors), the
// residual stream's RMS before each norm, what the model predicts when the
// norms are changed (switches), and a decode step's time split into the
// norms and the rest.

import { argmax, loadWeights, packageBfloat16Norms, packageNorms, sampler, softmax, TinyLlama } from '../model/llama.js';
import { variantNorms, VARIANT_NAMES } from '../model/norms.js';
import { kernels, preferredBackend } from '../lib/kernels.js';
import { micros, significant } from '../lib/format.js';
import { find, nextFrame, report, tableRow } from '../lib/dom.js';
import { barChart } from '../lib/svg.js';
import { prng } from '../lib/random.js';
import { median, timeCalls } from '../lib/timing.js';

const NAMES_PER_RUN = 8;
const ROUNDS = 5;

/**
 * The fixed batch the switches are measured on: every prefix of these names
 * (common and rare starts, short and long), fed one character at a time.
 */
export const SWITCH_BATCH = [
  'emma', 'olivia', 'ava', 'isabella', 'sophia', 'mia', 'charlotte', 'amelia', 'harper', 'evelyn',
  'liam', 'noah', 'william', 'james', 'oliver', 'benjamin', 'elijah', 'lucas', 'mason', 'logan',
  'zoe', 'quinn', 'xavier', 'yvonne', 'ursula', 'victor', 'kai', 'jude', 'tristan', 'fiona',
  'gwendolyn', 'hugh',
];

export const SWITCH_LABELS = {
  removed: 'norms removed (γ kept)',
  bfloat16: 'bfloat16 throughout (JS)',
  bfloat16Upcast: 'bfloat16 stream, float32 inside the norm (the package)',
  epsOutside: 'ε outside the root (JS)',
};
const SWITCHES = Object.keys(SWITCH_LABELS);

/** Labels of the 2N + 1 norms, in the order the model runs them. */
export function normLabels(nLayers) {
  const labels = [];
  for (let l = 0; l < nLayers; l++) labels.push(`${l + 1} attn`, `${l + 1} mlp`);
  labels.push('final');
  return labels;
}

/** Writes `count` names with `model`, sampling at `temperature` from `seed`. */
export function generateNames(model, { count, temperature, seed }) {
  const choose = sampler(temperature, prng(seed));
  const names = [];
  for (let i = 0; i < count; i++) names.push(model.complete('', choose));
  return names;
}

/**
 * Runs `work(model)` while recording the RMS (float64) of the residual stream
 * as each norm reads it; returns the mean per norm over every call.
 */
export function residualRms(model, work) {
  const n = 2 * model.config.n_layers + 1;
  const sums = new Float64Array(n);
  const counts = new Float64Array(n);
  model.onNorm = (index, residual) => {
    let ss = 0;
    for (const v of residual) ss += v * v;
    sums[index] += Math.sqrt(ss / residual.length);
    counts[index]++;
  };
  try {
    work(model);
  } finally {
    model.onNorm = null;
  }
  return [...sums].map((s, i) => s / counts[i]);
}

/**
 * `variant`'s next-token predictions against `base`'s at every prefix of
 * every name in `batch` (the start token included): { positions,
 * agreement (fraction of equal argmax), kl (mean KL(base ‖ variant), nats) }.
 */
export function compareOnBatch(base, variant, batch) {
  let positions = 0;
  let agree = 0;
  let kl = 0;
  for (const name of batch) {
    base.reset();
    variant.reset();
    for (const token of [0, ...base.encode(name)]) {
      const p = softmax(base.step(token));
      const q = softmax(variant.step(token));
      if (argmax(p) === argmax(q)) agree++;
      for (let i = 0; i < p.length; i++) if (p[i] > 0) kl += p[i] * Math.log(p[i] / q[i]);
      positions++;
    }
  }
  return { positions, agreement: agree / positions, kl: kl / positions };
}

/**
 * µs per decode step of `model`, and µs of the norm calls one step makes,
 * replayed on the model's own tensors. The step is a name's worth of
 * decoding (every position of the context), averaged.
 */
export function timeDecodeStep(model) {
  const steps = model.config.max_seq_len;
  const tokens = Array.from({ length: steps }, (_, i) => 2 + (i % (model.config.vocab_size - 2)));
  const decode = () => {
    model.reset();
    for (const token of tokens) model.step(token);
  };
  // Zero the sublayer output so the replayed adds leave the stream as it is.
  model.sublayer.array.fill(0);
  const { norms, eps } = model;
  const weights = [model.layers[0].attention_norm];
  for (let l = 0; l < model.layers.length; l++) {
    weights.push(model.layers[l].ffn_norm, l + 1 < model.layers.length ? model.layers[l + 1].attention_norm : model.finalNorm);
  }
  const normCalls = () => {
    for (let s = 0; s < steps; s++) {
      norms.rmsNorm(model.residual, weights[0], model.normed, eps);
      for (let i = 1; i < weights.length; i++) norms.addRmsNorm(model.sublayer, model.residual, weights[i], model.normed, eps);
    }
  };
  return { step: timeCalls(decode) / steps, norms: timeCalls(normCalls) / steps };
}

async function fetchModel() {
  const [manifest, bytes] = await Promise.all([
    fetch(new URL('../model/weights.json', import.meta.url)).then((r) => {
      if (!r.ok) throw new Error(`weights.json: HTTP ${r.status}`);
      return r.json();
    }),
    fetch(new URL('../model/weights.bin', import.meta.url)).then((r) => {
      if (!r.ok) throw new Error(`weights.bin: HTTP ${r.status}`);
      return r.arrayBuffer();
    }),
  ]);
  return { manifest, weights: loadWeights(manifest, bytes) };
}

/** A generated name as the page shows it: capitalized, or '(empty)' when the model stopped at once. */
function displayName(name) {
  return name === '' ? '(empty)' : name[0].toUpperCase() + name.slice(1);
}

function readSettings(tempField, seedField) {
  const temperature = Number(tempField.value);
  if (tempField.value.trim() === '' || !(temperature >= 0 && temperature <= 5)) {
    return { error: 'The temperature is a number from 0 (always the likeliest character) to 5.', field: tempField };
  }
  const seed = Number(seedField.value);
  if (seedField.value.trim() === '' || !Number.isInteger(seed) || seed < 0 || seed > 0xffffffff) {
    return { error: 'The seed is a whole number from 0 to 4294967295.', field: seedField };
  }
  return { temperature, seed };
}

export async function mountInsideAModel(section) {
  const about = find(section, '#model-about');
  const tempField = find(section, '#model-temperature');
  const seedField = find(section, '#model-seed');
  const switches = find(section, '#model-norms');
  const generateButton = find(section, '#model-generate');
  const timeButton = find(section, '#model-time');
  const message = find(section, '.message');
  const namesList = find(section, '#model-names');
  const rmsChart = find(section, '#model-rms-chart');
  const rmsCaption = find(section, '#model-rms-caption');
  const switchTable = find(section, '#model-switches');
  const switchSummary = find(section, '#model-switches-summary');
  const sampleTable = find(section, '#model-samples');
  const timingTable = find(section, '#model-timing');
  const timingSummary = find(section, '#model-timing-summary');
  find(section, '#model-batch-size').textContent = `${SWITCH_BATCH.length}`;

  const { manifest, weights } = await fetchModel();
  const { config } = manifest;
  const labels = normLabels(config.n_layers);
  const models = {
    package: new TinyLlama(weights, packageNorms(kernels(), preferredBackend())),
    bfloat16Upcast: new TinyLlama(weights, packageBfloat16Norms(kernels(), `${preferredBackend()}, bfloat16`)),
  };
  for (const name of VARIANT_NAMES) models[name] = new TinyLlama(weights, variantNorms(name));
  about.textContent = `${manifest.parameters.toLocaleString('en-US')} parameters: ${config.n_layers} blocks, width ${config.dim}, ` +
    `${config.n_heads} heads, SwiGLU hidden ${config.hidden_dim}, context ${config.max_seq_len} characters, ε = ${config.norm_eps}. ` +
    `Trained ${manifest.steps} steps of ${manifest.batch} names (seed ${manifest.seed}): ` +
    `a loss of ${manifest.loss.train_bfloat16_weights} nats per character on the names it trained on, ` +
    `${manifest.loss.validation_bfloat16_weights} on ${manifest.validation_names} held out (at this size it learns many names by heart).`;

  const selected = () => switches.querySelector('input:checked').value;

  const effects = Object.fromEntries(SWITCHES.map((name) => [
    name, compareOnBatch(models.package, models[name], SWITCH_BATCH),
  ]));
  let lastNames = {};
  let smallestRms = null;

  function drawSwitches() {
    const head = document.createElement('thead');
    head.innerHTML = '<tr><th scope="col">the norms compute</th><th scope="col">top-1 agreement</th>' +
      '<th scope="col">KL divergence (nats)</th></tr>';
    const body = document.createElement('tbody');
    const samples = document.createElement('tbody');
    const rows = [['package', 'RMSNorm, float32 (the package)', { agreement: 1, kl: 0 }],
      ...SWITCHES.map((name) => [name, SWITCH_LABELS[name], effects[name]])];
    for (const [name, label, effect] of rows) {
      const tr = tableRow(label, [
        `${significant(effect.agreement * 100, 3)}%`,
        effect.kl === 0 ? '0' : significant(effect.kl, 2),
      ], (td, text) => { td.textContent = text; });
      tr.dataset.variant = name;
      tr.dataset.agreement = String(effect.agreement);
      tr.dataset.kl = String(effect.kl);
      const written = (lastNames[name] ?? []).map(displayName).join(', ');
      const sample = tableRow(label, [written], (td, text) => {
        td.textContent = text;
        td.className = 'sample';
      });
      if (name === selected()) {
        tr.classList.add('chosen');
        sample.classList.add('chosen');
      }
      body.append(tr);
      samples.append(sample);
    }
    const samplesHead = document.createElement('thead');
    samplesHead.innerHTML = '<tr><th scope="col">the norms compute</th><th scope="col" class="left">the names it writes with this seed and temperature</th></tr>';
    sampleTable.replaceChildren(samplesHead, samples);
    switchTable.replaceChildren(head, body);
    const { positions } = effects.removed;
    switchSummary.textContent = `${positions} predictions (every prefix of ${SWITCH_BATCH.length} names). ` +
      `Without the norms the model agrees with itself on ${significant(effects.removed.agreement * 100, 3)}% of them; ` +
      `with the stream in bfloat16, computing the norm in bfloat16 moves the predictions by ${significant(effects.bfloat16.kl, 2)} nats, ` +
      `the package's float32 upcast by ${significant(effects.bfloat16Upcast.kl, 2)}; ` +
      `ε outside the root by ${significant(effects.epsOutside.kl, 2)}. ` +
      (smallestRms === null ? '' : `The smallest RMS a norm reads above is ${significant(smallestRms, 2)}, ` +
        `${significant(smallestRms / config.norm_eps, 2)} × ε, so where ε sits barely matters here; panel 3 shows rows where it does.`);
  }

  async function generate() {
    const settings = readSettings(tempField, seedField);
    if (settings.error) {
      report(message, settings.error, [settings.field]);
      return;
    }
    report(message, '');
    const options = { count: NAMES_PER_RUN, temperature: settings.temperature, seed: settings.seed };
    const chosen = selected();
    const all = {};
    for (const name of Object.keys(models)) all[name] = generateNames(models[name], options);
    let names;
    const rms = residualRms(models[chosen], (model) => { names = generateNames(model, options); });
    const result = { all, names, rms };
    lastNames = result.all;
    if (chosen === 'package') smallestRms = Math.min(...result.rms);
    namesList.replaceChildren(...result.names.map((name) => {
      const li = document.createElement('li');
      li.textContent = displayName(name);
      return li;
    }));
    namesList.dataset.variant = chosen;
    rmsCaption.textContent = `RMS of the residual stream as each norm reads it (${chosen === 'package' ? 'the unmodified model' : SWITCH_LABELS[chosen]}), ` +
      `averaged over the decode steps of these names: it grows ${significant(result.rms[result.rms.length - 1] / result.rms[0], 2)}× ` +
      'from the embedding to the final norm';
    barChart(rmsChart, {
      values: result.rms, labels, format: (v) => significant(v, 2),
      label: `Bar chart of the residual stream's RMS before each norm: ${result.rms.map((v, i) => `${labels[i]} ${significant(v, 3)}`).join(', ')}`,
    });
    rmsChart.dataset.rms = result.rms.join(',');
    drawSwitches();
  }

  async function timeStep() {
    const times = [];
    for (let round = 0; round < ROUNDS; round++) {
      times.push(timeDecodeStep(models.package));
      await nextFrame();
    }
    const step = median(times.map((t) => t.step));
    const norms = median(times.map((t) => t.norms));
    const share = norms / step;
    const head = document.createElement('thead');
    head.innerHTML = '<tr><th></th><th scope="col">time per decode step</th><th scope="col">share</th></tr>';
    const body = document.createElement('tbody');
    body.append(
      tableRow(`the ${labels.length} norms`, [micros(norms), `${significant(share * 100, 2)}%`], (td, text) => { td.textContent = text; }),
      tableRow('everything else', [micros(step - norms), `${significant((1 - share) * 100, 2)}%`], (td, text) => { td.textContent = text; }),
      tableRow('the whole step', [micros(step), '100%'], (td, text) => { td.textContent = text; }),
    );
    timingTable.replaceChildren(head, body);
    timingTable.dataset.share = String(share);
    timingSummary.textContent = `Backend: ${preferredBackend()}, medians of ${ROUNDS} rounds. The norms take ${significant(share * 100, 2)}% ` +
      'of a step; the switches above show what the model does without them. The rest is plain JavaScript here: ' +
      'an engine\'s SIMD matrix products would make it faster, and the norms\' share larger.';
  }

  async function guarded(button, work) {
    button.disabled = true;
    try {
      await work();
    } catch (err) {
      report(message, err.message);
    } finally {
      button.disabled = false;
    }
  }

  generateButton.addEventListener('click', () => guarded(generateButton, generate));
  timeButton.addEventListener('click', () => guarded(timeButton, timeStep));
  switches.addEventListener('change', () => guarded(generateButton, generate));
  for (const field of [tempField, seedField]) field.addEventListener('change', () => guarded(generateButton, generate));
  await generate();
  generateButton.disabled = false;
  timeButton.disabled = false;
  section.dataset.ready = 'true';
}
