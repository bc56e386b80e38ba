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
