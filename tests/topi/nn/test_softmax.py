"""topi.nn.softmax and log_softmax: TVM's computes and NumPy's results along any axis."""

import numpy as np
import pytest

from mlckit import te, topi
from mlckit.error import TVMError

from ...te.common import assert_runs_like


def reference(x, axis, log):
    shifted = x - x.max(axis, keepdims=True)
    logsum = np.log(np.exp(shifted).sum(axis, keepdims=True))
    return shifted - logsum if log else np.exp(shifted - logsum)


@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("log", [False, True])
def test_softmax_equals_numpy_and_survives_large_inputs(axis, log):
    A = te.placeholder((3, 4, 5), name="A")
    B = (topi.nn.log_softmax if log else topi.nn.softmax)(A, axis)
    a = np.random.default_rng(axis + 3).uniform(-50, 50, (3, 4, 5)).astype("float32")
    a[0, 0, 0] = 1000.0  # exp(1000) overflows unless the maximum is subtracted first
    assert_runs_like(te.create_prim_func([A, B]), [a, np.zeros_like(a)], [1],
                     [reference(a.astype("float64"), axis, log).astype("float32")],
                     rtol=1e-4, atol=1e-5)


def test_softmax_computes_are_tvms():
    A = te.placeholder((2, 3), name="A")
    B = topi.nn.softmax(A)
    assert (B.op.name, B.op.tag, B.op.attrs) == ("T_softmax_norm", "softmax_output", {"axis": 1})
    blocks = te.create_prim_func([A, B]).script()
    for name in ("T_softmax_maxelem", "T_softmax_exp", "T_softmax_expsum", "T_softmax_norm"):
        assert f'T.block("{name}")' in blocks


def test_softmax_axis_out_of_range_names_the_tensor():
    with pytest.raises(TVMError, match=r"topi.nn.softmax: axis 2 is out of range for 'A' \(2, 3\)"):
        topi.nn.softmax(te.placeholder((2, 3), name="A"), 2)
