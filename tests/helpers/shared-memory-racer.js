// The other threads of tests/shared-memory-lock.test.js, on a shared
// memory's lent scratch region. race(): calls a bound rmsNorm in a loop
// until a deadline, binding the region again every `rebindEvery` calls, and
// counts what each call gave (the expected bits, a refusal because another
// thread's call is in the region, wrong bits, or another error); the main
// thread runs the same loop. hold(): binds, says its lockId, then calls
// until told to stop, reporting the first error.
import { isMainThread, parentPort, workerData } from 'node:worker_threads';
import { bindMemory } from '../../src/index.js';

const IN_USE = /is in use by a call on another thread/;

const sameBits = (y, expected) => {
  if (y.length !== expected.length) return false;
  for (let j = 0; j < y.length; j++) if (!Object.is(y[j], expected[j])) return false;
  return true;
};

/** { ok, refused, wrong, other, binds }: `other` the first unexpected error, named. */
export async function race({ memory, scratch, at, dim, expected, rebindEvery, until }) {
  const counts = { ok: 0, refused: 0, wrong: 0, other: '', binds: 0 };
  let kernels = null;
  for (let i = 0; Date.now() < until; i++) {
    if (kernels === null || i % rebindEvery === 0) {
      kernels = await bindMemory(memory, { scratch });
      counts.binds++;
    }
    try {
      // No `out`: the result is staged in the region, then copied out.
      const y = kernels.rmsNorm(new Float32Array(memory.buffer, at, expected.length), null, { dim });
      if (sameBits(y, expected)) counts.ok++;
      else counts.wrong++;
    } catch (error) {
      if (error instanceof RangeError && IN_USE.test(error.message)) counts.refused++;
      else {
        counts.other = `${error.name}: ${error.message}`;
        break;
      }
    }
  }
  return counts;
}

async function hold({ memory, scratch, at, dim, expected, stop }) {
  const kernels = await bindMemory(memory, { scratch });
  parentPort.postMessage({ lockId: kernels.lockId });
  const stopped = new Int32Array(stop);
  let calls = 0;
  let wrong = 0;
  while (Atomics.load(stopped, 0) === 0) {
    try {
      if (!sameBits(kernels.rmsNorm(new Float32Array(memory.buffer, at, expected.length), null, { dim }), expected)) wrong++;
      calls++;
    } catch (error) {
      parentPort.postMessage({ calls, wrong, error: `${error.name}: ${error.message}` });
      return;
    }
  }
  parentPort.postMessage({ calls, wrong, error: '' });
}

if (!isMainThread && workerData?.race) parentPort.postMessage(await race(workerData.race));
if (!isMainThread && workerData?.hold) await hold(workerData.hold);
