"""split and fuse: expected TVMScript, numbers, trace round trip, errors."""

import numpy as np

import mlckit
from mlckit import tir
from mlckit.script import tir as T

from .common import check, expect_error, verify_numeric, verify_trace_roundtrip
from .workloads import elementwise, matmul


@T.prim_func
def elementwise_split(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    B = T.alloc_buffer((16, 16), "float32")
    for i, j_0, j_1 in T.grid(16, 4, 4):
        with T.block("B"):
            vi = T.axis.spatial(16, i)
            vj = T.axis.spatial(16, j_0 * 4 + j_1)
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(16, 16):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] + T.float32(1)


@T.prim_func
def elementwise_split_predicate(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    B = T.alloc_buffer((16, 16), "float32")
    for i_0, i_1, j in T.grid(3, 6, 16):
        with T.block("B"):
            T.where(i_0 * 6 + i_1 < 16)
            vi = T.axis.spatial(16, i_0 * 6 + i_1)
            vj = T.axis.spatial(16, j)
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(16, 16):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] + T.float32(1)


@T.prim_func
def elementwise_fused(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    B = T.alloc_buffer((16, 16), "float32")
    for i_j_fused in range(256):
        with T.block("B"):
            vi = T.axis.spatial(16, i_j_fused // 16)
            vj = T.axis.spatial(16, i_j_fused % 16)
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(16, 16):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] + T.float32(1)


@T.prim_func
def matmul_fused3(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32"),
                  C: T.Buffer((16, 16), "float32")):
    for i_j_k_fused in range(4096):
        with T.block("C"):
            vi = T.axis.spatial(16, i_j_k_fused // 256)
            vj = T.axis.spatial(16, i_j_k_fused % 256 // 16)
            vk = T.axis.reduce(16, i_j_k_fused % 16)
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]


def test_split_inferred_factor():
    sch = tir.Schedule(elementwise, debug_mask="all")
    i, j = sch.get_loops(sch.get_block("B"))
    j0, j1 = sch.split(j, factors=[None, 4])
    check(sch, elementwise_split)
    assert sch.get(j0).extent.value == 4 and sch.get(j1).extent.value == 4
    assert [sch.get(lp).loop_var.name for lp in (j0, j1)] == ["j_0", "j_1"]
    verify_numeric(elementwise, sch.mod)
    verify_trace_roundtrip(sch, elementwise)


def test_split_non_dividing_adds_predicate():
    sch = tir.Schedule(elementwise, debug_mask="all")
    i, j = sch.get_loops(sch.get_block("B"))
    sch.split(i, factors=[3, 6])
    check(sch, elementwise_split_predicate)
    verify_numeric(elementwise, sch.mod)
    verify_trace_roundtrip(sch, elementwise)


def test_split_three_ways_then_fuse_back():
    sch = tir.Schedule(elementwise, debug_mask="all")
    i, j = sch.get_loops(sch.get_block("B"))
    a, b, c = sch.split(j, factors=[2, None, 2])
    assert sch.get(b).extent.value == 4
    sch.fuse(a, b, c)
    j_again = sch.get_loops(sch.get_block("B"))[1]
    sch.fuse(i, j_again)
    check(sch, elementwise_fused)
    verify_numeric(elementwise, sch.mod)


def test_fuse():
    sch = tir.Schedule(elementwise, debug_mask="all")
    i, j = sch.get_loops(sch.get_block("B"))
    fused = sch.fuse(i, j)
    assert sch.get(fused).loop_var.name == "i_j_fused"
    check(sch, elementwise_fused)
    verify_numeric(elementwise, sch.mod)
    verify_trace_roundtrip(sch, elementwise)


def test_fuse_three_loops_of_a_reduction():
    sch = tir.Schedule(matmul, debug_mask="all")
    sch.fuse(*sch.get_loops(sch.get_block("C")))
    check(sch, matmul_fused3)
    verify_numeric(matmul, sch.mod)
    verify_trace_roundtrip(sch, matmul)


def test_split_errors():
    sch = tir.Schedule(elementwise)
    i, j = sch.get_loops(sch.get_block("B"))
    expect_error(sch, lambda: sch.split(j, factors=[2, 4]),
                 "split", "product of the factors (2 * 4 = 8)", "extent 16", "`j`")
    expect_error(sch, lambda: sch.split(j, factors=[None, None]), "only one factor can be None")
    expect_error(sch, lambda: sch.split(j, factors=[0, 16]), "positive")
    sch.annotate(i, "pragma_auto_unroll_max_step", 16)
    expect_error(sch, lambda: sch.split(i, factors=[4, 4]), "split", "loop `i` has annotations")


@T.prim_func
def elementwise_split_after_parallel(A: T.Buffer((16, 16), "float32"),
                                     C: T.Buffer((16, 16), "float32")):
    B = T.alloc_buffer((16, 16), "float32")
    for i_0, i_1, j in T.grid(4, 4, 16):
        with T.block("B"):
            vi = T.axis.spatial(16, i_0 * 4 + i_1)
            vj = T.axis.spatial(16, j)
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i_j_fused in range(256):
        with T.block("C"):
            vi = T.axis.spatial(16, i_j_fused // 16)
            vj = T.axis.spatial(16, i_j_fused % 16)
            C[vi, vj] = B[vi, vj] + T.float32(1)


def test_split_and_fuse_of_marked_loops_give_serial_loops():
    # as TVM: the kind (parallel, vectorized, unrolled) is not carried to the new loops
    sch = tir.Schedule(elementwise, debug_mask="all")
    i, _ = sch.get_loops(sch.get_block("B"))
    sch.parallel(i)
    sch.split(i, factors=[4, 4])
    i2, j2 = sch.get_loops(sch.get_block("C"))
    sch.unroll(i2)
    sch.vectorize(j2)
    sch.fuse(i2, j2)
    check(sch, elementwise_split_after_parallel)
    verify_numeric(elementwise, sch.mod)
    verify_trace_roundtrip(sch, elementwise)


def test_fuse_errors():
    sch = tir.Schedule(elementwise)
    i, j = sch.get_loops(sch.get_block("B"))
    i2, j2 = sch.get_loops(sch.get_block("C"))
    expect_error(sch, lambda: sch.fuse(j, i), "fuse", "`j` is not the parent of loop `i`")
    expect_error(sch, lambda: sch.fuse(i, j2), "fuse", "not the parent")


def test_removed_loop_rv_is_reported():
    sch = tir.Schedule(elementwise)
    i, j = sch.get_loops(sch.get_block("B"))
    sch.split(j, factors=[4, 4])
    expect_error(sch, lambda: sch.split(j, factors=[2, 2]), "split", "no longer exists")


def test_fuse_of_one_loop_makes_a_new_serial_loop():
    # as TVM: fuse(j) gives `j_fused`, and a parallel loop fused alone becomes serial
    sch = tir.Schedule(elementwise, debug_mask="all")
    i, j = sch.get_loops(sch.get_block("B"))
    sch.parallel(i)
    fused = sch.fuse(j)
    assert sch.get(fused).loop_var.name == "j_fused"
    again = sch.fuse(i)
    assert sch.get(again).loop_var.name == "i_fused"
    assert sch.get(again).kind == tir.ForKind.SERIAL
    verify_numeric(elementwise, sch.mod)
    verify_trace_roundtrip(sch, elementwise)


# -- bindings as TVM 0.27 writes them (its IterMapSimplify; found by tools/difftest_tvm.py) --
@T.prim_func
def rowsum_6(A: T.Buffer((4, 6), "float32"), B: T.Buffer((4,), "float32")):
    for i, k in T.grid(4, 6):
        with T.block("B"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                B[vi] = T.float32(0)
            B[vi] = B[vi] + A[vi, vk]


@T.prim_func
def rowsum_6_resplit(A: T.Buffer((4, 6), "float32"), B: T.Buffer((4,), "float32")):
    for i, k_0, k_1_0, k_1_1, k_2 in T.grid(4, 2, 4, 1, 2):
        with T.block("B"):
            vi = T.axis.spatial(4, i)
            vk = T.axis.reduce(6, k_0 * 4 + (k_1_0 + k_1_1) * 2 + k_2)
            T.where((k_0 * 2 + (k_1_0 + k_1_1)) * 2 + k_2 < 6 and k_1_0 + k_1_1 < 2)
            T.reads(A[vi, vk])
            T.writes(B[vi])
            with T.init():
                B[vi] = T.float32(0.0)
            B[vi] = B[vi] + A[vi, vk]


def _run(func, *arrays):
    import mlckit

    mlckit.build(func, target="lnumpy")(*arrays)


def test_resplitting_under_a_predicate_keeps_the_guarded_sum_together():
    sch = tir.Schedule(rowsum_6)
    b = sch.get_block("B")
    sch.split(sch.get_loops(b)[1], [None, 2, 2])
    sch.split(sch.get_loops(b)[2], [4, None])
    check(sch, rowsum_6_resplit)
    a = np.random.default_rng(0).uniform(-1, 1, (4, 6)).astype("float32")
    out = np.zeros(4, "float32")
    _run(sch.mod["main"], a, out)
    np.testing.assert_allclose(out, a.sum(axis=1), rtol=1e-5)


@T.prim_func
def scale_10(A: T.Buffer((10,), "float32"), B: T.Buffer((10,), "float32")):
    for i in range(10):
        with T.block("B"):
            vi = T.axis.spatial(10, i)
            B[vi] = A[vi] * T.float32(2)


@T.prim_func
def scale_10_resplit(A: T.Buffer((10,), "float32"), B: T.Buffer((10,), "float32")):
    for i_0_0, i_0_1, i_1 in T.grid(2, 2, 4):
        with T.block("B"):
            vi = T.axis.spatial(10, (i_0_0 * 2 + i_0_1) * 4 + i_1)
            T.where((i_0_0 * 2 + i_0_1) * 4 + i_1 < 10 and i_0_0 * 2 + i_0_1 < 3)
            T.reads(A[vi])
            T.writes(B[vi])
            B[vi] = A[vi] * T.float32(2.0)


def test_splitting_the_outer_loop_of_a_non_dividing_split_writes_it_as_one_term():
    sch = tir.Schedule(scale_10)
    b = sch.get_block("B")
    sch.split(sch.get_loops(b)[0], [None, 4])
    sch.split(sch.get_loops(b)[0], [None, 2])
    check(sch, scale_10_resplit)
    a = np.arange(10, dtype="float32")
    out = np.zeros(10, "float32")
    _run(sch.mod["main"], a, out)
    np.testing.assert_array_equal(out, a * 2)


@T.prim_func
def add_one_unit(A: T.Buffer((1, 8, 1), "float32"), B: T.Buffer((1, 8, 1), "float32")):
    for i, j, k in T.grid(1, 8, 1):
        with T.block("B"):
            vi, vj, vk = T.axis.remap("SSS", [i, j, k])
            B[vi, vj, vk] = A[vi, vj, vk] + T.float32(1)


@T.prim_func
def add_one_unit_fused(A: T.Buffer((1, 8, 1), "float32"), B: T.Buffer((1, 8, 1), "float32")):
    for i_j_k_fused in range(8):
        with T.block("B"):
            vi = T.axis.spatial(1, 0)
            vj = T.axis.spatial(8, i_j_k_fused)
            vk = T.axis.spatial(1, 0)
            T.reads(A[vi, vj, vk])
            T.writes(B[vi, vj, vk])
            B[vi, vj, vk] = A[vi, vj, vk] + T.float32(1.0)


def test_fuse_binds_the_iterators_of_unit_loops_to_zero():
    sch = tir.Schedule(add_one_unit)
    sch.fuse(*sch.get_loops(sch.get_block("B")))
    check(sch, add_one_unit_fused)
    a = np.arange(8, dtype="float32").reshape(1, 8, 1)
    out = np.zeros((1, 8, 1), "float32")
    _run(sch.mod["main"], a, out)
    np.testing.assert_array_equal(out, a + 1)


@T.prim_func
def copy_16_64(A: T.Buffer((16, 64), "float32"), B: T.Buffer((16, 64), "float32")):
    for i, j in T.grid(16, 64):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj]


@T.prim_func
def copy_16_64_fused_split(A: T.Buffer((16, 64), "float32"), B: T.Buffer((16, 64), "float32")):
    for i_j_fused_0, i_j_fused_1, i_j_fused_2, i_j_fused_3 in T.grid(16, 8, 4, 2):
        with T.block("B"):
            vi = T.axis.spatial(16, (i_j_fused_0 * 64 + i_j_fused_1 * 8 + i_j_fused_2 * 2 + i_j_fused_3) // 64)
            vj = T.axis.spatial(64, (i_j_fused_0 * 64 + i_j_fused_1 * 8 + i_j_fused_2 * 2 + i_j_fused_3) % 64)
            T.reads(A[vi, vj])
            T.writes(B[vi, vj])
            B[vi, vj] = A[vi, vj]


def test_splitting_a_fused_loop_divides_the_whole_fused_sum():
    sch = tir.Schedule(copy_16_64)
    f = sch.fuse(*sch.get_loops(sch.get_block("B")))
    sch.split(f, [None, 8, 4, 2])
    check(sch, copy_16_64_fused_split)
    a = np.random.default_rng(1).uniform(-1, 1, (16, 64)).astype("float32")
    out = np.zeros((16, 64), "float32")
    _run(sch.mod["main"], a, out)
    np.testing.assert_array_equal(out, a)


@T.prim_func
def add_one_n(a: T.handle, b: T.handle):
    n = T.int32()
    A = T.match_buffer(a, (n,), "float32")
    B = T.match_buffer(b, (n,), "float32")
    for i in range(n):
        with T.block("B"):
            vi = T.axis.spatial(n, i)
            B[vi] = A[vi] + T.float32(1)


@T.prim_func
def add_one_n_split(a: T.handle, b: T.handle):
    n = T.int32()
    A = T.match_buffer(a, (n,), "float32")
    B = T.match_buffer(b, (n,), "float32")
    for i_0, i_1 in T.grid((n + 31) // 32, 32):
        with T.block("B"):
            vi = T.axis.spatial(n, i_0 * 32 + i_1)
            T.where(i_0 * 32 + i_1 < n)
            B[vi] = A[vi] + T.float32(1)


def test_split_infers_the_factor_of_a_symbolic_loop_as_a_ceiling_division():
    # as TVM: the outer extent is (n + 31) // 32 and T.where cuts the last tile
    sch = tir.Schedule(add_one_n, debug_mask="all")
    (i,) = sch.get_loops(sch.get_block("B"))
    sch.split(i, factors=[None, 32])
    check(sch, add_one_n_split)
    f = mlckit.build(sch.mod, target="llvm")
    for n in (1, 31, 32, 100):
        a = np.random.default_rng(n).standard_normal(n).astype("float32")
        b = np.zeros(n, "float32")
        f(a, b)
        np.testing.assert_allclose(b, a + 1)
    verify_trace_roundtrip(sch, add_one_n)
