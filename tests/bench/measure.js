// How a shape is measured: every row is checked against the float64 oracle,
// warmed up and calibrated, then timed in interleaved rounds (each round runs
// every row once, in an order rotated by one row per round). Times are
// medians over rounds; a ratio between two rows is taken within each round,
// then the median of those, so drift and noise on this shared machine hit
// both sides of a ratio alike.
import { normBytes, oracleMismatch, oracleUlpErrors } from './data.js';
import { timeAsync, timeSync } from './timing.js';

export const median = (values) => {
  const s = [...values].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

function copyMismatch(shape, y) {
  for (let i = 0; i < shape.x.length; i++) {
    if (!Object.is(y[i], shape.x[i])) return `${shape.label}: index ${i} is ${y[i]}, x has ${shape.x[i]}`;
  }
  return null;
}

async function checkedInstance(row, shape) {
  const instance = await row.setup(shape);
  await instance.prepare?.();
  await instance.call();
  const y = await instance.output();
  // A row that computes nothing to check (the allocation alone) says so.
  const problem = row.expects === 'nothing' ? null : row.expects === 'copy'
    ? copyMismatch(shape, y)
    : oracleMismatch(shape, y, instance.expected ?? {});
  if (problem !== null) {
    await instance.dispose?.();
    throw new Error(`${row.name}: wrong answer, ${problem}`);
  }
  // Accuracy in ulps of the float64 oracle, for the rows that compute
  // RMSNorm of the shape's own x and w in float32.
  if (row.expects === undefined && instance.expected === undefined) instance.accuracy = oracleUlpErrors(shape, y);
  instance.timeLoop = instance.time ??
    (instance.async ? (n) => timeAsync(instance.call, n) : (n) => Promise.resolve(timeSync(instance.call, n)));
  return instance;
}

/** Warm-up and calibration: the number of calls that fills one sample. */
async function callsPerSample(instance, sampleSeconds) {
  let iters = 1;
  let t = await instance.timeLoop(iters);
  while (t < sampleSeconds / 4) {
    iters *= 4;
    t = await instance.timeLoop(iters);
  }
  iters = Math.max(1, Math.round((iters * sampleSeconds) / t));
  await instance.timeLoop(iters); // one more warm-up at the final size
  return iters;
}

/**
 * A shape's result: { shape, rows, ratio(a, b) }, where rows[i].seconds[r] is
 * row i's per-call time in round r. Also rebuilds a result that a browser
 * page measured and sent back as plain data.
 */
export function withRatios(shape, rows) {
  const rounds = rows[0]?.seconds.length ?? 0;
  const byId = (round) => Object.fromEntries(rows.map(({ row, seconds }) => [row.id, seconds[round]]));
  const pick = (side, times) => (typeof side === 'function' ? side(times) : times[side]);
  const ratio = (a, b) => median(Array.from({ length: rounds }, (_, r) => {
    const times = byId(r);
    return pick(a, times) / pick(b, times);
  }));
  return { shape, rows, ratio };
}

/**
 * Times every row on one shape.
 * @returns {{shape, rows: {row, seconds: number[]}[], ratio(a, b): number}}
 *   seconds[r] is the per-call time in round r; ratio(a, b) is the median
 *   over rounds of time(a) / time(b), where a and b are row ids or functions
 *   from a round's times (by id) to a time.
 */
export async function measureShape(shape, rows, { rounds, sampleSeconds, log = () => {} }) {
  const instances = [];
  try {
    for (const row of rows) instances.push(await checkedInstance(row, shape));
    const iters = [];
    for (const [i, instance] of instances.entries()) {
      await instance.prepare?.();
      iters.push(await callsPerSample(instance, sampleSeconds));
      log(`  ${shape.label} ${rows[i].id}: ${iters[i]} calls/sample`);
    }
    const seconds = rows.map(() => []);
    for (let round = 0; round < rounds; round++) {
      for (let k = 0; k < rows.length; k++) {
        const i = (k + round) % rows.length;
        await instances[i].prepare?.();
        seconds[i].push((await instances[i].timeLoop(iters[i])) / iters[i]);
      }
    }
    return withRatios(shape, rows.map((row, i) => ({
      row,
      seconds: seconds[i],
      bytes: (row.bytes ?? normBytes)(shape),
      accuracy: instances[i].accuracy ?? null,
    })));
  } finally {
    for (const instance of instances) await instance.dispose?.();
  }
}
