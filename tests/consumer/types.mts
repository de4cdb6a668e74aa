// A TypeScript consumer of the installed package, compiled with
// `tsc --noEmit --strict` by tests/package.test.js. It uses every export, and
// each `@ts-expect-error` is a misuse the types must reject (tsc fails if the
// line compiles after all).
import { compileModule, init, rmsNorm } from 'rmsnorm-wasm';
import type { Backend, InitOptions, InitResult, RmsNormOptions } from 'rmsnorm-wasm';
import { rmsNorm as referenceRmsNorm } from 'rmsnorm-wasm/reference';

const module: WebAssembly.Module = await compileModule();
const scalarModule: WebAssembly.Module = await compileModule('scalar');
const options: InitOptions = { module, backend: 'auto' };
const result: InitResult = await init(options);
const backend: Backend = result.backend;
await init({ module: scalarModule });
await init({ backend: 'simd' });

const x = new Float32Array([2, -4, 6, -8]);
const w = new Float32Array([1.5, 0.5, 1, 2]);
const normOptions: RmsNormOptions = { eps: 1e-5, dim: 4, out: new Float32Array(4) };
const y: Float32Array = rmsNorm(x, w, normOptions);
const unweighted: Float32Array = rmsNorm(x, null, { dim: 4 });
const inPlace: Float32Array = referenceRmsNorm(x, w, { out: x });
const reference: Float32Array = referenceRmsNorm(x, null, { dim: 2 });
export const used = [backend, y, unweighted, inPlace, reference];

// @ts-expect-error: there is no 'gpu' backend
await init({ backend: 'gpu' });
// @ts-expect-error: compileModule takes a backend name, not options
await compileModule({ backend: 'simd' });
// @ts-expect-error: the weight is required (null for none), so a typo cannot drop it
rmsNorm(x);
// @ts-expect-error: plain arrays are not accepted, only Float32Array
referenceRmsNorm([2, -4, 6, -8], w);
// @ts-expect-error: 'epsilon' is not an option
rmsNorm(x, w, { epsilon: 1e-5 });
// @ts-expect-error: the result is a Float32Array, not a number[]
export const wrong: number[] = referenceRmsNorm(x, w);
