"""A loop bound to the thread axis of a loop around it, its body using the outer loop's
variable: in a kernel both variables are the one thread index, so only the diagonal would
run (TVM generates that kernel silently; the no-GPU path would compute every pair).  mlckit
refuses it when it builds, naming the loops and the block.  A nested loop that does not use
the outer variable (a cooperative fetch) and loops one after the other stay fine."""

import numpy as np
import pytest

import mlckit
from mlckit import tir
from mlckit.backend import numba_cuda
from mlckit.script import tir as T

from .common import refused


@T.prim_func
def add_one(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32")):
    for i, j in T.grid(64, 64):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] + T.float32(1)


def _bound(outer: str, inner: str):
    sch = tir.Schedule(add_one)
    i, j = sch.get_loops(sch.get_block("B"))
    sch.bind(i, outer)
    sch.bind(j, inner)
    return sch.mod["main"]


@pytest.mark.parametrize("axis", ["threadIdx.x", "blockIdx.x"])
def test_a_loop_bound_to_the_axis_of_a_loop_around_it_is_refused(axis):
    func = _bound(axis, axis)
    refused(lambda: mlckit.build(func, target="cuda"), "the loop j (around block 'B')",
            f"bound to '{axis}'", "the loop i around it", "only the iterations with i == j",
            kind=numba_cuda.ThreadBindingError)
    refused(lambda: numba_cuda.build(func, mode="sim"), "i == j")


@pytest.mark.parametrize("mode", ["cpu", "sim"])
def test_two_axes_compute_every_element(mode):
    f = numba_cuda.build(_bound("blockIdx.x", "threadIdx.x"), mode=mode)
    a = np.random.default_rng(0).random((64, 64), dtype="float32")
    b = np.zeros((64, 64), "float32")
    f(a, b)
    np.testing.assert_array_equal(b, a + 1)


@T.prim_func
def two_steps(A: T.Buffer((4, 32), "float32"), B: T.Buffer((4, 32), "float32"),
              C: T.Buffer((4, 32), "float32")):
    for i in T.thread_binding(4, thread="blockIdx.x"):
        for j in T.thread_binding(32, thread="threadIdx.x"):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj] * T.float32(2)
        for j in T.thread_binding(32, thread="threadIdx.x"):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = B[vi, vj] + T.float32(1)


@pytest.mark.parametrize("mode", ["cpu", "sim"])
def test_sibling_loops_on_the_same_axis_are_fine(mode):
    f = numba_cuda.build(two_steps, mode=mode)
    a = np.arange(128, dtype="float32").reshape(4, 32)
    b, c = np.zeros((4, 32), "float32"), np.zeros((4, 32), "float32")
    f(a, b, c)
    np.testing.assert_array_equal(c, a * 2 + 1)


@T.prim_func
def fetch_like(A: T.Buffer((4, 32), "float32"), B: T.Buffer((4, 32), "float32")):
    for i in T.thread_binding(4, thread="blockIdx.x"):
        for tx in T.thread_binding(32, thread="threadIdx.x"):  # noqa: B007 - the point
            for ty in T.thread_binding(32, thread="threadIdx.x"):  # does not use tx
                with T.block("B"):
                    vi, vj = T.axis.remap("SS", [i, ty])
                    B[vi, vj] = A[vi, vj] * T.float32(2)


@pytest.mark.parametrize("mode", ["cpu", "sim"])
def test_a_nested_loop_on_the_same_axis_that_ignores_the_outer_one_is_fine(mode):
    f = numba_cuda.build(fetch_like, mode=mode)
    a = np.arange(128, dtype="float32").reshape(4, 32)
    b = np.zeros((4, 32), "float32")
    f(a, b)
    np.testing.assert_array_equal(b, a * 2)
