// The page of docs/models.md's Content-Security-Policy claims: init() and the
// quick start's row under the policy the test serves, reported on the body.
import { init, rmsNorm } from '../../src/index.js';
/* global document */

try {
  const { backend } = await init();
  const y = rmsNorm(new Float32Array([2, -4, 6, -8]), new Float32Array([1.5, 0.5, 1, 2]));
  document.body.dataset.report = JSON.stringify({ backend, y: Array.from(y) });
} catch (error) {
  document.body.dataset.report = JSON.stringify({ error: `${error.name}: ${error.message}` });
}
