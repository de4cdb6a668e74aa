// Timing in the page: long enough runs for coarse browser timers, medians of
// rounds. Speeds are compared between rows of one run, never across runs.

const BUDGET_MS = 15;

/** µs per call of `run`: calls doubled until one timing lasts BUDGET_MS. */
export function timeCalls(run) {
  for (let calls = 1; ; calls *= 2) {
    const t0 = performance.now();
    for (let i = 0; i < calls; i++) run();
    const ms = performance.now() - t0;
    if (ms >= BUDGET_MS) return (ms * 1000) / calls;
  }
}

export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}
