"""Trained weights shipped with mlckit, for the course's end-to-end examples.

Example::

    from mlckit.models import fashion_mlp
    params = fashion_mlp()            # {"w0": (128, 784), "b0": (128,), "w1": (10, 128), "b1": (10,)}
    logits = np.maximum(x @ params["w0"].T + params["b0"], 0) @ params["w1"].T + params["b1"]

``fashion_cnn()`` is a small convolutional network for the same data (conv-relu-pool-linear).

The same models written as ``relax.frontend.nn`` modules are in ``mlckit.models.fashion``
(``FashionMLP``, ``FashionCNN``); a GPT-2-style character decoder, its NumPy reference and
its trained weights are in ``mlckit.models.decoder``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

_HERE = Path(__file__).resolve().parent


def fashion_mlp() -> dict[str, np.ndarray]:
    """The 784-128-10 MLP trained on Fashion-MNIST by ``scripts/train_mlp.py`` (float32
    weights in the course's layout: ``linear(x) = x @ w.T + b``).

    Example::

        w = fashion_mlp(); w["w0"].shape     # (128, 784)
    """
    with np.load(_HERE / "fashion_mlp.npz") as data:
        return {k: np.ascontiguousarray(data[k]) for k in ("w0", "b0", "w1", "b1")}


def fashion_cnn() -> dict[str, np.ndarray]:
    """The small CNN trained on Fashion-MNIST by ``scripts/train_cnn.py``: conv2d (1 → 8,
    3×3, padding 1; ``conv_w`` OIHW (8, 1, 3, 3), ``conv_b`` (8,)) → relu → max_pool2d
    (2×2, stride 2) → flatten → linear (``w`` (10, 1568), ``b`` (10,)).

    Example::

        w = fashion_cnn(); w["conv_w"].shape     # (8, 1, 3, 3)
    """
    with np.load(_HERE / "fashion_cnn.npz") as data:
        return {k: np.ascontiguousarray(data[k]) for k in ("conv_w", "conv_b", "w", "b")}


__all__ = ["fashion_cnn", "fashion_mlp"]
