"""rfactor."""

import numpy as np
import pytest

import mlckit
from mlckit import tir
from mlckit.script import from_source
from mlckit.script import tir as T

from .common import check, expect_error, verify_numeric, verify_trace_roundtrip
from .workloads import elementwise, matmul


def rowsum(rows, cols):
    """``B[i]``: the sum of row ``i`` of ``A`` (``rows`` x ``cols``), one reduction block."""
    return from_source(f'''
@T.prim_func
def rowsum(A: T.Buffer(({rows}, {cols}), "float32"), B: T.Buffer(({rows},), "float32")):
    for i, k in T.grid({rows}, {cols}):
        with T.block("B"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                B[vi] = T.float32(0)
            B[vi] = B[vi] + A[vi, vk]
''')


@T.prim_func
def rowsum3(A: T.Buffer((16, 16, 16), "float32"), B: T.Buffer((16,), "float32")):
    for ii, i, j in T.grid(16, 16, 16):
        with T.block("B"):
            vii, vi, vj = T.axis.remap("SRR", [ii, i, j])
            with T.init():
                B[vii] = T.float32(0)
            B[vii] = B[vii] + A[vii, vi, vj]


# TVM's docstring example of rfactor (sizes 128 -> 16; the rfactor block's loops keep the
# original order and the write-back block's first iterator is the rfactor loop's, as in TVM's
# code and its test_tir_schedule_rfactor.py square_sum_rfactor)
@T.prim_func
def rowsum3_rfactor(A: T.Buffer((16, 16, 16), "float32"), B: T.Buffer((16,), "float32")):
    B_rf = T.alloc_buffer((16, 16))
    for ii, i, i2 in T.grid(16, 16, 16):
        with T.block("B_rf"):
            vi2, vii, vi = T.axis.remap("SSR", [i2, ii, i])
            with T.init():
                B_rf[vi2, vii] = T.float32(0)
            B_rf[vi2, vii] = B_rf[vi2, vii] + A[vii, vi, vi2]
    for ii, i2 in T.grid(16, 16):
        with T.block("B"):
            vi2, vii = T.axis.remap("RS", [i2, ii])
            with T.init():
                B[vii] = T.float32(0)
            B[vii] = B[vii] + B_rf[vi2, vii]


# as TVM's test_reduction_rfactor_matmul (sizes 128 -> 16, k split 2 x 2 x 4)
@T.prim_func
def matmul_rfactor(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32"),
                   C: T.Buffer((16, 16), "float32")):
    C_rf = T.alloc_buffer((4, 16, 16))
    for i, j, k_0, k_1, k_2 in T.grid(16, 16, 2, 2, 4):
        with T.block("C_rf"):
            vk_2 = T.axis.spatial(4, k_2)
            vi = T.axis.spatial(16, i)
            vj = T.axis.spatial(16, j)
            vk_0 = T.axis.reduce(2, k_0)
            vk_1 = T.axis.reduce(2, k_1)
            with T.init():
                C_rf[vk_2, vi, vj] = T.float32(0)
            C_rf[vk_2, vi, vj] = C_rf[vk_2, vi, vj] + (
                A[vi, vk_0 * 8 + vk_1 * 4 + vk_2] * B[vk_0 * 8 + vk_1 * 4 + vk_2, vj])
    for i, j, k_2 in T.grid(16, 16, 4):
        with T.block("C"):
            vk_2, vi, vj = T.axis.remap("RSS", [k_2, i, j])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + C_rf[vk_2, vi, vj]


@T.prim_func
def rowmax(A: T.Buffer((8, 32), "float32"), B: T.Buffer((8,), "float32")):
    for i, k in T.grid(8, 32):
        with T.block("B"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                B[vi] = T.min_value("float32")
            B[vi] = T.max(B[vi], A[vi, vk])


@T.prim_func
def rowsub(A: T.Buffer((8, 32), "float32"), B: T.Buffer((8,), "float32")):
    for i, k in T.grid(8, 32):
        with T.block("B"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                B[vi] = T.float32(0)
            B[vi] = B[vi] - A[vi, vk]


def test_rfactor_docstring_example():
    sch = tir.Schedule(rowsum3, debug_mask="all")
    _, _, k = sch.get_loops(sch.get_block("B"))
    rf = sch.rfactor(k, 0)
    assert sch.get(rf).name_hint == "B_rf"
    check(sch, rowsum3_rfactor)
    verify_numeric(rowsum3, sch.mod)
    verify_trace_roundtrip(sch, rowsum3)


def test_rfactor_matmul_split_reduction():
    sch = tir.Schedule(matmul, debug_mask="all")
    block = sch.get_block("C")
    _, _, k = sch.get_loops(block)
    _, _, k2 = sch.split(k, factors=[2, 2, 4])
    sch.rfactor(k2, 0)
    check(sch, matmul_rfactor)
    verify_numeric(matmul, sch.mod)
    verify_trace_roundtrip(sch, matmul)


@pytest.mark.parametrize("factor_axis", [0, 1, -1, -2])
def test_rfactor_factor_axis_numeric(factor_axis):
    sch = tir.Schedule(matmul, debug_mask="all")
    block = sch.get_block("C")
    _, _, k = sch.get_loops(block)
    k0, k1 = sch.split(k, factors=[None, 4])
    rf = sch.rfactor(k0, factor_axis)
    shape = [int(s.value) for s in sch.mod["main"].body.block.alloc_buffers[0].shape]
    expected = [16, 16]
    expected.insert(factor_axis if factor_axis >= 0 else factor_axis + 3, 4)
    assert shape == expected
    # the partial sums are independent: their loop can run in parallel
    sch.parallel(sch.get_loops(rf)[0])
    verify_numeric(matmul, sch.mod)
    verify_trace_roundtrip(sch, matmul)


def test_rfactor_max_reduction_numeric():
    sch = tir.Schedule(rowmax, debug_mask="all")
    _, k = sch.get_loops(sch.get_block("B"))
    _, k1 = sch.split(k, factors=[None, 8])
    sch.rfactor(k1, 1)
    verify_numeric(rowmax, sch.mod)
    verify_trace_roundtrip(sch, rowmax)


def test_rfactor_errors():
    sch = tir.Schedule(matmul)
    block = sch.get_block("C")
    i, j, k = sch.get_loops(block)
    expect_error(sch, lambda: sch.rfactor(i, 0), "rfactor",
                 "loop `i` drives a spatial iterator of block `C`")
    expect_error(sch, lambda: sch.rfactor(k, 3), "rfactor", "factor_axis 3 is out of range",
                 "`C` has 2 dimension(s)", "[-3, 2]")
    sch2 = tir.Schedule(elementwise)
    b_loop = sch2.get_loops(sch2.get_block("B"))[1]
    expect_error(sch2, lambda: sch2.rfactor(b_loop, 0), "rfactor",
                 "block `B` is not a reduction block")
    sch3 = tir.Schedule(rowsub)
    _, k = sch3.get_loops(sch3.get_block("B"))
    expect_error(sch3, lambda: sch3.rfactor(k, 0), "rfactor",
                 "no commutative reducer matches block `B`")


def test_rfactor_non_serial_loop():
    sch = tir.Schedule(matmul)
    _, _, k = sch.get_loops(sch.get_block("C"))
    sch.unroll(k)
    expect_error(sch, lambda: sch.rfactor(k, 0), "rfactor",
                 "loop `k` must be serial to be factorized, but it is unrolled")


@T.prim_func
def rowmax_rfactor_whole_k(A: T.Buffer((8, 32), "float32"), B: T.Buffer((8,), "float32")):
    B_rf = T.alloc_buffer((32, 8))
    for i, k in T.grid(8, 32):
        with T.block("B_rf"):
            vk, vi = T.axis.remap("SS", [k, i])
            B_rf[vk, vi] = A[vi, vk]
    for i, k in T.grid(8, 32):
        with T.block("B"):
            vk, vi = T.axis.remap("RS", [k, i])
            with T.init():
                B[vi] = T.min_value("float32")
            B[vi] = T.max(B[vi], B_rf[vk, vi])


def test_rfactor_of_the_only_reduction_loop_writes_a_plain_copy():
    # as TVM: nothing is left to reduce in B_rf, so it is a store without T.init()
    sch = tir.Schedule(rowmax, debug_mask="all")
    _, k = sch.get_loops(sch.get_block("B"))
    rf = sch.rfactor(k, 0)
    assert sch.get(rf).init is None
    check(sch, rowmax_rfactor_whole_k)
    verify_numeric(rowmax, sch.mod)
    verify_trace_roundtrip(sch, rowmax)


# -- names as TVM 0.27 gives them (found by tools/difftest_tvm.py) --------------------------
@T.prim_func
def rowsum_4_6_rfactor_cached(A: T.Buffer((4, 6), "float32"), B: T.Buffer((4,), "float32")):
    B_rf = T.alloc_buffer((6, 4))
    B_rf_shared = T.alloc_buffer((6, 4), scope="shared")
    for i, k in T.grid(4, 6):
        with T.block("B_rf"):
            vk, vi = T.axis.remap("SS", [k, i])
            T.reads(A[vi, vk])
            T.writes(B_rf[vk, vi])
            B_rf[vk, vi] = A[vi, vk]
    for ax0, ax1 in T.grid(6, 4):
        with T.block("B.rf_shared"):
            v0, v1 = T.axis.remap("SS", [ax0, ax1])
            T.reads(B_rf[v0, v1])
            T.writes(B_rf_shared[v0, v1])
            B_rf_shared[v0, v1] = B_rf[v0, v1]
    for i, k in T.grid(4, 6):
        with T.block("B"):
            vk, vi = T.axis.remap("RS", [k, i])
            T.reads(B_rf_shared[vk, vi])
            T.writes(B[vi])
            with T.init():
                B[vi] = T.float32(0.0)
            B[vi] = B[vi] + B_rf_shared[vk, vi]


def test_the_rfactor_buffer_is_named_with_a_dot_rf_suffix():
    # TVM names it "B.rf" (printed B_rf); a cache of it is the block "B.rf_shared", and the
    # name "B_rf_shared" finds nothing
    sch = tir.Schedule(rowsum(4, 6))
    b = sch.get_block("B")
    sch.rfactor(sch.get_loops(b)[1], 0)
    sch.cache_read(b, 0, "shared")
    check(sch, rowsum_4_6_rfactor_cached)
    names = [buf.name for buf in sch.mod["main"].body.block.alloc_buffers]
    assert names == ["B.rf", "B.rf_shared"]
    assert sch.get(sch.get_block("B.rf_shared")).name_hint == "B.rf_shared"
    with pytest.raises(tir.ScheduleError, match="B_rf_shared"):
        sch.get_block("B_rf_shared")
    a = np.random.default_rng(0).uniform(-1, 1, (4, 6)).astype("float32")
    out = np.zeros(4, "float32")
    mlckit.build(sch.mod["main"], target="lnumpy")(a, out)
    np.testing.assert_allclose(out, a.sum(axis=1), rtol=1e-5)


# -- a loop no iterator uses (found by tools/difftest_tvm.py) ---------------------------------
@T.prim_func
def rowsum_4_8_rfactor_unit_loop(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4,), "float32")):
    B_rf = T.alloc_buffer((1, 4))
    for i, k, u in T.grid(4, 8, 1):
        with T.block("B_rf"):
            vu, vi, vk = T.axis.remap("SSR", [u, i, k])
            T.reads(A[vi, vk])
            T.writes(B_rf[vu, vi])
            with T.init():
                B_rf[vu, vi] = T.float32(0.0)
            B_rf[vu, vi] = B_rf[vu, vi] + A[vi, vk]
    for i, u in T.grid(4, 1):
        with T.block("B"):
            vu, vi = T.axis.remap("RS", [u, i])
            T.reads(B_rf[vu, vi])
            T.writes(B[vi])
            with T.init():
                B[vi] = T.float32(0.0)
            B[vi] = B[vi] + B_rf[vu, vi]


def test_rfactor_of_a_unit_loop_no_iterator_uses_adds_a_unit_dimension():
    # as TVM: the loop add_unit_loop puts around the block becomes the rfactor dimension
    sch = tir.Schedule(rowsum(4, 8), debug_mask="all")
    sch.rfactor(sch.add_unit_loop(sch.get_block("B")), 0)
    check(sch, rowsum_4_8_rfactor_unit_loop)
    verify_numeric(rowsum(4, 8), sch.mod)
    verify_trace_roundtrip(sch, rowsum(4, 8))


@T.prim_func
def rowsum_4_8_three_times(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4,), "float32")):
    for u in range(3):  # noqa: B007 (repeats the whole reduction: B is the row sums)
        for i, k in T.grid(4, 8):
            with T.block("B"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    B[vi] = T.float32(0)
                B[vi] = B[vi] + A[vi, vk]


def test_rfactor_refuses_a_longer_loop_no_iterator_uses():
    # every partial result would hold the whole row sum, and B three times it (TVM takes the
    # loop and computes that)
    sch = tir.Schedule(rowsum_4_8_three_times)
    u = sch.get_loops(sch.get_block("B"))[0]
    expect_error(sch, lambda: sch.rfactor(u, 0), "rfactor",
                 "loop `u` drives no reduction iterator of block `B`",
                 "every partial result would hold the whole reduction")
    verify_numeric(rowsum(4, 8), sch.mod)


# -- predicates: what the write-back block keeps (found by tools/difftest_tvm.py) -----------
@T.prim_func
def rowsum_3_10_uneven_rfactor(A: T.Buffer((3, 10), "float32"), B: T.Buffer((3,), "float32")):
    B_rf = T.alloc_buffer((4, 3))
    for i_0, i_1, k_0, k_1 in T.grid(2, 2, 3, 4):
        with T.block("B_rf"):
            vk_1 = T.axis.spatial(4, k_1)
            vi = T.axis.spatial(3, i_0 * 2 + i_1)
            vk_0 = T.axis.reduce(3, k_0)
            T.where(i_0 * 2 + i_1 < 3 and k_0 * 4 + k_1 < 10)
            T.reads(A[vi, vk_0 * 4 + vk_1])
            T.writes(B_rf[vk_1, vi])
            with T.init():
                B_rf[vk_1, vi] = T.float32(0.0)
            B_rf[vk_1, vi] = B_rf[vk_1, vi] + A[vi, vk_0 * 4 + vk_1]
    for i_0, i_1, k_1 in T.grid(2, 2, 4):
        with T.block("B"):
            vk_1 = T.axis.reduce(4, k_1)
            vi = T.axis.spatial(3, i_0 * 2 + i_1)
            T.where(i_0 * 2 + i_1 < 3)
            T.reads(B_rf[vk_1, vi])
            T.writes(B[vi])
            with T.init():
                B[vi] = T.float32(0.0)
            B[vi] = B[vi] + B_rf[vk_1, vi]


@pytest.mark.parametrize("target", ["lnumpy", "llvm"])
def test_the_write_back_keeps_the_predicate_of_the_spatial_loops(target):
    # i (3) split by 2 has a fourth row i_0 * 2 + i_1 == 3: the write-back must not write it
    # (TVM 0.27 drops the whole predicate there, and writes B[3] out of bounds); the part
    # over k_0 holds at k_0 == 0, so every partial result is initialized: dropped, as TVM
    sch = tir.Schedule(rowsum(3, 10), debug_mask="all")
    b = sch.get_block("B")
    i, k = sch.get_loops(b)
    sch.split(i, factors=[2, None])
    _, k1 = sch.split(k, factors=[None, 4])
    sch.rfactor(k1, 0)
    check(sch, rowsum_3_10_uneven_rfactor)
    a = np.random.default_rng(0).uniform(-1, 1, (3, 10)).astype("float32")
    out = np.zeros(3, "float32")
    mlckit.build(sch.mod["main"], target=target)(a, out)
    np.testing.assert_allclose(out, a.sum(axis=1), rtol=1e-5)
    verify_trace_roundtrip(sch, rowsum(3, 10))


def test_rfactor_refuses_partial_results_that_would_never_be_computed():
    # k (2) split by 4: k_1 in {2, 3} never runs, so B_rf[2] and B_rf[3] would keep whatever
    # the memory held, and B would sum it (TVM 0.27 computes nan here)
    sch = tir.Schedule(rowsum(4, 2))
    _, k = sch.get_loops(sch.get_block("B"))
    _, k1 = sch.split(k, factors=[None, 4])
    expect_error(sch, lambda: sch.rfactor(k1, 0), "rfactor",
                 "predicate `k_0 * 4 + k_1 < 2` does not hold at the first iteration",
                 "some partial results of loop `k_1` would never be computed")


@T.prim_func
def rowsum_4_8_repeated_rfactor(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4,), "float32")):
    B_rf = T.alloc_buffer((8, 4))
    for u_0, u_1, i, k in T.grid(1, 2, 4, 8):
        with T.block("B_rf"):
            vk, vi = T.axis.remap("SS", [k, i])
            T.where(u_0 * 2 + u_1 < 1)
            T.reads(A[vi, vk])
            T.writes(B_rf[vk, vi])
            B_rf[vk, vi] = A[vi, vk]
    for u_0, u_1, i, k in T.grid(1, 2, 4, 8):  # noqa: B007 (they only repeat the write-back)
        with T.block("B"):
            vk, vi = T.axis.remap("RS", [k, i])
            T.reads(B_rf[vk, vi])
            T.writes(B[vi])
            with T.init():
                B[vi] = T.float32(0.0)
            B[vi] = B[vi] + B_rf[vk, vi]


def test_the_write_back_drops_a_guard_over_loops_no_iterator_uses():
    # u_0 * 2 + u_1 < 1 only repeats the whole write-back, which sums the same again: as TVM
    sch = tir.Schedule(rowsum(4, 8), debug_mask="all")
    b = sch.get_block("B")
    sch.split(sch.add_unit_loop(sch.get_loops(b)[0]), factors=[None, 2])
    sch.rfactor(sch.get_loops(b)[3], 0)
    check(sch, rowsum_4_8_repeated_rfactor)
    verify_numeric(rowsum(4, 8), sch.mod)
    verify_trace_roundtrip(sch, rowsum(4, 8))
