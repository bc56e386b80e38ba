"""split and fuse: expected TVMScript, numbers, trace round trip, errors."""

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
