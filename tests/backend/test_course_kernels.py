"""Course kernels agree across lnumpy, numba_cpu and NumPy."""

from __future__ import annotations

import numpy as np
import pytest

import mlckit

from . import kernels as K

BACKENDS = ["lnumpy", "llvm"]
rng = np.random.default_rng(0)


def rand(*shape):
    return rng.uniform(-1, 1, size=shape).astype("float32")


def run(func, target, *arrays, out_shape):
    out = np.full(out_shape, np.nan, dtype="float32")
    mlckit.build(func, target=target)(*arrays, out)
    return out


@pytest.mark.parametrize("target", BACKENDS)
def test_mm_relu(target):
    a, b = rand(32, 48), rand(48, 40)
    out = run(K.mm_relu_small, target, a, b, out_shape=(32, 40))
    np.testing.assert_allclose(out, np.maximum(a @ b, 0), rtol=1e-5, atol=1e-6)


def test_mm_relu_128_numba():
    a, b = rand(128, 128), rand(128, 128)
    out = run(K.mm_relu, "llvm", a, b, out_shape=(128, 128))
    np.testing.assert_allclose(out, np.maximum(a @ b, 0), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("target", BACKENDS)
def test_linear_with_bias(target):
    x, w, bias = rand(4, 64), rand(32, 64), rand(32)
    out = run(K.linear, target, x, w, bias, out_shape=(4, 32))
    np.testing.assert_allclose(out, x @ w.T + bias, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("target", BACKENDS)
def test_relu(target):
    a = rand(1024)
    np.testing.assert_array_equal(run(K.relu, target, a, out_shape=(1024,)), np.maximum(a, 0))


@pytest.mark.parametrize("target", BACKENDS)
def test_softmax_with_reductions_and_alloc_buffer(target):
    a = rand(8, 64) * 4
    out = run(K.softmax, target, a, out_shape=(8, 64))
    np.testing.assert_allclose(out, K.softmax_numpy(a), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("target", BACKENDS)
def test_conv2d_nchw(target):
    x, k = rand(1, 3, 8, 8), rand(4, 3, 3, 3)
    out = run(K.conv2d_nchw, target, x, k, out_shape=(1, 4, 6, 6))
    np.testing.assert_allclose(out, K.conv2d_numpy(x, k), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("target", BACKENDS)
@pytest.mark.parametrize("n, m", [(1, 3), (7, 16), (33, 5)])
def test_symbolic_shape_kernel_at_three_sizes(target, n, m):
    a, b = rand(n, 16), rand(16, m)
    out = run(K.mm_symbolic, target, a, b, out_shape=(n, m))
    np.testing.assert_allclose(out, a @ b, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("target", BACKENDS)
def test_hand_tiled_mm_relu_with_loop_kinds(target):
    a, b = rand(32, 32), rand(32, 32)
    out = run(K.mm_relu_tiled, target, a, b, out_shape=(32, 32))
    np.testing.assert_allclose(out, np.maximum(a @ b, 0), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("target", BACKENDS)
def test_block_local_alloc_and_where_predicate(target):
    a = rand(6, 10)
    out = run(K.row_sum_local, target, a, out_shape=(6,))
    np.testing.assert_allclose(out, a.sum(axis=1), rtol=1e-5, atol=1e-6)


def test_nd_arrays_are_accepted_and_written_in_place():
    a, b = mlckit.nd.array(rand(32, 48)), mlckit.nd.array(rand(48, 40))
    c = mlckit.nd.empty((32, 40), "float32")
    for target in BACKENDS:
        mlckit.build(K.mm_relu_small, target=target)["mm_relu_small"](a, b, c)
        np.testing.assert_allclose(c.numpy(), np.maximum(a.numpy() @ b.numpy(), 0), rtol=1e-5,
                                   atol=1e-6)
