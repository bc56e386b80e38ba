"""topi.nn activations."""

import numpy as np

from mlckit import te, topi
from mlckit.ir import assert_structural_equal
from mlckit.script import tir as T

from ...te.common import assert_runs_like


def test_relu_is_tvms_compute_with_a_typed_zero():
    A = te.placeholder((2, 3), name="A")
    B = topi.nn.relu(A)
    assert (B.op.name, B.op.tag) == ("compute", "elemwise")

    @T.prim_func
    def expected(A: T.Buffer((2, 3), "float32"), compute: T.Buffer((2, 3), "float32")):
        T.func_attr({"tir.noalias": True})
        for i0, i1 in T.grid(2, 3):
            with T.block("compute"):
                v_i0, v_i1 = T.axis.remap("SS", [i0, i1])
                compute[v_i0, v_i1] = T.max(A[v_i0, v_i1], T.float32(0))

    func = te.create_prim_func([A, B])
    assert_structural_equal(func.with_attr("global_symbol", "expected"), expected)
    a = np.linspace(-1, 1, 6, dtype="float32").reshape(2, 3)
    assert_runs_like(func, [a, np.zeros_like(a)], [1], [np.maximum(a, 0)])


def test_relu_of_integers():
    A = te.placeholder((4,), "int32", name="A")
    a = np.array([-2, 0, 3, -1], "int32")
    assert_runs_like(te.create_prim_func([A, topi.nn.relu(A)]), [a, np.zeros(4, "int32")], [1],
                     [np.maximum(a, 0)])


def test_leaky_relu():
    A = te.placeholder((4,), name="A")
    a = np.array([-2, 0, 3, -1], "float32")
    assert_runs_like(te.create_prim_func([A, topi.nn.leaky_relu(A, 0.1)]),
                     [a, np.zeros(4, "float32")], [1], [np.where(a > 0, a, a * 0.1)])
