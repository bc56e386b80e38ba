"""Train the character-level decoder that ``mlckit.models.char_decoder()`` ships, with NumPy
only (forward and backward written out), on a few public-domain nursery rhymes.

Adam on next-character cross-entropy over random 64-character windows, a fixed seed; about
three minutes on one core (with ``OPENBLAS_NUM_THREADS=1``, the same bytes on every run). The
weights are saved as float32 in ``mlckit/models/char_decoder.npz`` under ``CharDecoder``'s
parameter names, with its config and vocabulary.

Usage::

    python scripts/train_decoder.py [--steps 1500] [--out mlckit/models/char_decoder.npz]
"""

from __future__ import annotations

import argparse
import math
import time
from pathlib import Path

import numpy as np

from mlckit.models.decoder import DecoderConfig, DecoderWeights, decoder_numpy, generate_numpy

# Traditional English nursery rhymes (18th-19th century), public domain.
TEXT = """\
Mary had a little lamb,
its fleece was white as snow;
and everywhere that Mary went,
the lamb was sure to go.
It followed her to school one day,
which was against the rule;
it made the children laugh and play
to see a lamb at school.

Twinkle, twinkle, little star,
how I wonder what you are!
Up above the world so high,
like a diamond in the sky.

Humpty Dumpty sat on a wall,
Humpty Dumpty had a great fall;
all the king's horses and all the king's men
couldn't put Humpty together again.

Jack and Jill went up the hill
to fetch a pail of water;
Jack fell down and broke his crown,
and Jill came tumbling after.

Hey diddle diddle,
the cat and the fiddle,
the cow jumped over the moon;
the little dog laughed
to see such sport,
and the dish ran away with the spoon.

Baa, baa, black sheep,
have you any wool?
Yes sir, yes sir,
three bags full.
"""


def init_params(config: DecoderConfig, rng) -> dict:
    d, v = config.n_embd, config.vocab_size

    def normal(*shape):
        return (rng.standard_normal(shape) * 0.02).astype("float32")

    p = {"wte.weight": normal(v, d), "wpe.weight": normal(config.block_size, d)}
    for i in range(config.n_layer):
        pre = f"h.{i}."
        for ln in ("ln_1", "ln_2"):
            p[f"{pre}{ln}.weight"] = np.ones(d, "float32")
            p[f"{pre}{ln}.bias"] = np.zeros(d, "float32")
        for name, (n_out, n_in) in {"attn.c_attn": (3 * d, d), "attn.c_proj": (d, d),
                                    "mlp.c_fc": (4 * d, d), "mlp.c_proj": (d, 4 * d)}.items():
            p[f"{pre}{name}.weight"] = normal(n_out, n_in)
            p[f"{pre}{name}.bias"] = np.zeros(n_out, "float32")
    p["ln_f.weight"], p["ln_f.bias"] = np.ones(d, "float32"), np.zeros(d, "float32")
    p["lm_head.weight"] = normal(v, d)
    return p


# -- layers with their gradients ----------------------------------------------------------------
def ln_forward(x, w, b, eps=1e-5):
    mean = x.mean(-1, keepdims=True)
    rstd = 1 / np.sqrt(((x - mean) ** 2).mean(-1, keepdims=True) + eps)
    xhat = (x - mean) * rstd
    return xhat * w + b, (xhat, rstd, w)


def ln_backward(dy, cache):
    xhat, rstd, w = cache
    dxhat = dy * w
    dx = rstd * (dxhat - dxhat.mean(-1, keepdims=True)
                 - xhat * (dxhat * xhat).mean(-1, keepdims=True))
    return dx, (dy * xhat).reshape(-1, w.size).sum(0), dy.reshape(-1, w.size).sum(0)


def linear_backward(dy, x, w):
    """Gradients of ``x @ w.T + b``: dx, dw, db."""
    return dy @ w, dy.reshape(-1, dy.shape[-1]).T @ x.reshape(-1, x.shape[-1]), \
        dy.reshape(-1, dy.shape[-1]).sum(0)


_C = math.sqrt(2 / math.pi)


def gelu_backward(dy, x):
    t = np.tanh(_C * (x + 0.044715 * x ** 3))
    return dy * (0.5 * (1 + t) + 0.5 * x * (1 - t * t) * _C * (1 + 3 * 0.044715 * x * x))


def loss_and_grads(config: DecoderConfig, p: dict, ids, targets):
    """Mean cross-entropy of predicting ``targets`` from ``ids`` and its gradient for every
    parameter (the forward is ``decoder_numpy``'s, with what the backward needs kept)."""
    b, n = ids.shape
    h, hd, d = config.n_head, config.head_dim, config.n_embd
    scale = 1 / math.sqrt(hd)
    future = np.triu(np.ones((n, n), bool), 1)
    x = p["wte.weight"][ids] + p["wpe.weight"][:n]
    caches = []
    for i in range(config.n_layer):
        pre = f"h.{i}."
        a, ln1 = ln_forward(x, p[pre + "ln_1.weight"], p[pre + "ln_1.bias"])
        qkv = a @ p[pre + "attn.c_attn.weight"].T + p[pre + "attn.c_attn.bias"]
        q, k, v = (t.reshape(b, n, h, hd).transpose(0, 2, 1, 3) for t in np.split(qkv, 3, -1))
        s = np.where(future, -np.inf, q @ k.transpose(0, 1, 3, 2) * scale)
        att = np.exp(s - s.max(-1, keepdims=True))
        att /= att.sum(-1, keepdims=True)
        y = (att @ v).transpose(0, 2, 1, 3).reshape(b, n, d)
        x1 = x + y @ p[pre + "attn.c_proj.weight"].T + p[pre + "attn.c_proj.bias"]
        m, ln2 = ln_forward(x1, p[pre + "ln_2.weight"], p[pre + "ln_2.bias"])
        f = m @ p[pre + "mlp.c_fc.weight"].T + p[pre + "mlp.c_fc.bias"]
        g = 0.5 * f * (1 + np.tanh(_C * (f + 0.044715 * f ** 3)))
        x = x1 + g @ p[pre + "mlp.c_proj.weight"].T + p[pre + "mlp.c_proj.bias"]
        caches.append((ln1, a, q, k, v, att, y, ln2, m, f, g))
    z, lnf = ln_forward(x, p["ln_f.weight"], p["ln_f.bias"])
    logits = z @ p["lm_head.weight"].T
    probs = np.exp(logits - logits.max(-1, keepdims=True))
    probs /= probs.sum(-1, keepdims=True)
    flat_t = targets.reshape(-1)
    flat_p = probs.reshape(-1, config.vocab_size)
    loss = -np.log(flat_p[np.arange(flat_t.size), flat_t] + 1e-12).mean()

    grads = {}
    dlogits = flat_p.copy()
    dlogits[np.arange(flat_t.size), flat_t] -= 1
    dlogits = (dlogits / flat_t.size).reshape(b, n, -1)
    grads["lm_head.weight"] = dlogits.reshape(-1, config.vocab_size).T @ z.reshape(-1, d)
    dx, grads["ln_f.weight"], grads["ln_f.bias"] = ln_backward(dlogits @ p["lm_head.weight"], lnf)
    for i in reversed(range(config.n_layer)):
        pre = f"h.{i}."
        ln1, a, q, k, v, att, y, ln2, m, f, g = caches[i]
        dg, grads[pre + "mlp.c_proj.weight"], grads[pre + "mlp.c_proj.bias"] = \
            linear_backward(dx, g, p[pre + "mlp.c_proj.weight"])
        dm, grads[pre + "mlp.c_fc.weight"], grads[pre + "mlp.c_fc.bias"] = \
            linear_backward(gelu_backward(dg, f), m, p[pre + "mlp.c_fc.weight"])
        dx1, grads[pre + "ln_2.weight"], grads[pre + "ln_2.bias"] = ln_backward(dm, ln2)
        dx1 = dx1 + dx
        dy, grads[pre + "attn.c_proj.weight"], grads[pre + "attn.c_proj.bias"] = \
            linear_backward(dx1, y, p[pre + "attn.c_proj.weight"])
        dy = dy.reshape(b, n, h, hd).transpose(0, 2, 1, 3)
        datt = dy @ v.transpose(0, 1, 3, 2)
        dv = att.transpose(0, 1, 3, 2) @ dy
        ds = att * (datt - (datt * att).sum(-1, keepdims=True)) * scale
        dq, dk = ds @ k, ds.transpose(0, 1, 3, 2) @ q
        dqkv = np.concatenate([t.transpose(0, 2, 1, 3).reshape(b, n, d) for t in (dq, dk, dv)], -1)
        da, grads[pre + "attn.c_attn.weight"], grads[pre + "attn.c_attn.bias"] = \
            linear_backward(dqkv, a, p[pre + "attn.c_attn.weight"])
        dxa, grads[pre + "ln_1.weight"], grads[pre + "ln_1.bias"] = ln_backward(da, ln1)
        dx = dx1 + dxa
    grads["wte.weight"] = np.zeros_like(p["wte.weight"])
    np.add.at(grads["wte.weight"], ids.reshape(-1), dx.reshape(-1, d))
    grads["wpe.weight"] = np.zeros_like(p["wpe.weight"])
    grads["wpe.weight"][:n] = dx.sum(0)
    return float(loss), grads


def train(steps: int, seed: int = 0, batch: int = 16, lr: float = 3e-3):
    vocab = "".join(sorted(set(TEXT)))
    config = DecoderConfig(vocab_size=len(vocab))
    data = np.array([vocab.index(c) for c in TEXT], "int64")
    rng = np.random.default_rng(seed)
    p = init_params(config, rng)
    m = {k: np.zeros_like(v) for k, v in p.items()}
    s = {k: np.zeros_like(v) for k, v in p.items()}
    n = config.block_size
    for step in range(1, steps + 1):
        starts = rng.integers(0, len(data) - n - 1, batch)
        ids = np.stack([data[i:i + n] for i in starts])
        targets = np.stack([data[i + 1:i + n + 1] for i in starts])
        loss, grads = loss_and_grads(config, p, ids, targets)
        rate = lr * min(1.0, step / 100) * (0.1 + 0.9 * (1 + math.cos(math.pi * step / steps)) / 2)
        for k in p:
            m[k] = 0.9 * m[k] + 0.1 * grads[k]
            s[k] = 0.999 * s[k] + 0.001 * grads[k] ** 2
            mhat, shat = m[k] / (1 - 0.9 ** step), s[k] / (1 - 0.999 ** step)
            p[k] = (p[k] - rate * mhat / (np.sqrt(shat) + 1e-8)).astype("float32")
        if step % 100 == 0 or step == 1:
            print(f"step {step:5d}  loss {loss:.3f}", flush=True)
    return DecoderWeights(config, vocab, p)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=1500)
    root = Path(__file__).resolve().parents[1]
    parser.add_argument("--out", type=Path, default=root / "mlckit/models/char_decoder.npz")
    args = parser.parse_args()
    t0 = time.perf_counter()
    weights = train(args.steps)
    print(f"trained in {time.perf_counter() - t0:.0f} s")
    # the saved weights are the ones the reference forward reads
    ids = np.array([[weights.vocab.index(c) for c in TEXT[:64]]])
    assert decoder_numpy(weights.config, weights.params, ids).shape == (1, 64, len(weights.vocab))
    for prompt in ("Mary had", "Jack and", "Twinkle"):
        print(repr(generate_numpy(weights, prompt, 40)))
    config = {f"config.{k}": np.int64(getattr(weights.config, k)) for k in
              ("vocab_size", "block_size", "n_layer", "n_head", "n_embd")}
    np.savez_compressed(args.out, vocab=np.array(weights.vocab), **config, **weights.params)
    print(f"saved {args.out} ({args.out.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
