"""A kernel's ``for i in range(...)`` loops compile as counted loops: the values Python's
``range`` gives, in the integer type Numba's ``range`` gives, without its trip-count
division and zero-step check; any other use of ``range`` is Numba's own."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import njit

from mlckit.backend import numba_cpu
from mlckit.backend.numba_cpu.kernel_pipeline import Compiler, KernelCompiler

from ...kernels import mm_relu


def _types(dispatcher) -> dict:
    """``{variable: Numba type name}`` of ``dispatcher``'s one compiled version."""
    (cres,) = dispatcher.overloads.values()
    return {name: str(ty) for name, ty in cres.type_annotation.typemap.items()}


def _walk(start, stop):
    total, count, last = 0, 0, -1
    for i in range(start, stop):
        total += i * 3
        count += 1
        last = i
    return total, count, last


def _walk_from_zero(stop):
    count, last = 0, -1
    for i in range(stop):
        count += 1
        last = i
    return count, last


def _nested(n, m):
    total = 0
    for i in range(n):
        for j in range(i, m):
            total += i * m + j
    return total


WALK = njit(pipeline_class=KernelCompiler)(_walk)
WALK_FROM_ZERO = njit(pipeline_class=KernelCompiler)(_walk_from_zero)
NESTED = njit(pipeline_class=KernelCompiler)(_nested)


def test_a_kernels_loops_are_counted_and_compute_what_they_did():
    f = numba_cpu.build(mm_relu, cache=False)
    assert "for i in range(128):" in f.source  # the source the learner reads says range
    kinds = set(_types(f.dispatcher).values())
    assert "counted_range_iter(int64)" in kinds
    assert not any(kind.startswith("range_") for kind in kinds)
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal((128, 128)).astype("float32") for _ in range(2))
    c = np.empty((128, 128), "float32")
    f(a, b, c)
    np.testing.assert_allclose(c, np.maximum(a @ b, 0), rtol=1e-4, atol=1e-4)


@settings(max_examples=60, deadline=None)
@given(st.integers(-40, 40), st.integers(-40, 40))
def test_a_counted_loop_runs_as_pythons_range(start, stop):
    assert WALK(start, stop) == _walk(start, stop)  # empty and negative ranges included
    assert WALK_FROM_ZERO(stop) == _walk_from_zero(stop)
    assert NESTED(start % 7, stop % 9) == _nested(start % 7, stop % 9)


def _count_and_last(start, stop):
    count, last = 0, start
    for i in range(start, stop):
        count += 1
        last = i
    return count, last


def test_the_loop_variable_has_the_type_numbas_range_gives():
    for bounds in ((np.int32(2), np.int32(9)), (np.int64(2), np.int32(9)),
                   (np.uint64(2), np.uint64(9))):
        counted = njit(pipeline_class=KernelCompiler)(_count_and_last)
        numbas = njit(pipeline_class=Compiler)(_count_and_last)
        assert counted(*bounds) == numbas(*bounds) == (7, 8)
        assert _types(counted)["i"] == _types(numbas)["i"]
        assert _types(counted)["i"] == str(np.result_type(*bounds))


def test_an_unsigned_loop_compares_unsigned():
    # from 2**63 on, the index is past int64's range: a signed comparison would stop there
    counted = njit(pipeline_class=KernelCompiler)(_count_and_last)
    count, last = counted(np.uint64(2**63 - 2), np.uint64(2**63 + 1))
    assert (count, int(last)) == (3, 2**63)


def test_a_range_used_other_than_by_a_loop_stays_numbas():
    def length_and_odds(n):
        r = range(n)  # a range object kept and measured: Numba's own
        odds = 0
        for i in range(1, n, 2):  # a step: Numba's own
            odds += i
        return len(r), odds

    f = njit(pipeline_class=KernelCompiler)(length_and_odds)
    assert f(9) == length_and_odds(9) == (9, 16)
    kinds = set(_types(f).values())
    assert {"range_state_int64", "range_iter_int64"} <= kinds
    assert not any(kind.startswith("counted_range") for kind in kinds)
