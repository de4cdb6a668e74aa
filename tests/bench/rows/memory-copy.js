// The bandwidth ceiling: memory.copy of the bytes a call reads and writes
// (x to y), inside wasm. The module is memory-copy.wat, assembled by hand.

const WASM_PAGE = 65536;

const MODULE_BYTES = Uint8Array.from([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, // "\0asm", version 1
  0x01, 0x07, 0x01, 0x60, 0x03, 0x7f, 0x7f, 0x7f, 0x00, // type: (i32 i32 i32) -> ()
  0x02, 0x0f, 0x01, 0x03, 0x65, 0x6e, 0x76, // import "env"
  0x06, 0x6d, 0x65, 0x6d, 0x6f, 0x72, 0x79, 0x02, 0x00, 0x01, // "memory" (memory 1)
  0x03, 0x02, 0x01, 0x00, // one function of type 0
  0x07, 0x08, 0x01, 0x04, 0x63, 0x6f, 0x70, 0x79, 0x00, 0x00, // export "copy" = func 0
  0x0a, 0x0e, 0x01, 0x0c, 0x00, // code: one body of 12 bytes, no locals
  0x20, 0x00, 0x20, 0x01, 0x20, 0x02, // local.get 0, 1, 2
  0xfc, 0x0a, 0x00, 0x00, // memory.copy 0 0
  0x0b, // end
]);

let compiled = null;

export const memoryCopy = {
  id: 'memory-copy',
  name: 'limit: wasm memory.copy x→y',
  expects: 'copy', // its output is x itself, not RMSNorm of x
  bytes: ({ rows, dim }) => 8 * rows * dim,
  async setup({ x }) {
    compiled ??= WebAssembly.compile(MODULE_BYTES);
    const memory = new WebAssembly.Memory({ initial: Math.ceil((2 * x.byteLength + 16) / WASM_PAGE) });
    const { exports } = await WebAssembly.instantiate(await compiled, { env: { memory } });
    const src = 0;
    const dst = Math.ceil(x.byteLength / 64) * 64; // cache-line aligned, like malloc'd big blocks
    new Float32Array(memory.buffer, src, x.length).set(x);
    const call = () => exports.copy(dst, src, x.byteLength);
    return { call, output: () => new Float32Array(memory.buffer, dst, x.length).slice() };
  },
};
