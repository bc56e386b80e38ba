"""topi.nn.nll_loss: the picked, weighted losses and their reductions, against NumPy."""

import numpy as np
import pytest

from mlckit import te, topi
from mlckit.error import TVMError

from ...relax.op.numerics import random
from ...relax.op.test_loss import nll_numpy
from ...te.common import assert_runs_like


@pytest.mark.parametrize("reduction", ["none", "sum", "mean"])
def test_nll_loss_of_a_2d_batch(reduction):
    P = te.placeholder((3, 2, 4), name="P")
    Tg = te.placeholder((3, 4), name="T", dtype="int32")
    W = te.placeholder((2,), name="W")
    L = topi.nn.nll_loss(P, Tg, W, reduction, ignore_index=1)
    p, w = random((3, 2, 4), seed=1), random((2,), seed=2, low=0.5, high=2)
    t = np.array([[0, 1, 0, 0], [1, 0, 0, 1], [0, 0, 1, 0]], "int32")
    want = np.asarray(nll_numpy(p, t, w, reduction, ignore_index=1), "float32")
    assert_runs_like(te.create_prim_func([P, Tg, W, L]),
                     [p, t, w, np.zeros(want.shape, "float32")], [3], [want], rtol=1e-5)


def test_nll_loss_refuses_an_unknown_reduction():
    P, Tg, W = (te.placeholder((3, 2), name="P"), te.placeholder((3,), "int32", name="T"),
                te.placeholder((2,), name="W"))
    with pytest.raises(TVMError, match="topi.nn.nll_loss: reduction 'max' must be one of"):
        topi.nn.nll_loss(P, Tg, W, "max", -100)
