"""decompose_reduction."""

from mlckit import tir
from mlckit.script import tir as T

from .common import check, expect_error, verify_numeric, verify_trace_roundtrip
from .workloads import elementwise, matmul, softmax


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


@T.prim_func
def softmax_expsum_at_j_decomposed(A: T.Buffer((4, 8), "float32"),
                                   B: T.Buffer((4, 8), "float32")):
    maxelem = T.alloc_buffer((4,), "float32")
    expo = T.alloc_buffer((4, 8), "float32")
    expsum = T.alloc_buffer((4,), "float32")
    for i, k in T.grid(4, 8):
        with T.block("maxelem"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                maxelem[vi] = T.min_value("float32")
            maxelem[vi] = T.max(maxelem[vi], A[vi, vk])
    for i, j in T.grid(4, 8):
        with T.block("exp"):
            vi, vj = T.axis.remap("SS", [i, j])
            expo[vi, vj] = T.exp(A[vi, vj] - maxelem[vi])
    for i, j in T.grid(4, 8):
        with T.block("expsum_init"):
            vi = T.axis.spatial(4, i)
            expsum[vi] = T.float32(0)
        for ax0 in range(8):
            with T.block("expsum_update"):
                vi, vk = T.axis.remap("SR", [i, ax0])
                expsum[vi] = expsum[vi] + expo[vi, vk]
        with T.block("norm"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = expo[vi, vj] / expsum[vi]


def test_decompose_reduction_above_a_repeating_loop_is_rejected():
    # After compute_at under `norm`'s j, `expsum` is recomputed for every j: loop j drives
    # none of its iterators.  An init block before i (or j) would run once while the update
    # accumulates over all 8 values of j (TVM v0.23 discards j and builds that program).
    sch = tir.Schedule(softmax, debug_mask="all")
    _, j = sch.get_loops(sch.get_block("norm"))
    expsum = sch.get_block("expsum")
    sch.compute_at(expsum, j)
    i, j, ax0 = sch.get_loops(expsum)
    for loop, name in ((i, "i"), (j, "j")):
        expect_error(sch, lambda loop=loop: sch.decompose_reduction(expsum, loop),
                     "ScheduleError: decompose_reduction: loop `j` drives no iterator of block "
                     "`expsum`, so the block's reduction is redone in each of its iterations; "
                     f"the init block placed before loop `{name}` would not run again for them")
    # inside j the init runs once per repetition
    init = sch.decompose_reduction(expsum, ax0)
    assert sch.get(init).name_hint == "expsum_init"
    check(sch, softmax_expsum_at_j_decomposed)
    verify_numeric(softmax, sch.mod)
    verify_trace_roundtrip(sch, softmax)


@T.prim_func
def rowsum_unit_loop(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4,), "float32")):
    for i, _u, k in T.grid(4, 1, 8):
        with T.block("B"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                B[vi] = T.float32(0)
            B[vi] = B[vi] + A[vi, vk]


@T.prim_func
def rowsum_unit_loop_decomposed(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4,), "float32")):
    for i_init in range(4):
        with T.block("B_init"):
            vi = T.axis.spatial(4, i_init)
            B[vi] = T.float32(0)
    for i, _u, k in T.grid(4, 1, 8):
        with T.block("B_update"):
            vi, vk = T.axis.remap("SR", [i, k])
            B[vi] = B[vi] + A[vi, vk]


def test_decompose_reduction_discards_unit_loops():
    # a unit loop that drives no iterator repeats nothing: it is dropped, as in TVM
    sch = tir.Schedule(rowsum_unit_loop, debug_mask="all")
    block = sch.get_block("B")
    sch.decompose_reduction(block, sch.get_loops(block)[0])
    check(sch, rowsum_unit_loop_decomposed)
    verify_numeric(rowsum_unit_loop, sch.mod)
    verify_trace_roundtrip(sch, rowsum_unit_loop)
