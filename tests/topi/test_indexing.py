"""topi.strided_slice, topi.take, topi.concatenate and topi.split against NumPy."""

import numpy as np
import pytest

from mlckit import te, tir, topi
from mlckit.error import TVMError

from ..te.common import assert_runs_like


def arange(shape):
    return np.arange(int(np.prod(shape)), dtype="float32").reshape(shape)


@pytest.mark.parametrize("begin, end, strides, axes, index", [
    ([1, 0], [3, 4], None, None, np.s_[1:3, 0:4]),
    ([-1], [-5], [-1], [1], np.s_[:, -1:-5:-1]),
    ([0], [100], [2], [0], np.s_[0:100:2]),
])
def test_static_strided_slice_is_python_slicing(begin, end, strides, axes, index):
    A = te.placeholder((4, 6), name="A")
    B = topi.strided_slice(A, begin, end, strides, axes)
    a = arange((4, 6))
    want = a[index]
    assert tuple(int(d) for d in B.shape) == want.shape
    assert_runs_like(te.create_prim_func([A, B]), [a, np.zeros(want.shape, "float32")], [1],
                     [want])


def test_strided_slice_of_a_symbolic_dim_clamps_at_run_time():
    n = tir.Var("n", "int32")
    A = te.placeholder((n, 3), name="A")
    B = topi.strided_slice(A, [1], [-1], [1], [0], assume_inbound=False)
    assert B.op.name == "T_dynamic_strided_slice_with_axes"
    a = arange((5, 3))
    assert_runs_like(te.create_prim_func([A, B]), [a, np.zeros((3, 3), "float32")], [1],
                     [a[1:-1]])


@pytest.mark.parametrize("axis, mode, ids, want_ids", [
    (0, "fast", [2, 0, 3], [2, 0, 3]),
    (1, "clip", [-1, 7], [0, 5]),
    (1, "wrap", [-1, 7], [5, 1]),
])
def test_take(axis, mode, ids, want_ids):
    A = te.placeholder((4, 6), name="A")
    I = te.placeholder((len(ids),), "int32", name="I")
    B = topi.take(A, I, axis=axis, mode=mode)
    a = arange((4, 6))
    want = np.take(a, want_ids, axis=axis)
    assert_runs_like(te.create_prim_func([A, I, B]),
                     [a, np.array(ids, "int32"), np.zeros(want.shape, "float32")], [2], [want])


def test_take_of_the_flattened_tensor():
    A = te.placeholder((2, 3), name="A")
    I = te.placeholder((2, 2), "int32", name="I")
    ids = np.array([[5, 0], [3, 1]], "int32")
    assert_runs_like(te.create_prim_func([A, I, topi.take(A, I)]),
                     [arange((2, 3)), ids, np.zeros((2, 2), "float32")], [2],
                     [arange((2, 3)).ravel()[ids]])


def test_concatenate_joins_along_an_axis():
    A, B = te.placeholder((2, 3), name="A"), te.placeholder((2, 2), name="B")
    C = topi.concatenate([A, B], axis=-1)
    assert C.op.name == "T_concat"
    a, b = arange((2, 3)), arange((2, 2)) + 10
    assert_runs_like(te.create_prim_func([A, B, C]), [a, b, np.zeros((2, 5), "float32")], [2],
                     [np.concatenate([a, b], 1)])


@pytest.mark.parametrize("spec, cuts", [(3, [3, 6]), ([1, 4], [1, 4])])
def test_split(spec, cuts):
    """Sections are ceil(7 / 3) = 3 long, the last one shorter (TVM's rule, not
    np.array_split's)."""
    A = te.placeholder((2, 7), name="A")
    outs = topi.split(A, spec, axis=1)
    a = arange((2, 7))
    want = np.split(a, cuts, 1)
    arrays = [a] + [np.zeros(w.shape, "float32") for w in want]
    assert_runs_like(te.create_prim_func([A, *outs]), arrays, list(range(1, len(want) + 1)),
                     want)


def test_split_indices_must_increase():
    with pytest.raises(TVMError, match=r"topi.split: the split indices \(4, 2\) must be "
                                       r"increasing"):
        topi.split(te.placeholder((8,), name="A"), [4, 2])
