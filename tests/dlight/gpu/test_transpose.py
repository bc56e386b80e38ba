"""dlight.gpu.Transpose: the output in tiles of 8 x 16 threads (threadIdx.y, threadIdx.x),
the tile's input first copied into shared memory along its rows by the same threads, as
TVM's CUDA choice; a prologue is inlined into that copy."""

from __future__ import annotations

import numpy as np
import pytest

import mlckit.dlight as dl
from mlckit.ir import assert_structural_equal
from mlckit.script import ir as I
from mlckit.script import tir as T

from .common import bindings, rand, run, scheduled


@I.ir_module
class Transpose:
    @T.prim_func
    def main(A: T.Buffer((24, 40), "float32"), B: T.Buffer((40, 24), "float32")):
        for i, j in T.grid(40, 24):
            with T.block("T"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vj, vi]


@I.ir_module
class TransposeScheduled:  # TVM 0.27's loop nest, its loops named ax0, ax1 there
    @T.prim_func
    def main(A: T.Buffer((24, 40), "float32"), B: T.Buffer((40, 24), "float32")):
        T.func_attr({"tir.is_scheduled": True})
        A_shared = T.alloc_buffer((24, 40), scope="shared")
        for i_0_0 in T.thread_binding(5, thread="blockIdx.y",
                                      annotations={"pragma_auto_unroll_max_step": 256,
                                                   "pragma_unroll_explicit": 1}):
            for j_0 in T.thread_binding(2, thread="blockIdx.x"):
                for f_0 in range(1):  # the 16 x 8 input tile, along its rows
                    for f_1 in T.thread_binding(8, thread="threadIdx.y"):
                        for f_2 in T.thread_binding(16, thread="threadIdx.x"):
                            for f_3 in T.unroll(1):
                                with T.block("A_shared"):
                                    v0 = T.axis.spatial(24, j_0 * 16 + (f_0 * 128 + f_1 * 16 + f_2 + f_3) // 8)
                                    v1 = T.axis.spatial(40, i_0_0 * 8 + (f_0 * 128 + f_1 * 16 + f_2 + f_3) % 8)
                                    T.where(j_0 * 16 + ((f_0 * 8 + f_1) * 16 + f_2 + f_3) // 8 < 24)
                                    T.reads(A[v0, v1])
                                    T.writes(A_shared[v0, v1])
                                    T.block_attr({"buffer_dim_align": [[0, 0, 32, 1]]})
                                    A_shared[v0, v1] = A[v0, v1]
                for i_0_1 in T.thread_binding(8, thread="threadIdx.y"):
                    for j_1 in T.thread_binding(16, thread="threadIdx.x"):
                        for i_1_0, i_1_1 in T.grid(1, 1):
                            with T.block("T"):
                                vi = T.axis.spatial(40, i_0_0 * 8 + i_0_1 + i_1_0 + i_1_1)
                                vj = T.axis.spatial(24, j_0 * 16 + j_1)
                                T.where(j_0 * 16 + j_1 < 24)
                                T.reads(A_shared[vj, vi])
                                T.writes(B[vi, vj])
                                B[vi, vj] = A_shared[vj, vi]


@I.ir_module
class ReluTransposeAddOne:  # an elementwise prologue and epilogue
    @T.prim_func
    def main(A: T.Buffer((24, 40), "float32"), B: T.Buffer((40, 24), "float32")):
        C = T.alloc_buffer((24, 40))
        D = T.alloc_buffer((40, 24))
        for i, j in T.grid(24, 40):
            with T.block("relu"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = T.max(A[vi, vj], T.float32(0))
        for i, j in T.grid(40, 24):
            with T.block("T"):
                vi, vj = T.axis.remap("SS", [i, j])
                D[vi, vj] = C[vj, vi]
        for i, j in T.grid(40, 24):
            with T.block("add"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = D[vi, vj] + T.float32(1)


@I.ir_module
class DecodeTranspose:  # a packed weight: 8 rows share an element of Wq
    @T.prim_func
    def main(Wq: T.Buffer((4, 24), "float32"), B: T.Buffer((24, 32), "float32")):
        D = T.alloc_buffer((32, 24))
        for k, n in T.grid(32, 24):
            with T.block("decode"):
                vk, vn = T.axis.remap("SS", [k, n])
                D[vk, vn] = Wq[vk // 8, vn] * T.float32(0.5)
        for n, k in T.grid(24, 32):
            with T.block("T"):
                vn, vk = T.axis.remap("SS", [n, k])
                B[vn, vk] = D[vk, vn]


@I.ir_module
class Add:
    @T.prim_func
    def main(A: T.Buffer((24, 40), "float32"), B: T.Buffer((24, 40), "float32")):
        for i, j in T.grid(24, 40):
            with T.block("add"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj] + T.float32(1)


@I.ir_module
class Transpose3D:
    @T.prim_func
    def main(A: T.Buffer((2, 3, 4), "float32"), B: T.Buffer((4, 3, 2), "float32")):
        for i, j, k in T.grid(4, 3, 2):
            with T.block("T"):
                vi, vj, vk = T.axis.remap("SSS", [i, j, k])
                B[vi, vj, vk] = A[vk, vj, vi]


@I.ir_module
class TransposeRowSum:  # a reduction after the transpose
    @T.prim_func
    def main(A: T.Buffer((24, 40), "float32"), B: T.Buffer((40,), "float32")):
        C = T.alloc_buffer((40, 24))
        for i, j in T.grid(40, 24):
            with T.block("T"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = A[vj, vi]
        for i, j in T.grid(40, 24):
            with T.block("sum"):
                vi, vj = T.axis.remap("SR", [i, j])
                with T.init():
                    B[vi] = T.float32(0)
                B[vi] = B[vi] + C[vi, vj]


@I.ir_module
class SymbolicTranspose:
    @T.prim_func
    def main(a: T.handle, b: T.handle):
        n = T.int64()
        A = T.match_buffer(a, (n, 16))
        B = T.match_buffer(b, (16, n))
        for i, j in T.grid(16, n):
            with T.block("T"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vj, vi]


def transpose(mod):
    return scheduled(mod, dl.gpu.Transpose())


def test_a_transpose_goes_through_a_shared_tile_of_8_by_16_threads():
    assert_structural_equal(transpose(Transpose), TransposeScheduled)


def test_the_transpose_equals_numpy():
    a = rand(24, 40)
    _, b = run(transpose(Transpose)["main"], a, np.zeros((40, 24), "float32"))
    np.testing.assert_array_equal(b, a.T)


def test_a_prologue_is_inlined_into_the_shared_copy_and_an_epilogue_into_the_transpose():
    func = transpose(ReluTransposeAddOne)["main"]
    names = [line.split('"')[1] for line in func.script().splitlines() if "T.block(" in line]
    assert names == ["root", "C_shared", "T"]
    assert [b[1:] for b in bindings(func)] == [
        (5, "blockIdx.y"), (2, "blockIdx.x"),
        (8, "threadIdx.y"), (16, "threadIdx.x"),    # the copy into shared memory
        (8, "threadIdx.y"), (16, "threadIdx.x")]    # the transpose
    a = rand(24, 40)
    _, b = run(func, a, np.zeros((40, 24), "float32"))
    np.testing.assert_array_equal(b, np.maximum(a.T, 0) + 1)


def test_a_packed_prologue_gives_each_thread_8_rows_4_of_them_vectorized():
    func = transpose(DecodeTranspose)["main"]
    loops = [s.strip() for s in func.script().splitlines() if s.strip().startswith("for ")]
    assert "for ax0_ax1_fused_3 in T.unroll(8):" in loops      # the copy: 8 rows per thread
    assert loops[-2:] == ["for n_1_0 in range(2):", "for n_1_1 in T.vectorized(4):"]
    wq = rand(4, 24)
    _, b = run(func, wq, np.zeros((24, 32), "float32"))
    np.testing.assert_array_equal(b, (np.repeat(wq, 8, axis=0) * 0.5).T)


@pytest.mark.parametrize("mod", [Add, Transpose3D, TransposeRowSum, SymbolicTranspose],
                         ids=["no-transpose", "3-d", "reduction-after", "symbolic"])
def test_what_is_no_2d_transpose_is_left_to_the_next_rule(mod):
    assert_structural_equal(transpose(mod), mod)


def test_the_simulator_agrees(simulator):
    a = rand(24, 40, seed=1)
    _, b = simulator.run(transpose(ReluTransposeAddOne)["main"], a, np.zeros((40, 24), "float32"))
    np.testing.assert_array_equal(b, np.maximum(a.T, 0) + 1)


@pytest.mark.gpu
def test_a_real_gpu_agrees():
    a = rand(24, 40, seed=2)
    _, b = run(transpose(ReluTransposeAddOne)["main"], a, np.zeros((40, 24), "float32"),
               mode="gpu")
    np.testing.assert_array_equal(b, np.maximum(a.T, 0) + 1)
    wq = rand(4, 24, seed=3)
    _, b = run(transpose(DecodeTranspose)["main"], wq, np.zeros((24, 32), "float32"), mode="gpu")
    np.testing.assert_array_equal(b, (np.repeat(wq, 8, axis=0) * 0.5).T)
