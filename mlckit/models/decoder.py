"""A GPT-2-style character-level decoder written with ``relax.frontend.nn``, its NumPy
reference, and greedy generation on the Relax VM.

The model: token + position embeddings, ``n_layer`` blocks of (LayerNorm → causal
multi-head self-attention → residual, LayerNorm → MLP with GELU (tanh form, as GPT-2) →
residual), a final LayerNorm and a linear LM head. ``forward(ids)`` maps int32 ids
``(batch, seq)`` to float32 logits ``(batch, seq, vocab)``, ``seq`` symbolic.

``char_decoder()`` loads the weights that ``scripts/train_decoder.py`` trained (NumPy only,
about three minutes on one core) on a few public-domain nursery rhymes, so that greedy
continuations read as text (the rhymes, nearly by heart).

Generation recomputes the whole sequence at every step (no KV cache): simple, and at these
sizes (≤ 64 tokens) the recomputation is cheap.

Example::

    from mlckit.models.decoder import CharDecoder, char_decoder, compile_decoder, generate
    weights = char_decoder()
    vm, params = compile_decoder(weights)
    generate(vm, params, weights, "Mary had a ", 20)   # 'Mary had a little lamb,\nits fle'
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from mlckit import te, tir
from mlckit.error import TVMValueError
from mlckit.relax.frontend import nn

_HERE = Path(__file__).resolve().parent


@dataclass(frozen=True)
class DecoderConfig:
    """The decoder's sizes: ``vocab_size`` characters, ``block_size`` positions at most,
    ``n_layer`` blocks of ``n_head`` heads over ``n_embd`` features."""

    vocab_size: int
    block_size: int = 64
    n_layer: int = 2
    n_head: int = 4
    n_embd: int = 64

    @property
    def head_dim(self) -> int:
        return self.n_embd // self.n_head


# -- the nn.Module ------------------------------------------------------------------------------
def _first_rows(table: te.Tensor, ids: te.Tensor) -> te.Tensor:
    """The first ``seq`` rows of a position table, ``seq`` from the ids' shape."""
    return te.compute((ids.shape[1], table.shape[1]), lambda i, j: table[i, j], name="wpe_rows")


def _causal_mask(scores: te.Tensor) -> te.Tensor:
    """Scores ``(b, h, i, j)`` with the future (``j > i``) set to the dtype's lowest value,
    so that softmax gives it weight 0."""
    lowest = tir.min_value(scores.dtype)
    return te.compute(scores.shape,
                      lambda b, h, i, j: tir.Select(j <= i, scores[b, h, i, j], lowest),
                      name="causal_mask")


class CausalSelfAttention(nn.Module):
    """Multi-head self-attention in which position ``i`` sees positions ``≤ i``."""

    def __init__(self, config: DecoderConfig):
        self.n_head, self.head_dim = config.n_head, config.head_dim
        self.c_attn = nn.Linear(config.n_embd, 3 * config.n_embd)
        self.c_proj = nn.Linear(config.n_embd, config.n_embd)

    def forward(self, x: nn.Tensor) -> nn.Tensor:
        b, n, d = x.shape
        q, k, v = nn.op.split(self.c_attn(x), 3, axis=2)

        def heads(t):  # (b, n, d) -> (b, heads, n, head_dim)
            return nn.op.permute_dims(nn.op.reshape(t, [b, n, self.n_head, self.head_dim]),
                                      [0, 2, 1, 3])

        q, k, v = heads(q), heads(k), heads(v)
        scores = nn.op.matmul(q, nn.op.permute_dims(k, [0, 1, 3, 2]))
        scores = scores * (1.0 / math.sqrt(self.head_dim))
        scores = nn.op.tensor_expr_op(_causal_mask, "causal_mask", [scores])
        y = nn.op.matmul(nn.op.softmax(scores, axis=-1), v)
        y = nn.op.reshape(nn.op.permute_dims(y, [0, 2, 1, 3]), [b, n, d])
        return self.c_proj(y)


class MLP(nn.Module):
    """``n_embd → 4·n_embd → GELU → n_embd``."""

    def __init__(self, config: DecoderConfig):
        self.c_fc = nn.Linear(config.n_embd, 4 * config.n_embd)
        self.c_proj = nn.Linear(4 * config.n_embd, config.n_embd)

    def forward(self, x: nn.Tensor) -> nn.Tensor:
        return self.c_proj(nn.op.gelu(self.c_fc(x), approximate="tanh"))


class Block(nn.Module):
    """One pre-norm transformer block: attention and MLP, each added to the residual."""

    def __init__(self, config: DecoderConfig):
        self.ln_1 = nn.LayerNorm(config.n_embd)
        self.attn = CausalSelfAttention(config)
        self.ln_2 = nn.LayerNorm(config.n_embd)
        self.mlp = MLP(config)

    def forward(self, x: nn.Tensor) -> nn.Tensor:
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class CharDecoder(nn.Module):
    """The GPT-2-style decoder (see the module doc); parameters named as GPT-2's
    (``wte.weight``, ``h.0.attn.c_attn.weight``, ..., ``lm_head.weight``).

    Example::

        model = CharDecoder(DecoderConfig(vocab_size=40))
        mod, params = model.export_tvm(
            {"forward": {"ids": nn.spec.Tensor((1, "seq"), "int32")}})
    """

    def __init__(self, config: DecoderConfig):
        self.config = config
        self.wte = nn.Embedding(config.vocab_size, config.n_embd)
        self.wpe = nn.Embedding(config.block_size, config.n_embd)
        self.h = nn.ModuleList([Block(config) for _ in range(config.n_layer)])
        self.ln_f = nn.LayerNorm(config.n_embd)
        self.lm_head = nn.Linear(config.n_embd, config.vocab_size, bias=False)

    def forward(self, ids: nn.Tensor) -> nn.Tensor:
        positions = nn.op.tensor_expr_op(_first_rows, "wpe_rows", [self.wpe.weight, ids])
        x = self.wte(ids) + positions
        for block in self.h:
            x = block(x)
        return self.lm_head(self.ln_f(x))

    def spec(self) -> dict:
        """The export spec: ``forward`` on int32 ids ``(1, seq)``, ``seq`` symbolic."""
        return {"forward": {"ids": nn.spec.Tensor((1, "seq"), "int32")}}


# -- weights ------------------------------------------------------------------------------------
@dataclass
class DecoderWeights:
    """Trained weights: the config, the characters (``vocab[i]`` is id ``i``) and the
    parameters by name."""

    config: DecoderConfig
    vocab: str
    params: dict

    def encode(self, text: str) -> np.ndarray:
        """The ids of ``text`` (a clear error for a character outside the vocabulary)."""
        unknown = sorted(set(text) - set(self.vocab))
        if unknown:
            raise TVMValueError(f"the characters {unknown} are not in the decoder's vocabulary "
                                f"{self.vocab!r}")
        return np.array([self.vocab.index(c) for c in text], "int32")

    def decode(self, ids) -> str:
        return "".join(self.vocab[int(i)] for i in ids)


def char_decoder() -> DecoderWeights:
    """The character-level decoder trained by ``scripts/train_decoder.py`` (float32).

    Example::

        w = char_decoder(); w.params["wte.weight"].shape     # (vocab, 64)
    """
    with np.load(_HERE / "char_decoder.npz") as data:
        sizes = {k: int(data[f"config.{k}"]) for k in
                 ("vocab_size", "block_size", "n_layer", "n_head", "n_embd")}
        params = {k: np.ascontiguousarray(data[k]) for k in data.files
                  if not k.startswith(("config.", "vocab"))}
        return DecoderWeights(DecoderConfig(**sizes), str(data["vocab"]), params)


# -- the NumPy reference -------------------------------------------------------------------------
def _layer_norm(x, w, b, eps=1e-5):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * w + b


def gelu_tanh(x):
    """GELU's tanh form, as GPT-2 and ``R.nn.gelu_tanh``."""
    return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))


def decoder_numpy(config: DecoderConfig, params: dict, ids: np.ndarray) -> np.ndarray:
    """The decoder's forward in NumPy, the same computation as ``CharDecoder.forward``:
    ids ``(batch, seq)`` → logits ``(batch, seq, vocab)``."""
    p = params
    b, n = ids.shape
    h, hd = config.n_head, config.head_dim
    x = p["wte.weight"][ids] + p["wpe.weight"][:n]
    future = np.triu(np.ones((n, n), bool), 1)
    for i in range(config.n_layer):
        pre = f"h.{i}."
        a = _layer_norm(x, p[pre + "ln_1.weight"], p[pre + "ln_1.bias"])
        qkv = a @ p[pre + "attn.c_attn.weight"].T + p[pre + "attn.c_attn.bias"]
        q, k, v = (t.reshape(b, n, h, hd).transpose(0, 2, 1, 3) for t in np.split(qkv, 3, -1))
        scores = q @ k.transpose(0, 1, 3, 2) / np.float32(math.sqrt(hd))
        scores = np.where(future, -np.inf, scores)
        scores = np.exp(scores - scores.max(-1, keepdims=True))
        y = (scores / scores.sum(-1, keepdims=True)) @ v
        y = y.transpose(0, 2, 1, 3).reshape(b, n, -1)
        x = x + y @ p[pre + "attn.c_proj.weight"].T + p[pre + "attn.c_proj.bias"]
        m = _layer_norm(x, p[pre + "ln_2.weight"], p[pre + "ln_2.bias"])
        m = gelu_tanh(m @ p[pre + "mlp.c_fc.weight"].T + p[pre + "mlp.c_fc.bias"])
        x = x + m @ p[pre + "mlp.c_proj.weight"].T + p[pre + "mlp.c_proj.bias"]
    x = _layer_norm(x, p["ln_f.weight"], p["ln_f.bias"])
    return (x @ p["lm_head.weight"].T).astype("float32")


# -- compiling and generating ----------------------------------------------------------------
def compile_decoder(weights: DecoderWeights, pipeline=None, target="llvm"):
    """Export ``CharDecoder``, compile it (``relax.get_default_pipeline(target)`` unless
    ``pipeline`` is given) and return ``(vm, params)``: a ``VirtualMachine`` and the
    parameter tensors in ``forward``'s order."""
    import mlckit as tvm
    from mlckit import relax

    model = CharDecoder(weights.config)
    mod, named = model.export_tvm(model.spec())
    if pipeline is None:
        pipeline = relax.get_default_pipeline(target)
    vm = relax.VirtualMachine(tvm.compile(mod, target=target, relax_pipeline=pipeline),
                              tvm.cpu())
    return vm, [tvm.runtime.tensor(weights.params[name]) for name, _ in named]


def run_decoder(vm, params: list, config: DecoderConfig, ids) -> np.ndarray:
    """The compiled ``forward`` on int ids ``(1, seq)``: logits ``(1, seq, vocab)``.

    The ids are checked first: the compiled lookups do not check their indices (as TVM's
    ``R.take`` and a te gather do not), so an id outside the vocabulary or a sequence
    longer than ``block_size`` would read past ``wte`` or ``wpe`` and give garbage.
    """
    import mlckit as tvm

    ids = np.asarray(ids)
    if ids.ndim != 2 or ids.shape[0] != 1 or not 1 <= ids.shape[1] <= config.block_size:
        raise TVMValueError(f"CharDecoder.forward: argument ids has shape {ids.shape}; expected "
                            f"(1, seq) with 1 <= seq <= {config.block_size} (the rows of "
                            f"layer wpe, the position embedding)")
    if ids.min() < 0 or ids.max() >= config.vocab_size:
        raise TVMValueError(f"CharDecoder.forward: argument ids holds {int(ids.min())}.."
                            f"{int(ids.max())}; layer wte (the token embedding) has rows "
                            f"0..{config.vocab_size - 1}")
    return vm["forward"](tvm.runtime.tensor(ids.astype("int32")), *params).numpy()


def generate(vm, params: list, weights: DecoderWeights, prompt: str, max_new: int) -> str:
    """``prompt`` followed by ``max_new`` characters chosen greedily (the most likely next
    one), the compiled ``forward`` run on the last ``block_size`` characters at each step."""
    ids = list(weights.encode(prompt))
    for _ in range(max_new):
        window = np.array([ids[-weights.config.block_size:]], "int32")
        ids.append(int(run_decoder(vm, params, weights.config, window)[0, -1].argmax()))
    return weights.decode(ids)


def generate_numpy(weights: DecoderWeights, prompt: str, max_new: int) -> str:
    """``generate`` with ``decoder_numpy`` in place of the compiled model."""
    ids = list(weights.encode(prompt))
    for _ in range(max_new):
        window = np.array([ids[-weights.config.block_size:]], "int32")
        ids.append(int(decoder_numpy(weights.config, weights.params, window)[0, -1].argmax()))
    return weights.decode(ids)


__all__ = ["Block", "CausalSelfAttention", "CharDecoder", "DecoderConfig", "DecoderWeights", "MLP",
           "char_decoder", "compile_decoder", "decoder_numpy", "generate", "generate_numpy",
           "run_decoder"]
