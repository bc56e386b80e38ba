"""compute_at and reverse_compute_at."""

import numpy as np
import pytest

import mlckit
from mlckit import tir
from mlckit.script import tir as T

from .common import check, expect_error, verify_numeric, verify_trace_roundtrip
from .workloads import elementwise, mm_relu_small


@T.prim_func
def elementwise_compute_at(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    B = T.alloc_buffer((16, 16), "float32")
    for i in range(16):
        for ax0 in range(16):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, ax0])
                B[vi, vj] = A[vi, vj] * T.float32(2)
        for j in range(16):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = B[vi, vj] + T.float32(1)


@T.prim_func
def elementwise_reverse_compute_at_split(A: T.Buffer((16, 16), "float32"),
                                         C: T.Buffer((16, 16), "float32")):
    B = T.alloc_buffer((16, 16), "float32")
    for i, j_0 in T.grid(16, 4):
        for j_1 in range(4):
            with T.block("B"):
                vi = T.axis.spatial(16, i)
                vj = T.axis.spatial(16, j_0 * 4 + j_1)
                B[vi, vj] = A[vi, vj] * T.float32(2)
        for ax0 in range(4):
            with T.block("C"):
                vi = T.axis.spatial(16, i)
                vj = T.axis.spatial(16, j_0 * 4 + ax0)
                C[vi, vj] = B[vi, vj] + T.float32(1)


@T.prim_func
def mm_relu_compute_at(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32"),
                       C: T.Buffer((16, 16), "float32")):
    Y = T.alloc_buffer((16, 16), dtype="float32")
    for i, j in T.grid(16, 16):
        for ax0 in range(16):
            with T.block("Y"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, ax0])
                with T.init():
                    Y[vi, vj] = T.float32(0)
                Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B[vk, vj]
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = T.max(Y[vi, vj], T.float32(0))


def test_compute_at():
    sch = tir.Schedule(elementwise, debug_mask="all")
    i, _ = sch.get_loops(sch.get_block("C"))
    sch.compute_at(sch.get_block("B"), i)
    check(sch, elementwise_compute_at)
    verify_numeric(elementwise, sch.mod)
    verify_trace_roundtrip(sch, elementwise)


def test_compute_at_reduction_block():
    sch = tir.Schedule(mm_relu_small, debug_mask="all")
    _, j = sch.get_loops(sch.get_block("C"))
    sch.compute_at(sch.get_block("Y"), j)
    check(sch, mm_relu_compute_at)
    verify_numeric(mm_relu_small, sch.mod)
    verify_trace_roundtrip(sch, mm_relu_small)


def test_reverse_compute_at_after_split():
    sch = tir.Schedule(elementwise, debug_mask="all")
    i, j = sch.get_loops(sch.get_block("B"))
    j0, _ = sch.split(j, factors=[None, 4])
    sch.reverse_compute_at(sch.get_block("C"), j0)
    check(sch, elementwise_reverse_compute_at_split)
    verify_numeric(elementwise, sch.mod)
    verify_trace_roundtrip(sch, elementwise)


def test_reverse_compute_at_non_dividing_split():
    sch = tir.Schedule(elementwise, debug_mask="all")
    i, j = sch.get_loops(sch.get_block("B"))
    j0, _ = sch.split(j, factors=[None, 5])
    sch.reverse_compute_at(sch.get_block("C"), j0)
    verify_numeric(elementwise, sch.mod)


def test_compute_at_errors():
    sch = tir.Schedule(elementwise)
    i_b, _ = sch.get_loops(sch.get_block("B"))
    i_c, _ = sch.get_loops(sch.get_block("C"))
    expect_error(sch, lambda: sch.compute_at(sch.get_block("B"), i_b), "compute_at",
                 "block `B` is already under loop `i`")
    expect_error(sch, lambda: sch.compute_at(sch.get_block("C"), i_b), "compute_at",
                 "no consumer of block `C` is under loop `i`")



@T.prim_func
def elementwise_b_under_c(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    B = T.alloc_buffer((16, 16), "float32")
    for i in range(16):
        for ax0, ax1 in T.grid(16, 16):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [ax0, ax1])
                B[vi, vj] = A[vi, vj] * T.float32(2)
        for j in range(16):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = B[vi, vj] + T.float32(1)


def test_reverse_compute_at_of_a_block_without_producers():
    # as TVM: B reads only a parameter, so reverse_compute_at may put it under any loop; it
    # computes its whole domain there, before its consumer C (redundant, but correct)
    sch = tir.Schedule(elementwise, debug_mask="all")
    i_c, _ = sch.get_loops(sch.get_block("C"))
    sch.reverse_compute_at(sch.get_block("B"), i_c)
    check(sch, elementwise_b_under_c)
    verify_numeric(elementwise, sch.mod)
    verify_trace_roundtrip(sch, elementwise)


def test_reverse_compute_at_conv_under_row_loop_is_rejected():
    """conv reads pad[.., vy + vry, ..]: under pad's row loop `h` only one row is produced,
    which no range of the conv iterators matches (found by test_random_sequences)."""
    from .workloads import conv2d_nchw

    sch = tir.Schedule(conv2d_nchw)
    h = sch.get_loops(sch.get_block("pad"))[2]
    expect_error(sch, lambda: sch.reverse_compute_at(sch.get_block("conv"), h),
                 "reverse_compute_at", "block `conv` cannot be placed under loop `h`", "`pad`")


def test_reverse_compute_at_conv_under_channel_loop():
    from .workloads import conv2d_nchw

    sch = tir.Schedule(conv2d_nchw)
    c = sch.get_loops(sch.get_block("pad"))[1]
    sch.reverse_compute_at(sch.get_block("conv"), c)
    verify_numeric(conv2d_nchw, sch.mod)


def test_compute_at_update_block_is_rejected():
    """An `_update` block without its T.init() would accumulate again each time the new loop
    nest recomputes it (found by test_random_sequences on softmax)."""
    from .workloads import softmax

    sch = tir.Schedule(softmax)
    expsum = sch.get_block("expsum")
    sch.decompose_reduction(expsum, sch.get_loops(expsum)[0])
    j = sch.get_loops(sch.get_block("norm"))[1]
    expect_error(sch, lambda: sch.compute_at(expsum, j), "compute_at",
                 "neither a complete block nor a reduction block")


@T.prim_func
def elementwise_symbolic(a: T.handle, c: T.handle):
    n = T.int64()
    A = T.match_buffer(a, (n, T.int64(8)), "float32")
    C = T.match_buffer(c, (n, T.int64(8)), "float32")
    B = T.alloc_buffer((n, T.int64(8)), "float32")
    for i, j in T.grid(n, T.int64(8)):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(n, T.int64(8)):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] + T.float32(1)


@T.prim_func
def elementwise_symbolic_reverse_compute_at(a: T.handle, c: T.handle):
    n = T.int64()
    A = T.match_buffer(a, (n, T.int64(8)), "float32")
    C = T.match_buffer(c, (n, T.int64(8)), "float32")
    B = T.alloc_buffer((n, T.int64(8)), "float32")
    for i in range(n):
        for j in range(T.int64(8)):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj] * T.float32(2)
        for ax0 in range(T.int64(8)):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, ax0])
                C[vi, vj] = B[vi, vj] + T.float32(1)


@T.prim_func
def elementwise_symbolic_compute_at(a: T.handle, c: T.handle):
    n = T.int64()
    A = T.match_buffer(a, (n, T.int64(8)), "float32")
    C = T.match_buffer(c, (n, T.int64(8)), "float32")
    B = T.alloc_buffer((n, T.int64(8)), "float32")
    for i in range(n):
        for ax0 in range(T.int64(8)):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, ax0])
                B[vi, vj] = A[vi, vj] * T.float32(2)
        for j in range(T.int64(8)):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = B[vi, vj] + T.float32(1)


def _run_symbolic(func, rows=5):
    import numpy as np

    import mlckit

    a = np.random.default_rng(0).uniform(-1, 1, size=(rows, 8)).astype("float32")
    for target in ("lnumpy", "llvm"):
        c = np.zeros((rows, 8), "float32")
        mlckit.build(func, target=target)(a, c)
        np.testing.assert_allclose(c, a * 2 + 1, rtol=1e-6, err_msg=f"target {target}")


def test_reverse_compute_at_symbolic_extent_has_no_predicate():
    """Under `for i in range(n)` the analyzer knows i < n (TVM proves it with
    CanProve(..., kSymbolicBound) in MakeNewLoop): no `T.where(i < n)`."""
    sch = tir.Schedule(elementwise_symbolic, debug_mask="all")
    i, _ = sch.get_loops(sch.get_block("B"))
    sch.reverse_compute_at(sch.get_block("C"), i)
    check(sch, elementwise_symbolic_reverse_compute_at)
    verify_trace_roundtrip(sch, elementwise_symbolic)
    _run_symbolic(sch.mod["main"])


def test_compute_at_symbolic_extent_has_no_predicate():
    sch = tir.Schedule(elementwise_symbolic, debug_mask="all")
    i, _ = sch.get_loops(sch.get_block("C"))
    sch.compute_at(sch.get_block("B"), i)
    check(sch, elementwise_symbolic_compute_at)
    verify_trace_roundtrip(sch, elementwise_symbolic)
    _run_symbolic(sch.mod["main"])


@T.prim_func
def softmax_exp_under_k(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4, 8), "float32")):
    maxelem = T.alloc_buffer((4,))
    expo = T.alloc_buffer((4, 8))
    expsum = T.alloc_buffer((4,))
    for i, k in T.grid(4, 8):
        with T.block("maxelem"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                maxelem[vi] = T.min_value("float32")
            maxelem[vi] = T.max(maxelem[vi], A[vi, vk])
        for ax0 in range(8):
            with T.block("exp"):
                vi, vj = T.axis.remap("SS", [i, ax0])
                expo[vi, vj] = T.exp(A[vi, vj] - maxelem[vi])
    for i, k in T.grid(4, 8):
        with T.block("expsum"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                expsum[vi] = T.float32(0)
            expsum[vi] = expsum[vi] + expo[vi, vk]
    for i, j in T.grid(4, 8):
        with T.block("norm"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = expo[vi, vj] / expsum[vi]


def test_reverse_compute_at_under_the_producer_s_reduction_loop():
    # as TVM: exp reads a partial maximum in early iterations of k, but it is recomputed
    # whole in each, and the last iteration sees the final maximum
    from .workloads import softmax

    sch = tir.Schedule(softmax, debug_mask="all")
    sch.reverse_compute_at(sch.get_block("exp"), sch.get_loops(sch.get_block("maxelem"))[1])
    check(sch, softmax_exp_under_k)
    verify_numeric(softmax, sch.mod)
    verify_trace_roundtrip(sch, softmax)


# -- bindings as TVM 0.27 writes them (found by tools/difftest_tvm.py) ----------------------
@T.prim_func
def unit_batch_two_stage(A: T.Buffer((1, 8), "float32"), C: T.Buffer((1, 8), "float32")):
    B = T.alloc_buffer((1, 8))
    for n, i in T.grid(1, 8):
        with T.block("B"):
            vn, vi = T.axis.remap("SS", [n, i])
            B[vn, vi] = A[vn, vi] * T.float32(2)
    for n, i in T.grid(1, 8):
        with T.block("C"):
            vn, vi = T.axis.remap("SS", [n, i])
            C[vn, vi] = B[vn, vi] + T.float32(1)


@T.prim_func
def unit_batch_computed_at(A: T.Buffer((1, 8), "float32"), C: T.Buffer((1, 8), "float32")):
    B = T.alloc_buffer((1, 8))
    for n, i in T.grid(1, 8):
        with T.block("B"):
            vn = T.axis.spatial(1, 0)
            vi = T.axis.spatial(8, i)
            T.reads(A[vn, vi])
            T.writes(B[vn, vi])
            B[vn, vi] = A[vn, vi] * T.float32(2.0)
        with T.block("C"):
            vn, vi = T.axis.remap("SS", [n, i])
            T.reads(B[vn, vi])
            T.writes(C[vn, vi])
            C[vn, vi] = B[vn, vi] + T.float32(1.0)


@T.prim_func
def unit_batch_computed_at_unit_loops(A: T.Buffer((1, 8), "float32"),
                                      C: T.Buffer((1, 8), "float32")):
    B = T.alloc_buffer((1, 8))
    for n, i in T.grid(1, 8):
        for ax0, ax1 in T.grid(1, 1):
            with T.block("B"):
                vn = T.axis.spatial(1, ax0)
                vi = T.axis.spatial(8, i + ax1)
                T.reads(A[vn, vi])
                T.writes(B[vn, vi])
                B[vn, vi] = A[vn, vi] * T.float32(2.0)
        with T.block("C"):
            vn, vi = T.axis.remap("SS", [n, i])
            T.reads(B[vn, vi])
            T.writes(C[vn, vi])
            C[vn, vi] = B[vn, vi] + T.float32(1.0)


@pytest.mark.parametrize("preserve, expected", [
    (False, unit_batch_computed_at), (True, unit_batch_computed_at_unit_loops)])
def test_a_unit_outer_loop_is_its_minimum_and_new_loops_are_added_unsimplified(
        preserve, expected):
    # as TVM's analyzer: ``n`` of ``range(1)`` is 0 (not ``vn = n``); the new binding is
    # ``min + ax`` as written (``i + ax1``), not simplified
    sch = tir.Schedule(unit_batch_two_stage)
    sch.compute_at(sch.get_block("B"), sch.get_loops(sch.get_block("C"))[1],
                   preserve_unit_loops=preserve)
    check(sch, expected)
    a = np.arange(8, dtype="float32").reshape(1, 8)
    out = np.zeros((1, 8), "float32")
    mlckit.build(sch.mod["main"], target="lnumpy")(a, out)
    np.testing.assert_array_equal(out, a * 2 + 1)


@T.prim_func
def pad_6(A: T.Buffer((4,), "float32"), P: T.Buffer((6,), "float32")):
    for i in range(6):
        with T.block("P"):
            vi = T.axis.spatial(6, i)
            P[vi] = T.if_then_else(1 <= vi and vi < 5, A[vi - 1], T.float32(0))


@T.prim_func
def pad_6_cached_at(A: T.Buffer((4,), "float32"), P: T.Buffer((6,), "float32")):
    A_shared = T.alloc_buffer((4,), scope="shared")
    for i in range(6):
        with T.block("A_shared"):
            v0 = T.axis.spatial(4, i - 1)
            T.where(1 <= i and i < 5)
            T.reads(A[v0])
            T.writes(A_shared[v0])
            A_shared[v0] = A[v0]
        with T.block("P"):
            vi = T.axis.spatial(6, i)
            T.reads(A_shared[vi - 1])
            T.writes(P[vi])
            P[vi] = T.if_then_else(1 <= vi and vi < 5, A_shared[vi - 1], T.float32(0.0))


def test_the_bound_checks_of_a_clipped_region_are_simplified_as_tvm_does():
    # the copy runs for i - 1 in [0, 4): TVM writes 1 <= i and i < 5, not 0 <= i - 1 ...
    sch = tir.Schedule(pad_6)
    shared = sch.cache_read(sch.get_block("P"), 0, "shared")
    sch.compute_at(shared, sch.get_loops(sch.get_block("P"))[0])
    check(sch, pad_6_cached_at)
    a = np.arange(1, 5, dtype="float32")
    out = np.zeros(6, "float32")
    mlckit.build(sch.mod["main"], target="lnumpy")(a, out)
    np.testing.assert_array_equal(out, np.pad(a, 1))


@T.prim_func
def _sum_all(A: T.Buffer((8, 16), "float32"), B: T.Buffer((1,), "float32")):
    for i, j in T.grid(8, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("RR", [i, j])
            with T.init():
                B[0] = T.float32(0)
            B[0] = B[0] + A[vi, vj]


@T.prim_func
def _sum_all_rf_at_j(A: T.Buffer((8, 16), "float32"), B: T.Buffer((1,), "float32")):
    B_rf = T.alloc_buffer((16, 1))
    for i, j in T.grid(8, 16):
        with T.block("B_rf"):
            vj, vi = T.axis.remap("SR", [j, i])
            with T.init():
                B_rf[vj, 0] = T.float32(0)
            B_rf[vj, 0] = B_rf[vj, 0] + A[vi, vj]
        with T.block("B"):
            vj = T.axis.reduce(16, j)
            with T.init():
                B[0] = T.float32(0)
            B[0] = B[0] + B_rf[vj, 0]


def test_reverse_compute_at_redoes_a_whole_reduction_in_each_outer_iteration():
    # as TVM: B's reduction over vj runs whole (init included) in every iteration of loop i;
    # the last one reads B_rf's final values, so B is right
    sch = tir.Schedule(_sum_all, debug_mask="all")
    rf = sch.rfactor(sch.get_loops(sch.get_block("B"))[1], 0)
    sch.reverse_compute_at(sch.get_block("B"), sch.get_loops(rf)[1])
    check(sch, _sum_all_rf_at_j)
    verify_numeric(_sum_all, sch.mod)


def test_reverse_compute_at_refuses_a_reduction_spread_over_the_repeated_loop():
    # B under loop j with its reduction iterator following the outer loop i: every iteration
    # of j would add B_rf[i] again (TVM 0.27 accepts it and computes wrong numbers)
    sch = tir.Schedule(_sum_all, debug_mask="all")
    rf = sch.rfactor(sch.get_loops(sch.get_block("B"))[1], 1)
    sch.reorder(*reversed(sch.get_loops(rf)))
    i_loop = sch.get_loops(rf)[1]
    expect_error(sch, lambda: sch.reverse_compute_at(sch.get_block("B"), i_loop),
                 "every iteration of loop", "touches the same elements")


@T.prim_func
def _matmul(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32"),
            C: T.Buffer((16, 16), "float32")):
    for i, j, k in T.grid(16, 16, 16):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]


@T.prim_func
def _matmul_blockized_cache_at_row(A: T.Buffer((16, 16), "float32"),
                                   B: T.Buffer((16, 16), "float32"),
                                   C: T.Buffer((16, 16), "float32")):
    A_local = T.alloc_buffer((16, 16), scope="local")
    for i in range(16):
        with T.block("A_local_o"):
            v0_o = T.axis.spatial(16, i)
            v1_o = T.axis.spatial(1, 0)
            T.reads(A[v0_o, 0:16])
            T.writes(A_local[v0_o, 0:16])
            for ax1 in range(16):
                with T.block("A_local"):
                    v1_i = T.axis.spatial(16, ax1)
                    T.reads(A[v0_o, v1_i])
                    T.writes(A_local[v0_o, v1_i])
                    A_local[v0_o, v1_i] = A[v0_o, v1_i]
        for j, k in T.grid(16, 16):
            with T.block("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                T.reads(A_local[vi, vk], B[vk, vj])
                T.writes(C[vi, vj])
                with T.init():
                    C[vi, vj] = T.float32(0.0)
                C[vi, vj] = C[vi, vj] + A_local[vi, vk] * B[vk, vj]


@pytest.mark.parametrize("target", ["lnumpy", "llvm"])
def test_compute_at_of_a_blockized_cache_block_copies_one_row_per_iteration(target):
    # the outer block A_local_o moves as one block, its row iterator bound to the loop (TVM 0.27
    # fails here with an internal "TensorRegion pattern match failed"; the issue saw a Numba
    # build failure later): the kernel builds and computes A @ B
    sch = tir.Schedule(_matmul, debug_mask="all")
    matmul_block = sch.get_block("C")
    copy = sch.cache_read(matmul_block, 0, "local")
    outer = sch.blockize(sch.get_loops(copy)[1])
    sch.compute_at(outer, sch.get_loops(matmul_block)[0])
    check(sch, _matmul_blockized_cache_at_row)
    verify_numeric(_matmul, sch.mod, targets=(target,))


# -- a fused loop (found by tools/difftest_tvm.py) ------------------------------------------
@T.prim_func
def add_relu_12(A: T.Buffer((12, 12), "float32"), D: T.Buffer((12, 12), "float32")):
    C = T.alloc_buffer((12, 12), "float32")
    for i, j in T.grid(12, 12):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = A[vi, vj] + T.float32(1)
    for i, j in T.grid(12, 12):
        with T.block("D"):
            vi, vj = T.axis.remap("SS", [i, j])
            D[vi, vj] = T.max(C[vi, vj], T.float32(0))


@T.prim_func
def add_relu_12_fused(A: T.Buffer((12, 12), "float32"), D: T.Buffer((12, 12), "float32")):
    C = T.alloc_buffer((12, 12))
    for i_j_fused in range(144):
        with T.block("C"):
            vi = T.axis.spatial(12, i_j_fused // 12)
            vj = T.axis.spatial(12, i_j_fused % 12)
            T.reads(A[vi, vj])
            T.writes(C[vi, vj])
            C[vi, vj] = A[vi, vj] + T.float32(1.0)
        with T.block("D"):
            vi = T.axis.spatial(12, i_j_fused // 12)
            vj = T.axis.spatial(12, i_j_fused % 12)
            T.reads(C[vi, vj])
            T.writes(D[vi, vj])
            D[vi, vj] = T.max(C[vi, vj], T.float32(0.0))


def test_reverse_compute_at_under_a_fused_loop():
    # each iteration of i_j_fused writes one element, C[i_j_fused // 12, i_j_fused % 12]: no
    # dimension follows the loop linearly, the buffer read as one row does
    sch = tir.Schedule(add_relu_12, debug_mask="all")
    fused = sch.fuse(*sch.get_loops(sch.get_block("C")))
    sch.reverse_compute_at(sch.get_block("D"), fused, preserve_unit_loops=False)
    check(sch, add_relu_12_fused)
    verify_numeric(add_relu_12, sch.mod)
    verify_trace_roundtrip(sch, add_relu_12)


# -- a consumer reading a flattened buffer (found by tools/difftest_tvm.py) -----------------
@T.prim_func
def add_relu_flat(A: T.Buffer((12, 4), "float32"), D: T.Buffer((12, 4), "float32")):
    C = T.alloc_buffer((48,), "float32")
    for i, j in T.grid(12, 4):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi * 4 + vj] = A[vi, vj] + T.float32(1)
    for i, j in T.grid(12, 4):
        with T.block("D"):
            vi, vj = T.axis.remap("SS", [i, j])
            D[vi, vj] = T.max(C[vi * 4 + vj], T.float32(0))


@T.prim_func
def add_relu_flat_at_i(A: T.Buffer((12, 4), "float32"), D: T.Buffer((12, 4), "float32")):
    C = T.alloc_buffer((48,))
    for i in range(12):
        for j in range(4):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(A[vi, vj])
                T.writes(C[vi * 4 + vj])
                C[vi * 4 + vj] = A[vi, vj] + T.float32(1.0)
        for ax0 in range(4):
            with T.block("D"):
                vi, vj = T.axis.remap("SS", [i, ax0])
                T.reads(C[vi * 4 + vj])
                T.writes(D[vi, vj])
                D[vi, vj] = T.max(C[vi * 4 + vj], T.float32(0.0))


def test_reverse_compute_at_inverts_a_flattened_read():
    # iteration i produces C[i * 4 : i * 4 + 4]; D reads C[vi * 4 + vj], so there vi is i
    # and vj spans 4: the inverse of the read's map (vi = p // 4, vj = p % 4), as TVM
    sch = tir.Schedule(add_relu_flat, debug_mask="all")
    i, _ = sch.get_loops(sch.get_block("C"))
    sch.reverse_compute_at(sch.get_block("D"), i, preserve_unit_loops=False)
    check(sch, add_relu_flat_at_i)
    verify_numeric(add_relu_flat, sch.mod)
    verify_trace_roundtrip(sch, add_relu_flat)


# -- a consumer after the loop inside a loop holding both (found by tools/difftest_tvm.py) --
@T.prim_func
def matmul_4(A: T.Buffer((4, 4), "float32"), B: T.Buffer((4, 4), "float32"),
             C: T.Buffer((4, 4), "float32")):
    for i, j, k in T.grid(4, 4, 4):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]


@T.prim_func
def matmul_4_copy_under_init(A: T.Buffer((4, 4), "float32"), B: T.Buffer((4, 4), "float32"),
                             C: T.Buffer((4, 4), "float32")):
    A_local = T.alloc_buffer((4, 4), scope="local")
    for i in range(4):
        for j_init in range(4):
            with T.block("C_init"):
                vi, vj = T.axis.remap("SS", [i, j_init])
                T.reads()
                T.writes(C[vi, vj])
                C[vi, vj] = T.float32(0.0)
            for ax0, ax1 in T.grid(4, 4):
                with T.block("A_local"):
                    v0, v1 = T.axis.remap("SS", [ax0, ax1])
                    T.reads(A[v0, v1])
                    T.writes(A_local[v0, v1])
                    A_local[v0, v1] = A[v0, v1]
        for j, k in T.grid(4, 4):
            with T.block("C_update"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                T.reads(C[vi, vj], A_local[vi, vk], B[vk, vj])
                T.writes(C[vi, vj])
                C[vi, vj] = C[vi, vj] + A_local[vi, vk] * B[vk, vj]


def test_reverse_compute_at_of_a_copy_whose_consumer_follows_the_loop_in_a_shared_loop():
    # A_local (no producer: it computes all of A each time) moves under j_init; its consumer
    # C_update shares the loop i and runs after j_init in each of its iterations, as TVM
    sch = tir.Schedule(matmul_4, debug_mask="all")
    c = sch.get_block("C")
    sch.decompose_reduction(c, sch.get_loops(c)[1])
    a_local = sch.cache_read(sch.get_block("C_update"), 1, "local")
    j_init = sch.get_loops(sch.get_block("C_init"))[1]
    sch.reverse_compute_at(a_local, j_init, preserve_unit_loops=False)
    check(sch, matmul_4_copy_under_init)
    verify_numeric(matmul_4, sch.mod)
    verify_trace_roundtrip(sch, matmul_4)


# -- a packed layout: each iteration its own elements (found by tools/difftest_tvm.py) ------
@T.prim_func
def scale_add_8x4(A: T.Buffer((8, 4), "float32"), C: T.Buffer((8, 4), "float32")):
    Y = T.alloc_buffer((8, 4), "float32")
    for i, j in T.grid(8, 4):
        with T.block("Y"):
            vi, vj = T.axis.remap("SS", [i, j])
            Y[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(8, 4):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = Y[vi, vj] + T.float32(1)


@T.prim_func
def scale_add_8x4_packed_at_i(A: T.Buffer((8, 4), "float32"), C: T.Buffer((8, 4), "float32")):
    Y = T.alloc_buffer((4, 4, 2))
    for i in range(8):
        for j in range(4):
            with T.block("Y"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(A[vi, vj])
                T.writes(Y[vi // 2, vj, vi % 2])
                Y[vi // 2, vj, vi % 2] = A[vi, vj] * T.float32(2.0)
        for ax0 in range(4):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, ax0])
                T.reads(Y[vi // 2, vj, vi % 2])
                T.writes(C[vi, vj])
                C[vi, vj] = Y[vi // 2, vj, vi % 2] + T.float32(1.0)


def test_reverse_compute_at_under_a_loop_writing_a_packed_layout():
    # iteration i writes Y[i // 2, :, i % 2]: the map i -> (i // 2, i % 2) is one-to-one, so
    # no two iterations touch the same elements (this was refused), as TVM
    sch = tir.Schedule(scale_add_8x4, debug_mask="all")
    sch.transform_layout(sch.get_block("Y"), ("write", 0), lambda i, j: (i // 2, j, i % 2))
    i, _ = sch.get_loops(sch.get_block("Y"))
    sch.reverse_compute_at(sch.get_block("C"), i, preserve_unit_loops=False)
    check(sch, scale_add_8x4_packed_at_i)
    verify_numeric(scale_add_8x4, sch.mod)
    verify_trace_roundtrip(sch, scale_add_8x4)
