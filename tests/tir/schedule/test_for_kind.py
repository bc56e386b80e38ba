"""parallel, vectorize, unroll, bind."""

from mlckit import tir
from mlckit.script import tir as T

from .common import check, expect_error, verify_numeric, verify_trace_roundtrip
from .workloads import elementwise, matmul


@T.prim_func
def matmul_kinds(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32"),
                 C: T.Buffer((16, 16), "float32")):
    for i in T.parallel(16):
        for k in T.unroll(16):
            for j in T.vectorized(16):
                with T.block("C"):
                    vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                    with T.init():
                        C[vi, vj] = T.float32(0)
                    C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]


@T.prim_func
def elementwise_bound(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    B = T.alloc_buffer((16, 16), "float32")
    for i in T.thread_binding(16, thread="blockIdx.x"):
        for j in T.thread_binding(16, thread="threadIdx.x"):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(16, 16):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] + T.float32(1)


def test_parallel_vectorize_unroll():
    sch = tir.Schedule(matmul, debug_mask="all")
    i, j, k = sch.get_loops(sch.get_block("C"))
    sch.reorder(i, k, j)
    sch.parallel(i)
    sch.unroll(k)
    sch.vectorize(j)
    check(sch, matmul_kinds)
    verify_numeric(matmul, sch.mod)
    verify_trace_roundtrip(sch, matmul)


def test_bind():
    sch = tir.Schedule(elementwise, debug_mask="all")
    i, j = sch.get_loops(sch.get_block("B"))
    sch.bind(i, "blockIdx.x")
    sch.bind(j, "threadIdx.x")
    check(sch, elementwise_bound)
    verify_trace_roundtrip(sch, elementwise)
    # on the CPU backends thread-bound loops run as serial loops: same numbers
    verify_numeric(elementwise, sch.mod)


def test_bind_gpu_style_matmul_runs_on_cpu():
    """The course's GPU matmul shape: split i and j, bind the outer parts to blockIdx and the
    inner parts to threadIdx, the reduction loop inside; numerically equal on CPU backends."""
    sch = tir.Schedule(matmul, debug_mask="all")
    block = sch.get_block("C")
    i, j, k = sch.get_loops(block)
    i0, i1 = sch.split(i, factors=[None, 4])
    j0, j1 = sch.split(j, factors=[None, 8])
    sch.reorder(i0, j0, i1, j1, k)
    sch.bind(i0, "blockIdx.y")
    sch.bind(j0, "blockIdx.x")
    sch.bind(i1, "threadIdx.y")
    sch.bind(j1, "threadIdx.x")
    loops = [sch.get(lp) for lp in sch.get_loops(block)]
    assert [lp.thread_binding.thread_tag for lp in loops[:4]] == [
        "blockIdx.y", "blockIdx.x", "threadIdx.y", "threadIdx.x"]
    verify_numeric(matmul, sch.mod)
    verify_trace_roundtrip(sch, matmul)


def test_bind_reduction_loop_to_thread_runs_on_cpu():
    """threadIdx may drive a reduction iterator (a cross-thread reduction in TVM); run
    serially on the CPU it still sums correctly."""
    sch = tir.Schedule(matmul)
    i, j, k = sch.get_loops(sch.get_block("C"))
    sch.bind(i, "blockIdx.x")
    sch.bind(k, "threadIdx.x")
    verify_numeric(matmul, sch.mod)


def test_parallel_reduction_loop_is_rejected():
    sch = tir.Schedule(matmul)
    i, j, k = sch.get_loops(sch.get_block("C"))
    expect_error(sch, lambda: sch.parallel(k), "parallel", "loop `k` cannot be parallelized",
                 "block `C`", "reduction iterator `vk`")
    expect_error(sch, lambda: sch.vectorize(k), "vectorize", "cannot be vectorized")
    expect_error(sch, lambda: sch.bind(k, "blockIdx.x"), "bind", "bound to a thread axis")
    expect_error(sch, lambda: sch.bind(i, "threadIdx.w"), "bind", "unknown thread axis")


def test_unroll_needs_a_loop():
    sch = tir.Schedule(matmul)
    block = sch.get_block("C")
    expect_error(sch, lambda: sch.unroll(block), "unroll", "expected a LoopRV, got BlockRV")


def test_a_loop_over_a_decomposed_reduction_cannot_be_parallelized():
    # as TVM ("not compact dataflow"): C_update has a reduction iterator and no T.init(), so
    # it is neither a complete nor a reduction block; parallel/vectorize before
    # decompose_reduction is the order that works (Numba would fail later otherwise)
    sch = tir.Schedule(matmul)
    block = sch.get_block("C")
    i, j, k = sch.get_loops(block)
    sch.decompose_reduction(block, k)
    expect_error(sch, lambda: sch.parallel(i), "parallel", "loop `i` cannot be parallelized",
                 "block `C_update` under it is neither a complete block nor a reduction block",
                 "no T.init()")
    expect_error(sch, lambda: sch.vectorize(j), "vectorize", "loop `j` cannot be vectorized",
                 "`C_update`")
    sch.unroll(i)  # unroll needs no independent iterations
    verify_numeric(matmul, sch.mod)


def test_parallel_then_decompose_reduction_runs():
    sch = tir.Schedule(matmul, debug_mask="all")
    block = sch.get_block("C")
    i, j, k = sch.get_loops(block)
    sch.parallel(i)
    sch.vectorize(j)  # j is spatial for C; before the split into init and update it is legal
    sch.decompose_reduction(block, k)
    verify_numeric(matmul, sch.mod)
    verify_trace_roundtrip(sch, matmul)
