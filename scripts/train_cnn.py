"""Train the small CNN that ``mlckit.models.fashion_cnn()`` ships, with NumPy only.

conv2d (1 → 8 channels, 3×3, padding 1, NCHW / OIHW) → relu → max_pool2d (2×2, stride 2) →
flatten → linear (8·14·14 = 1568 → 10, ``x @ w.T + b``), trained by mini-batch Adam on
cross-entropy with a fixed seed.  The convolution is an ``im2col`` matrix product, so an
epoch takes well under a minute on a laptop.  Weights are saved as float32 in
``mlckit/models/fashion_cnn.npz``: ``conv_w`` (8, 1, 3, 3), ``conv_b`` (8,), ``w`` (10, 1568),
``b`` (10,).

Usage::

    python scripts/train_cnn.py [--epochs 3] [--out mlckit/models/fashion_cnn.npz]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from mlckit.datasets import fashion_mnist

CHANNELS, KERNEL = 8, 3


def patches(images: np.ndarray) -> np.ndarray:
    """(B, 28, 28) → (B, 28, 28, 9): the 3×3 neighbourhood of every pixel (zero padded)."""
    padded = np.pad(images, ((0, 0), (1, 1), (1, 1)))
    return sliding_window_view(padded, (KERNEL, KERNEL), axis=(1, 2)).reshape(
        *images.shape, KERNEL * KERNEL)


def forward(params, images):
    """Logits and what the backward pass needs."""
    cols = patches(images)
    conv = cols @ params["conv_w"].reshape(CHANNELS, -1).T + params["conv_b"]  # (B, 28, 28, C)
    conv = conv.transpose(0, 3, 1, 2)                                         # NCHW
    act = np.maximum(conv, 0)
    b = len(images)
    windows = act.reshape(b, CHANNELS, 14, 2, 14, 2)
    pooled = windows.max(axis=(3, 5))
    flat = pooled.reshape(b, -1)
    logits = flat @ params["w"].T + params["b"]
    return logits, (cols, conv, windows, pooled, flat)


def gradients(params, images, labels):
    logits, (cols, conv, windows, pooled, flat) = forward(params, images)
    p = np.exp(logits - logits.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    p[np.arange(len(labels)), labels] -= 1
    g_logits = p / len(labels)
    grads = {"w": g_logits.T @ flat, "b": g_logits.sum(0)}
    g_pooled = (g_logits @ params["w"]).reshape(pooled.shape)
    # max-pool: the gradient goes to the window's maximum (split between ties)
    mask = windows == pooled[:, :, :, None, :, None]
    mask = mask / mask.sum(axis=(3, 5), keepdims=True)
    g_act = (mask * g_pooled[:, :, :, None, :, None]).reshape(conv.shape)
    g_conv = (g_act * (conv > 0)).transpose(0, 2, 3, 1)                     # (B, 28, 28, C)
    grads["conv_w"] = np.einsum("bhwk,bhwc->ck", cols, g_conv).reshape(CHANNELS, 1, KERNEL, KERNEL)
    grads["conv_b"] = g_conv.sum(axis=(0, 1, 2))
    return grads


def accuracy(params, images, labels, batch: int = 1000) -> float:
    hits = sum(int((forward(params, images[i:i + batch])[0].argmax(1) == labels[i:i + batch]).sum())
               for i in range(0, len(images), batch))
    return hits / len(images)


def train(epochs: int = 3, batch: int = 128, lr: float = 2e-3, seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    train_set, test_set = fashion_mnist("train"), fashion_mnist("test")
    x, y = train_set.images.astype(np.float32), train_set.labels
    params = {
        "conv_w": rng.normal(0, np.sqrt(2 / 9), (CHANNELS, 1, KERNEL, KERNEL)),
        "conv_b": np.zeros(CHANNELS),
        "w": rng.normal(0, np.sqrt(2 / 1568), (10, 1568)), "b": np.zeros(10),
    }
    params = {k: v.astype(np.float32) for k, v in params.items()}
    m = {k: np.zeros_like(v) for k, v in params.items()}
    v = {k: np.zeros_like(p) for k, p in params.items()}
    step = 0
    for epoch in range(epochs):
        order = rng.permutation(len(x))
        for start in range(0, len(x), batch):
            idx = order[start:start + batch]
            grads = gradients(params, x[idx], y[idx])
            step += 1
            for k in params:  # Adam
                m[k] = 0.9 * m[k] + 0.1 * grads[k]
                v[k] = 0.999 * v[k] + 0.001 * grads[k] ** 2
                mhat, vhat = m[k] / (1 - 0.9 ** step), v[k] / (1 - 0.999 ** step)
                params[k] = (params[k] - lr * mhat / (np.sqrt(vhat) + 1e-8)).astype(np.float32)
        acc = accuracy(params, test_set.images, test_set.labels)
        print(f"epoch {epoch + 1}: test accuracy {acc:.4f}")
    return params


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default=str(Path(__file__).resolve().parents[1] / "mlckit" /
                                              "models" / "fashion_cnn.npz"))
    args = parser.parse_args()
    params = train(args.epochs, seed=args.seed)
    np.savez_compressed(args.out, **params)
    test = fashion_mnist("test")
    print(f"saved {args.out}: test accuracy {accuracy(params, test.images, test.labels):.4f}")


if __name__ == "__main__":
    main()
