"""``flat_view(A)``: a C-contiguous array's elements as one row, in Numba-compiled code,
the same memory as ``A.reshape((A.size,))``."""

from __future__ import annotations

import numpy as np
import pytest
from numba import njit, prange
from numba.core.errors import TypingError

from mlckit.backend.numba_cpu.views import flat_view


@njit
def _scale_in_place(A, factor):
    A_1 = flat_view(A)
    for i in range(A_1.shape[0]):
        A_1[i] = A_1[i] * factor
    return A_1.shape[0], A_1.strides[0]


@njit
def _row_sum(A):
    A_1 = flat_view(A)
    s = 0.0
    for i in range(A_1.shape[0]):
        s += A_1[i]
    return s


@pytest.mark.parametrize("shape", [(4, 8), (2, 3, 5), (1, 1), (0, 3)])
def test_the_view_is_every_element_in_order_and_writes_reach_the_array(shape):
    a = np.arange(np.prod(shape), dtype="float32").reshape(shape)
    expected = a * np.float32(3)
    size, stride = _scale_in_place(a, np.float32(3))
    assert (size, stride) == (a.size, a.itemsize)
    np.testing.assert_array_equal(a, expected)


def test_a_read_only_array_can_be_read_through_its_view():
    a = np.arange(12, dtype="float64").reshape(3, 4)
    a.setflags(write=False)
    assert _row_sum(a) == a.sum()


def test_an_array_that_is_not_c_contiguous_is_refused_when_typed():
    fortran = np.asfortranarray(np.arange(12, dtype="float32").reshape(3, 4))
    with pytest.raises(TypingError, match="flat_view"):
        _row_sum(fortran)


@njit(parallel=True)
def _fill_in_parallel(C, value):
    C_1 = flat_view(C)
    for j in prange(C_1.shape[0]):
        C_1[j] = value


def test_writes_through_the_view_in_a_prange_loop_are_kept():
    # Numba's parallel pass drops a loop whose writes go to an array it thinks is new:
    # the view is registered as the memory of its argument
    c = np.full((3, 5), 99, "float32")
    _fill_in_parallel(c, np.float32(0.5))
    np.testing.assert_array_equal(c, np.full((3, 5), 0.5, "float32"))


@njit
def _slice_and_index(A):
    A_1 = flat_view(A)
    head = A_1[0:3]          # a slice of the view: an ordinary array
    return head[-1], A_1[A_1.shape[0] - 1]


def test_a_slice_of_the_view_is_an_ordinary_array():
    a = np.arange(12, dtype="int32").reshape(3, 4)
    assert _slice_and_index(a) == (2, 11)
    typ = _slice_and_index.nopython_signatures[0]
    assert str(typ.return_type) == "UniTuple(int32 x 2)"
