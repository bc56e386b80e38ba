"""What a GPU forbids, each a plain error naming what and where."""

from __future__ import annotations

import pytest

import mlckit
from mlckit import tir
from mlckit.backend import numba_cuda
from mlckit.error import TVMError

from .schedules import bind_vector_add, matmul, vector_add


def test_unbound_loop_asks_did_you_forget_to_bind():
    with pytest.raises(numba_cuda.MemoryVerificationError) as err:
        mlckit.build(vector_add, target="cuda")
    text = str(err.value)
    assert text.startswith("Memory verification failed with the following errors:\n"
                           "    Variable `C` is directly accessed by host memory (it is not "
                           "contained in a thread environment or in the function arguments.\n"
                           "    Variable `A` is directly")
    assert "  Did you forget to bind?\n" in text
    assert 'block "C" runs under the loop i, which is not bound to blockIdx/threadIdx' in text
    assert isinstance(err.value, TVMError)


def test_partly_bound_nest_names_the_unbound_loops():
    sch = tir.Schedule(matmul)
    i, j, k = sch.get_loops(sch.get_block("C"))
    with pytest.raises(numba_cuda.MemoryVerificationError, match="under the loops i, j, k"):
        numba_cuda.build(sch.mod["main"], mode="cpu")


def test_too_many_threads_per_block():
    sch = tir.Schedule(matmul)
    i, j, k = sch.get_loops(sch.get_block("C"))
    sch.bind(i, "threadIdx.y")
    sch.bind(j, "threadIdx.x")
    target = mlckit.target.Target({"kind": "cuda", "max_threads_per_block": 512})
    with pytest.raises(numba_cuda.GPULimitError,
                       match=r"1024 threads per block \(32 \(threadIdx.x\) x 32 "
                             r"\(threadIdx.y\)\), more than the device's limit of 512"):
        mlckit.build(sch.mod, target=target)


def test_extent_over_the_axis_limit():
    sch = tir.Schedule(vector_add)
    (i,) = sch.get_loops(sch.get_block("C"))
    _, i1 = sch.split(i, [None, 128])
    sch.bind(i1, "threadIdx.z")
    with pytest.raises(numba_cuda.GPULimitError, match="extent 128 to threadIdx.z, but CUDA "
                                                       "allows at most 64"):
        numba_cuda.build(sch.mod["main"], mode="cpu")


def test_shared_memory_over_the_limit():
    sch = tir.Schedule(matmul)
    block = sch.get_block("C")
    i, j, k = sch.get_loops(block)
    sch.bind(i, "blockIdx.x")
    sch.bind(j, "threadIdx.x")
    cache = sch.cache_read(block, 1, "shared")
    sch.compute_at(cache, i)
    target = mlckit.target.Target({"kind": "cuda", "max_shared_memory_per_block": 1024})
    with pytest.raises(numba_cuda.GPULimitError,
                       match=r"needs 4096 bytes of shared memory \(B_shared \(32, 32\) float32\), "
                             r"more than the device's 1024 bytes"):
        numba_cuda.build(sch.mod["main"], target=target, mode="cpu")


def test_unknown_scope():
    sch = tir.Schedule(vector_add)
    block = sch.get_block("C")
    (i,) = sch.get_loops(block)
    i0, i1 = sch.split(i, [None, 64])
    sch.bind(i0, "blockIdx.x")
    sch.bind(i1, "threadIdx.x")
    cache = sch.cache_read(block, 0, "warp")
    sch.compute_at(cache, i1)
    with pytest.raises(numba_cuda.ScopeError,
                       match="buffer .A_warp. has the storage scope .warp., which the "
                             "CUDA backend does not know"):
        numba_cuda.build(sch.mod["main"], mode="cpu")


def test_unknown_mode():
    with pytest.raises(mlckit.error.TVMValueError, match="unknown mode 'fast'"):
        numba_cuda.build(bind_vector_add().mod["main"], mode="fast")
