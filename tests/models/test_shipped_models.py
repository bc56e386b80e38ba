"""The shipped weights: their layout, and the accuracy they were trained to."""

import numpy as np
import pytest

from mlckit.datasets import DatasetNotFoundError, fashion_mnist
from mlckit.models import fashion_cnn


def _cnn_numpy(params, images):
    """conv2d 3x3 (padding 1) → relu → 2x2 max-pool → linear, written directly in NumPy."""
    n = len(images)
    padded = np.pad(images, ((0, 0), (1, 1), (1, 1)))
    conv = np.zeros((n, 8, 28, 28), "float32")
    for c in range(8):
        for dy in range(3):
            for dx in range(3):
                conv[:, c] += params["conv_w"][c, 0, dy, dx] * padded[:, dy:dy + 28, dx:dx + 28]
        conv[:, c] += params["conv_b"][c]
    pooled = np.maximum(conv, 0).reshape(n, 8, 14, 2, 14, 2).max(axis=(3, 5))
    return pooled.reshape(n, -1) @ params["w"].T + params["b"]


def test_cnn_weights_layout():
    p = fashion_cnn()
    assert {k: v.shape for k, v in p.items()} == {"conv_w": (8, 1, 3, 3), "conv_b": (8,),
                                                  "w": (10, 1568), "b": (10,)}
    assert all(v.dtype == np.float32 for v in p.values())


def test_cnn_classifies_the_test_set_as_trained():
    try:
        test = fashion_mnist("test")
    except DatasetNotFoundError:
        pytest.fail("Fashion-MNIST is needed: install Debian's dataset-fashion-mnist")
    logits = _cnn_numpy(fashion_cnn(), test.images[:2000])
    assert (logits.argmax(1) == test.labels[:2000]).mean() > 0.85
