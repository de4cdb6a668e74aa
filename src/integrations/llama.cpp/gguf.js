// A GGUF writer, version 3, as llama.cpp's ggml/include/gguf.h lays the file
// out: the magic "GGUF", the version (uint32), the tensor and key-value
// counts (uint64), the key-value pairs, the tensor infos, then the tensor
// data, each tensor at an offset that is a multiple of the alignment (32,
// GGUF_DEFAULT_ALIGNMENT), from a data section that starts aligned too.
// Little-endian throughout; a string is its byte length (uint64) and its
// UTF-8 bytes, with no terminator. Only what the project's models need: the
// tensors come as bytes already in their ggml type (models.js makes them).
// Not part of the npm package.

/** GGUF's value types (gguf.h's enum gguf_type): code, bytes, and the DataView setter. */
const VALUE_TYPES = {
  uint8: { code: 0, bytes: 1, set: 'setUint8' },
  int8: { code: 1, bytes: 1, set: 'setInt8' },
  uint16: { code: 2, bytes: 2, set: 'setUint16' },
  int16: { code: 3, bytes: 2, set: 'setInt16' },
  uint32: { code: 4, bytes: 4, set: 'setUint32' },
  int32: { code: 5, bytes: 4, set: 'setInt32' },
  float32: { code: 6, bytes: 4, set: 'setFloat32' },
  bool: { code: 7, bytes: 1, set: 'setUint8' },
  string: { code: 8 },
  array: { code: 9 },
  uint64: { code: 10, bytes: 8, set: 'setBigUint64' },
  int64: { code: 11, bytes: 8, set: 'setBigInt64' },
  float64: { code: 12, bytes: 8, set: 'setFloat64' },
};

/**
 * The ggml tensor types the models use (ggml.h's enum ggml_type): code,
 * values per block and bytes per block (ggml's type traits: blck_size,
 * type_size).
 */
export const GGML_TYPES = {
  F32: { code: 0, blockValues: 1, blockBytes: 4 },
  Q8_0: { code: 8, blockValues: 32, blockBytes: 34 },
  Q4_K: { code: 12, blockValues: 256, blockBytes: 144 },
  BF16: { code: 30, blockValues: 1, blockBytes: 2 },
};

export const GGUF_ALIGNMENT = 32;

const utf8 = new TextEncoder();
const alignUp = (n, to) => Math.ceil(n / to) * to;

/** A value of `type` for writing: its size in bytes and a writer at (view, at). */
function encode(fn, what, type, value) {
  const spec = VALUE_TYPES[type];
  if (spec === undefined) throw new TypeError(`${fn}: ${what} has unknown type '${type}'`);
  if (type === 'string') {
    if (typeof value !== 'string') throw new TypeError(`${fn}: ${what} must be a string`);
    const bytes = utf8.encode(value);
    return { size: 8 + bytes.length, write: (view, at) => putString(view, at, bytes) };
  }
  if (type === 'array') throw new TypeError(`${fn}: ${what}: an array is written with { type: 'array', itemType, value }`);
  const wide = spec.bytes === 8 && type !== 'float64';
  if (type === 'bool' ? typeof value !== 'boolean' : wide ? typeof value !== 'bigint' : typeof value !== 'number') {
    throw new TypeError(`${fn}: ${what} must be a ${type === 'bool' ? 'boolean' : wide ? 'bigint' : 'number'} for ${type}`);
  }
  if (!type.startsWith('float') && !wide && type !== 'bool') {
    const bits = 8 * spec.bytes;
    const [lo, hi] = type.startsWith('u') ? [0, 2 ** bits - 1] : [-(2 ** (bits - 1)), 2 ** (bits - 1) - 1];
    if (!Number.isInteger(value) || value < lo || value > hi) throw new RangeError(`${fn}: ${what} (${value}) is not a ${type}`);
  }
  const v = type === 'bool' ? Number(value) : value;
  return { size: spec.bytes, write: (view, at) => view[spec.set](at, v, true) };
}

function putString(view, at, bytes) {
  view.setBigUint64(at, BigInt(bytes.length), true);
  new Uint8Array(view.buffer, view.byteOffset + at + 8, bytes.length).set(bytes);
}

/** One key-value pair: key, value type, and the value (an array: item type, count, items). */
function encodePair(fn, { key, type, itemType, value }, index) {
  const what = `metadata[${index}] (${key})`;
  if (typeof key !== 'string' || key.length === 0) throw new TypeError(`${fn}: metadata[${index}].key must be a non-empty string`);
  const name = encode(fn, `metadata[${index}].key`, 'string', key);
  let body;
  if (type === 'array') {
    if (itemType === 'array') throw new TypeError(`${fn}: ${what}: arrays of arrays are not written`);
    if (!Array.isArray(value)) throw new TypeError(`${fn}: ${what} must be an array of ${itemType}`);
    const items = value.map((item, i) => encode(fn, `${what}[${i}]`, itemType, item));
    const size = 4 + 4 + 8 + items.reduce((sum, item) => sum + item.size, 0);
    body = {
      size,
      write: (view, at) => {
        view.setUint32(at, VALUE_TYPES.array.code, true);
        view.setUint32(at + 4, VALUE_TYPES[itemType].code, true);
        view.setBigUint64(at + 8, BigInt(items.length), true);
        let p = at + 16;
        for (const item of items) {
          item.write(view, p);
          p += item.size;
        }
      },
    };
  } else {
    const item = encode(fn, what, type, value);
    body = { size: 4 + item.size, write: (view, at) => {
      view.setUint32(at, VALUE_TYPES[type].code, true);
      item.write(view, at + 4);
    } };
  }
  return { size: name.size + body.size, write: (view, at) => {
    name.write(view, at);
    body.write(view, at + name.size);
  } };
}

/** A tensor's checked record: its name's bytes, ggml type, dims and data. */
function checkTensor(fn, { name, type, dims, data }, index, names) {
  const what = `tensors[${index}]${typeof name === 'string' ? ` (${name})` : ''}`;
  if (typeof name !== 'string' || name.length === 0) throw new TypeError(`${fn}: tensors[${index}].name must be a non-empty string`);
  if (names.has(name)) throw new RangeError(`${fn}: ${what}: the name is used twice`);
  names.add(name);
  const ggml = GGML_TYPES[type];
  if (ggml === undefined) throw new TypeError(`${fn}: ${what}.type must be one of ${Object.keys(GGML_TYPES).join(', ')}, got ${type}`);
  if (!Array.isArray(dims) || dims.length < 1 || dims.length > 4 || !dims.every((n) => Number.isSafeInteger(n) && n > 0)) {
    throw new RangeError(`${fn}: ${what}.dims must be 1 to 4 positive integers (ggml's ne, the row first)`);
  }
  if (dims[0] % ggml.blockValues !== 0) {
    throw new RangeError(`${fn}: ${what}: a row of ${dims[0]} values is not a whole number of ${type} blocks (${ggml.blockValues} values)`);
  }
  if (!(data instanceof Uint8Array)) throw new TypeError(`${fn}: ${what}.data must be a Uint8Array of ${type} bytes`);
  const rows = dims.slice(1).reduce((a, b) => a * b, 1);
  const bytes = rows * (dims[0] / ggml.blockValues) * ggml.blockBytes;
  if (data.length !== bytes) throw new RangeError(`${fn}: ${what}.data has ${data.length} bytes, ${type} of dims [${dims}] takes ${bytes}`);
  return { name: utf8.encode(name), code: ggml.code, dims, data };
}

/**
 * The bytes of a GGUF file: `metadata`, a list of { key, type, value }
 * (type one of GGUF's value types: 'uint32', 'float32', 'string', …; 64-bit
 * integers as bigint; an array as { type: 'array', itemType, value: [...] }),
 * and `tensors`, a list of { name, type ('F32', 'BF16', 'Q8_0', 'Q4_K'),
 * dims (ggml's ne: the row length first), data (a Uint8Array of the
 * tensor's bytes in that type) }, written in the order given.
 */
export function ggufBytes({ metadata, tensors }) {
  const fn = 'ggufBytes';
  if (!Array.isArray(metadata)) throw new TypeError(`${fn}: metadata must be an array of { key, type, value }`);
  if (!Array.isArray(tensors)) throw new TypeError(`${fn}: tensors must be an array of { name, type, dims, data }`);
  const pairs = metadata.map((pair, i) => encodePair(fn, pair, i));
  const keys = new Set(metadata.map((pair) => pair.key));
  if (keys.size !== metadata.length) throw new RangeError(`${fn}: a metadata key is used twice`);
  if (keys.has('general.alignment')) throw new RangeError(`${fn}: general.alignment is not written: the tensors are aligned to ${GGUF_ALIGNMENT}, GGUF's default`);
  const names = new Set();
  const infos = tensors.map((tensor, i) => checkTensor(fn, tensor, i, names));

  let header = 4 + 4 + 8 + 8;
  for (const pair of pairs) header += pair.size;
  let offset = 0;
  for (const info of infos) {
    header += 8 + info.name.length + 4 + 8 * info.dims.length + 4 + 8;
    info.offset = offset;
    offset = alignUp(offset + info.data.length, GGUF_ALIGNMENT);
  }
  // Every tensor is padded to the alignment, the last one too (ggml's
  // gguf_init_from_file reads the data section as the sum of padded sizes).
  const dataStart = alignUp(header, GGUF_ALIGNMENT);
  const file = new Uint8Array(dataStart + offset);
  const view = new DataView(file.buffer);

  file.set(utf8.encode('GGUF'), 0);
  view.setUint32(4, 3, true);
  view.setBigUint64(8, BigInt(infos.length), true);
  view.setBigUint64(16, BigInt(pairs.length), true);
  let at = 24;
  for (const pair of pairs) {
    pair.write(view, at);
    at += pair.size;
  }
  for (const info of infos) {
    putString(view, at, info.name);
    at += 8 + info.name.length;
    view.setUint32(at, info.dims.length, true);
    at += 4;
    for (const n of info.dims) {
      view.setBigUint64(at, BigInt(n), true);
      at += 8;
    }
    view.setUint32(at, info.code, true);
    view.setBigUint64(at + 4, BigInt(info.offset), true);
    at += 12;
  }
  for (const info of infos) file.set(info.data, dataStart + info.offset);
  return file;
}
