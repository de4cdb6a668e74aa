// What panel 8 measures on the tiny Llama, apart from any page: the models
// its switches select, the names they write, the residual stream's RMS as
// each norm reads it, how far each switch moves the predictions, and a
// decode step's time split into the norms and the rest. Plain modules, so
// tests/model.test.js checks the same code the panel shows.

import { argmax, packageBfloat16Norms, packageNorms, sampler, softmax, TinyLlama } from './llama.js';
import { variantNorms, VARIANT_NAMES } from './norms.js';
import { prng } from '../lib/random.js';
import { timeCalls } from '../lib/timing.js';

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

/** The switches, each compared with the unmodified model ('package'). */
export const SWITCHES = ['removed', 'bfloat16', 'bfloat16Upcast', 'epsOutside'];

/**
 * The unmodified model ('package': float32 stream, the package's norms on
 * `kernels`' tensors) and one model per switch: 'bfloat16Upcast' keeps the
 * stream in bfloat16 and runs the package with dtype 'bfloat16'; the others
 * are norms.js's plain-JS variants. `kernels` is a createKernels() instance
 * (or the reference), `label` names it. free() the two package models.
 */
export function switchModels(weights, kernels, label) {
  const models = {
    package: new TinyLlama(weights, packageNorms(kernels, label)),
    bfloat16Upcast: new TinyLlama(weights, packageBfloat16Norms(kernels, `${label}, bfloat16`)),
  };
  for (const name of VARIANT_NAMES) models[name] = new TinyLlama(weights, variantNorms(name));
  return models;
}

/** Writes `count` names beginning with `prompt` with `model`, sampling at `temperature` from `seed`. */
export function generateNames(model, { count, temperature, seed, prompt = '' }) {
  const choose = sampler(temperature, prng(seed));
  const names = [];
  for (let i = 0; i < count; i++) names.push(model.complete(prompt, choose));
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
 * agreement (fraction of equal argmax), kl (mean KL(base ‖ variant), nats),
 * flips (the prefixes where the argmax differs: { prefix, base, variant },
 * the characters each predicts) }.
 */
export function compareOnBatch(base, variant, batch) {
  let positions = 0;
  let agree = 0;
  let kl = 0;
  const flips = [];
  for (const name of batch) {
    base.reset();
    variant.reset();
    const tokens = [0, ...base.encode(name)];
    tokens.forEach((token, pos) => {
      const p = softmax(base.step(token));
      const q = softmax(variant.step(token));
      const [a, b] = [argmax(p), argmax(q)];
      if (a === b) agree++;
      else flips.push({ prefix: name.slice(0, pos), base: base.vocab[a], variant: base.vocab[b] });
      for (let i = 0; i < p.length; i++) if (p[i] > 0) kl += p[i] * Math.log(p[i] / q[i]);
      positions++;
    });
  }
  return { positions, agreement: agree / positions, kl: kl / positions, flips };
}

/** Each switch's model against the unmodified one on `batch` (compareOnBatch), by switch. */
export function switchEffects(models, batch = SWITCH_BATCH) {
  return Object.fromEntries(SWITCHES.map((name) => [name, compareOnBatch(models.package, models[name], batch)]));
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
