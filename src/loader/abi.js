// The C ABI of the modules, as the JS layer sees it: written here once.
// tests/abi.test.js holds every fact below to the C enums (src/kernels/,
// src/abi/rmsnorm_wasm.h) and to the Makefile's export lists (whose kernels
// are the ones the descriptions call: src/ops/descriptions.js, KERNEL_EXPORTS,
// the 16-bit converters among them).

/** Each storage dtype: its code in the C enums and its bytes per value. */
export const DTYPE = Object.freeze({
  float32: Object.freeze({ code: 0, bytes: 4 }),
  bfloat16: Object.freeze({ code: 1, bytes: 2 }),
  float16: Object.freeze({ code: 2, bytes: 2 }),
});

/** The dtype names, in code order. */
export const DTYPES = Object.freeze(['float32', 'bfloat16', 'float16']);

/**
 * ggml's block formats, which a norm's output may take instead of its
 * storage dtype (options.outDtype): each one's code in enum
 * rmsnorm_q8_format (src/kernels/q8_blocks.h), values a block and bytes a
 * block (ggml-common.h's block_q8_0, block_q8_1 and block_q8_K).
 */
export const BLOCK_FORMAT = Object.freeze({
  __proto__: null,
  q8_0: Object.freeze({ code: 1, values: 32, bytes: 34 }),
  q8_1: Object.freeze({ code: 2, values: 32, bytes: 36 }),
  q8_K: Object.freeze({ code: 3, values: 256, bytes: 292 }),
});

/** The block format names, in code order. */
export const BLOCK_FORMATS = Object.freeze(['q8_0', 'q8_1', 'q8_K']);

/** What a tensor may hold (alloc's dtype): DTYPES, then BLOCK_FORMATS (a block format's bytes). */
export const TENSOR_DTYPES = Object.freeze(DTYPES.concat(BLOCK_FORMATS));

/** Bytes per element of the typed array that holds each dtype: a block
 * format travels as its bytes, in a Uint8Array. */
export const ELEMENT_BYTES = Object.freeze({ __proto__: null, float32: 4, bfloat16: 2, float16: 2, q8_0: 1, q8_1: 1, q8_K: 1 });

/** Where a 16-bit result rounds (src/kernels/f32-rmsnorm/rmsnorm_f32.h):
 * zero is the default in every API, Llama's. */
export const CAST_MODE = Object.freeze({ llama: 0, gemma: 1 });

/** The cast-mode names, in code order. */
export const CAST_MODES = Object.freeze(['llama', 'gemma']);

/** What a module with its own memory exports besides the kernels. */
export const ALLOCATOR_EXPORTS = Object.freeze(['malloc', 'free']);
