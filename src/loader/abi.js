// The C ABI of the modules, as the JS layer sees it: written here once.
// tests/abi.test.js holds every fact below to the C enums (src/kernels/,
// src/abi/rmsnorm_wasm.h) and to the Makefile's export lists (whose kernels
// are the ones the descriptions call: src/ops/descriptions.js, KERNEL_EXPORTS,
// the 16-bit converters among them); the C side's block formats are written
// from BLOCK_FORMAT below (src/abi/block-formats.js).

/** Each storage dtype: its code in the C enums and its bytes per value. */
export const DTYPE = Object.freeze({
  float32: Object.freeze({ code: 0, bytes: 4 }),
  bfloat16: Object.freeze({ code: 1, bytes: 2 }),
  float16: Object.freeze({ code: 2, bytes: 2 }),
});

/** The dtype names, in code order. */
export const DTYPES = Object.freeze(['float32', 'bfloat16', 'float16']);

/** The bytes of each type a block's field may have (ggml_half is float16). */
export const FIELD_BYTES = Object.freeze({ __proto__: null, int8: 1, int16: 2, float16: 2, float32: 4 });

/** The rows below with their layout worked out: each field's offset (ggml's
 * blocks are packed: every field falls on a multiple of its type's bytes,
 * which src/abi/block-formats.js checks) and the block's bytes. */
function blockFormats(rows) {
  const table = { __proto__: null };
  const names = Object.keys(rows);
  for (let i = 0; i < names.length; i++) {
    const { code, values, fields: declared } = rows[names[i]];
    const fields = { __proto__: null };
    let offset = 0;
    const fieldNames = Object.keys(declared);
    for (let k = 0; k < fieldNames.length; k++) {
      const match = /^(\w+)(?:\[(\d+)\])?$/.exec(declared[fieldNames[k]]);
      const type = match[1];
      const count = match[2] === undefined ? 1 : Number(match[2]);
      fields[fieldNames[k]] = Object.freeze({ __proto__: null, type, count, offset });
      offset += count * FIELD_BYTES[type];
    }
    table[names[i]] = Object.freeze({ __proto__: null, code, values, bytes: offset, fields: Object.freeze(fields) });
  }
  return Object.freeze(table);
}

/**
 * ggml's block formats, which a norm's output may take instead of its
 * storage dtype (options.outDtype): the one table of their facts, a row a
 * format, in code order. Each row: its code in the C ABI (from 1: 0 is the
 * storage dtype), the values a block holds, and its fields as
 * ggml-common.h's block_q8_0, block_q8_1 and block_q8_K declare them, in
 * order (type, and count if an array); each field's offset and the
 * block's bytes follow from them. The C enums and constants, the C
 * library's messages and the .d.ts union are written from this table by
 * src/abi/block-formats.js (`make build`); a format's rule (how its values
 * become its bytes) is its own: CONTRIBUTING.md's where-to-change table.
 */
export const BLOCK_FORMAT = blockFormats({
  q8_0: { code: 1, values: 32, fields: { d: 'float16', qs: 'int8[32]' } },
  q8_1: { code: 2, values: 32, fields: { d: 'float16', s: 'float16', qs: 'int8[32]' } },
  q8_K: { code: 3, values: 256, fields: { d: 'float32', qs: 'int8[256]', bsums: 'int16[16]' } },
});

/** The block format names, in code order. */
export const BLOCK_FORMATS = Object.freeze(Object.keys(BLOCK_FORMAT));

/** What a tensor may hold (alloc's dtype): DTYPES, then BLOCK_FORMATS (a block format's bytes). */
export const TENSOR_DTYPES = Object.freeze(DTYPES.concat(BLOCK_FORMATS));

/** Bytes per element of the typed array that holds each dtype: a block
 * format travels as its bytes, in a Uint8Array. */
export const ELEMENT_BYTES = (() => {
  const bytes = { __proto__: null };
  for (let i = 0; i < TENSOR_DTYPES.length; i++) {
    const dtype = TENSOR_DTYPES[i];
    bytes[dtype] = BLOCK_FORMAT[dtype] === undefined ? DTYPE[dtype].bytes : 1;
  }
  return Object.freeze(bytes);
})();

/** Where a 16-bit result rounds (src/kernels/f32-rmsnorm/rmsnorm_f32.h):
 * zero is the default in every API, Llama's. */
export const CAST_MODE = Object.freeze({ llama: 0, gemma: 1 });

/** The cast-mode names, in code order. */
export const CAST_MODES = Object.freeze(['llama', 'gemma']);

/** What a module with its own memory exports besides the kernels. */
export const ALLOCATOR_EXPORTS = Object.freeze(['malloc', 'free']);
