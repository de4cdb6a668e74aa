// The GGUF models the llama.cpp engines run (models.mk writes them into
// build/models/):
//   node models.js tiny FORMAT OUT.gguf     the tutorial's tiny Llama (web/model/), FORMAT f32, bf16 or q8_0
//   node models.js wide FORMAT OUT.gguf --ggml-quantize PATH
//                                          a Llama of decode width with seeded weights, FORMAT q8_0 or q4_k
// Both are llama.cpp's llama architecture with tokenizer.ggml.model "none":
// llama.cpp then has no tokenizer and takes token ids as they are.
//
// Which type each tensor gets is decided here, once, per tensor: norms (1-D)
// stay F32, as llama.cpp's converter keeps them; a 2-D weight takes the
// file's type when its row (ggml's ne[0], the input dim) is a whole number
// of that type's blocks, else F32 (the tiny model's ffn_down: 176 inputs).
// Q8_0 blocks are the package's `quantize`, whose bytes
// tests/ggml-reference.test.js holds to ggml's quantize_row_q8_0_ref; Q4_K
// blocks are ggml's own (ggml_quantize.c).

import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { init, quantize } from '../../index.js';
import { loadWeights } from '../../../web/model/llama.js';
import { ggufBytes, GGML_TYPES } from './gguf.js';

const FILE_TYPE = { f32: 0, bf16: 32, q8_0: 7, q4_k: 14 }; // llama_ftype: ALL_F32, MOSTLY_BF16, MOSTLY_Q8_0, MOSTLY_Q4_K_S
const TENSOR_TYPE = { f32: 'F32', bf16: 'BF16', q8_0: 'Q8_0', q4_k: 'Q4_K' };
export const TINY_FORMATS = ['f32', 'bf16', 'q8_0'];
export const WIDE_FORMATS = ['q8_0', 'q4_k'];

/** The tutorial's tensor names (web/model/train.py) → llama.cpp's. */
const TINY_NAMES = {
  tok_embeddings: 'token_embd', norm: 'output_norm', output: 'output',
  attention_norm: 'attn_norm', wq: 'attn_q', wk: 'attn_k', wv: 'attn_v', wo: 'attn_output',
  ffn_norm: 'ffn_norm', w1: 'ffn_gate', w3: 'ffn_up', w2: 'ffn_down',
};

/** A tutorial tensor name as llama.cpp's GGUF name (`layers.2.wq` → `blk.2.attn_q.weight`). */
export function ggufName(name) {
  const layer = /^layers\.(\d+)\.(\w+)$/.exec(name);
  if (layer) return `blk.${layer[1]}.${TINY_NAMES[layer[2]]}.weight`;
  return `${TINY_NAMES[name]}.weight`;
}

/**
 * The decode-width model: TinyLlama-1.1B's widths (dim 2048, 32 query heads
 * of 64 over 4 KV heads, hidden 5632), two layers, a 256-token vocabulary.
 */
export const WIDE_CONFIG = Object.freeze({
  vocab_size: 256, dim: 2048, n_layers: 2, n_heads: 32, n_kv_heads: 4, hidden_dim: 5632,
  max_seq_len: 2048, norm_eps: 1e-5, rope_theta: 10000, seed: 20261205,
});

/** llama.cpp's metadata for a Llama of `config` (the tutorial's config keys). */
function llamaMetadata(name, config, format) {
  const u32 = (key, value) => ({ key, type: 'uint32', value });
  const f32 = (key, value) => ({ key, type: 'float32', value });
  return [
    { key: 'general.architecture', type: 'string', value: 'llama' },
    { key: 'general.name', type: 'string', value: name },
    u32('general.file_type', FILE_TYPE[format]),
    u32('llama.vocab_size', config.vocab_size),
    u32('llama.context_length', config.max_seq_len),
    u32('llama.embedding_length', config.dim),
    u32('llama.block_count', config.n_layers),
    u32('llama.feed_forward_length', config.hidden_dim),
    u32('llama.attention.head_count', config.n_heads),
    u32('llama.attention.head_count_kv', config.n_kv_heads ?? config.n_heads),
    u32('llama.rope.dimension_count', config.dim / config.n_heads),
    f32('llama.rope.freq_base', config.rope_theta),
    f32('llama.attention.layer_norm_rms_epsilon', config.norm_eps),
    { key: 'tokenizer.ggml.model', type: 'string', value: 'none' },
  ];
}

/** The type a tensor of `dims` (ggml's ne) gets in a file of `format`. */
export function tensorType(format, dims) {
  const type = TENSOR_TYPE[format];
  if (dims.length === 1) return 'F32';
  return dims[0] % GGML_TYPES[type].blockValues === 0 ? type : 'F32';
}

const bytesOf = (array) => new Uint8Array(array.buffer, array.byteOffset, array.byteLength);

/**
 * A tensor's bytes in `type` from its float32 values (and, for BF16, the
 * checkpoint's own bits). `quantizeQ4K(values, rowLength)` makes Q4_K.
 */
function tensorBytes(type, values, { bfloat16, rowLength, quantizeQ4K }) {
  if (type === 'F32') return bytesOf(values);
  if (type === 'BF16') return bytesOf(bfloat16);
  if (type === 'Q8_0') return quantize(values, { dtype: 'q8_0' });
  return quantizeQ4K(values, rowLength);
}

/** The tiny Llama (web/model/weights.json and weights.bin) as a GGUF of `format`. */
export function tinyLlamaGguf(manifest, weightBytes, format) {
  const weights = loadWeights(manifest, weightBytes);
  const tensors = manifest.tensors.map(({ name, shape }) => {
    const dims = [...shape].reverse(); // torch's [out, in] is ggml's ne [in, out]
    const type = tensorType(format, dims);
    const data = tensorBytes(type, weights.tensors.get(name), { bfloat16: weights.bfloat16.get(name) });
    return { name: ggufName(name), type, dims, data };
  });
  return ggufBytes({ metadata: llamaMetadata('rmsnorm-wasm tiny Llama', manifest.config, format), tensors });
}

/** xorshift32 from `seed`, as floats in (0, 1]. */
function uniform(seed) {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return ((s >>> 0) + 1) / 4294967296;
  };
}

/** n float32 values ~ N(mean, sigma²), Box-Muller in pairs. */
function normalValues(rand, n, sigma, mean = 0) {
  const out = new Float32Array(n);
  for (let i = 0; i < n; i += 2) {
    const r = sigma * Math.sqrt(-2 * Math.log(rand()));
    const t = 2 * Math.PI * rand();
    out[i] = mean + r * Math.cos(t);
    if (i + 1 < n) out[i + 1] = mean + r * Math.sin(t);
  }
  return out;
}

/**
 * The wide model's tensors as { name, dims, values }: Gaussian weights of
 * standard deviation 1/√(inputs), so that each product of a normalized
 * (RMS 1) vector is O(1); unit-variance embeddings; norm gains near 1.
 * Each tensor has its own seed (the config's, plus its index), so that
 * `keep(name)` can pick some without making the others.
 */
export function wideLlamaTensors(config = WIDE_CONFIG, keep = () => true) {
  const { dim, hidden_dim: hidden, vocab_size: vocab } = config;
  const kv = (dim / config.n_heads) * config.n_kv_heads;
  const specs = [['token_embd.weight', [dim, vocab], 1]];
  for (let l = 0; l < config.n_layers; l++) {
    const blk = (name) => `blk.${l}.${name}.weight`;
    specs.push(
      [blk('attn_norm'), [dim]], [blk('attn_q'), [dim, dim]], [blk('attn_k'), [dim, kv]], [blk('attn_v'), [dim, kv]],
      [blk('attn_output'), [dim, dim]], [blk('ffn_norm'), [dim]], [blk('ffn_gate'), [dim, hidden]],
      [blk('ffn_up'), [dim, hidden]], [blk('ffn_down'), [hidden, dim]],
    );
  }
  specs.push(['output_norm.weight', [dim]], ['output.weight', [dim, vocab]]);
  const tensors = specs.map(([name, dims, sigma], i) => {
    if (!keep(name)) return null;
    const rand = uniform(config.seed + i);
    const n = dims.reduce((a, b) => a * b, 1);
    const values = dims.length === 1 ? normalValues(rand, n, 0.1, 1) : normalValues(rand, n, sigma ?? 1 / Math.sqrt(dims[0]));
    return { name, dims, values };
  });
  return tensors.filter((t) => t !== null);
}

/** The wide model as a GGUF of `format`; `quantizeQ4K` as tensorBytes takes it. */
export function wideLlamaGguf(format, quantizeQ4K, config = WIDE_CONFIG) {
  const tensors = wideLlamaTensors(config).map(({ name, dims, values }) => {
    const type = tensorType(format, dims);
    return { name, type, dims, data: tensorBytes(type, values, { rowLength: dims[0], quantizeQ4K }) };
  });
  return ggufBytes({ metadata: llamaMetadata('rmsnorm-wasm wide Llama (generated weights)', config, format), tensors });
}

/** ggml's own quantizer (build/ggml-quantize) on float32 rows: their blocks of `type`. */
export function ggmlQuantize(tool, type, values, rowLength) {
  const out = execFileSync(tool, [type, String(rowLength)], { input: bytesOf(values), maxBuffer: 2 ** 31 - 1 });
  return new Uint8Array(out.buffer, out.byteOffset, out.byteLength);
}

async function main(argv) {
  const [model, format, out, flag, tool] = argv;
  const usage = 'usage: node models.js tiny (f32|bf16|q8_0) OUT.gguf | wide (q8_0|q4_k) OUT.gguf --ggml-quantize PATH';
  const formats = model === 'tiny' ? TINY_FORMATS : model === 'wide' ? WIDE_FORMATS : [];
  if (!formats.includes(format) || out === undefined || (model === 'wide' && (flag !== '--ggml-quantize' || tool === undefined))) {
    throw new Error(usage);
  }
  await init();
  let file;
  if (model === 'tiny') {
    const dir = new URL('../../../web/model/', import.meta.url);
    const manifest = JSON.parse(readFileSync(new URL('weights.json', dir), 'utf8'));
    const bin = readFileSync(new URL('weights.bin', dir));
    file = tinyLlamaGguf(manifest, bin.buffer.slice(bin.byteOffset, bin.byteOffset + bin.byteLength), format);
  } else {
    file = wideLlamaGguf(format, (values, rowLength) => ggmlQuantize(tool, 'q4_K', values, rowLength));
  }
  writeFileSync(out, file);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  main(process.argv.slice(2)).catch((error) => {
    console.error(error.message);
    process.exit(1);
  });
}
