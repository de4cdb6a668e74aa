// The worked example from the seeds, shared by the consumer scripts and the
// browser page, and a longer batch for bit-for-bit comparisons.
export const x = new Float32Array([2, -4, 6, -8]);
export const weight = new Float32Array([1.5, 0.5, 1, 2]);

/** rows × dim values spread over several magnitudes, the same on every run. */
export function batch(rows = 4, dim = 1000) {
  const data = new Float32Array(rows * dim);
  for (let i = 0; i < data.length; i++) data[i] = Math.sin(i * 0.37) * 2 ** ((i % 9) - 4);
  const gains = new Float32Array(dim);
  for (let i = 0; i < dim; i++) gains[i] = 0.5 + (i % 7) / 7;
  return { x: data, weight: gains };
}
