// The tutorial page: typesets the formulas, loads the package's wasm
// kernels, and mounts each panel. Every RMSNorm result on the page comes
// from ../src/index.js (the kernels) or ../src/reference/index.js.

import { render as renderTex } from '../node_modules/katex/dist/katex.mjs';
import { loadKernels } from './lib/kernels.js';
import { mountFormula } from './panels/formula.js';
import { mountDrift } from './panels/drift.js';
import { mountSquareEps } from './panels/square-eps.js';
import { mountLayerNorm } from './panels/layernorm.js';
import { mountPrecision } from './panels/precision.js';
import { mountBitExact } from './panels/bit-exact.js';
import { mountSpeed } from './panels/speed.js';
import { mountInsideAModel } from './panels/inside-a-model.js';
import { mountGpu } from './panels/gpu.js';

const PANELS = [
  ['formula', mountFormula],
  ['drift', mountDrift],
  ['square-eps', mountSquareEps],
  ['layernorm', mountLayerNorm],
  ['precision', mountPrecision],
  ['bit-exact', mountBitExact],
  ['gpu', mountGpu],
  ['speed', mountSpeed],
  ['inside-a-model', mountInsideAModel],
];

for (const node of document.querySelectorAll('.math[data-tex]')) {
  renderTex(node.dataset.tex, node, { displayMode: true, throwOnError: true });
}

const status = document.getElementById('status');
try {
  const backend = await loadKernels();
  status.textContent = backend === 'simd'
    ? 'Your browser runs the SIMD128 WebAssembly module (backend: simd).'
    : 'Your browser has no WebAssembly SIMD128, so it runs the scalar module (backend: scalar).';
  status.dataset.backend = backend;
  await Promise.all(PANELS.map(async ([id, mount]) => {
    const section = document.getElementById(id);
    try {
      await mount(section);
    } catch (err) {
      const message = section.querySelector('.message');
      message.textContent = `This panel could not start: ${err.message}`;
      message.hidden = false;
    }
  }));
  document.body.dataset.ready = 'true';
} catch (err) {
  status.textContent = `Could not load the WebAssembly kernels: ${err.message}`;
  status.classList.add('bad');
}
