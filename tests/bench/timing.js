// Clocks for a row's timed loop: seconds for `iters` back-to-back calls.
// The native row measures its own loop with the same method (clock around
// the whole loop, no per-call timestamps).

const seconds = (t0) => Number(process.hrtime.bigint() - t0) / 1e9;

export function timeSync(call, iters) {
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < iters; i++) call();
  return seconds(t0);
}

export async function timeAsync(call, iters) {
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < iters; i++) await call();
  return seconds(t0);
}
