"""ScalarizeLocalBuffers: a small "local" buffer indexed only by constants (once the T.unroll
loops its indices depend on are written out) becomes one-element "local" buffers."""

from __future__ import annotations

import numpy as np

from mlckit.backend import lnumpy, numba_cpu
from mlckit.ir import IRModule, assert_structural_equal
from mlckit.script import tir as T
from mlckit.tir.transform import ScalarizeLocalBuffers
from mlckit.tir.transform.scalarize_local_buffers import scalarize_local_buffers


@T.prim_func
def pair_sum(A: T.Buffer((4, 2), "float32"), B: T.Buffer((4,), "float32")):
    for i in range(4):
        with T.block("row"):
            vi = T.axis.spatial(4, i)
            t = T.alloc_buffer((2,), scope="local")
            for j in T.unroll(2):
                with T.block("t"):
                    vj = T.axis.spatial(2, j)
                    t[vj] = A[vi, vj] * T.float32(2)
            B[vi] = t[0] + t[1]


def test_a_local_pair_indexed_through_an_unrolled_loop_becomes_two_registers():
    @T.prim_func
    def pair_sum(A: T.Buffer((4, 2), "float32"), B: T.Buffer((4,), "float32")):
        for i in range(4):
            with T.block("row"):
                vi = T.axis.spatial(4, i)
                T.reads(A[vi, 0:2])
                T.writes(B[vi])
                t_0 = T.alloc_buffer((1,), scope="local")
                t_1 = T.alloc_buffer((1,), scope="local")
                with T.LetStmt(0) as j:
                    with T.block("t"):
                        vj = T.axis.spatial(2, j)
                        T.reads(A[vi, vj])
                        T.writes()
                        t_0[0] = A[vi, vj] * T.float32(2)
                with T.LetStmt(1) as j_1:
                    with T.block("t"):
                        vj = T.axis.spatial(2, j_1)
                        T.reads(A[vi, vj])
                        T.writes()
                        t_1[0] = A[vi, vj] * T.float32(2)
                B[vi] = t_0[0] + t_1[0]

    expected = pair_sum
    mod = ScalarizeLocalBuffers()(IRModule({"main": globals()["pair_sum"]}))
    assert_structural_equal(mod["main"], expected)


def test_the_split_function_computes_the_same_numbers():
    a = np.random.default_rng(0).uniform(-1, 1, (4, 2)).astype("float32")
    for build in (lnumpy.build, lambda f: numba_cpu.build(f, cache=False)):
        b = np.zeros(4, "float32")
        build(scalarize_local_buffers(pair_sum))(a, b)
        np.testing.assert_allclose(b, a.sum(axis=1) * 2, rtol=1e-6)


@T.prim_func
def serial_index(A: T.Buffer((4, 2), "float32"), B: T.Buffer((4,), "float32")):
    for i in range(4):
        with T.block("row"):
            vi = T.axis.spatial(4, i)
            t = T.alloc_buffer((2,), scope="local")
            for j in range(2):
                with T.block("t"):
                    vj = T.axis.spatial(2, j)
                    t[vj] = A[vi, vj]
            B[vi] = t[0] + t[1]


@T.prim_func
def global_scope(A: T.Buffer((4, 2), "float32"), B: T.Buffer((4,), "float32")):
    for i in range(4):
        with T.block("row"):
            vi = T.axis.spatial(4, i)
            t = T.alloc_buffer((2,))
            t[0] = A[vi, 0]
            t[1] = A[vi, 1]
            B[vi] = t[0] + t[1]


def test_a_serial_loop_index_or_a_global_buffer_keeps_the_buffer_whole():
    assert scalarize_local_buffers(serial_index) is serial_index
    assert scalarize_local_buffers(global_scope) is global_scope


def test_a_buffer_larger_than_the_limit_keeps_its_shape():
    assert scalarize_local_buffers(pair_sum, max_elements=1) is pair_sum
