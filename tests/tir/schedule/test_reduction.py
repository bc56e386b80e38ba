"""decompose_reduction."""

from mlckit import tir
from mlckit.script import tir as T

from .common import check, expect_error, verify_numeric, verify_trace_roundtrip
from .workloads import elementwise, matmul


@T.prim_func
def matmul_decomposed(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32"),
                      C: T.Buffer((16, 16), "float32")):
    for i, j in T.grid(16, 16):
        with T.block("C_init"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = T.float32(0)
    for i, j, k in T.grid(16, 16, 16):
        with T.block("C_update"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]


@T.prim_func
def matmul_decomposed_inner(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32"),
                            C: T.Buffer((16, 16), "float32")):
    for i_0 in range(4):
        for i_1_init, j_init in T.grid(4, 16):
            with T.block("C_init"):
                vi = T.axis.spatial(16, i_0 * 4 + i_1_init)
                vj = T.axis.spatial(16, j_init)
                C[vi, vj] = T.float32(0)
        for i_1, j, k_0, k_1 in T.grid(4, 16, 3, 6):
            with T.block("C_update"):
                T.where(k_0 * 6 + k_1 < 16)
                vi = T.axis.spatial(16, i_0 * 4 + i_1)
                vj = T.axis.spatial(16, j)
                vk = T.axis.reduce(16, k_0 * 6 + k_1)
                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]


def test_decompose_reduction_outermost():
    sch = tir.Schedule(matmul, debug_mask="all")
    block = sch.get_block("C")
    i, _, _ = sch.get_loops(block)
    init = sch.decompose_reduction(block, i)
    assert sch.get(init).name_hint == "C_init"
    assert sch.get(block).name_hint == "C_update"
    check(sch, matmul_decomposed)
    verify_numeric(matmul, sch.mod)
    verify_trace_roundtrip(sch, matmul)


def test_decompose_reduction_with_predicate():
    sch = tir.Schedule(matmul, debug_mask="all")
    block = sch.get_block("C")
    i, j, k = sch.get_loops(block)
    i0, _ = sch.split(i, factors=[4, 4])
    sch.split(k, factors=[3, 6])
    sch.decompose_reduction(block, sch.get_loops(block)[1])
    check(sch, matmul_decomposed_inner)
    verify_numeric(matmul, sch.mod)
    verify_trace_roundtrip(sch, matmul)


def test_decompose_reduction_errors():
    sch = tir.Schedule(matmul)
    block = sch.get_block("C")
    i, j, k = sch.get_loops(block)
    sch.reorder(k, i, j)
    expect_error(sch, lambda: sch.decompose_reduction(block, i), "decompose_reduction",
                 "loop `i` must be above every loop of the reduction iterator `vk`")
    sch2 = tir.Schedule(elementwise)
    b = sch2.get_block("B")
    expect_error(sch2, lambda: sch2.decompose_reduction(b, sch2.get_loops(b)[0]),
                 "decompose_reduction", "block `B` is not a reduction block")
    c_loop = sch2.get_loops(sch2.get_block("C"))[0]
    expect_error(sch2, lambda: sch2.decompose_reduction(b, c_loop), "not one of the loops")
