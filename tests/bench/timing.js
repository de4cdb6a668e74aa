// Clocks for a row's timed loop: seconds for `iters` back-to-back calls, the
// clock read around the whole loop, never per call. The native row measures
// its own loop the same way, with the same kind of clock.
//
// 'cpu' (the default) counts the CPU time this process used: on a shared
// machine with more runnable threads than cores, wall time also counts the
// time the scheduler gave to others, which swamps microsecond calls. The rows
// all run on this one thread (ORT and TF.js are set to one thread), so CPU
// time is the time the work took. 'wall' is the plain monotonic clock, and
// the only one a browser page has: performance.now(), which browsers coarsen
// (the bench page is served cross-origin isolated, where they give their
// finest resolution, and every sample is a loop of about 25 ms anyway).

import { OPTIMIZED_WASM_V8_FLAGS } from '../helpers/optimized-wasm.js';

const hasCpuClock = typeof process !== 'undefined' && typeof process.cpuUsage === 'function';
// In Node, before any row compiles its module (rows compile at set-up, not
// at import): every bench that times with this module runs optimized wasm.
if (hasCpuClock) (await import('node:v8')).default.setFlagsFromString(OPTIMIZED_WASM_V8_FLAGS.join(' '));
export const CLOCKS = hasCpuClock ? ['cpu', 'wall'] : ['wall'];
let clock = CLOCKS[0];

export function setClock(name) {
  if (!CLOCKS.includes(name)) throw new RangeError(`setClock: clock must be one of ${CLOCKS.join(', ')}, got ${name}`);
  clock = name;
}

export const currentClock = () => clock;

function now() {
  if (clock === 'wall') return performance.now() / 1e3;
  const { user, system } = process.cpuUsage();
  return (user + system) / 1e6;
}

export function timeSync(call, iters) {
  const t0 = now();
  for (let i = 0; i < iters; i++) call();
  return now() - t0;
}

export async function timeAsync(call, iters) {
  const t0 = now();
  for (let i = 0; i < iters; i++) await call();
  return now() - t0;
}
