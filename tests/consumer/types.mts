// A TypeScript consumer of the installed package, compiled with
// `tsc --noEmit --strict` by tests/tarball.test.js. It uses every export, and
// each `@ts-expect-error` is a misuse the types must reject (tsc fails if the
// line compiles after all). Type-level only: nothing here is run.
import {
  addRmsNorm, alloc, bindMemory, byteLength, compileModule, createKernels, dequantize, fromFloat32, init, layerNorm, layerNormBackward, quantize, rmsNorm,
  rmsNormBackward, Tensor, toFloat32,
} from 'rmsnorm-wasm';
import type { Backend, BlockFormat, InitOptions, InitResult, PreparedCall, RmsNormBlockOptions, RmsNormOptions } from 'rmsnorm-wasm';
import {
  addRmsNorm as referenceAddRmsNorm, fromFloat32 as referenceFromFloat32, layerNorm as referenceLayerNorm,
  layerNormBackward as referenceLayerNormBackward, rmsNorm as referenceRmsNorm, rmsNormBackward as referenceRmsNormBackward,
  toFloat32 as referenceToFloat32, quantize as referenceQuantize, dequantize as referenceDequantize, byteLength as referenceByteLength,
} from 'rmsnorm-wasm/reference';

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
// any weight dtype with any storage dtype
const bf16f16: Uint16Array = rmsNorm(bits, bits, { dtype: 'bfloat16', weightDtype: 'float16' });
// @ts-expect-error: weightDtype names one of the three dtypes
rmsNorm(bits, bits, { dtype: 'bfloat16', weightDtype: 'float64' });

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

// layerNorm and the backward passes: float32 only; a null parameter has a null gradient
const rows = 1;
const rstd = new Float32Array(rows);
const mean = new Float32Array(rows);
const ln: Float32Array = layerNorm(x, w, null, { eps: 1e-5, mean, rstd });
const lnInPlace: Tensor<'float32'> = layerNorm(tx, null, w, { out: tx });
rmsNorm(x, w, { rstd });
const rmsGrads: { dx: Float32Array; dweight: Float32Array } = rmsNormBackward(x, x, w, { rstd });
const noWeightGrad: null = rmsNormBackward(x, x, null, { dim: 4 }).dweight;
const lnGrads = layerNormBackward(x, x, w, null, { mean, rstd, dx: x });
const lnDx: Float32Array = lnGrads.dx;
const lnDbias: null = lnGrads.dbias;
// @ts-expect-error: layerNorm is float32 only
layerNorm(bits, null, null, { dim: 4 });
// @ts-expect-error: rmsNormBackward takes dy first: (dy, x, weight)
rmsNormBackward(x, w);
// @ts-expect-error: the forward's mean and rstd come together or not at all
layerNormBackward(x, x, w, w, { mean });
// @ts-expect-error: dweight is null only when weight is null
export const notNull: null = rmsNormBackward(x, x, w).dweight;

// bindMemory: views of the engine's memory
declare const memory: WebAssembly.Memory;
const bound = await bindMemory(memory, { scratch: { byteOffset: 0, byteLength: 4096 }, backend: 'auto' });
const boundY: Float32Array = bound.rmsNorm(x, w, { out: x });
const boundFused: Uint16Array = bound.addRmsNorm(bits, bits, null, { dtype: 'float16', dim: 4, out: bits });
// @ts-expect-error: scratch is required
await bindMemory(memory, {});
const boundGrads = bound.layerNormBackward(x, x, null, null, { dim: 4, dx: x });
const boundShared: boolean = bound.shared;
// a region a terminated worker left locked, lent again by naming its binding
const recovered = await bindMemory(memory, { scratch: { byteOffset: 65536, byteLength: 4096 }, recover: bound.lockId });
// @ts-expect-error: recover takes the lockId, a number
await bindMemory(memory, { scratch: { byteOffset: 65536, byteLength: 4096 }, recover: true });

// createKernels: an instance with the same functions
const kernels = await createKernels({ backend: 'scalar' });
const own: Float32Array = kernels.rmsNorm(x, w);
const ownTensor = kernels.alloc(4, 'bfloat16');
const mixed: Float32Array = kernels.rmsNorm(x, bits, { weightDtype: 'bfloat16' });
// @ts-expect-error: createKernels takes init's options
await createKernels({ backend: 'gpu' });

// the reference: the same signatures
const reference: Float32Array = referenceRmsNorm(x, w, { out: x });
const referenceFused: Uint16Array = referenceAddRmsNorm(bits, bits, null, { dtype: 'bfloat16', dim: 4 });
// @ts-expect-error: plain arrays are not accepted, only typed arrays
referenceRmsNorm([2, -4, 6, -8], w);
// @ts-expect-error: the result is a Float32Array, not a number[]
export const wrong: number[] = referenceAddRmsNorm(x, x, w);
const referenceLn: Float32Array = referenceLayerNorm(x, w, w);
const referenceGrads = referenceLayerNormBackward(x, x, null, null, { dim: 4 });
const referenceRmsGrads = referenceRmsNormBackward(x, x, w);
// @ts-expect-error: bias is required (null for none)
referenceLayerNorm(x, w);
// @ts-expect-error: 'out' is dx's name here
referenceRmsNormBackward(x, x, w, { out: x });
// @ts-expect-error: layerNormBackward needs dy, x, weight and bias
referenceLayerNormBackward(x, x);

export const used = [
  backend, y, maybeTensor, unweighted, fused, bf16, f16, inPlace, inPlace16, view,
  bf16f16, boundY, boundFused, boundGrads, boundShared, recovered, own, ownTensor, mixed, reference, referenceFused, ln, lnInPlace, rmsGrads, noWeightGrad, lnDx, lnDbias,
  referenceLn, referenceGrads, referenceRmsGrads,
];

// Row strides, prepared calls and the converters
const qkv = new Float32Array(3 * 4096);
const qHead: Float32Array = rmsNorm(qkv.subarray(0, 2 * 4096 + 128), new Float32Array(128), { rowStride: 4096, out: qkv.subarray(0, 2 * 4096 + 128) });
layerNorm(x, w, null, { rowStride: 8 });
rmsNormBackward(x, x, w, { rowStride: 8 });
// @ts-expect-error: rowStride is a number of values
rmsNorm(x, w, { rowStride: '8' });
const qHeads: Float32Array = rmsNorm(qkv, new Float32Array(128), { rowStride: 4096, heads: 16, headStride: 128, out: qkv });
layerNorm(x, w, null, { heads: 2, headStride: 4 });
// @ts-expect-error: heads is a number of rows
rmsNorm(x, w, { heads: '2' });
// @ts-expect-error: the backward passes take no heads
rmsNormBackward(x, x, w, { heads: 2 });
const prepared: PreparedCall<Float32Array> = rmsNorm.prepare(x, w, { eps: 1e-5, out: y });
const ran: Float32Array = prepared.run();
const preparedTensor: Tensor<'float32'> = rmsNorm.prepare(tx, w, { out: tx }).run();
const preparedFused: Uint16Array = addRmsNorm.prepare(bits, new Uint16Array(4), null, { dtype: 'bfloat16', dim: 4 }).run();
const preparedGrads: { dx: Float32Array; dweight: Float32Array } = rmsNormBackward.prepare(x, x, w).run();
const preparedLayer: Float32Array = layerNorm.prepare(x, w, w).run();
const preparedReference: Float32Array = referenceRmsNorm.prepare(x, w).run();
// @ts-expect-error: a prepared call takes no arguments at run
prepared.run(x);
// @ts-expect-error: prepare checks its arguments' types as the call does
rmsNorm.prepare(x, w, { epsilon: 1 });
const widened: Float32Array = toFloat32(bits, { dtype: 'bfloat16' });
const narrowed: Uint16Array = fromFloat32(x, { dtype: 'bfloat16', out: new Uint16Array(4) });
const narrowed16 = fromFloat32(x, { dtype: 'float16' });
const preparedWiden: Float32Array = toFloat32.prepare(bits, { dtype: 'float16', out: new Float32Array(4) }).run();
const referenceWidened: Float32Array = referenceToFloat32(bits, { dtype: 'float16' });
const referenceNarrowed: Uint16Array = referenceFromFloat32(x, { dtype: 'bfloat16', out: new Uint16Array(4) });
// @ts-expect-error: the converters' dtype is a 16-bit one
toFloat32(bits, { dtype: 'float32' });
// @ts-expect-error: a Uint16Array says which format it holds
toFloat32(bits);
// @ts-expect-error: fromFloat32 takes float32 values
fromFloat32(bits, { dtype: 'bfloat16' });

// ggml blocks: outDtype, quantize, dequantize
const format: BlockFormat = 'q8_0';
const blockOptions: RmsNormBlockOptions = { outDtype: format, eps: 1e-5 };
const blocks: Uint8Array = rmsNorm(x, w, blockOptions);
const blocks16: Uint8Array = rmsNorm(bits, bits, { dtype: 'bfloat16', outDtype: 'q8_K', out: new Uint8Array(292) });
const addedBlocks: Uint8Array = addRmsNorm(x, x.slice(), w, { outDtype: 'q8_1', rowStride: 4 });
const preparedBlocks: Uint8Array = rmsNorm.prepare(x, w, { outDtype: 'q8_0' }).run();
const quantized: Uint8Array = quantize(x, { dtype: 'q8_0' });
const dequantized: Float32Array = dequantize(quantized, { dtype: 'q8_0' });
const referenceBlocks: Uint8Array = referenceQuantize(x, { dtype: 'q8_K' });
const referenceValues: Float32Array = referenceDequantize(referenceBlocks, { dtype: 'q8_K' });
// @ts-expect-error: blocks go into a Uint8Array
rmsNorm(x, w, { outDtype: 'q8_0', out: new Float32Array(4) });
// @ts-expect-error: no such block format
quantize(x, { dtype: 'q4_0' });
// @ts-expect-error: dequantize needs the format
dequantize(quantized);

// Bytes for block outputs: byteLength, and tensors of a block format, written zero-copy
const blockBytes: number = byteLength('q8_0', [2, 64]);
const valueBytes: number = referenceByteLength('bfloat16', 8);
const qt: Tensor<'q8_0'> = alloc(blockBytes, 'q8_0');
const qtBytes: Uint8Array = qt.array;
const intoTensor: Tensor<'q8_0'> = rmsNorm(x, w, { outDtype: 'q8_0', out: qt });
const addedIntoTensor: Tensor<'q8_0'> = addRmsNorm(x, x.slice(), w, { outDtype: 'q8_0', out: qt });
const preparedIntoTensor: Tensor<'q8_0'> = rmsNorm.prepare(x, w, { outDtype: 'q8_0', out: qt }).run();
const quantizedIntoTensor: Tensor<'q8_0'> = quantize(x, { dtype: 'q8_0', out: qt });
const fromTensor: Float32Array = dequantize(qt, { dtype: 'q8_0' });
// @ts-expect-error: byteLength takes the dtype first, then the shape
byteLength([2, 64], 'q8_0');
// @ts-expect-error: a block tensor's bytes are no Float32Array
const notFloats: Float32Array = qt.array;
// @ts-expect-error: a block tensor is no float32 input
rmsNorm(qt, w);
