"""ThreadSync("shared"): a barrier where the threads of a block hand shared memory to each
other.  The expected functions of the lowered kernels are what TVM 0.27's ThreadSync gives
for the same input; the last ones are mlckit's extension to TIR that still has blocks."""

from __future__ import annotations

import pytest

import mlckit as tvm
from mlckit.script import tir as T
from mlckit.tir.transform import ThreadSyncError, thread_sync


class _ThreadSync(tvm.testing.CompareBeforeAfter):
    transform = tvm.tir.transform.ThreadSync("shared")


class TestReadAfterAnotherThreadsWrite(_ThreadSync):
    def before(A: T.Buffer((256,), "float32"), B: T.Buffer((256,), "float32")):
        bx = T.launch_thread("blockIdx.x", 4)
        tx = T.launch_thread("threadIdx.x", 64)
        S = T.decl_buffer((64,), "float32", scope="shared")
        S[tx] = A[bx * 64 + tx]
        B[bx * 64 + tx] = S[63 - tx]

    def expected(A: T.Buffer((256,), "float32"), B: T.Buffer((256,), "float32")):
        bx = T.launch_thread("blockIdx.x", 4)
        tx = T.launch_thread("threadIdx.x", 64)
        S = T.decl_buffer((64,), "float32", scope="shared")
        S[tx] = A[bx * 64 + tx]
        T.tvm_storage_sync("shared")
        B[bx * 64 + tx] = S[63 - tx]


class TestEachThreadReadingBackItsOwnElementNeedsNoBarrier(_ThreadSync):
    def before(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
        tx = T.launch_thread("threadIdx.x", 64)
        S = T.decl_buffer((64,), "float32", scope="shared")
        S[tx] = A[tx]
        B[tx] = S[tx]

    expected = before


class TestLoopGetsABarrierBeforeTheNextTilesFetch(_ThreadSync):
    """The fetch of iteration k + 1 overwrites what iteration k still reads."""

    def before(A: T.Buffer((256,), "float32"), B: T.Buffer((64,), "float32")):
        tx = T.launch_thread("threadIdx.x", 64)
        S = T.decl_buffer((64,), "float32", scope="shared")
        acc = T.decl_buffer((1,), "float32", scope="local")
        acc[0] = T.float32(0)
        for k in range(4):
            S[tx] = A[k * 64 + tx]
            for j in range(64):
                acc[0] = acc[0] + S[j]
        B[tx] = acc[0]

    def expected(A: T.Buffer((256,), "float32"), B: T.Buffer((64,), "float32")):
        tx = T.launch_thread("threadIdx.x", 64)
        S = T.decl_buffer((64,), "float32", scope="shared")
        acc = T.decl_buffer((1,), "float32", scope="local")
        acc[0] = T.float32(0)
        for k in range(4):
            T.tvm_storage_sync("shared")
            S[tx] = A[k * 64 + tx]
            T.tvm_storage_sync("shared")
            for j in range(64):
                acc[0] = acc[0] + S[j]
        B[tx] = acc[0]


class TestWriteAfterReadGetsABarrierToo(_ThreadSync):
    def before(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
        tx = T.launch_thread("threadIdx.x", 64)
        S = T.decl_buffer((64,), "float32", scope="shared")
        S[tx] = A[tx]
        B[tx] = S[63 - tx]
        S[tx] = A[tx] * T.float32(2)
        B[tx] = B[tx] + S[63 - tx]

    def expected(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
        tx = T.launch_thread("threadIdx.x", 64)
        S = T.decl_buffer((64,), "float32", scope="shared")
        S[tx] = A[tx]
        T.tvm_storage_sync("shared")
        B[tx] = S[63 - tx]
        T.tvm_storage_sync("shared")
        S[tx] = A[tx] * T.float32(2)
        T.tvm_storage_sync("shared")
        B[tx] = B[tx] + S[63 - tx]


class TestABarrierAlreadyThereIsKept(_ThreadSync):
    def before(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
        tx = T.launch_thread("threadIdx.x", 64)
        S = T.decl_buffer((64,), "float32", scope="shared")
        S[tx] = A[tx]
        T.tvm_storage_sync("shared")
        B[tx] = S[63 - tx]

    expected = before


class TestAConditionalFetchIsOneStatement(_ThreadSync):
    """The barrier goes after the ``if``, where every thread arrives."""

    def before(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
        tx = T.launch_thread("threadIdx.x", 64)
        S = T.decl_buffer((32,), "float32", scope="shared")
        if tx < 32:
            S[tx] = A[tx]
        B[tx] = S[tx // 2]

    def expected(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
        tx = T.launch_thread("threadIdx.x", 64)
        S = T.decl_buffer((32,), "float32", scope="shared")
        if tx < 32:
            S[tx] = A[tx]
        T.tvm_storage_sync("shared")
        B[tx] = S[tx // 2]


class TestLocalMemoryAndHostCodeAreLeftAlone(_ThreadSync):
    def before(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
        S = T.decl_buffer((64,), "float32", scope="shared")
        for i in range(64):
            S[i] = A[i]
        for i in range(64):
            B[i] = S[63 - i]
        tx = T.launch_thread("threadIdx.x", 64)
        L = T.decl_buffer((64,), "float32", scope="local")
        L[tx] = A[tx]
        B[tx] = L[63 - tx]

    expected = before


def test_a_barrier_needed_inside_a_condition_is_an_error():
    @T.prim_func
    def inside(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
        tx = T.launch_thread("threadIdx.x", 64)
        S = T.decl_buffer((64,), "float32", scope="shared")
        if tx < 32:
            S[tx] = A[tx]
            B[tx] = S[63 - tx]

    with pytest.raises(ThreadSyncError, match=r"under the condition `if tx < 32`"):
        thread_sync(inside)


def test_a_pass_that_finds_nothing_returns_its_input():
    @T.prim_func
    def copy(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
        tx = T.launch_thread("threadIdx.x", 64)
        B[tx] = A[tx]

    assert thread_sync(copy) is copy


def test_a_global_barrier_is_refused():
    with pytest.raises(tvm.TVMError, match="global"):
        tvm.tir.transform.ThreadSync("global")(tvm.IRModule({"main": _window_sum_blocks}))


# -- mlckit's extension: TIR with blocks and thread-bound loops (what numba_cuda prints) -----
@T.prim_func
def _window_sum_blocks(A: T.Buffer((259,), "float32"), B: T.Buffer((256,), "float32")):
    A_shared = T.alloc_buffer((259,), scope="shared")
    for i_0 in T.thread_binding(4, thread="blockIdx.x"):
        for i_1 in T.thread_binding(64, thread="threadIdx.x"):
            for ax0_0 in range(2):
                for ax0_1 in T.thread_binding(64, thread="threadIdx.x"):
                    with T.block("A_shared"):
                        v0 = T.axis.spatial(259, i_0 * 64 + (ax0_0 * 64 + ax0_1))
                        T.where(ax0_0 * 64 + ax0_1 < 66)
                        A_shared[v0] = A[v0]
            with T.block("C"):
                vi = T.axis.spatial(256, i_0 * 64 + i_1)
                B[vi] = A_shared[vi] + A_shared[vi + 1] + A_shared[vi + 2]


class TestBlocksAndThreadLoops(_ThreadSync):
    """The outermost bound loop is the kernel; a bound loop inside it is a thread index; the
    fetch block with its ``T.where`` is one statement: the barrier goes before the reader."""

    before = _window_sum_blocks

    def expected(A: T.Buffer((259,), "float32"), B: T.Buffer((256,), "float32")):
        A_shared = T.alloc_buffer((259,), scope="shared")
        for i_0 in T.thread_binding(4, thread="blockIdx.x"):
            for i_1 in T.thread_binding(64, thread="threadIdx.x"):
                for ax0_0 in range(2):
                    for ax0_1 in T.thread_binding(64, thread="threadIdx.x"):
                        with T.block("A_shared"):
                            v0 = T.axis.spatial(259, i_0 * 64 + (ax0_0 * 64 + ax0_1))
                            T.where(ax0_0 * 64 + ax0_1 < 66)
                            A_shared[v0] = A[v0]
                T.tvm_storage_sync("shared")
                with T.block("C"):
                    vi = T.axis.spatial(256, i_0 * 64 + i_1)
                    B[vi] = A_shared[vi] + A_shared[vi + 1] + A_shared[vi + 2]


class TestAThreadLoopShorterThanTheLaunchIsACondition(_ThreadSync):
    """``ax`` runs under ``if ax < 32`` in a block of 64 threads: the barrier goes after it."""

    def before(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
        S = T.alloc_buffer((32,), scope="shared")
        for tx in T.thread_binding(64, thread="threadIdx.x"):
            for ax in T.thread_binding(32, thread="threadIdx.x"):
                with T.block("S"):
                    v = T.axis.spatial(32, ax)
                    S[v] = A[v]
            with T.block("B"):
                v = T.axis.spatial(64, tx)
                B[v] = S[v // 2]

    def expected(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
        S = T.alloc_buffer((32,), scope="shared")
        for tx in T.thread_binding(64, thread="threadIdx.x"):
            for ax in T.thread_binding(32, thread="threadIdx.x"):
                with T.block("S"):
                    v = T.axis.spatial(32, ax)
                    S[v] = A[v]
            T.tvm_storage_sync("shared")
            with T.block("B"):
                v = T.axis.spatial(64, tx)
                B[v] = S[v // 2]


def test_lowered_and_block_forms_put_the_barrier_in_the_same_place():
    """ThreadSync after the lowering pipeline (as TVM runs it) and ThreadSync on the blocks
    (as numba_cuda runs it) both put one barrier between the fetch and its reader."""
    lowered = tvm.lower(tvm.IRModule({"main": _window_sum_blocks}))
    after_lowering = tvm.tir.transform.ThreadSync("shared")(lowered)["main"].script()
    on_blocks = thread_sync(_window_sum_blocks).script()
    for text in (after_lowering, on_blocks):
        lines = [ln.strip() for ln in text.splitlines()]
        assert lines.count('T.tvm_storage_sync("shared")') == 1
        fetch = max(k for k, ln in enumerate(lines) if ln.startswith("A_shared"))
        reader = min(k for k, ln in enumerate(lines) if ln.startswith("B["))
        assert fetch < lines.index('T.tvm_storage_sync("shared")') < reader


class TestTheSameElementForEveryThreadNeedsABarrier(_ThreadSync):
    """One thread writes ``S[0]``, all read it: the same index, but not one per thread."""

    def before(A: T.Buffer((2,), "float32"), B: T.Buffer((4,), "float32")):
        tx = T.launch_thread("threadIdx.x", 4)
        S = T.decl_buffer((1,), "float32", scope="shared")
        if tx < 1:
            S[0] = A[0]
        B[tx] = S[0]
        if tx < 1:
            S[0] = A[1]
        B[tx] = B[tx] + S[0]

    def expected(A: T.Buffer((2,), "float32"), B: T.Buffer((4,), "float32")):
        tx = T.launch_thread("threadIdx.x", 4)
        S = T.decl_buffer((1,), "float32", scope="shared")
        if tx < 1:
            S[0] = A[0]
        T.tvm_storage_sync("shared")
        B[tx] = S[0]
        T.tvm_storage_sync("shared")
        if tx < 1:
            S[0] = A[1]
        T.tvm_storage_sync("shared")
        B[tx] = B[tx] + S[0]


class TestWhatOnlyThreadZeroDoesNeedsNoBarrierInside(_ThreadSync):
    """A row's maximum added up by one thread (``threadIdx.x`` of extent 1): its loop reads
    and writes ``M[0]`` with no barrier inside; it gets one before (it reads what all threads
    wrote) and its readers after it get one."""

    def before(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
        for bx in T.thread_binding(1, thread="blockIdx.x"):  # noqa: B007 - the kernel
            with T.block("kernel"):
                P = T.alloc_buffer((64,), scope="shared")
                M = T.alloc_buffer((1,), scope="shared")
                for tx in T.thread_binding(64, thread="threadIdx.x"):
                    with T.block("P"):
                        v = T.axis.spatial(64, tx)
                        P[v] = A[v]
                for t0 in T.thread_binding(1, thread="threadIdx.x"):  # noqa: B007 - one thread
                    for k in range(64):
                        with T.block("M"):
                            vk = T.axis.reduce(64, k)
                            with T.init():
                                M[0] = T.float32(-1e30)
                            M[0] = T.max(M[0], P[vk])
                for tx in T.thread_binding(64, thread="threadIdx.x"):
                    with T.block("B"):
                        v = T.axis.spatial(64, tx)
                        B[v] = A[v] - M[0]

    def expected(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
        for bx in T.thread_binding(1, thread="blockIdx.x"):  # noqa: B007 - the kernel
            with T.block("kernel"):
                P = T.alloc_buffer((64,), scope="shared")
                M = T.alloc_buffer((1,), scope="shared")
                for tx in T.thread_binding(64, thread="threadIdx.x"):
                    with T.block("P"):
                        v = T.axis.spatial(64, tx)
                        P[v] = A[v]
                T.tvm_storage_sync("shared")
                for t0 in T.thread_binding(1, thread="threadIdx.x"):  # noqa: B007 - one thread
                    for k in range(64):
                        with T.block("M"):
                            vk = T.axis.reduce(64, k)
                            with T.init():
                                M[0] = T.float32(-1e30)
                            M[0] = T.max(M[0], P[vk])
                for tx in T.thread_binding(64, thread="threadIdx.x"):
                    T.tvm_storage_sync("shared")  # a full thread loop is no condition
                    with T.block("B"):
                        v = T.axis.spatial(64, tx)
                        B[v] = A[v] - M[0]
