"""topi reductions: TVM's compute names (``<input>_red``, ``k<i>`` axes), TVM's argmax TIR,
and NumPy's results."""

import numpy as np
import pytest

from mlckit import te, tir, topi
from mlckit.error import TVMError
from mlckit.ir import assert_structural_equal
from mlckit.script import tir as T

from ..te.common import assert_runs_like

I64 = lambda v: tir.IntImm("int64", v)  # noqa: E731


def arange(shape):
    return (np.arange(int(np.prod(shape)), dtype="float32").reshape(shape) % 7) - 3


@pytest.mark.parametrize("op", ["sum", "max", "min", "prod"])
@pytest.mark.parametrize("axis, keepdims", [(None, False), (1, False), ((0, 2), True),
                                            (-1, False)])
def test_reductions_equal_numpy(op, axis, keepdims):
    A = te.placeholder((2, 3, 4), name="A")
    B = getattr(topi, op)(A, axis, keepdims)
    assert (B.op.name, B.op.tag) == ("A_red", "comm_reduce")
    a = arange((2, 3, 4)) / 4 + 1
    want = getattr(np, op)(a, axis=axis, keepdims=keepdims).astype("float32")
    assert_runs_like(te.create_prim_func([A, B]), [a, np.zeros(want.shape, "float32")], [1],
                     [want])


def test_sum_of_booleans_is_any():
    A = te.placeholder((2, 3), "bool", name="A")
    a = np.array([[False, True, False], [False, False, False]])
    assert_runs_like(te.create_prim_func([A, topi.sum(A, axis=1)]),
                     [a, np.zeros(2, bool)], [1], [a.any(1)])


def test_reduction_axis_out_of_range_names_the_tensor():
    A = te.placeholder((2, 3), name="A")
    with pytest.raises(TVMError, match=r"topi.sum: axis 2 is out of range for 'A' \(2, 3\)"):
        topi.sum(A, axis=2)


def test_argmax_is_tvms_two_block_reduction():
    A = te.placeholder([I64(2), I64(3), I64(4), I64(5)], name="x")
    B = topi.argmax(A, axis=[1])

    @T.prim_func(private=True)
    def expected(x: T.Buffer((T.int64(2), T.int64(3), T.int64(4), T.int64(5)), "float32"),
                 x_red: T.Buffer((T.int64(2), T.int64(4), T.int64(5)), "int64")):
        T.func_attr({"tir.noalias": True})
        x_red_temp_v0 = T.alloc_buffer((T.int64(2), T.int64(4), T.int64(5)), "int64")
        x_red_temp_v1 = T.alloc_buffer((T.int64(2), T.int64(4), T.int64(5)))
        for ax0, ax1, ax2, k1 in T.grid(T.int64(2), T.int64(4), T.int64(5), T.int64(3)):
            with T.block("x_red_temp"):
                v0, v1, v2, vk = T.axis.remap("SSSR", [ax0, ax1, ax2, k1])
                with T.init():
                    x_red_temp_v0[v0, v1, v2] = T.int64(-1)
                    x_red_temp_v1[v0, v1, v2] = T.min_value("float32")
                v_x_red_temp_v0: T.int64 = T.Select(x_red_temp_v1[v0, v1, v2] > x[v0, vk, v1, v2] or x_red_temp_v1[v0, v1, v2] == x[v0, vk, v1, v2] and x_red_temp_v0[v0, v1, v2] < vk, x_red_temp_v0[v0, v1, v2], vk)
                v_x_red_temp_v1: T.float32 = T.Select(x_red_temp_v1[v0, v1, v2] > x[v0, vk, v1, v2], x_red_temp_v1[v0, v1, v2], x[v0, vk, v1, v2])
                x_red_temp_v0[v0, v1, v2] = v_x_red_temp_v0
                x_red_temp_v1[v0, v1, v2] = v_x_red_temp_v1
        for ax0, ax1, ax2 in T.grid(T.int64(2), T.int64(4), T.int64(5)):
            with T.block("x_red"):
                v0, v1, v2 = T.axis.remap("SSS", [ax0, ax1, ax2])
                x_red[v0, v1, v2] = x_red_temp_v0[v0, v1, v2]

    func = te.create_prim_func([A, B], index_dtype_override="int64")
    assert_structural_equal(func.without_attr("global_symbol"), expected)


@pytest.mark.parametrize("op", ["argmax", "argmin"])
def test_argmax_and_argmin_equal_numpy_and_prefer_the_first_of_equals(op):
    A = te.placeholder((3, 4), name="A")
    a = np.array([[1, 5, 5, 0], [2, 2, 2, 2], [0, -1, 3, -1]], "float32")
    B = getattr(topi, op)(A, axis=1)
    assert_runs_like(te.create_prim_func([A, B]), [a, np.zeros(3, "int32")], [1],
                     [getattr(np, op)(a, axis=1).astype("int32")])
