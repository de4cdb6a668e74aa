// A TypeScript consumer of the installed package, compiled with
// `tsc --noEmit --strict` by tests/package.test.js. It uses every export, and
// each `@ts-expect-error` is a misuse the types must reject (tsc fails if the
// line compiles after all). Type-level only: nothing here is run.
import { addRmsNorm, alloc, bindMemory, compileModule, init, rmsNorm, Tensor } from 'rmsnorm-wasm';
import type { Backend, InitOptions, InitResult, RmsNormOptions } from 'rmsnorm-wasm';
import { addRmsNorm as referenceAddRmsNorm, rmsNorm as referenceRmsNorm } from 'rmsnorm-wasm/reference';

// init, compileModule
const module: WebAssembly.Module = await compileModule();
const scalarModule: WebAssembly.Module = await compileModule('scalar');
const options: InitOptions = { module, backend: 'auto' };
const result: InitResult = await init(options);
const backend: Backend = result.backend;
await init({ module: scalarModule });
await init({ backend: 'simd' });
// @ts-expect-error: there is no 'gpu' backend
await init({ backend: 'gpu' });
// @ts-expect-error: compileModule takes a backend name, not options
await compileModule({ backend: 'simd' });

// rmsNorm and addRmsNorm on float32 arrays
const x = new Float32Array([2, -4, 6, -8]);
const w = new Float32Array([1.5, 0.5, 1, 2]);
const y: Float32Array = rmsNorm(x, w);
const normOptions: RmsNormOptions = { eps: 1e-5, dim: 4, castMode: 'gemma', weightOffset: 1 };
const maybeTensor: Float32Array | Tensor<'float32'> = rmsNorm(x, w, normOptions);
const unweighted: Float32Array = rmsNorm(x, null, { shape: [2, 2], axis: 0 });
const fused: Float32Array = addRmsNorm(x, new Float32Array(4), w, { out: new Float32Array(4) });
// @ts-expect-error: the weight is required (null for none), so a typo cannot drop it
rmsNorm(x);
// @ts-expect-error: 'epsilon' is not an option
rmsNorm(x, w, { epsilon: 1e-5 });
// @ts-expect-error: the residual comes before the weight
addRmsNorm(x, w);

// 16-bit storage: Uint16Array bit patterns, and options.dtype is required
const bits = new Uint16Array(4);
const bf16: Uint16Array = rmsNorm(bits, w, { dtype: 'bfloat16', castMode: 'llama' });
const f16: Uint16Array = addRmsNorm(bits, new Uint16Array(4), bits, { dtype: 'float16', weightDtype: 'float16' });
// @ts-expect-error: a Uint16Array needs options.dtype
rmsNorm(bits, w);
// @ts-expect-error: a bfloat16 computation takes a float32 or bfloat16 weight, not float16
rmsNorm(bits, bits, { dtype: 'bfloat16', weightDtype: 'float16' });

// alloc and Tensor: zero-copy, out returned as given
const tx: Tensor<'float32'> = alloc(4);
const th: Tensor<'bfloat16'> = alloc(4, 'bfloat16');
const inPlace: Tensor<'float32'> = rmsNorm(tx, w, { out: tx });
const inPlace16: Tensor<'bfloat16'> = rmsNorm(th, null, { dtype: 'bfloat16', dim: 4, out: th });
const view: Uint16Array = th.array;
th.free();
// @ts-expect-error: alloc has no 'int8' dtype
alloc(4, 'int8');
// @ts-expect-error: tensors come from alloc()
new Tensor();
// @ts-expect-error: a float32 result cannot go into a bfloat16 tensor
rmsNorm(x, w, { out: th });

// bindMemory: views of the engine's memory, out required
declare const memory: WebAssembly.Memory;
const bound = await bindMemory(memory, { scratch: { byteOffset: 0, byteLength: 4096 }, backend: 'auto' });
const boundY: Float32Array = bound.rmsNorm(x, w, { out: x });
const boundFused: Uint16Array = bound.addRmsNorm(bits, bits, null, { dtype: 'float16', dim: 4, out: bits });
// @ts-expect-error: scratch is required
await bindMemory(memory, {});
// @ts-expect-error: a bound kernel copies nothing, so out is required
bound.rmsNorm(x, w);

// the reference: the same signatures
const reference: Float32Array = referenceRmsNorm(x, w, { out: x });
const referenceFused: Uint16Array = referenceAddRmsNorm(bits, bits, null, { dtype: 'bfloat16', dim: 4 });
// @ts-expect-error: plain arrays are not accepted, only typed arrays
referenceRmsNorm([2, -4, 6, -8], w);
// @ts-expect-error: the result is a Float32Array, not a number[]
export const wrong: number[] = referenceAddRmsNorm(x, x, w);

export const used = [
  backend, y, maybeTensor, unweighted, fused, bf16, f16, inPlace, inPlace16, view,
  boundY, boundFused, reference, referenceFused,
];
