"""reorder and add_unit_loop."""

from mlckit import tir
from mlckit.script import tir as T

from .common import check, expect_error, verify_numeric, verify_trace_roundtrip
from .workloads import elementwise, matmul


@T.prim_func
def matmul_reordered(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32"),
                     C: T.Buffer((16, 16), "float32")):
    for k, j, i in T.grid(16, 16, 16):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]


@T.prim_func
def matmul_unit_loop(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32"),
                     C: T.Buffer((16, 16), "float32")):
    for u, i, j, k in T.grid(1, 16, 16, 16):  # noqa: B007 - the unit loop
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]


def test_reorder():
    sch = tir.Schedule(matmul, debug_mask="all")
    i, j, k = sch.get_loops(sch.get_block("C"))
    sch.reorder(k, j, i)
    check(sch, matmul_reordered)
    verify_numeric(matmul, sch.mod)
    verify_trace_roundtrip(sch, matmul)


def test_reorder_subset_keeps_other_positions():
    sch = tir.Schedule(matmul, debug_mask="all")
    i, j, k = sch.get_loops(sch.get_block("C"))
    sch.reorder(k, i)
    assert [sch.get(lp).loop_var.name for lp in sch.get_loops(sch.get_block("C"))] == ["k", "j", "i"]


def test_add_unit_loop():
    sch = tir.Schedule(matmul, debug_mask="all")
    i, _, _ = sch.get_loops(sch.get_block("C"))
    u = sch.add_unit_loop(i)
    assert sch.get(u).extent.value == 1
    check(sch, matmul_unit_loop)
    verify_numeric(matmul, sch.mod)
    verify_trace_roundtrip(sch, matmul)


def test_reorder_errors():
    sch = tir.Schedule(elementwise)
    i, j = sch.get_loops(sch.get_block("B"))
    i2, j2 = sch.get_loops(sch.get_block("C"))
    expect_error(sch, lambda: sch.reorder(i, i), "reorder", "loop `i` appears more than once")
    expect_error(sch, lambda: sch.reorder(j, j2), "reorder", "not in a single chain")


def test_add_unit_loop_on_a_loop_that_no_longer_exists():
    sch = tir.Schedule(matmul)
    i, j, _ = sch.get_loops(sch.get_block("C"))
    sch.fuse(i, j)
    expect_error(sch, lambda: sch.add_unit_loop(i), "add_unit_loop", "no longer exists")


@T.prim_func
def _mm_6x4x8(A: T.Buffer((6, 8), "float32"), B: T.Buffer((8, 4), "float32"),
              C: T.Buffer((6, 4), "float32")):
    for i, j, k in T.grid(6, 4, 8):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]


def _fused_then_split(inner: int, outer: list):
    sch = tir.Schedule(_mm_6x4x8, debug_mask="all")
    i, j, k = sch.get_loops(sch.get_block("C"))
    f0, f1 = sch.split(sch.fuse(j, k), [None, inner])
    f00, f01 = sch.split(f0, outer)
    return sch, i, f00, f01, f1


def test_reorder_keeps_a_fused_spatial_and_reduction_loop_where_the_reduction_starts_first():
    # as TVM: j_k_fused drives vj and vk; moving it out of i (or reordering without moving it,
    # as a whole chain in its own order) still reaches vk == 0 first for each C[vi, vj]
    sch = tir.Schedule(_mm_6x4x8, debug_mask="all")
    i, j, k = sch.get_loops(sch.get_block("C"))
    fused = sch.fuse(j, k)
    sch.reorder(i, fused)
    sch.reorder(fused, i)
    verify_numeric(_mm_6x4x8, sch.mod)
    # dividing splits: vj = f_0_0, vk = f_0_1 * 4 + f_1, so f_1 and f_0_1 may swap
    sch, i, f00, f01, f1 = _fused_then_split(4, [None, 2])
    sch.reorder(f00, i, f1, f01)
    verify_numeric(_mm_6x4x8, sch.mod)


def test_reorder_refuses_to_reach_the_reduction_start_late():
    # non-dividing splits of j_k_fused: after this reorder some C[vi, vj] would get its
    # T.init() (vk == 0) after other updates (TVM 0.27 accepts it and computes wrong numbers)
    sch, i, f00, f01, f1 = _fused_then_split(3, [6, None])
    expect_error(sch, lambda: sch.reorder(f00, i, f1, f01), "drives both spatial and reduction",
                 "T.init() in the middle of the reduction")
