"""dlight.gpu.Fallback binds every block to blockIdx.x x threadIdx.x (TVM's schedule), and
lets a legalized high-level Relax module run end to end on target "cuda"."""

from __future__ import annotations

import numpy as np
import pytest

import mlckit
import mlckit.dlight as dl
from mlckit import relax
from mlckit.error import TVMValueError
from mlckit.ir import assert_structural_equal
from mlckit.script import ir as I
from mlckit.script import relax as R
from mlckit.script import tir as T
from mlckit.target import Target


@I.ir_module
class Scale:
    @T.prim_func
    def main(A: T.Buffer((4, 300), "float32"), B: T.Buffer((4, 300), "float32")):
        for i, j in T.grid(4, 300):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj] * T.float32(2)


@I.ir_module
class ScaleBound:
    @T.prim_func
    def main(A: T.Buffer((4, 300), "float32"), B: T.Buffer((4, 300), "float32")):
        T.func_attr({"tir.is_scheduled": True})
        for i_j_fused_0 in T.thread_binding(2, thread="blockIdx.x"):
            for i_j_fused_1 in T.thread_binding(1024, thread="threadIdx.x"):
                with T.block("B"):
                    vi = T.axis.spatial(4, (i_j_fused_0 * 1024 + i_j_fused_1) // 300)
                    vj = T.axis.spatial(300, (i_j_fused_0 * 1024 + i_j_fused_1) % 300)
                    T.where(i_j_fused_0 * 1024 + i_j_fused_1 < 1200)
                    B[vi, vj] = A[vi, vj] * T.float32(2)


@I.ir_module
class RowSum:
    @T.prim_func
    def main(A: T.Buffer((8, 16), "float32"), B: T.Buffer((8,), "float32")):
        for k, i in T.grid(16, 8):
            with T.block("B"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    B[vi] = T.float32(0)
                B[vi] = B[vi] + A[vi, vk]


@I.ir_module
class RowSumBound:
    @T.prim_func
    def main(A: T.Buffer((8, 16), "float32"), B: T.Buffer((8,), "float32")):
        T.func_attr({"tir.is_scheduled": True})
        for i_0 in T.thread_binding(1, thread="blockIdx.x"):
            for i_1 in T.thread_binding(1024, thread="threadIdx.x"):
                with T.block("B_init"):
                    vi = T.axis.spatial(8, i_0 * 1024 + i_1)
                    T.where(i_0 * 1024 + i_1 < 8)
                    B[vi] = T.float32(0)
                for k in range(16):
                    with T.block("B_update"):
                        vi = T.axis.spatial(8, i_0 * 1024 + i_1)
                        vk = T.axis.reduce(16, k)
                        T.where(i_0 * 1024 + i_1 < 8)
                        B[vi] = B[vi] + A[vi, vk]


@I.ir_module
class MLP:
    @R.function
    def main(x: R.Tensor((4, 784), "float32"), w0: R.Tensor((784, 128), "float32"),
             b0: R.Tensor((128,), "float32"), w1: R.Tensor((128, 10), "float32"),
             b1: R.Tensor((10,), "float32")):
        with R.dataflow():
            lv0 = R.matmul(x, w0)
            lv1 = R.add(lv0, b0)
            lv2 = R.nn.relu(lv1)
            lv3 = R.matmul(lv2, w1)
            out = R.add(lv3, b1)
            R.output(out)
        return out


def fallback(mod):
    with Target("cuda"):
        return dl.ApplyDefaultSchedule(dl.gpu.Fallback())(mod)


def test_spatial_loops_fused_split_by_1024_and_bound():
    assert_structural_equal(fallback(Scale), ScaleBound)


def test_reduction_loops_go_inside_and_the_init_is_decomposed():
    assert_structural_equal(fallback(RowSum), RowSumBound)


def test_a_scheduled_function_is_left_alone():
    assert_structural_equal(fallback(ScaleBound), ScaleBound)


def test_a_target_is_needed():
    with pytest.raises(TVMValueError, match="needs a target"):
        dl.ApplyDefaultSchedule(dl.gpu.Fallback())(Scale)


def test_a_cpu_target_leaves_functions_unscheduled():
    with Target("llvm"):
        assert_structural_equal(dl.ApplyDefaultSchedule(dl.gpu.Fallback())(Scale), Scale)


def test_a_legalized_mlp_runs_on_target_cuda_and_equals_numpy():
    mod = fallback(relax.transform.LegalizeOps()(MLP))
    vm = relax.VirtualMachine(relax.build(mod, target="cuda"), mlckit.cuda(0))
    rng = np.random.default_rng(0)
    x, w0, b0, w1, b1 = (rng.uniform(-1, 1, s).astype("float32")
                         for s in [(4, 784), (784, 128), (128,), (128, 10), (10,)])
    out = vm["main"](x, w0, b0, w1, b1).numpy()
    np.testing.assert_allclose(out, np.maximum(x @ w0 + b0, 0) @ w1 + b1, rtol=1e-4, atol=1e-4)


def test_a_kernel_tiled_for_the_cpu_gets_one_thread_per_tile():
    # the tile loops i_0, j_0 hold the init and update blocks: they are fused and bound, each
    # thread running its tile's loops (as a module legalized for llvm, then scheduled for cuda)
    from mlckit.backend import numba_cuda
    from tests.kernels import make_matmul, tile_matmul

    tiled = tile_matmul(make_matmul(16), 4, 8, 4, vectorize=True, unroll=True).mod
    func = fallback(tiled)["main"]
    bound = [s.strip() for s in func.script().splitlines() if "thread_binding" in s]
    assert bound == ['for i_0_j_0_fused_0 in T.thread_binding(1, thread="blockIdx.x"):',
                     'for i_0_j_0_fused_1 in T.thread_binding(1024, thread="threadIdx.x"):']
    rng = np.random.default_rng(1)
    a, b = (rng.uniform(-1, 1, (16, 16)).astype("float32") for _ in range(2))
    c = np.zeros((16, 16), "float32")
    numba_cuda.build(func, mode="cpu")(a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-5)


@I.ir_module
class ScaleRows:  # a dynamic batch
    @T.prim_func
    def main(a: T.handle, b: T.handle):
        n = T.int64()
        A = T.match_buffer(a, (n, 300))
        B = T.match_buffer(b, (n, 300))
        for i, j in T.grid(n, 300):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj] * T.float32(2)


def test_a_symbolic_leading_loop_stays_whole_on_blockIdx_x():
    from mlckit.backend import numba_cuda

    func = fallback(ScaleRows)["main"]
    bound = [s.strip() for s in func.script().splitlines() if "thread_binding" in s]
    assert bound == ['for i_j_0_fused in T.thread_binding(n, thread="blockIdx.x"):',
                     'for j_1 in T.thread_binding(1024, thread="threadIdx.x"):']
    a = np.random.default_rng(2).uniform(-1, 1, (3, 300)).astype("float32")
    b = np.zeros((3, 300), "float32")
    numba_cuda.build(func, mode="cpu")(a, b)
    np.testing.assert_allclose(b, a * 2)
