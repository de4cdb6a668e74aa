// The project's GGUF writer (src/integrations/llama.cpp/gguf.js) and the
// models it writes (models.js): a file worked out by hand from the format's
// description in llama.cpp's ggml/include/gguf.h, then the tiny Llama's
// three files and the wide Llama's layout read back by the tests' own
// reader (tests/helpers/gguf-file.js): metadata, names, dims, types, the
// alignment of every tensor, and the values.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { init } from '../src/index.js';
import * as reference from '../src/reference/index.js';
import { ggufBytes } from '../src/integrations/llama.cpp/gguf.js';
import { WIDE_CONFIG, wideLlamaGguf } from '../src/integrations/llama.cpp/models.js';
import { loadWeights } from '../web/model/llama.js';
import { ALIGNMENT, readGguf } from './helpers/gguf-file.js';

before(() => init()); // models.js quantizes with the default instance

const root = fileURLToPath(new URL('..', import.meta.url));
const read = (path) => readFileSync(new URL(path, import.meta.url));

// The little-endian pieces of gguf.h's layout, for the file worked by hand.
const u32 = (v) => [v & 0xff, (v >>> 8) & 0xff, (v >>> 16) & 0xff, v >>> 24];
const u64 = (v) => [...u32(v), 0, 0, 0, 0];
const str = (s) => [...u64(Buffer.byteLength(s)), ...Buffer.from(s, 'utf8')];
const f32 = (v) => [...new Uint8Array(new Float32Array([v]).buffer)];
const zeros = (n) => new Array(n).fill(0);

test('a small file, byte for byte as gguf.h lays it out', () => {
  const file = ggufBytes({
    metadata: [{ key: 'a', type: 'uint32', value: 7 }, { key: 'é', type: 'string', value: 'xy' }],
    tensors: [
      { name: 't', type: 'F32', dims: [2], data: new Uint8Array(new Float32Array([1, -2]).buffer) },
      { name: 'u', type: 'BF16', dims: [3, 1], data: new Uint8Array(new Uint16Array([0x3f80, 0x4000, 0xc040]).buffer) },
    ],
  });
  const header = [
    ...Buffer.from('GGUF'), ...u32(3), ...u64(2), ...u64(2), // magic, version 3, tensor count, key-value count
    ...str('a'), ...u32(4), ...u32(7), // GGUF_TYPE_UINT32
    ...str('é'), ...u32(8), ...str('xy'), // GGUF_TYPE_STRING; the key is 2 UTF-8 bytes
    ...str('t'), ...u32(1), ...u64(2), ...u32(0), ...u64(0), // 1 dim of 2, GGML_TYPE_F32, offset 0
    ...str('u'), ...u32(2), ...u64(3), ...u64(1), ...u32(30), ...u64(32), // 2 dims, GGML_TYPE_BF16, offset 32
  ];
  assert.equal(header.length, 139);
  const want = [
    ...header, ...zeros(160 - 139), // the data section starts at the next multiple of 32
    ...f32(1), ...f32(-2), ...zeros(24), // t, padded to 32
    0x80, 0x3f, 0x00, 0x40, 0x40, 0xc0, ...zeros(26), // u, padded to 32 too
  ];
  assert.deepEqual([...file], want);
});

test('metadata of every value type and arrays read back', () => {
  const metadata = [
    { key: 'u8', type: 'uint8', value: 255 }, { key: 'i8', type: 'int8', value: -128 },
    { key: 'u16', type: 'uint16', value: 65535 }, { key: 'i16', type: 'int16', value: -32768 },
    { key: 'u32', type: 'uint32', value: 2 ** 32 - 1 }, { key: 'i32', type: 'int32', value: -(2 ** 31) },
    { key: 'f32', type: 'float32', value: 0.5 }, { key: 'b', type: 'bool', value: true },
    { key: 'u64', type: 'uint64', value: 2n ** 64n - 1n }, { key: 'i64', type: 'int64', value: -(2n ** 63n) },
    { key: 'f64', type: 'float64', value: 1e300 }, { key: 's', type: 'string', value: 'llama' },
    { key: 'ints', type: 'array', itemType: 'int32', value: [1, -2, 3] },
    { key: 'words', type: 'array', itemType: 'string', value: ['a', '', 'bc'] },
  ];
  const { metadata: got, tensors } = readGguf(ggufBytes({ metadata, tensors: [] }));
  assert.equal(tensors.length, 0);
  assert.deepEqual([...got.keys()], metadata.map((m) => m.key));
  for (const { key, type, itemType, value } of metadata) {
    assert.deepEqual(got.get(key), itemType === undefined ? { type, value } : { type, itemType, value }, key);
  }
});

test('what the writer refuses, naming the argument', () => {
  const f32Data = (n) => new Uint8Array(4 * n);
  const write = (tensors, metadata = []) => () => ggufBytes({ metadata, tensors });
  assert.throws(write([{ name: 'w', type: 'Q8_0', dims: [48, 2], data: new Uint8Array(102) }]), { name: 'RangeError', message: /tensors\[0\] \(w\): a row of 48 values is not a whole number of Q8_0 blocks/ });
  assert.throws(write([{ name: 'w', type: 'F32', dims: [3, 2], data: f32Data(5) }]), { name: 'RangeError', message: /has 20 bytes, F32 of dims \[3,2\] takes 24/ });
  assert.throws(write([{ name: 'w', type: 'F16', dims: [2], data: f32Data(1) }]), { name: 'TypeError', message: /tensors\[0\] \(w\)\.type must be one of/ });
  assert.throws(write([{ name: 'w', type: 'F32', dims: [1], data: f32Data(1) }, { name: 'w', type: 'F32', dims: [1], data: f32Data(1) }]), { name: 'RangeError', message: /tensors\[1\] \(w\): the name is used twice/ });
  assert.throws(write([{ name: 'w', type: 'F32', dims: [0], data: f32Data(0) }]), { name: 'RangeError', message: /dims must be 1 to 4 positive integers/ });
  assert.throws(write([{ name: 'w', type: 'F32', dims: [1], data: new Float32Array(1) }]), { name: 'TypeError', message: /data must be a Uint8Array/ });
  assert.throws(write([], [{ key: 'n', type: 'uint32', value: -1 }]), { name: 'RangeError', message: /metadata\[0\] \(n\) \(-1\) is not a uint32/ });
  assert.throws(write([], [{ key: 'n', type: 'uint64', value: 1 }]), { name: 'TypeError', message: /must be a bigint for uint64/ });
  assert.throws(write([], [{ key: 'n', type: 'u32', value: 1 }]), { name: 'TypeError', message: /unknown type 'u32'/ });
  assert.throws(write([], [{ key: 'general.alignment', type: 'uint32', value: 64 }]), { name: 'RangeError', message: /general\.alignment is not written/ });
  assert.throws(write([], [{ key: 'k', type: 'uint8', value: 1 }, { key: 'k', type: 'uint8', value: 2 }]), { name: 'RangeError', message: /a metadata key is used twice/ });
});

/** Every tensor at its padded place: offsets from 0, each at the previous end rounded up to 32, zeros between. */
function assertLayout(gguf, file, what) {
  assert.equal(gguf.dataStart % ALIGNMENT, 0, what);
  assert.ok(gguf.dataStart - gguf.infoEnd < ALIGNMENT, what);
  assert.ok(file.subarray(gguf.infoEnd, gguf.dataStart).every((b) => b === 0), `${what}: padding before the data`);
  let offset = 0;
  for (const t of gguf.tensors) {
    assert.equal(t.offset, offset, `${what}: ${t.name}'s offset`);
    const end = offset + t.bytes;
    offset = Math.ceil(end / ALIGNMENT) * ALIGNMENT;
    assert.ok(file.subarray(gguf.dataStart + end, gguf.dataStart + offset).every((b) => b === 0), `${what}: padding after ${t.name}`);
  }
  assert.equal(file.length, gguf.dataStart + offset, `${what}: the file ends with the last tensor's padding`);
}

/** The llama.cpp names of the tutorial's tensors (llama.cpp's src/llama-arch.cpp, LLM_ARCH_LLAMA). */
const LLAMA_CPP_NAMES = {
  tok_embeddings: 'token_embd', norm: 'output_norm', output: 'output', attention_norm: 'attn_norm', wq: 'attn_q',
  wk: 'attn_k', wv: 'attn_v', wo: 'attn_output', ffn_norm: 'ffn_norm', w1: 'ffn_gate', w3: 'ffn_up', w2: 'ffn_down',
};
const llamaCppName = (name) => {
  const m = /^layers\.(\d+)\.(\w+)$/.exec(name);
  return m ? `blk.${m[1]}.${LLAMA_CPP_NAMES[m[2]]}.weight` : `${LLAMA_CPP_NAMES[name]}.weight`;
};

const manifest = JSON.parse(read('../web/model/weights.json'));
const weightBytes = read('../web/model/weights.bin');
const weights = loadWeights(manifest, weightBytes.buffer.slice(weightBytes.byteOffset, weightBytes.byteOffset + weightBytes.byteLength));
const TINY = { f32: 0, bf16: 32, q8_0: 7 }; // general.file_type: llama_ftype's ALL_F32, MOSTLY_BF16, MOSTLY_Q8_0

function make(targets) {
  const made = spawnSync('make', ['--no-print-directory', '-s', ...targets], { cwd: root, encoding: 'utf8' });
  assert.equal(made.status, 0, `make ${targets.join(' ')} failed:\n${made.stdout}${made.stderr}`);
}

/** The metadata llama.cpp's llama architecture reads, for a model of `config` (the tutorial's keys). */
function llamaMetadata(config, fileType, name) {
  const u32 = (value) => ({ type: 'uint32', value });
  return new Map([
    ['general.architecture', { type: 'string', value: 'llama' }],
    ['general.name', { type: 'string', value: name }],
    ['general.file_type', u32(fileType)],
    ['llama.vocab_size', u32(config.vocab_size)],
    ['llama.context_length', u32(config.max_seq_len)],
    ['llama.embedding_length', u32(config.dim)],
    ['llama.block_count', u32(config.n_layers)],
    ['llama.feed_forward_length', u32(config.hidden_dim)],
    ['llama.attention.head_count', u32(config.n_heads)],
    ['llama.attention.head_count_kv', u32(config.n_kv_heads ?? config.n_heads)],
    ['llama.rope.dimension_count', u32(config.dim / config.n_heads)],
    ['llama.rope.freq_base', { type: 'float32', value: Math.fround(config.rope_theta) }],
    ['llama.attention.layer_norm_rms_epsilon', { type: 'float32', value: Math.fround(config.norm_eps) }],
    ['tokenizer.ggml.model', { type: 'string', value: 'none' }], // llama.cpp's "no vocab": token ids in, as they are
  ]);
}

for (const format of Object.keys(TINY)) {
  test(`the tiny Llama, ${format}: llama.cpp's metadata and names, each tensor's type, place and values`, () => {
    const path = `build/models/tiny-llama-${format}.gguf`;
    make([path]);
    const file = new Uint8Array(readFileSync(`${root}/${path}`));
    const gguf = readGguf(file);
    assert.equal(gguf.version, 3);
    assert.deepEqual(gguf.metadata, llamaMetadata(manifest.config, TINY[format], 'rmsnorm-wasm tiny Llama'));
    assertLayout(gguf, file, path);
    assert.deepEqual(gguf.tensors.map((t) => t.name), manifest.tensors.map((t) => llamaCppName(t.name)));
    const types = {};
    manifest.tensors.forEach(({ name, shape }, i) => {
      const t = gguf.tensors[i];
      assert.deepEqual(t.dims, [...shape].reverse(), `${t.name}: ggml's ne is torch's shape reversed`);
      const values = weights.tensors.get(name);
      // Norms stay F32; a weight takes the file's type where its rows are whole blocks (Q8_0: 32 values).
      const want = shape.length === 1 ? 'F32' : format === 'bf16' ? 'BF16' : format === 'q8_0' && shape[1] % 32 === 0 ? 'Q8_0' : 'F32';
      assert.equal(t.type, want, t.name);
      types[t.type] = (types[t.type] ?? 0) + 1;
      const expected = {
        F32: () => new Uint8Array(values.buffer, values.byteOffset, values.byteLength),
        BF16: () => { const bits = weights.bfloat16.get(name); return new Uint8Array(bits.buffer, bits.byteOffset, bits.byteLength); },
        Q8_0: () => reference.quantize(values, { dtype: 'q8_0' }),
      }[t.type]();
      assert.ok(Buffer.from(t.data).equals(Buffer.from(expected)), `${t.name}: its ${t.type} bytes`);
    });
    // 9 norms (4 layers × 2, and the last); in q8_0, the 4 ffn_down (rows of 176) stay F32 too.
    assert.deepEqual(types, { f32: { F32: 39 }, bf16: { F32: 9, BF16: 30 }, q8_0: { F32: 13, Q8_0: 26 } }[format]);
  });
}

test('the wide Llama: llama.cpp\'s shapes for its config, ggml types by row length, weights at decode scale', () => {
  // TinyLlama-1.1B's widths; a row of 5632 is 22 Q4_K blocks of 256.
  assert.deepEqual({ ...WIDE_CONFIG, seed: 0 }, {
    vocab_size: 256, dim: 2048, n_layers: 2, n_heads: 32, n_kv_heads: 4, hidden_dim: 5632, max_seq_len: 2048,
    norm_eps: 1e-5, rope_theta: 10000, seed: 0,
  });
  // The same writer on a narrow config of the same form (the full model is
  // checked against ggml's Q4_K in tests/ggml-reference.test.js).
  const config = { ...WIDE_CONFIG, dim: 256, hidden_dim: 512, n_heads: 8, n_kv_heads: 2, vocab_size: 40, n_layers: 2 };
  const file = wideLlamaGguf('q8_0', () => assert.fail('no Q4_K in a q8_0 file'), config);
  const gguf = readGguf(file);
  assert.deepEqual(gguf.metadata, llamaMetadata(config, 7, 'rmsnorm-wasm wide Llama (generated weights)'));
  assertLayout(gguf, file, 'wide q8_0');
  const kv = (config.dim / config.n_heads) * config.n_kv_heads;
  const want = [['token_embd.weight', [256, 40]]];
  for (let l = 0; l < 2; l++) {
    want.push([`blk.${l}.attn_norm.weight`, [256]], [`blk.${l}.attn_q.weight`, [256, 256]], [`blk.${l}.attn_k.weight`, [256, kv]],
      [`blk.${l}.attn_v.weight`, [256, kv]], [`blk.${l}.attn_output.weight`, [256, 256]], [`blk.${l}.ffn_norm.weight`, [256]],
      [`blk.${l}.ffn_gate.weight`, [256, 512]], [`blk.${l}.ffn_up.weight`, [256, 512]], [`blk.${l}.ffn_down.weight`, [512, 256]]);
  }
  want.push(['output_norm.weight', [256]], ['output.weight', [256, 40]]);
  assert.deepEqual(gguf.tensors.map((t) => [t.name, t.dims]), want);
  for (const t of gguf.tensors) {
    assert.equal(t.type, t.dims.length === 1 ? 'F32' : 'Q8_0', t.name);
    const values = t.type === 'F32' ? new Float32Array(t.data.slice().buffer) : reference.dequantize(t.data, { dtype: 'q8_0' });
    const mean = values.reduce((a, b) => a + b, 0) / values.length;
    const sd = Math.sqrt(values.reduce((a, b) => a + (b - mean) ** 2, 0) / values.length);
    // Norm gains near 1; embeddings of unit variance; a weight's σ 1/√(inputs), so a normalized input gives O(1).
    const [wantMean, wantSd] = t.dims.length === 1 ? [1, 0.1] : t.name === 'token_embd.weight' ? [0, 1] : [0, 1 / Math.sqrt(t.dims[0])];
    assert.ok(Math.abs(mean - wantMean) < 4 * wantSd / Math.sqrt(values.length) + 1e-3, `${t.name}: mean ${mean}`);
    assert.ok(Math.abs(sd / wantSd - 1) < 0.1, `${t.name}: σ ${sd}, want ${wantSd}`);
  }
});
