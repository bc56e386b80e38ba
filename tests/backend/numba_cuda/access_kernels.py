"""Kernels whose every access the access-recorder tests count by hand: the course's window
sum with shared memory and shared-memory tiled matmul (``chapter_gpu_acceleration/part1``,
scheduled as there), the window sum written out with its barrier and without, and two copies,
one coalesced and one not."""

from __future__ import annotations

from mlckit import tir
from mlckit.script import tir as T


@T.prim_func
def window_sum(A: T.Buffer((259,), "float32"), B: T.Buffer((256,), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": True})
    for i in T.grid(256):
        with T.block("C"):
            vi = T.axis.remap("S", [i])
            B[vi] = A[vi] + A[vi + 1] + A[vi + 2]


def window_sum_shared(nthread: int = 64):
    """The course's schedule: blocks of ``nthread``, ``A`` cached in shared memory by a
    cooperative fetch (``nthread + 2`` elements per block, the fetch loop bound to
    ``threadIdx.x`` in ``ceil((nthread + 2) / nthread)`` rounds)."""
    sch = tir.Schedule(window_sum)
    block_c = sch.get_block("C")
    (i,) = sch.get_loops(block_c)
    i0, i1 = sch.split(i, [None, nthread])
    sch.bind(i0, "blockIdx.x")
    sch.bind(i1, "threadIdx.x")
    a_shared = sch.cache_read(block_c, 0, "shared")
    sch.compute_at(a_shared, i1)
    ax = sch.get_loops(a_shared)[-1]
    _, ax1 = sch.split(ax, [None, nthread])
    sch.bind(ax1, "threadIdx.x")
    return sch.mod["main"]


@T.prim_func
def window_sum_by_hand(A: T.Buffer((259,), "float32"), B: T.Buffer((256,), "float32")):
    # what window_sum_shared(64) lowers to, its barrier written out
    for bx in T.thread_binding(4, thread="blockIdx.x"):
        for tx in T.thread_binding(64, thread="threadIdx.x"):
            with T.block("tile"):
                A_shared = T.alloc_buffer((66,), scope="shared")
                for r in range(2):
                    if r * 64 + tx < 66:
                        A_shared[r * 64 + tx] = A[bx * 64 + r * 64 + tx]
                T.tvm_storage_sync("shared")
                B[bx * 64 + tx] = A_shared[tx] + A_shared[tx + 1] + A_shared[tx + 2]


@T.prim_func
def window_sum_no_barrier(A: T.Buffer((259,), "float32"), B: T.Buffer((256,), "float32")):
    # the same kernel with its T.tvm_storage_sync("shared") forgotten
    for bx in T.thread_binding(4, thread="blockIdx.x"):
        for tx in T.thread_binding(64, thread="threadIdx.x"):
            with T.block("tile"):
                A_shared = T.alloc_buffer((66,), scope="shared")
                for r in range(2):
                    if r * 64 + tx < 66:
                        A_shared[r * 64 + tx] = A[bx * 64 + r * 64 + tx]
                B[bx * 64 + tx] = A_shared[tx] + A_shared[tx + 1] + A_shared[tx + 2]


@T.prim_func
def matmul(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32"),
           C: T.Buffer((64, 64), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": True})
    for i, j, k in T.grid(64, 64, 64):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]


def _coop_fetch(sch, block, nthread, read_idx, loop):
    cache = sch.cache_read(block=block, read_buffer_index=read_idx, storage_scope="shared")
    sch.compute_at(block=cache, loop=loop)
    inner0, inner1 = sch.get_loops(block=cache)[-2:]
    inner = sch.fuse(inner0, inner1)
    _, tx, vec = sch.split(loop=inner, factors=[None, nthread, 4])
    sch.vectorize(vec)
    sch.bind(tx, "threadIdx.x")


def matmul_shared(local: int = 4, block: int = 8, tile_k: int = 8):
    """The course's ``blocking_with_shared(sch, local, local, block, block, tile_k)`` on the
    64x64 matmul: ``block * block`` threads per block, each computing ``local x local``
    outputs; A's and B's tiles fetched into shared memory by all threads, 4 floats each."""
    sch = tir.Schedule(matmul)
    block_c = sch.get_block("C")
    c_local = sch.cache_write(block_c, 0, "local")
    i, j, k = sch.get_loops(block=block_c)
    i0, i1, i2 = sch.split(loop=i, factors=[None, block, local])
    j0, j1, j2 = sch.split(loop=j, factors=[None, block, local])
    k0, k1 = sch.split(loop=k, factors=[None, tile_k])
    sch.reorder(i0, j0, i1, j1, k0, k1, i2, j2)
    sch.reverse_compute_at(c_local, j1)
    sch.bind(i0, "blockIdx.y")
    sch.bind(j0, "blockIdx.x")
    tx = sch.fuse(i1, j1)
    sch.bind(tx, "threadIdx.x")
    _coop_fetch(sch, block_c, block * block, 0, k0)
    _coop_fetch(sch, block_c, block * block, 1, k0)
    sch.decompose_reduction(block_c, k0)
    return sch.mod["main"]


def matmul_16x16():
    """The 64x64 matmul on blocks of 16x16 threads (threadIdx.y, threadIdx.x), one output
    per thread, A's and B's 16x16 tiles in shared memory: the "16x16-thread kernel"."""
    sch = tir.Schedule(matmul)
    block_c = sch.get_block("C")
    i, j, k = sch.get_loops(block_c)
    i0, i1 = sch.split(i, [None, 16])
    j0, j1 = sch.split(j, [None, 16])
    k0, k1 = sch.split(k, [None, 16])
    sch.reorder(i0, j0, i1, j1, k0, k1)
    sch.bind(i0, "blockIdx.y")
    sch.bind(j0, "blockIdx.x")
    sch.bind(i1, "threadIdx.y")
    sch.bind(j1, "threadIdx.x")
    for idx in (0, 1):
        cache = sch.cache_read(block_c, idx, "shared")
        sch.compute_at(cache, k0)
        a, b = sch.get_loops(cache)[-2:]
        sch.bind(a, "threadIdx.y")
        sch.bind(b, "threadIdx.x")
    sch.decompose_reduction(block_c, k0)
    return sch.mod["main"]


@T.prim_func
def copy_rows(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32")):
    # threadIdx.x walks the innermost index: a warp reads 32 consecutive floats
    for by in T.thread_binding(64, thread="blockIdx.x"):
        for tx in T.thread_binding(64, thread="threadIdx.x"):
            B[by, tx] = A[by, tx]


@T.prim_func
def copy_columns(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32")):
    # threadIdx.x walks the outer index: a warp reads 32 floats 256 bytes apart
    for by in T.thread_binding(64, thread="blockIdx.x"):
        for tx in T.thread_binding(64, thread="threadIdx.x"):
            B[tx, by] = A[tx, by]
