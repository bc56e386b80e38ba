"""The course's GPU kernels (``chapter_gpu_acceleration/part1``) and their schedules, at sizes
the simulator runs in a second; every test of the CUDA backend draws from here."""

from __future__ import annotations

import numpy as np

from mlckit import tir
from mlckit.script import tir as T

from ...kernels import make_matmul


@T.prim_func
def vector_add(A: T.Buffer((256,), "float32"), B: T.Buffer((256,), "float32"),
               C: T.Buffer((256,), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": True})
    for i in T.grid(256):
        with T.block("C"):
            vi = T.axis.remap("S", [i])
            C[vi] = A[vi] + B[vi]


@T.prim_func
def window_sum(A: T.Buffer((259,), "float32"), B: T.Buffer((256,), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": True})
    for i in T.grid(256):
        with T.block("C"):
            vi = T.axis.remap("S", [i])
            B[vi] = A[vi] + A[vi + 1] + A[vi + 2]


matmul = make_matmul(32)


def bind_vector_add(nthread=64):
    sch = tir.Schedule(vector_add)
    (i,) = sch.get_loops(sch.get_block("C"))
    i0, i1 = sch.split(i, [None, nthread])
    sch.bind(i0, "blockIdx.x")
    sch.bind(i1, "threadIdx.x")
    return sch


def host_loop_vector_add(nthread=64):
    """Only the inner loop bound: the outer one stays on the host and launches one kernel per
    iteration, passing its variable to the kernel (TVM's SplitHostDevice does the same)."""
    sch = tir.Schedule(vector_add)
    (i,) = sch.get_loops(sch.get_block("C"))
    _, i1 = sch.split(i, [None, nthread])
    sch.bind(i1, "threadIdx.x")
    return sch


def shared_window_sum(nthread=64):
    """The course's window sum: A cached in shared memory, fetched cooperatively."""
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
    return sch


def local_blocking(local=2, block=4, tile_k=4):
    """The course's ``blocking``: block tiles, per-thread tiles accumulated "local"."""
    sch = tir.Schedule(matmul)
    block_c = sch.get_block("C")
    c_local = sch.cache_write(block_c, 0, "local")
    i, j, k = sch.get_loops(block_c)
    i0, i1, i2 = sch.split(i, [None, block, local])
    j0, j1, j2 = sch.split(j, [None, block, local])
    k0, k1 = sch.split(k, [None, tile_k])
    sch.unroll(k1)
    sch.reorder(i0, j0, i1, j1, k0, k1, i2, j2)
    sch.reverse_compute_at(c_local, j1)
    sch.bind(i0, "blockIdx.y")
    sch.bind(j0, "blockIdx.x")
    sch.bind(i1, "threadIdx.y")
    sch.bind(j1, "threadIdx.x")
    sch.decompose_reduction(block_c, k0)
    return sch


def _coop_fetch(sch, block, nthread, index, loop):
    cache = sch.cache_read(block, index, "shared")
    sch.compute_at(cache, loop)
    inner = sch.fuse(*sch.get_loops(cache)[-2:])
    _, tx, vec = sch.split(inner, [None, nthread, 4])
    sch.vectorize(vec)
    sch.bind(tx, "threadIdx.x")


def shared_blocking(local=2, block=4, tile_k=4):
    """The course's ``blocking_with_shared``: also A and B tiles in shared memory."""
    sch = tir.Schedule(matmul)
    block_c = sch.get_block("C")
    c_local = sch.cache_write(block_c, 0, "local")
    i, j, k = sch.get_loops(block_c)
    i0, i1, i2 = sch.split(i, [None, block, local])
    j0, j1, j2 = sch.split(j, [None, block, local])
    k0, k1 = sch.split(k, [None, tile_k])
    sch.reorder(i0, j0, i1, j1, k0, k1, i2, j2)
    sch.reverse_compute_at(c_local, j1)
    sch.bind(i0, "blockIdx.y")
    sch.bind(j0, "blockIdx.x")
    tx = sch.fuse(i1, j1)
    sch.bind(tx, "threadIdx.x")
    _coop_fetch(sch, block_c, block * block, 0, k0)
    _coop_fetch(sch, block_c, block * block, 1, k0)
    sch.decompose_reduction(block_c, k0)
    return sch


def inputs(func, seed=0):
    """Random arguments for ``func``'s buffers (outputs poisoned with NaN)."""
    rng = np.random.default_rng(seed)
    return [rng.uniform(-1, 1, [int(d) for d in b.shape]).astype(b.dtype)
            for b in func.buffer_map.values()]


def reference(name, args):
    """What NumPy computes for the kernel ``name`` on ``args`` (its last argument is out)."""
    if name == "vector_add":
        return args[0] + args[1]
    if name == "window_sum":
        a, n = args[0], args[1].shape[0]
        return a[:n] + a[1:n + 1] + a[2:n + 2]
    return args[0] @ args[1]


# name -> (kernel name for reference, schedule builder)
CASES = {
    "vector_add": ("vector_add", bind_vector_add),
    "vector_add_host_loop": ("vector_add", host_loop_vector_add),
    "window_sum_shared": ("window_sum", shared_window_sum),
    "matmul_local": ("matmul", local_blocking),
    "matmul_shared": ("matmul", shared_blocking),
}
