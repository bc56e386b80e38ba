"""compute_at keeps the moved block's own T.where: a block guarded by a non-dividing split
reads past its buffer without it (TVM 0.27 drops the guard and computes out of bounds)."""

import numpy as np
import pytest

import mlckit
from mlckit import tir
from mlckit.ir import assert_structural_equal
from mlckit.script import tir as T
from mlckit.tir.schedule import ScheduleError

from .common import check, verify_numeric


@T.prim_func
def row_sum(A: T.Buffer((4, 300), "float32"), B: T.Buffer((4,), "float32")):
    for i, k in T.grid(4, 300):
        with T.block("B"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                B[vi] = T.float32(0)
            B[vi] = B[vi] + A[vi, vk]


@T.prim_func
def row_sum_rfactor_at_row(A: T.Buffer((4, 300), "float32"), B: T.Buffer((4,), "float32")):
    B_rf = T.alloc_buffer((128, 4))
    for i in range(4):
        for ax0, ax1 in T.grid(128, 3):
            with T.block("B_rf"):
                vk_1, vi, vk_0 = T.axis.remap("SSR", [ax0, i, ax1])
                T.where(ax1 * 128 + ax0 < 300)
                T.reads(A[vi, vk_0 * 128 + vk_1])
                T.writes(B_rf[vk_1, vi])
                with T.init():
                    B_rf[vk_1, vi] = T.float32(0)
                B_rf[vk_1, vi] = B_rf[vk_1, vi] + A[vi, vk_0 * 128 + vk_1]
        for k_1 in range(128):
            with T.block("B"):
                vk_1, vi = T.axis.remap("RS", [k_1, i])
                T.reads(B_rf[vk_1, vi])
                T.writes(B[vi])
                with T.init():
                    B[vi] = T.float32(0)
                B[vi] = B[vi] + B_rf[vk_1, vi]


def rfactor_then_compute_at_row():
    sch = tir.Schedule(row_sum)
    i, k = sch.get_loops("B")
    k0, k1 = sch.split(k, [None, 128])
    rf = sch.rfactor(k1, 0)
    sch.compute_at(rf, sch.get_loops("B")[0])
    return sch


def test_the_guard_of_a_non_dividing_split_moves_with_the_block():
    sch = rfactor_then_compute_at_row()
    assert_structural_equal(sch.mod["main"], row_sum_rfactor_at_row.with_attr(
        "global_symbol", "row_sum"))


@pytest.mark.parametrize("target", ["lnumpy", "llvm"])
def test_the_moved_guarded_block_sums_only_the_row(target):
    sch = rfactor_then_compute_at_row()
    a = np.random.default_rng(0).standard_normal((4, 300)).astype("float32")
    b = np.zeros(4, "float32")
    mlckit.build(sch.mod, target=target)(a, b)
    np.testing.assert_allclose(b, a.sum(axis=1), rtol=1e-4, atol=1e-4)


@T.prim_func
def scale_then_add(A: T.Buffer((4, 300), "float32"), C: T.Buffer((4, 300), "float32")):
    B = T.alloc_buffer((4, 300))
    for i, j in T.grid(4, 300):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(4, 300):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] + T.float32(1)


@T.prim_func
def scale_at_row(A: T.Buffer((4, 300), "float32"), C: T.Buffer((4, 300), "float32")):
    B = T.alloc_buffer((4, 300))
    for i in range(4):
        for ax0 in range(300):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, ax0])
                B[vi, vj] = A[vi, vj] * T.float32(2)
        for j in range(300):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = B[vi, vj] + T.float32(1)


def test_a_guard_over_fused_loops_that_only_bounds_the_iterators_is_dropped():
    # B: T.where(f_0 * 128 + f_1 < 1200) says no more than vi < 4: the new loops cover just
    # the row, inside the domain, so the guard goes (as TVM; same script, NumPy's numbers)
    sch = tir.Schedule(scale_then_add)
    fused = sch.fuse(*sch.get_loops("B"))
    sch.split(fused, [None, 128])
    i, j = sch.get_loops("C")
    sch.compute_at("B", i)
    check(sch, scale_at_row)
    verify_numeric(scale_then_add, sch.mod)


@T.prim_func
def half_then_add(A: T.Buffer((4, 300), "float32"), C: T.Buffer((4, 300), "float32")):
    B = T.alloc_buffer((4, 300))
    for f in range(1200):
        with T.block("B"):
            vi = T.axis.spatial(4, f // 300)
            vj = T.axis.spatial(300, f % 300)
            T.where(f < 600)
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(4, 300):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] + T.float32(1)


def test_a_guard_over_fused_loops_that_skips_elements_cannot_move_and_is_refused():
    # T.where(f < 600) leaves rows 2 and 3 of B unwritten: not a bound of the iterators, so
    # dropping it would change what B holds (TVM refuses too: "not a stage pipeline")
    sch = tir.Schedule(half_then_add)
    before = sch.mod.script()
    i, j = sch.get_loops("C")
    with pytest.raises(ScheduleError, match="guarded by T.where"):
        sch.compute_at("B", i)
    assert sch.mod.script() == before
