// Panel 8: the tiny Llama of web/model/, generating names with every RMSNorm
// computed by the package (rmsNorm and addRmsNorm on alloc() tensors), the
// residual stream's RMS before each norm, what the model predicts when the
// norms are changed (switches), and a decode step's time split into the
// norms and the rest. The measurements are web/model/experiments.js's; this
// module reads the fields and draws them. The engine switch writes the names
// with the same model in llama.cpp instead (web/model/llama-cpp.js).

import { fetchWeights } from '../model/llama.js';
import { LlamaCppModel, missingLlamaCppFiles } from '../model/llama-cpp.js';
import {
  generateNames, residualRms, SWITCH_BATCH, SWITCHES, switchEffects, switchModels, timeDecodeStep,
} from '../model/experiments.js';
import { kernels, preferredBackend } from '../lib/kernels.js';
import { micros, percentages, significant } from '../lib/format.js';
import { find, nextFrame, report, tableRow } from '../lib/dom.js';
import { barChart } from '../lib/svg.js';
import { median } from '../lib/timing.js';

const NAMES_PER_RUN = 8;
const ROUNDS = 5;

const SWITCH_LABELS = {
  removed: 'norms removed (γ kept)',
  bfloat16: 'bfloat16 throughout (JS)',
  bfloat16Upcast: 'bfloat16 stream, float32 inside the norm (the package)',
  epsOutside: 'ε outside the root (JS)',
};

/** Labels of the 2N + 1 norms, in the order the model runs them. */
function normLabels(nLayers) {
  const labels = [];
  for (let l = 0; l < nLayers; l++) labels.push(`${l + 1} attn`, `${l + 1} mlp`);
  labels.push('final');
  return labels;
}

/** A generated name as the page shows it: capitalized, or '(empty)' when the model stopped at once. */
function displayName(name) {
  return name === '' ? '(empty)' : name[0].toUpperCase() + name.slice(1);
}

function readSettings(tempField, seedField, startField, config, vocab) {
  const temperature = Number(tempField.value);
  if (tempField.value.trim() === '' || !(temperature >= 0 && temperature <= 5)) {
    return { error: 'The temperature is a number from 0 (always the likeliest character) to 5.', field: tempField };
  }
  const seed = Number(seedField.value);
  if (seedField.value.trim() === '' || !Number.isInteger(seed) || seed < 0 || seed > 0xffffffff) {
    return { error: 'The seed is a whole number from 0 to 4294967295.', field: seedField };
  }
  // The names' characters, without '.' (the start and end token), leaving room for one more.
  const prompt = startField.value.trim().toLowerCase();
  const longest = config.max_seq_len - 1;
  if ([...prompt].some((ch) => ch === '.' || !vocab.includes(ch)) || prompt.length > longest) {
    return { error: `A name begins with up to ${longest} of the letters a–z and '-'.`, field: startField };
  }
  return { temperature, seed, prompt };
}

export async function mountInsideAModel(section) {
  const about = find(section, '#model-about');
  const tempField = find(section, '#model-temperature');
  const seedField = find(section, '#model-seed');
  const startField = find(section, '#model-start');
  const engines = find(section, '#model-engine');
  const engineRan = find(section, '#model-engine-ran');
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

  const { manifest, weights } = await fetchWeights();
  const { config } = manifest;
  const labels = normLabels(config.n_layers);
  const models = switchModels(weights, kernels(), preferredBackend());
  about.textContent = `${manifest.parameters.toLocaleString('en-US')} parameters: ${config.n_layers} blocks, width ${config.dim}, ` +
    `${config.n_heads} heads, SwiGLU hidden ${config.hidden_dim}, context ${config.max_seq_len} characters, ε = ${config.norm_eps}. ` +
    `Trained ${manifest.steps} steps of ${manifest.batch} names (seed ${manifest.seed}): ` +
    `a loss of ${manifest.loss.train_bfloat16_weights} nats per character on the names it trained on, ` +
    `${manifest.loss.validation_bfloat16_weights} on ${manifest.validation_names} held out (at this size it learns many names by heart).`;

  const selected = () => switches.querySelector('input:checked').value;
  const engine = () => engines.querySelector('input:checked').value;
  let llamaCpp = null;

  const effects = switchEffects(models);
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

  /** The llama.cpp engine, loaded the first time it is chosen; null (and the switch says why) when it is not built. */
  async function loadLlamaCpp() {
    if (llamaCpp !== null) return llamaCpp;
    engineRan.textContent = 'Loading llama.cpp…';
    try {
      llamaCpp = await LlamaCppModel.load(config, manifest.vocab);
      return llamaCpp;
    } catch (err) {
      const missing = await missingLlamaCppFiles();
      if (missing.length === 0) throw err;
      engines.querySelector('input[value="llama.cpp"]').disabled = true;
      engines.querySelector('input[value="js"]').checked = true;
      engines.dataset.missing = 'true';
      engineRan.textContent = 'llama.cpp is not built here: make demo in the repository builds it ' +
        `(${missing.map((url) => new URL(url).pathname.slice(1)).join(' and ')}); then reload the page.`;
      return null;
    }
  }

  async function generate() {
    const settings = readSettings(tempField, seedField, startField, config, manifest.vocab);
    if (settings.error) {
      report(message, settings.error, [settings.field]);
      return;
    }
    report(message, '');
    const options = { count: NAMES_PER_RUN, temperature: settings.temperature, seed: settings.seed, prompt: settings.prompt };
    const llama = engine() === 'llama.cpp' ? await loadLlamaCpp() : null;
    // llama.cpp computes the package's norm only: the switches stay with the JS model.
    switches.disabled = llama !== null;
    if (llama) switches.querySelector('input[value="package"]').checked = true;
    const chosen = selected();
    const all = {};
    for (const name of Object.keys(models)) all[name] = generateNames(models[name], options);
    let names;
    const rms = residualRms(models[chosen], (model) => { names = generateNames(model, options); });
    if (llama) {
      const [runs, start] = [llama.runs, performance.now()];
      names = generateNames(llama, options);
      const ms = performance.now() - start;
      engineRan.textContent = `Ran: llama.cpp (run.cpp's "${llama.engine}" engine, wasm32 SIMD128, the F32 GGUF), ` +
        'every RMSNorm computed by rmsnorm_wasm, this package\'s C library; ' +
        `${llama.runs - runs} runs of its main, one per character, in ${Math.round(ms)} ms.`;
    } else if (!engines.dataset.missing) {
      engineRan.textContent = 'Ran: this page\'s JavaScript forward pass, its norms ' +
        (chosen === 'package' ? `the package's rmsNorm and addRmsNorm (${preferredBackend()} module).` : `${SWITCH_LABELS[chosen]}.`);
    }
    const result = { all, names, rms };
    lastNames = result.all;
    if (chosen === 'package') smallestRms = Math.min(...result.rms);
    namesList.replaceChildren(...result.names.map((name) => {
      const li = document.createElement('li');
      li.textContent = displayName(name);
      return li;
    }));
    namesList.dataset.variant = chosen;
    namesList.dataset.engine = llama ? 'llama.cpp' : 'js';
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
    // Written to the same decimals, so that the two add up to the 100% below them.
    const [normsShare, restShare] = percentages([norms, step - norms]);
    const head = document.createElement('thead');
    head.innerHTML = '<tr><th></th><th scope="col">time per decode step</th><th scope="col">share</th></tr>';
    const body = document.createElement('tbody');
    body.append(
      tableRow(`the ${labels.length} norms`, [micros(norms), normsShare], (td, text) => { td.textContent = text; }),
      tableRow('everything else', [micros(step - norms), restShare], (td, text) => { td.textContent = text; }),
      tableRow('the whole step', [micros(step), '100%'], (td, text) => { td.textContent = text; }),
    );
    timingTable.replaceChildren(head, body);
    timingTable.dataset.share = String(share);
    timingSummary.textContent = `Backend: ${preferredBackend()}, medians of ${ROUNDS} rounds. The norms take ${normsShare} ` +
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
  engines.addEventListener('change', () => guarded(generateButton, generate));
  for (const field of [tempField, seedField, startField]) field.addEventListener('change', () => guarded(generateButton, generate));
  await generate();
  generateButton.disabled = false;
  timeButton.disabled = false;
  section.dataset.ready = 'true';
}
