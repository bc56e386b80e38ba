"""dlight.gpu.GEMV: 16 outputs per thread block on threadIdx.y, each dot product split over
32 threads on threadIdx.x (1 x 64 when the number of outputs is symbolic), as TVM's CUDA
choice; the partial sums in shared memory, one thread per output adding them."""

from __future__ import annotations

import numpy as np
import pytest

import mlckit.dlight as dl
from mlckit.ir import assert_structural_equal
from mlckit.script import ir as I
from mlckit.script import tir as T

from .common import bindings, rand, run, scheduled
from .kernels import Matmul, RowSum


@I.ir_module
class Gemv:
    @T.prim_func
    def main(A: T.Buffer((32, 64), "float32"), X: T.Buffer((64,), "float32"),
             Y: T.Buffer((32,), "float32")):
        for i, k in T.grid(32, 64):
            with T.block("Y"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    Y[vi] = T.float32(0)
                Y[vi] = Y[vi] + A[vi, vk] * X[vk]


@I.ir_module
class GemvScheduled:
    @T.prim_func
    def main(A: T.Buffer((32, 64), "float32"), X: T.Buffer((64,), "float32"),
             Y: T.Buffer((32,), "float32")):
        T.func_attr({"tir.is_scheduled": True})
        Y_rf = T.alloc_buffer((32, 32), scope="shared")
        X_shared = T.alloc_buffer((64,), scope="shared")
        for i_0 in T.thread_binding(2, thread="blockIdx.x"):
            for ax0_0 in range(1):  # the vector, read once per thread block by all its threads
                for ax0_1 in T.thread_binding(16, thread="threadIdx.y"):
                    for ax0_2 in T.thread_binding(32, thread="threadIdx.x"):
                        with T.block("X_shared"):
                            v0 = T.axis.spatial(64, ax0_0 * 512 + ax0_1 * 32 + ax0_2)
                            T.where((ax0_0 * 16 + ax0_1) * 32 + ax0_2 < 64)
                            X_shared[v0] = X[v0]
            for i_1 in T.thread_binding(16, thread="threadIdx.y"):
                for k_1 in T.thread_binding(32, thread="threadIdx.x"):
                    with T.block("Y_rf_init"):
                        vk_1 = T.axis.spatial(32, k_1)
                        vi = T.axis.spatial(32, i_0 * 16 + i_1)
                        Y_rf[vk_1, vi] = T.float32(0)
                    for k_0 in T.serial(2, annotations={"pragma_auto_unroll_max_step": 256,
                                                        "pragma_unroll_explicit": 1}):
                        with T.block("Y_rf_update"):
                            vk_1 = T.axis.spatial(32, k_1)
                            vi = T.axis.spatial(32, i_0 * 16 + i_1)
                            vk_0 = T.axis.reduce(2, k_0)
                            Y_rf[vk_1, vi] = Y_rf[vk_1, vi] + A[vi, vk_0 * 32 + vk_1] * X_shared[vk_0 * 32 + vk_1]
            for ax1 in T.thread_binding(16, thread="threadIdx.y"):
                for ax0_0 in T.thread_binding(1, thread="threadIdx.x"):
                    for ax0_1 in range(32):
                        with T.block("Y"):
                            vk_1 = T.axis.reduce(32, ax0_0 * 32 + ax0_1)
                            vi = T.axis.spatial(32, i_0 * 16 + ax1)
                            with T.init():
                                Y[vi] = T.float32(0)
                            Y[vi] = Y[vi] + Y_rf[vk_1, vi]


@I.ir_module
class GemvBiasRelu:  # rows that the 16-row tile does not divide, an epilogue
    @T.prim_func
    def main(A: T.Buffer((40, 100), "float32"), X: T.Buffer((100,), "float32"),
             Bias: T.Buffer((40,), "float32"), Z: T.Buffer((40,), "float32")):
        Y = T.alloc_buffer((40,))
        for i, k in T.grid(40, 100):
            with T.block("Y"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    Y[vi] = T.float32(0)
                Y[vi] = Y[vi] + A[vi, vk] * X[vk]
        for i in range(40):
            with T.block("Z"):
                vi = T.axis.remap("S", [i])
                Z[vi] = T.max(Y[vi] + Bias[vi], T.float32(0))


@I.ir_module
class GemvRows:
    @T.prim_func
    def main(a: T.handle, X: T.Buffer((128,), "float32"), y: T.handle):
        n = T.int64()
        A = T.match_buffer(a, (n, 128))
        Y = T.match_buffer(y, (n,))
        for i, k in T.grid(n, 128):
            with T.block("Y"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    Y[vi] = T.float32(0)
                Y[vi] = Y[vi] + A[vi, vk] * X[vk]


@I.ir_module
class OuterReduction:  # Y[j] = sum_k X[k] * W[k, j]: k is not W's innermost index
    @T.prim_func
    def main(X: T.Buffer((64,), "float32"), W: T.Buffer((64, 32), "float32"),
             Y: T.Buffer((32,), "float32")):
        for j, k in T.grid(32, 64):
            with T.block("Y"):
                vj, vk = T.axis.remap("SR", [j, k])
                with T.init():
                    Y[vj] = T.float32(0)
                Y[vj] = Y[vj] + X[vk] * W[vk, vj]


def gemv(mod):
    return scheduled(mod, dl.gpu.GEMV())


def test_a_gemv_gets_16_rows_by_32_threads_per_block_and_the_vector_in_shared_memory():
    assert_structural_equal(gemv(Gemv), GemvScheduled)


def test_the_gemv_equals_numpy():
    a, x = rand(32, 64), rand(64, seed=1)
    *_, y = run(gemv(Gemv)["main"], a, x, np.zeros(32, "float32"))
    np.testing.assert_allclose(y, a @ x, rtol=1e-5, atol=1e-5)


def test_an_epilogue_runs_on_the_row_threads_and_a_partial_tile_is_guarded():
    func = gemv(GemvBiasRelu)["main"]
    assert bindings(func)[-1] == ("ax0_fused_1", 16, "threadIdx.y")
    a, x, bias = rand(40, 100), rand(100, seed=1), rand(40, seed=2)
    *_, z = run(func, a, x, bias, np.zeros(40, "float32"))
    np.testing.assert_allclose(z, np.maximum(a @ x + bias, 0), rtol=1e-5, atol=1e-5)


def test_a_symbolic_number_of_rows_gets_one_row_by_64_threads_per_block():
    func = gemv(GemvRows)["main"]
    assert [b[1:] for b in bindings(func)] == [
        ("n", "blockIdx.x"),
        (64, "threadIdx.x"),                       # the vector into shared memory
        (64, "threadIdx.x"),                       # the partial sums
        (1, "threadIdx.y"), (1, "threadIdx.x")]    # adding them up
    a, x = rand(5, 128), rand(128, seed=1)
    _, _, y = run(func, a, x, np.zeros(5, "float32"))
    np.testing.assert_allclose(y, a @ x, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("mod", [OuterReduction, Matmul, RowSum],
                         ids=["outer-reduction", "matmul", "no-vector"])
def test_no_inner_reduction_gemv_is_left_to_the_next_rule(mod):
    assert_structural_equal(gemv(mod), mod)


def test_the_simulator_agrees(simulator):
    a, x, bias = rand(40, 100, seed=3), rand(100, seed=4), rand(40, seed=5)
    *_, z = simulator.run(gemv(GemvBiasRelu)["main"], a, x, bias, np.zeros(40, "float32"))
    np.testing.assert_allclose(z, np.maximum(a @ x + bias, 0), rtol=1e-5, atol=1e-5)


@pytest.mark.gpu
def test_a_real_gpu_agrees():
    a, x, bias = rand(40, 100, seed=6), rand(100, seed=7), rand(40, seed=8)
    *_, z = run(gemv(GemvBiasRelu)["main"], a, x, bias, np.zeros(40, "float32"), mode="gpu")
    np.testing.assert_allclose(z, np.maximum(a @ x + bias, 0), rtol=1e-5, atol=1e-5)
    a, x = rand(70, 128, seed=9), rand(128, seed=10)
    _, _, y = run(gemv(GemvRows)["main"], a, x, np.zeros(70, "float32"), mode="gpu")
    np.testing.assert_allclose(y, a @ x, rtol=1e-5, atol=1e-5)
