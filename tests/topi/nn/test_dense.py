"""topi.nn.dense / topi.nn.matmul: TVM's T_matmul_* computes, batching, bias, errors."""

import numpy as np
import pytest

import mlckit
from mlckit import te, topi
from mlckit.ir import assert_structural_equal
from mlckit.script import tir as T

from ...te.common import assert_runs_like


def test_dense_is_matmul_nt_with_the_weight_layout_free():
    X = te.placeholder((4, 8), name="X")
    W = te.placeholder((16, 8), name="W")
    Y = topi.nn.dense(X, W)
    assert (Y.op.name, Y.op.tag) == ("T_matmul_NT", "dense")

    @T.prim_func
    def expected(X: T.Buffer((4, 8), "float32"), W: T.Buffer((16, 8), "float32"),
                 T_matmul_NT: T.Buffer((4, 16), "float32")):
        T.func_attr({"global_symbol": "main", "tir.noalias": True, "layout_free_buffers": [1]})
        for i0, i1, k in T.grid(4, 16, 8):
            with T.block("T_matmul_NT"):
                v_i0, v_i1, v_k = T.axis.remap("SSR", [i0, i1, k])
                with T.init():
                    T_matmul_NT[v_i0, v_i1] = T.float32(0)
                T_matmul_NT[v_i0, v_i1] = T_matmul_NT[v_i0, v_i1] + X[v_i0, v_k] * W[v_i1, v_k]

    func = te.create_prim_func([X, W, Y])
    assert_structural_equal(func, expected)
    x = np.linspace(-1, 1, 32, dtype="float32").reshape(4, 8)
    w = np.linspace(-2, 2, 128, dtype="float32").reshape(16, 8)
    assert_runs_like(func, [x, w, np.zeros((4, 16), "float32")], [2], [x @ w.T], rtol=1e-5)


def test_course_linear_layer_dense_then_add():
    """The course's ``bb.emit_te(topi.nn.dense, x, w)`` then ``topi.add(y, b)``."""
    X = te.placeholder((1, 784), name="X")
    W = te.placeholder((128, 784), name="W")
    B = te.placeholder((128,), name="B")
    Y = topi.add(topi.nn.dense(X, W), B)
    x = np.random.default_rng(0).standard_normal((1, 784)).astype("float32")
    w = np.random.default_rng(1).standard_normal((128, 784)).astype("float32") / 28
    b = np.arange(128, dtype="float32") / 128
    assert_runs_like(te.create_prim_func([X, W, B, Y]), [x, w, b, np.zeros((1, 128), "float32")],
                     [3], [x @ w.T + b], rtol=1e-4, atol=1e-4)


def test_dense_with_bias_and_out_dtype():
    X = te.placeholder((2, 3), "int8", name="X")
    W = te.placeholder((4, 3), "int8", name="W")
    b = te.placeholder((4,), "int8", name="b")
    Y = topi.nn.dense(X, W, b, out_dtype="int32")
    assert Y.dtype == "int32"
    x = np.array([[1, -2, 3], [100, 100, 100]], "int8")
    w = np.array([[1, 1, 1], [2, 0, -1], [127, 127, 127], [0, 0, 1]], "int8")
    bias = np.array([1, 2, 3, 4], "int8")
    want = x.astype("int32") @ w.astype("int32").T + bias
    assert_runs_like(te.create_prim_func([X, W, b, Y]), [x, w, bias, np.zeros((2, 4), "int32")],
                     [3], [want])


@pytest.mark.parametrize("transpose_a, transpose_b, name", [
    (False, False, "T_matmul_NN"), (True, False, "T_matmul_TN"), (True, True, "T_matmul_TT"),
])
def test_nn_matmul_transposes(transpose_a, transpose_b, name):
    a = np.arange(12, dtype="float32").reshape(3, 4) / 10
    b = np.arange(20, dtype="float32").reshape(4, 5) / 10
    a_in = a.T.copy() if transpose_a else a
    b_in = b.T.copy() if transpose_b else b
    A = te.placeholder(a_in.shape, name="A")
    B = te.placeholder(b_in.shape, name="B")
    C = topi.nn.matmul(A, B, transpose_a=transpose_a, transpose_b=transpose_b)
    assert C.op.name == name and C.op.tag == "matmul"
    assert_runs_like(te.create_prim_func([A, B, C]), [a_in, b_in, np.zeros((3, 5), "float32")],
                     [2], [a @ b], rtol=1e-5)


def test_batched_matmul_broadcasts_batch_dimensions():
    A = te.placeholder((2, 1, 3, 4), name="A")
    B = te.placeholder((5, 4, 2), name="B")
    C = topi.nn.matmul(A, B)
    a = np.arange(24, dtype="float32").reshape(2, 1, 3, 4) / 10
    b = np.arange(40, dtype="float32").reshape(5, 4, 2) / 10
    want = np.matmul(a, b)
    assert tuple(int(s) for s in C.shape) == want.shape
    assert_runs_like(te.create_prim_func([A, B, C]), [a, b, np.zeros(want.shape, "float32")],
                     [2], [want], rtol=1e-5)


def test_symbolic_batch_dense():
    n = te.var("n")
    X = te.placeholder((n, 6), name="X")
    W = te.placeholder((3, 6), name="W")
    Y = topi.nn.dense(X, W)
    x = np.arange(30, dtype="float32").reshape(5, 6) / 10
    w = np.arange(18, dtype="float32").reshape(3, 6) / 10
    assert_runs_like(te.create_prim_func([X, W, Y]), [x, w, np.zeros((5, 3), "float32")], [2],
                     [x @ w.T], rtol=1e-5)


def test_dense_refuses_mismatched_features():
    X = te.placeholder((4, 8), name="X")
    W = te.placeholder((16, 7), name="W")
    with pytest.raises(mlckit.TVMError, match=r"reduction dimensions differ \(8 vs 7\)"):
        topi.nn.dense(X, W)


def test_matmul_refuses_one_dimensional_inputs():
    with pytest.raises(mlckit.TVMError, match="at least 2 dimensions"):
        topi.nn.matmul(te.placeholder((4,), name="a"), te.placeholder((4, 2), name="b"))
