"""The course's mm_relu, plain and scheduled (split / reorder / reverse_compute_at /
decompose_reduction / vectorize / unroll), shared by the lowering-pass tests."""

from __future__ import annotations

import numpy as np

import mlckit as tvm
from mlckit import tir
from mlckit.script import tir as T


@T.prim_func
def mm_relu(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32"),
            C: T.Buffer((128, 128), "float32")):
    T.func_attr({"global_symbol": "mm_relu", "tir.noalias": True})
    Y = T.alloc_buffer((128, 128), dtype="float32")
    for i, j, k in T.grid(128, 128, 128):
        with T.block("Y"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                Y[vi, vj] = T.float32(0)
            Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B[vk, vj]
    for i, j in T.grid(128, 128):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = T.max(Y[vi, vj], T.float32(0))


def plain() -> tvm.IRModule:
    return tvm.IRModule({"mm_relu": mm_relu})


def scheduled() -> tvm.IRModule:
    sch = tir.Schedule(plain())
    block = sch.get_block("Y", "mm_relu")
    i, j, k = sch.get_loops(block)
    j0, j1 = sch.split(j, factors=[None, 4])
    sch.reorder(j0, k, j1)
    sch.reverse_compute_at(sch.get_block("C", "mm_relu"), j0)
    sch.decompose_reduction(block, k)
    sch.vectorize(sch.get_loops(sch.get_block("C", "mm_relu"))[-1])
    sch.unroll(sch.get_loops(block)[-1])
    return sch.mod


def check_numbers(func, with_lnumpy: bool = False) -> None:
    """``func`` (lowered or not) run by numba_cpu (and lnumpy: test_pipeline; its
    Python loops take 10 s over 128^3) gives NumPy's relu(A @ B)."""
    from mlckit.backend import lnumpy, numba_cpu

    rng = np.random.default_rng(0)
    a = rng.random((128, 128), dtype="float32") - 0.5
    b = rng.random((128, 128), dtype="float32") - 0.5
    builds = [lambda f: numba_cpu.build(f, cache=False)] + [lnumpy.build] * with_lnumpy
    for build in builds:
        c = np.zeros((128, 128), "float32")
        build(func)(a, b, c)
        np.testing.assert_allclose(c, np.maximum(a @ b, 0), rtol=1e-4, atol=1e-4)
