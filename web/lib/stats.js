// Plain float64 statistics the page shows about rows and results (the
// kernels' own arithmetic is in src/; these only describe what they return).

/** The arithmetic mean of an array of numbers. */
export function meanOf(values) {
  return values.reduce((a, b) => a + b, 0) / values.length;
}

/** Root-mean-square of a row: sqrt(mean(v²)), e.g. to show a normalized row lands at 1. */
export function rmsOf(values) {
  let sum = 0;
  for (const v of values) sum += v * v;
  return Math.sqrt(sum / values.length);
}
