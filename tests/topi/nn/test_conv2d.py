"""topi.nn.pad and topi.nn.conv: TVM's grouped-convolution TIR, NumPy's results."""

import numpy as np
import pytest

from mlckit import te, tir, topi
from mlckit.error import TVMError
from mlckit.ir import assert_structural_equal
from mlckit.script import tir as T

from ...relax.op.numerics import conv2d_nchw, random
from ...te.common import assert_runs_like

I64 = lambda v: tir.IntImm("int64", v)  # noqa: E731


def test_pad_surrounds_the_input_with_the_value():
    A = te.placeholder((2, 3), name="A")
    B = topi.nn.pad(A, [1, 0], [0, 2], pad_value=-1.0)
    assert (B.op.name, B.op.tag) == ("PadInput", "injective,pad")
    a = random((2, 3))
    want = np.pad(a, ((1, 0), (0, 2)), constant_values=-1)
    assert_runs_like(te.create_prim_func([A, B]), [a, np.zeros(want.shape, "float32")], [1],
                     [want])


def test_grouped_conv2d_is_tvms_primfunc():
    X = te.placeholder([I64(2), I64(128), I64(28), I64(28)], name="x")
    W = te.placeholder([I64(64), I64(16), I64(3), I64(3)], name="w")
    Y = topi.nn.conv(X, W, (2, 2), (1, 1, 1, 1), (2, 2), 8, "NCHW", "OIHW")

    @T.prim_func(private=True)
    def expected(x: T.Buffer((T.int64(2), T.int64(128), T.int64(28), T.int64(28)), "float32"),
                 w: T.Buffer((T.int64(64), T.int64(16), T.int64(3), T.int64(3)), "float32"),
                 group_conv2d_nchw: T.Buffer((T.int64(2), T.int64(64), T.int64(13), T.int64(13)), "float32")):
        T.func_attr({"tir.noalias": True})
        pad_temp = T.alloc_buffer((T.int64(2), T.int64(128), T.int64(30), T.int64(30)))
        for i0, i1, i2, i3 in T.grid(T.int64(2), T.int64(128), T.int64(30), T.int64(30)):
            with T.block("pad_temp"):
                v0, v1, v2, v3 = T.axis.remap("SSSS", [i0, i1, i2, i3])
                pad_temp[v0, v1, v2, v3] = T.if_then_else(T.int64(1) <= v2 and v2 < T.int64(29) and T.int64(1) <= v3 and v3 < T.int64(29), x[v0, v1, v2 - T.int64(1), v3 - T.int64(1)], T.float32(0))
        for i0, i1, i2, i3, i4, i5, i6 in T.grid(T.int64(2), T.int64(64), T.int64(13), T.int64(13), T.int64(16), T.int64(3), T.int64(3)):
            with T.block("group_conv2d_nchw"):
                nn, ff, yy, xx, rc, ry, rx = T.axis.remap("SSSSRRR", [i0, i1, i2, i3, i4, i5, i6])
                with T.init():
                    group_conv2d_nchw[nn, ff, yy, xx] = T.float32(0)
                group_conv2d_nchw[nn, ff, yy, xx] = group_conv2d_nchw[nn, ff, yy, xx] + pad_temp[nn, ff // T.int64(8) * T.int64(16) + rc, yy * T.int64(2) + ry * T.int64(2), xx * T.int64(2) + rx * T.int64(2)] * w[ff, rc, ry, rx]

    func = te.create_prim_func([X, W, Y], index_dtype_override="int64")
    assert_structural_equal(func.without_attr("global_symbol"), expected)


@pytest.mark.parametrize("stride, padding, dilation, groups", [
    (1, 0, 1, 1), (2, 1, 1, 1), ((1, 2), (0, 1, 2, 1), (2, 1), 1), (1, 1, 1, 2), (1, "SAME", 1, 1),
])
def test_conv_equals_numpy(stride, padding, dilation, groups):
    X = te.placeholder((1, 4, 7, 7), name="X")
    W = te.placeholder((6, 4 // groups, 3, 3), name="W")
    Y = topi.nn.conv(X, W, stride, padding, dilation, groups, "NCHW", "OIHW")
    x, w = random((1, 4, 7, 7), seed=1), random((6, 4 // groups, 3, 3), seed=2)
    pads = {0: (0, 0, 0, 0), 1: (1, 1, 1, 1), "SAME": (1, 1, 1, 1)}.get(padding, padding)
    strides = (stride, stride) if isinstance(stride, int) else stride
    dilations = (dilation, dilation) if isinstance(dilation, int) else dilation
    want = conv2d_nchw(x, w, strides, pads, dilations, groups).astype("float32")
    assert_runs_like(te.create_prim_func([X, W, Y]), [x, w, np.zeros(want.shape, "float32")],
                     [2], [want], rtol=1e-4, atol=1e-5)


def test_conv_of_channels_not_divisible_by_groups_is_an_error():
    with pytest.raises(TVMError, match=r"topi.nn.conv: the input channels \(3\) are not "
                                       r"divisible by groups=2"):
        topi.nn.conv(te.placeholder((1, 3, 5, 5), name="X"),
                     te.placeholder((4, 1, 3, 3), name="W"), 1, 0, 1, 2, "NCHW", "OIHW")
