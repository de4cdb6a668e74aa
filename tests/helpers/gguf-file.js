// A GGUF reader for the tests, written from the format's description in
// llama.cpp's ggml/include/gguf.h (version 3), not from the project's writer
// (src/integrations/llama.cpp/gguf.js), so that each checks the other. It
// reads what the writer may write and refuses the rest, naming the byte.

const VALUE_TYPES = ['uint8', 'int8', 'uint16', 'int16', 'uint32', 'int32', 'float32', 'bool', 'string', 'array', 'uint64', 'int64', 'float64'];
/** gguf.h's ggml_type codes the models use → [name, values per block, bytes per block] (ggml's type traits). */
export const TENSOR_TYPES = { 0: ['F32', 1, 4], 8: ['Q8_0', 32, 34], 12: ['Q4_K', 256, 144], 30: ['BF16', 1, 2] };
export const ALIGNMENT = 32; // GGUF_DEFAULT_ALIGNMENT

/**
 * { version, metadata: Map key → { type, value } (arrays: { type: 'array',
 * itemType, value }), tensors: [{ name, dims, type, offset, bytes, data }],
 * dataStart, infoEnd } of a GGUF file's bytes (a Uint8Array).
 */
export function readGguf(file) {
  const view = new DataView(file.buffer, file.byteOffset, file.byteLength);
  let at = 0;
  const need = (n, what) => {
    if (at + n > file.length) throw new RangeError(`GGUF: ${what} at byte ${at} runs past the end (${file.length})`);
  };
  const u32 = (what) => { need(4, what); const v = view.getUint32(at, true); at += 4; return v; };
  const u64 = (what) => {
    need(8, what);
    const v = view.getBigUint64(at, true);
    at += 8;
    if (v > BigInt(Number.MAX_SAFE_INTEGER)) throw new RangeError(`GGUF: ${what} at byte ${at - 8} is ${v}`);
    return Number(v);
  };
  const string = (what) => {
    const n = u64(`${what}'s length`);
    need(n, what);
    const s = new TextDecoder('utf-8', { fatal: true }).decode(file.subarray(at, at + n));
    at += n;
    return s;
  };
  const scalar = (type, what) => {
    const sizes = { uint8: 1, int8: 1, bool: 1, uint16: 2, int16: 2, uint32: 4, int32: 4, float32: 4, uint64: 8, int64: 8, float64: 8 };
    if (type === 'string') return string(what);
    need(sizes[type], what);
    const get = { uint8: 'getUint8', int8: 'getInt8', bool: 'getUint8', uint16: 'getUint16', int16: 'getInt16', uint32: 'getUint32',
      int32: 'getInt32', float32: 'getFloat32', uint64: 'getBigUint64', int64: 'getBigInt64', float64: 'getFloat64' }[type];
    const v = view[get](at, true);
    at += sizes[type];
    if (type === 'bool' && v > 1) throw new RangeError(`GGUF: ${what} is a bool of ${v}`);
    return type === 'bool' ? v === 1 : v;
  };
  const valueType = (what) => {
    const code = u32(what);
    if (!(code < VALUE_TYPES.length)) throw new RangeError(`GGUF: ${what} is ${code}, not a gguf_type`);
    return VALUE_TYPES[code];
  };

  need(4, 'the magic');
  const magic = new TextDecoder().decode(file.subarray(0, 4));
  if (magic !== 'GGUF') throw new RangeError(`GGUF: the magic is '${magic}'`);
  at = 4;
  const version = u32('the version');
  const tensorCount = u64('the tensor count');
  const pairCount = u64('the key-value count');
  const metadata = new Map();
  for (let i = 0; i < pairCount; i++) {
    const key = string(`key ${i}`);
    if (metadata.has(key)) throw new RangeError(`GGUF: key ${key} twice`);
    const type = valueType(`${key}'s type`);
    if (type === 'array') {
      const itemType = valueType(`${key}'s item type`);
      const n = u64(`${key}'s length`);
      const value = [];
      for (let j = 0; j < n; j++) value.push(scalar(itemType, `${key}[${j}]`));
      metadata.set(key, { type, itemType, value });
    } else {
      metadata.set(key, { type, value: scalar(type, key) });
    }
  }
  const alignment = metadata.has('general.alignment') ? metadata.get('general.alignment').value : ALIGNMENT;
  const tensors = [];
  for (let i = 0; i < tensorCount; i++) {
    const name = string(`tensor ${i}'s name`);
    const nDims = u32(`${name}'s dim count`);
    const dims = [];
    for (let d = 0; d < nDims; d++) dims.push(u64(`${name}'s dim ${d}`));
    const code = u32(`${name}'s type`);
    if (TENSOR_TYPES[code] === undefined) throw new RangeError(`GGUF: ${name} has ggml type ${code}, not one the models use`);
    const [type, blockValues, blockBytes] = TENSOR_TYPES[code];
    const offset = u64(`${name}'s offset`);
    const rows = dims.slice(1).reduce((a, b) => a * b, 1);
    if (dims[0] % blockValues !== 0) throw new RangeError(`GGUF: ${name}'s rows of ${dims[0]} are not whole ${type} blocks`);
    tensors.push({ name, dims, type, offset, bytes: rows * (dims[0] / blockValues) * blockBytes });
  }
  const infoEnd = at;
  const dataStart = Math.ceil(infoEnd / alignment) * alignment;
  for (const t of tensors) {
    const from = dataStart + t.offset;
    if (from + t.bytes > file.length) throw new RangeError(`GGUF: ${t.name}'s data runs past the end`);
    t.data = file.subarray(from, from + t.bytes);
  }
  return { version, metadata, tensors, dataStart, infoEnd, alignment };
}
