"""topi.nn.pool2d and topi.nn.adaptive_pool: TVM's TIR for max pooling (NHWC) and global
average pooling, NumPy's results."""

import numpy as np
import pytest

from mlckit import te, tir, topi
from mlckit.ir import assert_structural_equal
from mlckit.script import tir as T

from ...relax.op.numerics import pool2d_nchw, random
from ...te.common import assert_runs_like

I64 = lambda v: tir.IntImm("int64", v)  # noqa: E731


def test_max_pool2d_in_nhwc_is_tvms_primfunc():
    X = te.placeholder([I64(4), I64(112), I64(112), I64(6)], name="x")
    Y = topi.nn.pool2d(X, [3, 3], [2, 2], [1, 1], [1, 1, 1, 1], "max", False, "NHWC")

    @T.prim_func(private=True)
    def expected(x: T.Buffer((T.int64(4), T.int64(112), T.int64(112), T.int64(6)), "float32"),
                 pool_max: T.Buffer((T.int64(4), T.int64(56), T.int64(56), T.int64(6)), "float32")):
        T.func_attr({"tir.noalias": True})
        pad_temp = T.alloc_buffer((T.int64(4), T.int64(114), T.int64(114), T.int64(6)))
        for i0, i1, i2, i3 in T.grid(T.int64(4), T.int64(114), T.int64(114), T.int64(6)):
            with T.block("pad_temp"):
                ax0, ax1, ax2, ax3 = T.axis.remap("SSSS", [i0, i1, i2, i3])
                pad_temp[ax0, ax1, ax2, ax3] = T.if_then_else(T.int64(1) <= ax1 and ax1 < T.int64(113) and T.int64(1) <= ax2 and ax2 < T.int64(113), x[ax0, ax1 - T.int64(1), ax2 - T.int64(1), ax3], T.float32(-3.4028234663852886e+38))
        for i0, i1, i2, i3, i4, i5 in T.grid(T.int64(4), T.int64(56), T.int64(56), T.int64(6), T.int64(3), T.int64(3)):
            with T.block("pool_max"):
                ax0, ax1, ax2, ax3, rv0, rv1 = T.axis.remap("SSSSRR", [i0, i1, i2, i3, i4, i5])
                T.block_attr({"schedule_rule": "meta_schedule.pool_max"})
                with T.init():
                    pool_max[ax0, ax1, ax2, ax3] = T.float32(-3.4028234663852886e+38)
                pool_max[ax0, ax1, ax2, ax3] = T.max(pool_max[ax0, ax1, ax2, ax3], pad_temp[ax0, ax1 * T.int64(2) + rv0, ax2 * T.int64(2) + rv1, ax3])

    func = te.create_prim_func([X, Y], index_dtype_override="int64")
    assert_structural_equal(func.without_attr("global_symbol"), expected)


def test_global_average_pool_is_tvms_primfunc():
    X = te.placeholder([I64(2), I64(4), I64(7), I64(7)], name="x")
    Y = topi.nn.global_pool(X, "avg")

    @T.prim_func(private=True)
    def expected(x: T.Buffer((T.int64(2), T.int64(4), T.int64(7), T.int64(7)), "float32"),
                 adaptive_pool_avg: T.Buffer((T.int64(2), T.int64(4), T.int64(1), T.int64(1)), "float32")):
        T.func_attr({"tir.noalias": True})
        adaptive_pool_sum = T.alloc_buffer((T.int64(2), T.int64(4), T.int64(1), T.int64(1)))
        for i0, i1, i2, i3, i4, i5 in T.grid(T.int64(2), T.int64(4), T.int64(1), T.int64(1), T.int64(7), T.int64(7)):
            with T.block("adaptive_pool_sum"):
                ax0, ax1, ax2, ax3, rv0, rv1 = T.axis.remap("SSSSRR", [i0, i1, i2, i3, i4, i5])
                with T.init():
                    adaptive_pool_sum[ax0, ax1, ax2, ax3] = T.float32(0)
                adaptive_pool_sum[ax0, ax1, ax2, ax3] = adaptive_pool_sum[ax0, ax1, ax2, ax3] + x[ax0, ax1, ax2 * T.int64(7) + rv0, ax3 * T.int64(7) + rv1]
        for i0, i1, i2, i3 in T.grid(T.int64(2), T.int64(4), T.int64(1), T.int64(1)):
            with T.block("adaptive_pool_avg"):
                ax0, ax1, ax2, ax3 = T.axis.remap("SSSS", [i0, i1, i2, i3])
                T.block_attr({"schedule_rule": "meta_schedule.adaptive_pool_avg"})
                adaptive_pool_avg[ax0, ax1, ax2, ax3] = adaptive_pool_sum[ax0, ax1, ax2, ax3] / T.float32(49)

    func = te.create_prim_func([X, Y], index_dtype_override="int64")
    assert_structural_equal(func.without_attr("global_symbol"), expected)


@pytest.mark.parametrize("kind, kernel, stride, dilation, padding, ceil_mode, count_pad", [
    ("max", (2, 2), (2, 2), (1, 1), (0, 0, 0, 0), False, True),
    ("max", (3, 3), (2, 2), (1, 1), (0, 0, 0, 0), True, True),
    ("avg", (3, 3), (2, 2), (1, 1), (1, 1, 1, 1), False, False),
    ("avg", (3, 3), (2, 2), (1, 1), (1, 1, 1, 1), False, True),
    ("avg", (2, 2), (1, 1), (2, 2), (1, 0, 1, 0), True, False),
])
def test_pool2d_equals_numpy(kind, kernel, stride, dilation, padding, ceil_mode, count_pad):
    X = te.placeholder((1, 2, 7, 7), name="X")
    Y = topi.nn.pool2d(X, kernel, stride, dilation, padding, kind, ceil_mode, "NCHW", count_pad)
    x = random((1, 2, 7, 7), seed=3)
    want = pool2d_nchw(x, kind, kernel, stride, padding, dilation, ceil_mode,
                       count_pad).astype("float32")
    assert tuple(int(d) for d in Y.shape) == want.shape
    assert_runs_like(te.create_prim_func([X, Y]), [x, np.zeros(want.shape, "float32")], [1],
                     [want], rtol=1e-5, atol=1e-6)
