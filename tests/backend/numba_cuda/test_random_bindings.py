"""Random splits and bindings of an elementwise and a reduction kernel equal NumPy, on the fast
path and on the simulator."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from mlckit import tir
from mlckit.backend import numba_cuda
from mlckit.script import tir as T


@T.prim_func
def scale_add(A: T.Buffer((6, 20), "float32"), B: T.Buffer((6, 20), "float32")):
    for i, j in T.grid(6, 20):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2) + T.float32(1)


@T.prim_func
def row_sum(A: T.Buffer((12, 10), "float32"), B: T.Buffer((12,), "float32")):
    for i, k in T.grid(12, 10):
        with T.block("B"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                B[vi] = T.float32(0)
            B[vi] = B[vi] + A[vi, vk]


AXES = ["blockIdx.x", "blockIdx.y", "threadIdx.x", "threadIdx.y"]


@st.composite
def elementwise(draw):
    """Split each loop by a (possibly non-dividing) factor, bind the pieces to distinct axes."""
    sch = tir.Schedule(scale_add)
    i, j = sch.get_loops(sch.get_block("B"))
    axes = draw(st.permutations(AXES))
    i0, i1 = sch.split(i, [None, draw(st.integers(1, 6))])
    j0, j1 = sch.split(j, [None, draw(st.integers(1, 20))])
    sch.reorder(i0, j0, i1, j1)
    for loop, axis in zip((i0, j0, i1, j1), axes):
        sch.bind(loop, axis)
    return sch


@st.composite
def reduction(draw):
    """Bind the spatial loop's pieces, keep the reduction loop serial (maybe split too)."""
    sch = tir.Schedule(row_sum)
    block = sch.get_block("B")
    i, k = sch.get_loops(block)
    i0, i1 = sch.split(i, [None, draw(st.integers(1, 12))])
    sch.bind(i0, draw(st.sampled_from(["blockIdx.x", "blockIdx.y"])))
    sch.bind(i1, draw(st.sampled_from(["threadIdx.x", "threadIdx.y"])))
    if draw(st.booleans()):
        sch.split(k, [None, draw(st.integers(1, 10))])
    if draw(st.booleans()):
        sch.decompose_reduction(block, sch.get_loops(block)[2])
    return sch


def _check(sch, run):
    func = sch.mod["main"]
    a = np.random.default_rng(0).uniform(-1, 1, [int(d) for d in
                                                 func.buffer_map[func.params[0]].shape])
    a = a.astype("float32")
    out = np.full([int(d) for d in func.buffer_map[func.params[1]].shape], np.nan, "float32")
    got = run(func, a, out)
    want = a * 2 + 1 if out.ndim == 2 else a.sum(axis=1)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def _fast(func, a, out):
    numba_cuda.build(func, mode="cpu")(a, out)
    return out


@settings(max_examples=8, deadline=None)
@given(sch=st.one_of(elementwise(), reduction()))
def test_random_bindings_on_the_fast_path(sch):
    _check(sch, _fast)


@settings(max_examples=4, deadline=None)
@given(sch=st.one_of(elementwise(), reduction()))
def test_random_bindings_on_the_simulator(simulator, sch):
    _check(sch, lambda func, a, out: simulator.run(func, a, out)[1])
