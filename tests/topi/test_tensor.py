"""topi.full / full_like: every element is the fill value, converted once to the dtype."""

import numpy as np
import pytest

from mlckit import te, tir, topi
from mlckit.ir import assert_structural_equal
from mlckit.script import tir as T


def _run(func, *arrays):
    from mlckit.driver import build

    mod = build(func, "lnumpy")
    mod["main"](*arrays)
    return arrays[-1]


def test_full_with_a_python_number_is_a_folded_constant():
    out = topi.full((2, 3), "int32", 3.7)
    func = te.create_prim_func([out])

    @T.prim_func
    def main(T_full: T.Buffer((2, 3), "int32")):
        T.func_attr({"tir.noalias": True})
        for ax0, ax1 in T.grid(2, 3):
            with T.block("T_full"):
                v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
                T.reads()
                T.writes(T_full[v_ax0, v_ax1])
                T_full[v_ax0, v_ax1] = 3

    assert_structural_equal(func, main)
    assert out.op.tag == "elemwise"


def test_full_of_a_scalar_tensor_casts_its_element():
    v = te.placeholder((), "float32", "v")
    out = topi.full((4,), "int32", v)
    got = _run(te.create_prim_func([v, out]), np.array(2.9, "float32"), np.zeros(4, "int32"))
    np.testing.assert_array_equal(got, np.full(4, 2, "int32"))


def test_full_like_takes_shape_and_dtype_of_its_input():
    n = tir.Var("n", "int32")
    x = te.placeholder((n, 3), "float32", "x")
    out = topi.full_like(x, 1.5)
    assert out.dtype == "float32" and out.op.name == "T_full_like"
    got = _run(te.create_prim_func([x, out]), np.zeros((2, 3), "float32"),
               np.zeros((2, 3), "float32"))
    np.testing.assert_array_equal(got, np.full((2, 3), 1.5, "float32"))


def test_bad_fill_values_are_refused():
    with pytest.raises(ValueError, match="infinite and NaN fill values require a float dtype"):
        topi.full((2,), "int32", float("inf"))
    with pytest.raises(ValueError, match="the fill value must be a scalar"):
        topi.full((2,), "int32", te.placeholder((2,), "int32", "v"))
