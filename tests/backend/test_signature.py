"""Signature: a kernel's argument check is done once per shapes and dtypes, and still rejects
every call that differs from the last accepted one."""

import numpy as np
import pytest

from mlckit.backend import ArgumentError
from mlckit.backend.signature import Signature

from . import kernels as K


def _arrays(n, m, dtype="float32"):
    return [np.zeros((n, 16), dtype), np.zeros((16, m), dtype), np.zeros((n, m), dtype)]


def test_a_repeated_call_returns_the_symbolic_values_of_the_first():
    sig = Signature(K.mm_symbolic, "mm_symbolic")
    _, env = sig.check(_arrays(5, 3))
    values, again = sig.check(_arrays(5, 3))
    assert again == env and sorted(env.values()) == [3, 5]
    assert all(isinstance(v, np.ndarray) for v in values)


def test_new_sizes_are_checked_again():
    sig = Signature(K.mm_symbolic, "mm_symbolic")
    sig.check(_arrays(5, 3))
    _, env = sig.check(_arrays(2, 7))
    assert sorted(env.values()) == [2, 7]


@pytest.mark.parametrize("bad, match", [
    ([np.zeros((5, 16), "float32"), np.zeros((16, 3), "float32"), np.zeros((5, 4), "float32")],
     r"dimension 1 is 4, but the symbolic size m = 3"),
    (_arrays(5, 3, "float64"), r"expected dtype float32, got float64"),
    ([np.zeros((5, 16), "float32"), np.zeros((16, 3), "float32")], r"takes 3 arguments"),
    ([np.zeros((5, 16), "float32"), [[0.0] * 3] * 16, np.zeros((5, 3), "float32")],
     r"must be a NumPy array"),
])
def test_after_an_accepted_call_a_wrong_one_is_still_rejected(bad, match):
    sig = Signature(K.mm_symbolic, "mm_symbolic")
    sig.check(_arrays(5, 3))
    with pytest.raises(ArgumentError, match=match):
        sig.check(bad)
