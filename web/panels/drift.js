// Panel 2: a residual stream through up to 28 blocks of two sublayers each,
// every sublayer a random linear map, with and without RMSNorm (the kernel)
// in front of each sublayer.

import { kernels } from '../lib/kernels.js';
import { newSeed, normalArray, prng } from '../lib/random.js';
import { significant } from '../lib/format.js';
import { find, report } from '../lib/dom.js';
import { logLineChart } from '../lib/svg.js';
import { rmsOf } from '../lib/stats.js';

const DIM = 64;
const MAX_BLOCKS = 28;
const SUBLAYERS = 2; // attention, then feed-forward

/** Random sublayer matrices with entries ~ N(0, 1/DIM): they keep a row's size on average. */
function sublayerWeights(seed) {
  const rand = prng(seed);
  return Array.from({ length: MAX_BLOCKS * SUBLAYERS }, () => normalArray(rand, DIM * DIM, 1 / Math.sqrt(DIM)));
}

/** x += gain · W · input, the residual add. */
function addSublayer(x, W, input, gain) {
  for (let r = 0; r < DIM; r++) {
    let sum = 0;
    for (let c = 0; c < DIM; c++) sum += W[r * DIM + c] * input[c];
    x[r] += gain * sum;
  }
}

/** RMS of the stream after each block, with and without RMSNorm before each sublayer. */
function simulate(seed, gain) {
  const weights = sublayerWeights(seed);
  const start = normalArray(prng(seed ^ 0x9e3779b9), DIM);
  const plain = Float32Array.from(start);
  const normed = Float32Array.from(start);
  const rms = { plain: [rmsOf(plain)], normed: [rmsOf(normed)] };
  for (let block = 0; block < MAX_BLOCKS; block++) {
    for (let s = 0; s < SUBLAYERS; s++) {
      const W = weights[block * SUBLAYERS + s];
      addSublayer(plain, W, Float32Array.from(plain), gain);
      addSublayer(normed, W, kernels().rmsNorm(normed, null, { dim: DIM }), gain);
    }
    rms.plain.push(rmsOf(plain));
    rms.normed.push(rmsOf(normed));
  }
  return rms;
}

export function mountDrift(section) {
  const blocksField = find(section, '#drift-blocks');
  const gainField = find(section, '#drift-gain');
  const blocksOut = find(section, '#drift-blocks-out');
  const gainOut = find(section, '#drift-gain-out');
  const chart = find(section, '#drift-chart');
  const summary = find(section, '#drift-summary');
  const message = find(section, '.message');
  let seed = 1;
  let cache = null; // { key, rms }: every block is simulated once per seed and gain

  function update() {
    const blocks = Number(blocksField.value);
    const gain = Number(gainField.value);
    blocksOut.value = String(blocks);
    gainOut.value = significant(gain, 3);
    const key = `${seed}:${gain}`;
    if (cache?.key !== key) {
      try {
        cache = { key, rms: simulate(seed, gain) };
      } catch (err) {
        report(message, err.message);
        return;
      }
    }
    report(message, '');
    const plain = cache.rms.plain.slice(0, blocks + 1);
    const normed = cache.rms.normed.slice(0, blocks + 1);
    const last = (a) => significant(a[a.length - 1], 3);
    logLineChart(chart, {
      series: [
        { name: 'without normalization', values: plain, className: 'plain' },
        { name: 'with RMSNorm', values: normed, className: 'normed' },
      ],
      xLabel: 'block',
      yLabel: 'RMS of x',
      label: `Line chart over ${blocks} blocks: RMS of x grows to ${last(plain)} without normalization and to ${last(normed)} with RMSNorm.`,
    });
    summary.textContent = `The row starts at RMS ${significant(plain[0], 3)}. After ${blocks} block${blocks === 1 ? '' : 's'}: ` +
      `${last(plain)} without normalization, ${last(normed)} with RMSNorm before each sublayer.`;
    summary.dataset.plain = String(plain[plain.length - 1]);
    summary.dataset.normed = String(normed[normed.length - 1]);
  }

  blocksField.addEventListener('input', update);
  gainField.addEventListener('input', update);
  find(section, '#drift-reseed').addEventListener('click', () => {
    seed = newSeed();
    update();
  });
  return update();
}
