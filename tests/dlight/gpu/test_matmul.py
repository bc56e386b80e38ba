"""dlight.gpu.Matmul: TVM's CUDA tiling — 32 x 64 tiles of C per thread block (8 x 16
threads, 4 x 4 outputs each, accumulated in registers), A and B tiles staged in shared memory
for each step of 16 along k, the epilogue inlined into the write-back."""

from __future__ import annotations

import numpy as np
import pytest

import mlckit
import mlckit.dlight as dl
from mlckit import relax
from mlckit.ir import assert_structural_equal
from mlckit.script import ir as I
from mlckit.script import relax as R
from mlckit.script import tir as T
from mlckit.target import Target
from mlckit.tir.expr import Max
from mlckit.tir.schedule.ir_utils import realizes_under

from .common import bindings, rand, run, scheduled
from .kernels import RowSum


@I.ir_module
class MM:
    @T.prim_func
    def main(A: T.Buffer((32, 16), "float32"), B: T.Buffer((16, 64), "float32"),
             C: T.Buffer((32, 64), "float32")):
        for i, j, k in T.grid(32, 64, 16):
            with T.block("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    C[vi, vj] = T.float32(0)
                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]


@I.ir_module
class MMScheduled:
    @T.prim_func
    def main(A: T.Buffer((32, 16), "float32"), B: T.Buffer((16, 64), "float32"),
             C: T.Buffer((32, 64), "float32")):
        T.func_attr({"tir.is_scheduled": True})
        C_local = T.alloc_buffer((32, 64), scope="local")
        A_shared = T.alloc_buffer((32, 16), scope="shared")
        B_shared = T.alloc_buffer((16, 64), scope="shared")
        for j_0 in T.thread_binding(1, thread="blockIdx.y"):
            for i_0 in T.thread_binding(1, thread="blockIdx.x"):
                for j_1 in T.thread_binding(16, thread="threadIdx.y"):
                    for i_1 in T.thread_binding(8, thread="threadIdx.x", annotations={
                            "pragma_auto_unroll_max_step": 256, "pragma_unroll_explicit": 1}):
                        for i_2_init, j_2_0_init in T.grid(4, 2):
                            for j_2_1_init in T.vectorized(2):
                                with T.block("C_init"):
                                    vi = T.axis.spatial(32, i_0 * 32 + i_1 * 4 + i_2_init)
                                    vj = T.axis.spatial(64, j_0 * 64 + j_1 * 4 + j_2_0_init * 2 + j_2_1_init)
                                    C_local[vi, vj] = T.float32(0)
                        for k_0 in range(1):
                            for ax0_ax1_fused_0 in T.thread_binding(16, thread="threadIdx.y"):
                                for ax0_ax1_fused_1 in T.thread_binding(8, thread="threadIdx.x"):
                                    for ax0_ax1_fused_2 in range(2):
                                        for ax0_ax1_fused_3 in T.vectorized(2):
                                            with T.block("A_shared"):
                                                v0 = T.axis.spatial(32, (ax0_ax1_fused_0 * 32 + ax0_ax1_fused_1 * 4 + ax0_ax1_fused_2 * 2 + ax0_ax1_fused_3) // 16)
                                                v1 = T.axis.spatial(16, (ax0_ax1_fused_0 * 32 + ax0_ax1_fused_1 * 4 + ax0_ax1_fused_2 * 2 + ax0_ax1_fused_3) % 16)
                                                T.block_attr({"buffer_dim_align": [[0, 1, 8, 2]]})
                                                A_shared[v0, v1] = A[v0, v1]
                            for ax0_ax1_fused_0 in T.thread_binding(16, thread="threadIdx.y"):
                                for ax0_ax1_fused_1 in T.thread_binding(8, thread="threadIdx.x"):
                                    for ax0_ax1_fused_2 in range(4):
                                        for ax0_ax1_fused_3 in T.vectorized(2):
                                            with T.block("B_shared"):
                                                v0 = T.axis.spatial(16, (ax0_ax1_fused_0 * 64 + ax0_ax1_fused_1 * 8 + ax0_ax1_fused_2 * 2 + ax0_ax1_fused_3) // 64)
                                                v1 = T.axis.spatial(64, (ax0_ax1_fused_0 * 64 + ax0_ax1_fused_1 * 8 + ax0_ax1_fused_2 * 2 + ax0_ax1_fused_3) % 64)
                                                T.block_attr({"buffer_dim_align": [[0, 1, 8, 2]]})
                                                B_shared[v0, v1] = B[v0, v1]
                            for k_1, i_2, j_2_0 in T.grid(16, 4, 2):
                                for j_2_1 in T.vectorized(2):
                                    with T.block("C_update"):
                                        vi = T.axis.spatial(32, i_0 * 32 + i_1 * 4 + i_2)
                                        vj = T.axis.spatial(64, j_0 * 64 + j_1 * 4 + j_2_0 * 2 + j_2_1)
                                        vk = T.axis.reduce(16, k_0 * 16 + k_1)
                                        C_local[vi, vj] = C_local[vi, vj] + A_shared[vi, vk] * B_shared[vk, vj]
                        for ax0, ax1_0 in T.grid(4, 2):
                            for ax1_1 in T.vectorized(2):
                                with T.block("C_local"):
                                    v0 = T.axis.spatial(32, i_1 * 4 + ax0)
                                    v1 = T.axis.spatial(64, j_1 * 4 + ax1_0 * 2 + ax1_1)
                                    C[v0, v1] = C_local[v0, v1]


def linear_relu(m, k, n):
    """x @ w.T + b, ReLU: the course's and the tutorial's nn.Linear."""

    @I.ir_module
    class Linear:
        @R.function
        def main(x: R.Tensor((m, k), "float32"), w: R.Tensor((n, k), "float32"),
                 b: R.Tensor((n,), "float32")):
            with R.dataflow():
                y = R.nn.relu(R.add(R.matmul(x, R.permute_dims(w)), b))
                R.output(y)
            return y

    return Linear


@I.ir_module
class BatchMatmul:
    @T.prim_func
    def main(A: T.Buffer((3, 40, 24), "float32"), B: T.Buffer((3, 24, 70), "float32"),
             C: T.Buffer((3, 40, 70), "float32")):
        for p, i, j, k in T.grid(3, 40, 70, 24):
            with T.block("C"):
                vp, vi, vj, vk = T.axis.remap("SSSR", [p, i, j, k])
                with T.init():
                    C[vp, vi, vj] = T.float32(0)
                C[vp, vi, vj] = C[vp, vi, vj] + A[vp, vi, vk] * B[vp, vk, vj]


@I.ir_module
class Gemv:
    @T.prim_func
    def main(A: T.Buffer((32, 64), "float32"), X: T.Buffer((1, 64), "float32"),
             Y: T.Buffer((1, 32), "float32")):
        for u, i, k in T.grid(1, 32, 64):
            with T.block("Y"):
                vu, vi, vk = T.axis.remap("SSR", [u, i, k])
                with T.init():
                    Y[vu, vi] = T.float32(0)
                Y[vu, vi] = Y[vu, vi] + X[vu, vk] * A[vi, vk]


@I.ir_module
class SymbolicBatch:  # mlckit's cache_read cannot cache a buffer of symbolic shape (yet)
    @T.prim_func
    def main(a: T.handle, b: T.handle, c: T.handle):
        n = T.int64()
        A = T.match_buffer(a, (n, 40, 24))
        B = T.match_buffer(b, (n, 24, 70))
        C = T.match_buffer(c, (n, 40, 70))
        for p, i, j, k in T.grid(n, 40, 70, 24):
            with T.block("C"):
                vp, vi, vj, vk = T.axis.remap("SSSR", [p, i, j, k])
                with T.init():
                    C[vp, vi, vj] = T.float32(0)
                C[vp, vi, vj] = C[vp, vi, vj] + A[vp, vi, vk] * B[vp, vk, vj]


@I.ir_module
class SymbolicRows:
    @T.prim_func
    def main(a: T.handle, B: T.Buffer((16, 64), "float32"), c: T.handle):
        m = T.int64()
        A = T.match_buffer(a, (m, 16))
        C = T.match_buffer(c, (m, 64))
        for i, j, k in T.grid(m, 64, 16):
            with T.block("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    C[vi, vj] = T.float32(0)
                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]


def matmul(mod):
    return scheduled(mod, dl.gpu.Matmul())


def test_a_matmul_is_tiled_as_tvm_configures_cuda():
    assert_structural_equal(matmul(MM), MMScheduled)


def test_the_tiled_matmul_equals_numpy():
    a, b = rand(32, 16), rand(16, 64, seed=1)
    *_, c = run(matmul(MM)["main"], a, b, np.zeros((32, 64), "float32"))
    np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("m,k,n", [(4, 784, 128), (33, 17, 65)])
def test_a_linear_with_bias_and_relu_inlines_the_epilogue_and_guards_partial_tiles(m, k, n):
    with Target("cuda"):
        fused = relax.get_pipeline("zero")(linear_relu(m, k, n))
    mod = scheduled(fused, dl.gpu.Matmul(), dl.gpu.Fallback())
    func = mod["fused_matmul_add_relu"]
    last = realizes_under(func.body.block, stop_at_blocks=False)[-1].block
    assert last.name_hint.endswith("_local")  # the write-back applies the bias and the ReLU
    assert isinstance(last.body.value, Max)
    x, w, b = rand(m, k), rand(n, k, seed=1), rand(n, seed=2)
    vm = relax.VirtualMachine(relax.build(mod, target="cuda", mode="cpu"), mlckit.cpu())
    np.testing.assert_allclose(vm["main"](x, w, b).numpy(), np.maximum(x @ w.T + b, 0),
                               rtol=1e-4, atol=1e-4)


def test_the_batch_goes_to_blockIdx_z():
    func = matmul(BatchMatmul)["main"]
    assert [b[1:] for b in bindings(func)[:5]] == [
        (3, "blockIdx.z"), (2, "blockIdx.y"), (2, "blockIdx.x"),
        (16, "threadIdx.y"), (8, "threadIdx.x")]
    a, b = rand(3, 40, 24), rand(3, 24, 70, seed=1)
    *_, c = run(func, a, b, np.zeros((3, 40, 70), "float32"))
    np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("mod", [Gemv, SymbolicRows, SymbolicBatch, RowSum],
                         ids=["gemv", "symbolic-rows", "symbolic-batch", "row-sum"])
def test_no_matmul_with_constant_tiles_is_left_to_the_next_rule(mod):
    assert_structural_equal(matmul(mod), mod)


def test_the_simulator_agrees(simulator):
    a, b = rand(32, 16, seed=3), rand(16, 64, seed=4)
    *_, c = simulator.run(matmul(MM)["main"], a, b, np.zeros((32, 64), "float32"))
    np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-5)


@pytest.mark.gpu
def test_a_real_gpu_agrees():
    a, b = rand(3, 40, 24, seed=5), rand(3, 24, 70, seed=6)
    *_, c = run(matmul(BatchMatmul)["main"], a, b, np.zeros((3, 40, 70), "float32"),
                mode="gpu")
    np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-5)
