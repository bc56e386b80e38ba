"""topi.nn.dilate and the transposed convolutions: TVM's stages, NumPy's results."""

import numpy as np
import pytest

from mlckit import te, topi
from mlckit.error import TVMError

from ...relax.op.numerics import random
from ...relax.op.test_conv2d_transpose import conv2d_transpose_numpy
from ...te.common import assert_runs_like


def test_dilate_puts_zeros_between_the_elements():
    A = te.placeholder((2, 3), name="A")
    B = topi.nn.dilate(A, [1, 2], name="data_dilate")
    assert [int(d) for d in B.shape] == [2, 5] and B.op.name == "data_dilate"
    a = random((2, 3))
    want = np.zeros((2, 5), "float32")
    want[:, ::2] = a
    assert_runs_like(te.create_prim_func([A, B]), [a, np.zeros((2, 5), "float32")], [1], [want])


def test_dilate_needs_one_stride_per_dimension():
    with pytest.raises(TVMError, match=r"topi.nn.dilate: 3 strides for data \(2, 3\) of rank 2"):
        topi.nn.dilate(te.placeholder((2, 3), name="A"), [1, 2, 2])


@pytest.mark.parametrize("groups", [1, 2])
def test_conv2d_transpose_stages_and_numbers(groups):
    X = te.placeholder((1, 4, 3, 3), name="X")
    W = te.placeholder((4, 3, 3, 3), name="W")
    Y = topi.nn.group_conv2d_transpose_nchw(X, W, 2, (1, 0, 0, 1), None, (1, 0), groups)
    func = te.create_prim_func([X, W, Y])
    names = {"data_dilate", "data_pad", "kernel_transform", "compute"}
    assert names <= set(func.script().replace('"', " ").split())
    x, w = random((1, 4, 3, 3), seed=1), random((4, 3, 3, 3), seed=2)
    want = conv2d_transpose_numpy(x, w, (2, 2), (1, 0, 0, 1), (1, 0), groups=groups)
    assert [int(d) for d in Y.shape] == list(want.shape)
    assert_runs_like(func, [x, w, np.zeros(want.shape, "float32")], [2], [want], rtol=1e-4,
                     atol=1e-5)


def test_conv2d_transpose_refuses_output_padding_reaching_the_stride():
    X, W = te.placeholder((1, 2, 3, 3), name="X"), te.placeholder((2, 2, 3, 3), name="W")
    with pytest.raises(TVMError, match=r"output_padding \(1, 1\) must be less than the strides "
                                       r"\(1, 1\)"):
        topi.nn.conv2d_transpose_nchw(X, W, 1, 0, None, (1, 1))
