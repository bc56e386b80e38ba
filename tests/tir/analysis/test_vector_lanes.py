"""interfering_lanes: a T.vectorized loop whose lanes read what another lane writes, or all
write one element; TVM computes such a loop as one vector operation, lnumpy lane by lane."""

from __future__ import annotations

import numpy as np

import mlckit
from mlckit.script import tir as T
from mlckit.tir.analysis.vector_lanes import interfering_lanes


@T.prim_func(private=True)
def shift(A: T.Buffer((8,), "float32")):
    for j in T.vectorized(7):
        A[j + 1] = A[j] * T.float32(2)


@T.prim_func(private=True)
def one_element(A: T.Buffer((8,), "float32"), B: T.Buffer((1,), "float32")):
    for j in T.vectorized(8):
        with T.block("s"):
            vj = T.axis.spatial(8, j)
            B[0] = B[0] + A[vj]


@T.prim_func(private=True)
def two_blocks(A: T.Buffer((9,), "float32"), B: T.Buffer((8,), "float32")):
    for j in T.vectorized(8):
        with T.block("a"):
            va = T.axis.spatial(8, j)
            A[va] = T.float32(1)
        with T.block("b"):
            vb = T.axis.spatial(8, j)
            B[vb] = A[vb + 1]


@T.prim_func(private=True)
def matmul_tile(A: T.Buffer((4, 4), "float32"), B: T.Buffer((4, 4), "float32"),
                C: T.Buffer((4, 4), "float32")):
    for i, k in T.grid(4, 4):
        for j in T.vectorized(4):
            with T.block("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    C[vi, vj] = T.float32(0)
                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]


def test_a_lane_reading_the_element_the_next_lane_writes_interferes():
    assert interfering_lanes(shift) == (
        "in the T.vectorized loop 'j', a lane reads A[j], an element another lane writes "
        "(A[j + 1]): TVM reads every lane before any writes")


def test_lanes_writing_one_element_interfere():
    assert interfering_lanes(one_element) == (
        "in the T.vectorized loop 'j', every lane writes B[0]: TVM keeps the last lane's value")


def test_blocks_compare_in_the_loops_variables():
    assert interfering_lanes(two_blocks) == (
        "in the T.vectorized loop 'j', a lane reads A[j + 1], an element another lane writes "
        "(A[j]): TVM reads every lane before any writes")


def test_each_lane_updating_its_own_element_does_not_interfere():
    assert interfering_lanes(matmul_tile) is None


@T.prim_func(private=True)
def disjoint_halves(A: T.Buffer((16,), "float32")):
    for j in T.vectorized(8):
        A[j] = A[j + 8] * T.float32(2)


def test_lanes_reading_elements_no_lane_writes_do_not_interfere():
    """``A[j + 8]`` is read and ``A[j]`` written over 8 lanes: no lane reads what another
    writes, and lane by lane gives the vector result."""
    assert interfering_lanes(disjoint_halves) is None


@T.prim_func(private=True)
def one_lane(A: T.Buffer((1, 8), "float32"), B: T.Buffer((1, 8), "float32")):
    for n in T.vectorized(1):  # noqa: B007 - a batch of 1: the store does not use n
        for j in range(8):
            B[0, j] = A[0, j]


def test_a_loop_of_one_lane_does_not_interfere():
    """A fused batch of 1 leaves the store without the loop's variable: one lane writes."""
    assert interfering_lanes(one_lane) is None


@T.prim_func(private=True)
def rows_per_lane(A: T.Buffer((4, 4), "float32"), C: T.Buffer((4, 4), "float32")):
    C_global = T.alloc_buffer((4, 4))
    for i in T.vectorized(4):
        for j in range(4):
            with T.block("C_global"):
                vi, vj = T.axis.remap("SS", [i, j])
                C_global[vi, vj] = A[vi, vj] * T.float32(2)
        for k in range(4):
            with T.block("C"):
                vi, vk = T.axis.remap("SS", [i, k])
                C[vi, vk] = C_global[vi, vk]


@T.prim_func(private=True)
def rows_and_a_neighbour(A: T.Buffer((5, 4), "float32"), C: T.Buffer((4, 4), "float32")):
    C_global = T.alloc_buffer((5, 4))
    for i in T.vectorized(4):
        for j in range(4):
            with T.block("C_global"):
                vi, vj = T.axis.remap("SS", [i, j])
                C_global[vi, vj] = A[vi, vj] * T.float32(2)
        for k in range(4):
            with T.block("C"):
                vi, vk = T.axis.remap("SS", [i, k])
                C[vi, vk] = C_global[vi + 1, vk]


def test_lanes_each_on_their_own_row_do_not_interfere():
    # lane i writes C_global[i, j] and reads C_global[i, k]: j and k differ, the row does not
    assert interfering_lanes(rows_per_lane) is None
    a = np.arange(16, dtype="float32").reshape(4, 4)
    c = np.zeros((4, 4), "float32")
    mlckit.build(rows_per_lane, target="lnumpy")(a, c)  # built lane by lane: TVM's numbers
    np.testing.assert_array_equal(c, a * 2)
    assert interfering_lanes(rows_and_a_neighbour) == (
        "in the T.vectorized loop 'i', a lane reads C_global[i + 1, k], an element another lane "
        "writes (C_global[i, j]): TVM reads every lane before any writes")
