// The tutorial's tiny Llama in plain JavaScript: one token at a time with a
// KV cache, as an inference engine decodes. Everything but the normalization
// is written here (matrix-vector products, rotary embeddings, causal
// attention, SwiGLU, sampling); every RMSNorm goes through a `norms` object,
// which for the real model is the package on tensors in wasm memory
// (packageNorms) and for the panel's switches a plain-JS variant (norms.js).
// The architecture, the weight layout and the RoPE convention are those of
// web/model/train.py, which the fixtures in tests/fixtures/tiny-llama.json
// check this file against.

import { narrowInto, widenInto } from '../lib/bfloat16.js';

const LAYER_TENSORS = ['attention_norm', 'wq', 'wk', 'wv', 'wo', 'ffn_norm', 'w1', 'w3', 'w2'];

/**
 * Reads the weights file (`bytes`, bfloat16 little-endian, as train.py writes
 * it) described by `manifest` (weights.json): { config, vocab, tensors }, the
 * tensors widened to float32 and keyed by name, plus `bfloat16` (the raw bit
 * patterns, by name).
 */
export function loadWeights(manifest, bytes) {
  if (manifest.dtype !== 'bfloat16') throw new Error(`weights.json: dtype ${manifest.dtype}, expected bfloat16`);
  if (bytes.byteLength !== manifest.values * 2) {
    throw new Error(`weights.bin: ${bytes.byteLength} bytes, the manifest describes ${manifest.values * 2}`);
  }
  const bits = new Uint16Array(bytes.slice(0));
  const tensors = new Map();
  const bfloat16 = new Map();
  for (const { name, shape, offset } of manifest.tensors) {
    const size = shape.reduce((a, b) => a * b, 1);
    const raw = bits.subarray(offset, offset + size);
    bfloat16.set(name, raw);
    tensors.set(name, widenInto(new Float32Array(size), raw));
  }
  return { config: manifest.config, vocab: manifest.vocab, tensors, bfloat16 };
}

/** Fetches weights.json and weights.bin beside this module: { manifest, weights (loadWeights') }. */
export async function fetchWeights() {
  const get = async (file, read) => {
    const response = await fetch(new URL(file, import.meta.url));
    if (!response.ok) throw new Error(`${file}: HTTP ${response.status}`);
    return read(response);
  };
  const [manifest, bytes] = await Promise.all([
    get('weights.json', (r) => r.json()),
    get('weights.bin', (r) => r.arrayBuffer()),
  ]);
  return { manifest, weights: loadWeights(manifest, bytes) };
}

/**
 * The package's kernels as the model's norms, the way an engine calls them:
 * float32 activations and the checkpoint's bfloat16 norm weights as they
 * are (`weightDtype: 'bfloat16'`), in tensors from `alloc()` (zero-copy);
 * `rmsNorm` where nothing is added yet (the first block's input), the fused
 * `addRmsNorm` wherever a sublayer's output joins the residual stream.
 * `api` is an instance of the package's kernels (`createKernels()`, or the
 * package itself once `init()` has run) or its reference
 * (`rmsnorm-wasm/reference`, plain arrays).
 */
export function packageNorms(api, label) {
  const wasm = typeof api.alloc === 'function';
  const arg = (buf) => (wasm ? buf : buf.array);
  const options = (eps, y) => ({ eps, weightDtype: 'bfloat16', out: arg(y) });
  return {
    label,
    buffer: wasm ? (length) => api.alloc(length) : (length) => plainBuffer(length),
    /** A norm weight from its bfloat16 bits. */
    weight: (bits) => {
      const buf = wasm ? api.alloc(bits.length, 'bfloat16') : { array: new Uint16Array(bits.length), free() {} };
      buf.array.set(bits);
      return buf;
    },
    rmsNorm: (x, w, y, eps) => api.rmsNorm(arg(x), arg(w), options(eps, y)),
    addRmsNorm: (h, r, w, y, eps) => api.addRmsNorm(arg(h), arg(r), arg(w), options(eps, y)),
  };
}

/**
 * The package with the activations stored in bfloat16, as a bfloat16 engine
 * keeps them: each buffer the model reads and writes in float32 has a
 * bfloat16 tensor beside it (`alloc(n, 'bfloat16')`); a call narrows its
 * inputs into those (round to nearest even), runs the package with
 * `dtype: 'bfloat16'` (widened, normalized in float32, rounded back: the
 * float32 upcast), and widens the updated residual and the output back.
 * The norm weights, bfloat16 in the weights file, are passed as they are.
 * `api` as for packageNorms (the reference takes plain Uint16Arrays).
 */
export function packageBfloat16Norms(api, label) {
  const wasm = typeof api.alloc === 'function';
  const arg = (buf) => (wasm ? buf.bits : buf.bits.array);
  const narrow = (buf) => narrowInto(buf.bits.array, buf.array);
  const widen = (buf) => widenInto(buf.array, buf.bits.array);
  const options = (eps, y) => ({ eps, dtype: 'bfloat16', out: arg(y) });
  return {
    label,
    buffer: (length) => {
      const bits = wasm ? api.alloc(length, 'bfloat16') : { array: new Uint16Array(length), free() {} };
      return { array: new Float32Array(length), bits, free: () => bits.free() };
    },
    rmsNorm: (x, w, y, eps) => {
      narrow(x);
      narrow(w);
      api.rmsNorm(arg(x), arg(w), options(eps, y));
      widen(x);
      widen(y);
    },
    addRmsNorm: (h, r, w, y, eps) => {
      narrow(h);
      narrow(r);
      narrow(w);
      api.addRmsNorm(arg(h), arg(r), arg(w), options(eps, y));
      widen(r);
      widen(y);
    },
  };
}

/** A buffer shaped like a tensor (`.array`, `.free()`) in ordinary JS memory. */
export function plainBuffer(length) {
  return { array: new Float32Array(length), free() {} };
}

/** cos and sin of pos * theta^(-2i/headDim), in float64 then rounded once, as train.py's rope_tables. */
function ropeTables(config) {
  const headDim = config.dim / config.n_heads;
  const half = headDim / 2;
  const cos = new Float32Array(config.max_seq_len * half);
  const sin = new Float32Array(config.max_seq_len * half);
  for (let pos = 0; pos < config.max_seq_len; pos++) {
    for (let i = 0; i < half; i++) {
      const angle = pos * config.rope_theta ** (-(2 * i) / headDim);
      cos[pos * half + i] = Math.cos(angle);
      sin[pos * half + i] = Math.sin(angle);
    }
  }
  return { cos, sin };
}

/** out = W x, W row-major rows × cols (torch's Linear layout: out × in). */
function matVec(out, w, x, rows, cols) {
  for (let r = 0; r < rows; r++) {
    let acc = 0;
    const base = r * cols;
    for (let c = 0; c < cols; c++) acc += w[base + c] * x[c];
    out[r] = acc;
  }
}

export class TinyLlama {
  /**
   * `weights` from loadWeights; `norms` from packageNorms or norms.js. The
   * norm weights and every activation a norm reads or writes live in
   * norms.buffer(); call free() when done.
   */
  constructor(weights, norms) {
    const { config } = weights;
    this.config = config;
    this.vocab = weights.vocab;
    this.norms = norms;
    this.eps = config.norm_eps;
    const d = config.dim;
    const t = weights.tensors;
    // The norms that take the checkpoint's bfloat16 bits take them as they
    // are; the others, the same values widened to float32.
    const normWeight = (name) => {
      if (norms.weight !== undefined) return norms.weight(weights.bfloat16.get(name));
      const buf = norms.buffer(d);
      buf.array.set(t.get(name));
      return buf;
    };
    this.embedding = t.get('tok_embeddings');
    this.layers = [];
    for (let l = 0; l < config.n_layers; l++) {
      const get = (key) => t.get(`layers.${l}.${key}`);
      const layer = {};
      for (const key of LAYER_TENSORS) layer[key] = key.endsWith('norm') ? normWeight(`layers.${l}.${key}`) : get(key);
      layer.keys = new Float32Array(config.max_seq_len * d);
      layer.values = new Float32Array(config.max_seq_len * d);
      this.layers.push(layer);
    }
    this.finalNorm = normWeight('norm');
    this.output = t.get('output');
    this.rope = ropeTables(config);
    // The residual stream, a sublayer's output, and a norm's output: the
    // three activations the norms touch, in the norms' memory.
    this.residual = norms.buffer(d);
    this.sublayer = norms.buffer(d);
    this.normed = norms.buffer(d);
    this.q = new Float32Array(d);
    this.attn = new Float32Array(d);
    this.scores = new Float32Array(config.max_seq_len);
    this.gate = new Float32Array(config.hidden_dim);
    this.up = new Float32Array(config.hidden_dim);
    this.logits = new Float32Array(config.vocab_size);
    this.pos = 0;
    // Called as onNorm(index, residual, normed) after each norm (index
    // 0..2N): residual holds the stream the norm read (the sum, for the
    // fused add), normed its output.
    this.onNorm = null;
  }

  /** Starts a new sequence (empties the KV cache). */
  reset() {
    this.pos = 0;
  }

  /** Frees the buffers taken from norms.buffer(). */
  free() {
    for (const layer of this.layers) {
      layer.attention_norm.free();
      layer.ffn_norm.free();
    }
    for (const buf of [this.finalNorm, this.residual, this.sublayer, this.normed]) buf.free();
  }

  /** Feeds `token` at the next position; returns the next-token logits (a view, overwritten by the next step). */
  step(token) {
    const { config, norms, eps } = this;
    const d = config.dim;
    const nHeads = config.n_heads;
    const headDim = d / nHeads;
    const half = headDim / 2;
    const hidden = config.hidden_dim;
    const pos = this.pos;
    if (pos >= config.max_seq_len) throw new RangeError(`the model's context is ${config.max_seq_len} tokens`);
    if (!(token >= 0 && token < config.vocab_size)) throw new RangeError(`token ${token} outside the vocabulary`);
    // Tensor views are taken once per step: nothing allocates in wasm
    // memory during a step, so they stay attached until it ends.
    const residual = this.residual.array;
    const sublayer = this.sublayer.array;
    const normed = this.normed.array;
    residual.set(this.embedding.subarray(token * d, (token + 1) * d));
    let normIndex = 0;
    norms.rmsNorm(this.residual, this.layers[0].attention_norm, this.normed, eps);
    if (this.onNorm) this.onNorm(normIndex, residual, normed);

    const { cos, sin } = this.rope;
    const scale = Math.sqrt(headDim);
    for (let l = 0; l < this.layers.length; l++) {
      const layer = this.layers[l];
      // Attention: q, k, v; rotate the pairs (2i, 2i+1) of each head by the position.
      const q = this.q;
      const k = layer.keys.subarray(pos * d, (pos + 1) * d);
      const v = layer.values.subarray(pos * d, (pos + 1) * d);
      matVec(q, layer.wq, normed, d, d);
      matVec(k, layer.wk, normed, d, d);
      matVec(v, layer.wv, normed, d, d);
      for (const vec of [q, k]) {
        for (let h = 0; h < nHeads; h++) {
          for (let i = 0; i < half; i++) {
            const a = h * headDim + 2 * i;
            const x0 = vec[a];
            const x1 = vec[a + 1];
            const c = cos[pos * half + i];
            const s = sin[pos * half + i];
            vec[a] = x0 * c - x1 * s;
            vec[a + 1] = x0 * s + x1 * c;
          }
        }
      }
      const attn = this.attn;
      const scores = this.scores;
      for (let h = 0; h < nHeads; h++) {
        const off = h * headDim;
        let max = -Infinity;
        for (let t = 0; t <= pos; t++) {
          let dot = 0;
          for (let i = 0; i < headDim; i++) dot += q[off + i] * layer.keys[t * d + off + i];
          scores[t] = dot / scale;
          if (scores[t] > max) max = scores[t];
        }
        let sum = 0;
        for (let t = 0; t <= pos; t++) {
          scores[t] = Math.exp(scores[t] - max);
          sum += scores[t];
        }
        for (let i = 0; i < headDim; i++) {
          let acc = 0;
          for (let t = 0; t <= pos; t++) acc += scores[t] * layer.values[t * d + off + i];
          attn[off + i] = acc / sum;
        }
      }
      matVec(sublayer, layer.wo, attn, d, d);
      norms.addRmsNorm(this.sublayer, this.residual, layer.ffn_norm, this.normed, eps);
      if (this.onNorm) this.onNorm(++normIndex, residual, normed);

      // SwiGLU: w2(silu(w1 m) * w3 m).
      matVec(this.gate, layer.w1, normed, hidden, d);
      matVec(this.up, layer.w3, normed, hidden, d);
      for (let i = 0; i < hidden; i++) {
        const g = this.gate[i];
        this.gate[i] = (g / (1 + Math.exp(-g))) * this.up[i];
      }
      matVec(sublayer, layer.w2, this.gate, d, hidden);
      const next = l + 1 < this.layers.length ? this.layers[l + 1].attention_norm : this.finalNorm;
      norms.addRmsNorm(this.sublayer, this.residual, next, this.normed, eps);
      if (this.onNorm) this.onNorm(++normIndex, residual, normed);
    }
    matVec(this.logits, this.output, normed, config.vocab_size, d);
    this.pos++;
    return this.logits;
  }

  /** Token ids of `text` (characters of the vocabulary; '.' is the start and end token). */
  encode(text) {
    return [...text].map((ch) => {
      const id = this.vocab.indexOf(ch);
      if (id < 0) throw new RangeError(`'${ch}' is not in the vocabulary`);
      return id;
    });
  }

  /**
   * Continues `prompt` until the end token or the context is full, choosing
   * each token by `choose(logits)`; returns the name (prompt included).
   */
  complete(prompt, choose) {
    this.reset();
    const ids = [0, ...this.encode(prompt)];
    let logits;
    for (const id of ids) logits = this.step(id);
    let text = prompt;
    while (this.pos < this.config.max_seq_len) {
      const next = choose(logits);
      if (next === 0) break;
      text += this.vocab[next];
      logits = this.step(next);
    }
    return text;
  }
}

/** The index of the largest logit (the first one on a tie, as torch.argmax). */
export function argmax(logits) {
  let best = 0;
  for (let i = 1; i < logits.length; i++) if (logits[i] > logits[best]) best = i;
  return best;
}

/**
 * A sampler at `temperature` drawing from `rand` (a [0, 1) generator):
 * softmax(logits / temperature), or argmax at temperature 0.
 */
export function sampler(temperature, rand) {
  return (logits) => {
    if (temperature === 0) return argmax(logits);
    const probs = softmax(logits, temperature);
    let u = rand();
    for (let i = 0; i < probs.length; i++) {
      u -= probs[i];
      if (u < 0) return i;
    }
    return probs.length - 1;
  };
}

/** softmax(logits / temperature) in float64. */
export function softmax(logits, temperature = 1) {
  let max = -Infinity;
  for (const v of logits) max = Math.max(max, v / temperature);
  const probs = new Float64Array(logits.length);
  let sum = 0;
  for (let i = 0; i < logits.length; i++) {
    probs[i] = Math.exp(logits[i] / temperature - max);
    sum += probs[i];
  }
  for (let i = 0; i < probs.length; i++) probs[i] /= sum;
  return probs;
}
