"""Trained weights shipped with mlckit, for the course's end-to-end examples.

Example::

    from mlckit.models import fashion_mlp
    params = fashion_mlp()            # {"w0": (128, 784), "b0": (128,), "w1": (10, 128), "b1": (10,)}
    logits = np.maximum(x @ params["w0"].T + params["b0"], 0) @ params["w1"].T + params["b1"]
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


__all__ = ["fashion_mlp"]
