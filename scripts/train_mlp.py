"""Train the 784-128-10 MLP that ``mlckit.models.fashion_mlp()`` ships, with NumPy only.

Plain mini-batch Adam on cross-entropy, a fixed seed, a few epochs; the weights are saved
as float32 in ``mlckit/models/fashion_mlp.npz`` (w0 (128, 784), b0 (128,), w1 (10, 128),
b1 (10,)), the layout of the MLC course (``linear(x) = x @ w.T + b``).

Usage::

    python scripts/train_mlp.py [--epochs 8] [--out mlckit/models/fashion_mlp.npz]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from mlckit.datasets import fashion_mnist


def forward(params, x):
    h = np.maximum(x @ params["w0"].T + params["b0"], 0)
    return h, h @ params["w1"].T + params["b1"]


def accuracy(params, x, y) -> float:
    return float((forward(params, x)[1].argmax(1) == y).mean())


def train(epochs: int = 8, batch: int = 128, lr: float = 1e-3, seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    train_set, test_set = fashion_mnist("train"), fashion_mnist("test")
    x, y = train_set.flat().astype(np.float64), train_set.labels
    params = {
        "w0": rng.normal(0, np.sqrt(2 / 784), (128, 784)), "b0": np.zeros(128),
        "w1": rng.normal(0, np.sqrt(2 / 128), (10, 128)), "b1": np.zeros(10),
    }
    m = {k: np.zeros_like(v) for k, v in params.items()}
    v = {k: np.zeros_like(p) for k, p in params.items()}
    step = 0
    for epoch in range(epochs):
        order = rng.permutation(len(x))
        for start in range(0, len(x), batch):
            idx = order[start:start + batch]
            xb, yb = x[idx], y[idx]
            h, logits = forward(params, xb)
            p = np.exp(logits - logits.max(1, keepdims=True))
            p /= p.sum(1, keepdims=True)
            p[np.arange(len(yb)), yb] -= 1
            g_logits = p / len(yb)
            grads = {"w1": g_logits.T @ h, "b1": g_logits.sum(0)}
            g_h = (g_logits @ params["w1"]) * (h > 0)
            grads["w0"] = g_h.T @ xb
            grads["b0"] = g_h.sum(0)
            step += 1
            for k in params:  # Adam
                m[k] = 0.9 * m[k] + 0.1 * grads[k]
                v[k] = 0.999 * v[k] + 0.001 * grads[k] ** 2
                mhat, vhat = m[k] / (1 - 0.9 ** step), v[k] / (1 - 0.999 ** step)
                params[k] -= lr * mhat / (np.sqrt(vhat) + 1e-8)
        acc = accuracy(params, test_set.flat().astype(np.float64), test_set.labels)
        print(f"epoch {epoch + 1}: test accuracy {acc:.4f}")
    return {k: val.astype(np.float32) for k, val in params.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=8)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default=str(Path(__file__).resolve().parents[1] / "mlckit" /
                                              "models" / "fashion_mlp.npz"))
    args = parser.parse_args()
    params = train(args.epochs, seed=args.seed)
    np.savez_compressed(args.out, **params)
    test = fashion_mnist("test")
    print(f"saved {args.out}: float32 test accuracy "
          f"{accuracy(params, test.flat(), test.labels):.4f}")


if __name__ == "__main__":
    main()
