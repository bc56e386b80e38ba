"""dlight.gpu.LowBatchGEMV: a matrix product with a symbolic batch as GEMVs: a batch row per
thread block row (blockIdx.y; TVM pads the batch to 4 rows per block, mlckit has no
pad_einsum), 16 x 2 outputs per thread block (4 x 2 when there are more outputs than reduced
elements) on threadIdx.y, each dot product split over 32 (64) threads on threadIdx.x; the
partial sums in shared memory, one thread per output adding them."""

from __future__ import annotations

import numpy as np
import pytest

import mlckit.dlight as dl
from mlckit.ir import assert_structural_equal
from mlckit.script import ir as I
from mlckit.script import tir as T

from .common import bindings, rand, run, scheduled


@I.ir_module
class BatchGemv:
    @T.prim_func
    def main(x: T.handle, W: T.Buffer((32, 96), "float32"), y: T.handle):
        n = T.int64()
        X = T.match_buffer(x, (n, 96))
        Y = T.match_buffer(y, (n, 32))
        for b, i, k in T.grid(n, 32, 96):
            with T.block("NT_matmul"):
                vb, vi, vk = T.axis.remap("SSR", [b, i, k])
                with T.init():
                    Y[vb, vi] = T.float32(0)
                Y[vb, vi] = Y[vb, vi] + X[vb, vk] * W[vi, vk]


@I.ir_module
class BatchGemvScheduled:
    @T.prim_func
    def main(x: T.handle, W: T.Buffer((32, 96), "float32"), y: T.handle):
        T.func_attr({"tir.is_scheduled": True})
        n = T.int64()
        X = T.match_buffer(x, (n, 96))
        Y = T.match_buffer(y, (n, 32))
        Y_rf = T.alloc_buffer((32, n, 32), scope="shared")
        for b in T.thread_binding(n, thread="blockIdx.y"):
            for i_0 in T.thread_binding(1, thread="blockIdx.x"):
                for i_1 in T.thread_binding(16, thread="threadIdx.y"):
                    for k_1 in T.thread_binding(32, thread="threadIdx.x"):
                        for i_2_init in range(2):  # TILE_S = 2 outputs per thread
                            with T.block("NT_matmul_rf_init"):
                                vk_1, vb = T.axis.remap("SS", [k_1, b])
                                vi = T.axis.spatial(32, i_0 * 32 + i_1 * 2 + i_2_init)
                                T.reads()
                                T.writes(Y_rf[vk_1, vb, vi])
                                Y_rf[vk_1, vb, vi] = T.float32(0)
                        for k_0 in T.serial(3, annotations={"pragma_auto_unroll_max_step": 256,
                                                            "pragma_unroll_explicit": 1}):
                            for i_2 in range(2):
                                with T.block("NT_matmul_rf_update"):
                                    vk_1, vb = T.axis.remap("SS", [k_1, b])
                                    vi = T.axis.spatial(32, i_0 * 32 + i_1 * 2 + i_2)
                                    vk_0 = T.axis.reduce(3, k_0)
                                    T.reads(Y_rf[vk_1, vb, vi], X[vb, vk_0 * 32 + vk_1], W[vi, vk_0 * 32 + vk_1])
                                    T.writes(Y_rf[vk_1, vb, vi])
                                    Y_rf[vk_1, vb, vi] = Y_rf[vk_1, vb, vi] + X[vb, vk_0 * 32 + vk_1] * W[vi, vk_0 * 32 + vk_1]
                for ax2_0 in T.thread_binding(16, thread="threadIdx.y"):
                    for ax0_0 in T.thread_binding(1, thread="threadIdx.x"):
                        for ax1, ax2_1, ax0_1 in T.grid(T.int64(1), 2, 32):
                            with T.block("NT_matmul"):
                                vk_1 = T.axis.reduce(32, ax0_0 * 32 + ax0_1)
                                vb = T.axis.spatial(n, b + ax1)
                                vi = T.axis.spatial(32, ax2_0 * 2 + ax2_1)
                                T.reads(Y_rf[vk_1, vb, vi])
                                T.writes(Y[vb, vi])
                                with T.init():
                                    Y[vb, vi] = T.float32(0)
                                Y[vb, vi] = Y[vb, vi] + Y_rf[vk_1, vb, vi]


@I.ir_module
class BatchGemvBiasRelu:  # more outputs (200) than reduced elements (72), a ragged tile
    @T.prim_func
    def main(x: T.handle, W: T.Buffer((200, 72), "float32"), Bias: T.Buffer((200,), "float32"),
             z: T.handle):
        n = T.int64()
        X = T.match_buffer(x, (n, 72))
        Z = T.match_buffer(z, (n, 200))
        Y = T.alloc_buffer((n, 200))
        for b, i, k in T.grid(n, 200, 72):
            with T.block("NT_matmul"):
                vb, vi, vk = T.axis.remap("SSR", [b, i, k])
                with T.init():
                    Y[vb, vi] = T.float32(0)
                Y[vb, vi] = Y[vb, vi] + X[vb, vk] * W[vi, vk]
        for b, i in T.grid(n, 200):
            with T.block("Z"):
                vb, vi = T.axis.remap("SS", [b, i])
                Z[vb, vi] = T.max(Y[vb, vi] + Bias[vi], T.float32(0))


@I.ir_module
class ConstantBatch:  # GEMV's or Matmul's, not this rule's
    @T.prim_func
    def main(X: T.Buffer((4, 96), "float32"), W: T.Buffer((32, 96), "float32"),
             Y: T.Buffer((4, 32), "float32")):
        for b, i, k in T.grid(4, 32, 96):
            with T.block("NT_matmul"):
                vb, vi, vk = T.axis.remap("SSR", [b, i, k])
                with T.init():
                    Y[vb, vi] = T.float32(0)
                Y[vb, vi] = Y[vb, vi] + X[vb, vk] * W[vi, vk]


@I.ir_module
class OuterReduction:  # Y = X @ W with W (k, s): TVM schedules it only for quantized weights
    @T.prim_func
    def main(x: T.handle, W: T.Buffer((96, 32), "float32"), y: T.handle):
        n = T.int64()
        X = T.match_buffer(x, (n, 96))
        Y = T.match_buffer(y, (n, 32))
        for b, i, k in T.grid(n, 32, 96):
            with T.block("matmul"):
                vb, vi, vk = T.axis.remap("SSR", [b, i, k])
                with T.init():
                    Y[vb, vi] = T.float32(0)
                Y[vb, vi] = Y[vb, vi] + X[vb, vk] * W[vk, vi]


@I.ir_module
class RowSum:  # a symbolic batch but no vector
    @T.prim_func
    def main(a: T.handle, b: T.handle):
        n = T.int64()
        A = T.match_buffer(a, (n, 64))
        B = T.match_buffer(b, (n,))
        for i, k in T.grid(n, 64):
            with T.block("B"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    B[vi] = T.float32(0)
                B[vi] = B[vi] + A[vi, vk]


def low_batch_gemv(mod):
    return scheduled(mod, dl.gpu.LowBatchGEMV())


def test_a_batch_row_per_block_row_16_by_2_outputs_and_32_threads_per_dot_product():
    assert_structural_equal(low_batch_gemv(BatchGemv), BatchGemvScheduled)


@pytest.mark.parametrize("batch", [1, 3])
def test_the_batched_gemv_equals_numpy(batch):
    x, w = rand(batch, 96), rand(32, 96, seed=1)
    _, _, y = run(low_batch_gemv(BatchGemv)["main"], x, w, np.zeros((batch, 32), "float32"))
    np.testing.assert_allclose(y, x @ w.T, rtol=1e-5, atol=1e-5)


def test_more_outputs_than_reduced_elements_get_4_by_64_threads_and_an_epilogue_runs():
    func = low_batch_gemv(BatchGemvBiasRelu)["main"]
    assert [b[1:] for b in bindings(func)] == [
        ("n", "blockIdx.y"), (25, "blockIdx.x"),   # 200 outputs, 8 per thread block
        (4, "threadIdx.y"), (64, "threadIdx.x"),   # the partial sums
        (4, "threadIdx.y"), (1, "threadIdx.x"),    # adding them up
        (4, "threadIdx.y")]                        # the epilogue
    x, w, bias = rand(3, 72), rand(200, 72, seed=1), rand(200, seed=2)
    *_, z = run(func, x, w, bias, np.zeros((3, 200), "float32"))
    np.testing.assert_allclose(z, np.maximum(x @ w.T + bias, 0), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("mod", [ConstantBatch, OuterReduction, RowSum],
                         ids=["constant-batch", "outer-reduction", "no-vector"])
def test_what_is_no_symbolic_batch_inner_reduction_gemv_is_left_to_the_next_rule(mod):
    assert_structural_equal(low_batch_gemv(mod), mod)


def test_the_simulator_agrees(simulator):
    x, w, bias = rand(1, 72, seed=3), rand(200, 72, seed=4), rand(200, seed=5)
    *_, z = simulator.run(low_batch_gemv(BatchGemvBiasRelu)["main"], x, w, bias,
                          np.zeros((1, 200), "float32"))
    np.testing.assert_allclose(z, np.maximum(x @ w.T + bias, 0), rtol=1e-5, atol=1e-5)


@pytest.mark.gpu
def test_a_real_gpu_agrees():
    x, w, bias = rand(5, 72, seed=6), rand(200, 72, seed=7), rand(200, seed=8)
    *_, z = run(low_batch_gemv(BatchGemvBiasRelu)["main"], x, w, bias,
                np.zeros((5, 200), "float32"), mode="gpu")
    np.testing.assert_allclose(z, np.maximum(x @ w.T + bias, 0), rtol=1e-5, atol=1e-5)
    x, w = rand(3, 96, seed=9), rand(32, 96, seed=10)
    _, _, y = run(low_batch_gemv(BatchGemv)["main"], x, w, np.zeros((3, 32), "float32"),
                  mode="gpu")
    np.testing.assert_allclose(y, x @ w.T, rtol=1e-5, atol=1e-5)
