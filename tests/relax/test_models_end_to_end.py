"""Whole models written with high-level Relax operators, built by the default pipeline and run
on the VM: a CNN on Fashion-MNIST (the shipped weights) and a transformer block — each equal
to the same model in NumPy."""

import math

import numpy as np
import pytest

import mlckit as tvm
from mlckit import relax
from mlckit.datasets import DatasetNotFoundError, fashion_mnist
from mlckit.models import fashion_cnn
from mlckit.script import ir as I  # noqa: N812
from mlckit.script import relax as R
from mlckit.script import tir as T


@I.ir_module
class CNN:
    @R.function
    def main(x: R.Tensor(("n", 1, 28, 28), "float32"), conv_w: R.Tensor((8, 1, 3, 3), "float32"),
             conv_b: R.Tensor((8,), "float32"), w: R.Tensor((10, 1568), "float32"),
             b: R.Tensor((10,), "float32")):
        n = T.int64()
        with R.dataflow():
            conv = R.nn.conv2d(x, conv_w, strides=1, padding=1)
            conv = R.add(conv, R.reshape(conv_b, (1, 8, 1, 1)))
            act = R.nn.relu(conv)
            pooled = R.nn.max_pool2d(act, pool_size=(2, 2), strides=(2, 2))
            flat = R.reshape(pooled, (n, 1568))
            logits = R.add(R.matmul(flat, R.permute_dims(w)), b)
            R.output(logits)
        return logits


def _cnn_numpy(p, images):
    n = len(images)
    padded = np.pad(images[:, 0], ((0, 0), (1, 1), (1, 1)))
    conv = np.zeros((n, 8, 28, 28), "float32")
    for c in range(8):
        for dy in range(3):
            for dx in range(3):
                conv[:, c] += p["conv_w"][c, 0, dy, dx] * padded[:, dy:dy + 28, dx:dx + 28]
        conv[:, c] += p["conv_b"][c]
    pooled = np.maximum(conv, 0).reshape(n, 8, 14, 2, 14, 2).max(axis=(3, 5))
    return pooled.reshape(n, -1) @ p["w"].T + p["b"]


def test_cnn_on_fashion_mnist_equals_numpy():
    try:
        test = fashion_mnist("test")
    except DatasetNotFoundError:
        pytest.fail("Fashion-MNIST is needed: install Debian's dataset-fashion-mnist")
    images = test.images[:64].reshape(64, 1, 28, 28)
    p = fashion_cnn()
    vm = relax.VirtualMachine(tvm.compile(CNN, target="llvm"), tvm.cpu())
    got = vm["main"](images, p["conv_w"], p["conv_b"], p["w"], p["b"]).numpy()
    expected = _cnn_numpy(p, images)
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)
    assert (got.argmax(1) == test.labels[:64]).mean() > 0.8


@I.ir_module
class TransformerBlock:
    @R.function
    def main(x: R.Tensor((8, 16), "float32"), wq: R.Tensor((16, 16), "float32"),
             wk: R.Tensor((16, 16), "float32"), wv: R.Tensor((16, 16), "float32"),
             w1: R.Tensor((16, 32), "float32"), w2: R.Tensor((32, 16), "float32"),
             gamma: R.Tensor((16,), "float32"), beta: R.Tensor((16,), "float32")):
        with R.dataflow():
            h = R.nn.layer_norm(x, gamma, beta, axes=[-1], epsilon=1e-5)
            q = R.matmul(h, wq)
            k = R.matmul(h, wk)
            v = R.matmul(h, wv)
            scores = R.multiply(R.matmul(q, R.permute_dims(k)), R.const(0.25, "float32"))
            attn = R.matmul(R.nn.softmax(scores, axis=-1), v)
            x1 = R.add(x, attn)
            h1 = R.nn.layer_norm(x1, gamma, beta, axes=[-1], epsilon=1e-5)
            out = R.add(x1, R.matmul(R.nn.gelu(R.matmul(h1, w1)), w2))
            R.output(out)
        return out


def _erf(x):
    return np.vectorize(math.erf, otypes=[np.float64])(x)


def _transformer_numpy(x, wq, wk, wv, w1, w2, gamma, beta):
    def layer_norm(t):
        mean = t.mean(-1, keepdims=True)
        var = t.var(-1, keepdims=True)
        return (t - mean) / np.sqrt(var + 1e-5) * gamma + beta

    def softmax(t):
        e = np.exp(t - t.max(-1, keepdims=True))
        return e / e.sum(-1, keepdims=True)

    def gelu(t):
        return 0.5 * t * (1 + _erf(t / math.sqrt(2)))

    h = layer_norm(x)
    q, k, v = h @ wq, h @ wk, h @ wv
    x1 = x + softmax(q @ k.T * 0.25) @ v
    return x1 + gelu(layer_norm(x1) @ w1) @ w2


def test_transformer_block_equals_numpy():
    rng = np.random.default_rng(0)
    shapes = [(8, 16), (16, 16), (16, 16), (16, 16), (16, 32), (32, 16), (16,), (16,)]
    args = [rng.standard_normal(s).astype("float32") * 0.5 for s in shapes]
    vm = relax.VirtualMachine(tvm.compile(TransformerBlock, target="llvm"), tvm.cpu())
    got = vm["main"](*args).numpy()
    expected = _transformer_numpy(*[a.astype("float64") for a in args])
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)
