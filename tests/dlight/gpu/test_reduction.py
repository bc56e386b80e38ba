"""dlight.gpu.Reduction: one thread block per output, its threads each summing a part of the
reduction into shared memory, one thread adding the parts (TVM's schedule but for the last
step, see the rule's docstring); the shape (inner reduction or inner spatial) chosen as TVM."""

from __future__ import annotations

import numpy as np
import pytest

import mlckit.dlight as dl
from mlckit.ir import assert_structural_equal
from mlckit.script import ir as I
from mlckit.script import relax as R
from mlckit.script import tir as T

from .common import bindings, legalized, rand, run, scheduled
from .kernels import Matmul, RowSum, Scale


@I.ir_module
class RowSumScheduled:
    @T.prim_func
    def main(A: T.Buffer((4, 64), "float32"), B: T.Buffer((4,), "float32")):
        T.func_attr({"tir.is_scheduled": True})
        B_rf = T.alloc_buffer((64, 4), scope="shared")
        for i in T.thread_binding(4, thread="blockIdx.x"):
            for k_1 in T.thread_binding(64, thread="threadIdx.x", annotations={
                    "pragma_auto_unroll_max_step": 256, "pragma_unroll_explicit": 1}):
                with T.block("B_rf_init"):
                    vk_1, vi = T.axis.remap("SS", [k_1, i])
                    B_rf[vk_1, vi] = T.float32(0)
                for k_0 in range(1):
                    with T.block("B_rf_update"):
                        vk_1, vi, vk_0 = T.axis.remap("SSR", [k_1, i, k_0])
                        B_rf[vk_1, vi] = B_rf[vk_1, vi] + A[vi, vk_0 * 64 + vk_1]
            for ax1 in T.thread_binding(1, thread="threadIdx.x"):  # noqa: B007 - fused alone: 0
                for ax0 in range(64):
                    with T.block("B"):
                        vk_1 = T.axis.reduce(64, ax0)
                        vi = T.axis.spatial(4, i)  # the unit loop ax1, fused alone, is 0 (as TVM)
                        with T.init():
                            B[vi] = T.float32(0)
                        B[vi] = B[vi] + B_rf[vk_1, vi]


@I.ir_module
class ColumnSumTimesTwo:
    @T.prim_func
    def main(A: T.Buffer((40, 48), "float32"), C: T.Buffer((48,), "float32")):
        B = T.alloc_buffer((48,))
        for j, i in T.grid(48, 40):
            with T.block("B"):
                vj, vi = T.axis.remap("SR", [j, i])
                with T.init():
                    B[vj] = T.float32(0)
                B[vj] = B[vj] + A[vi, vj]
        for j in range(48):
            with T.block("C"):
                vj = T.axis.remap("S", [j])
                C[vj] = B[vj] * T.float32(2)


@I.ir_module
class SumRows:  # a symbolic number of rows, over two spatial axes
    @R.function
    def main(x: R.Tensor(("n", 3, 300), "float32")):
        with R.dataflow():
            s = R.sum(x, axis=[2])
            R.output(s)
        return s


@I.ir_module
class LinearOneRow:  # the tutorial's nn.Linear on one row: (1, 96) @ (96, 48) + b, ReLU
    @R.function
    def main(x: R.Tensor((1, 96), "float32"), w: R.Tensor((96, 48), "float32"),
             b: R.Tensor((48,), "float32")):
        with R.dataflow():
            y = R.nn.relu(R.add(R.matmul(x, w), b))
            R.output(y)
        return y


def reduction(mod):
    return scheduled(mod, dl.gpu.Reduction())


def test_an_inner_reduction_gets_a_thread_block_per_row_and_shared_partial_sums():
    assert_structural_equal(reduction(RowSum), RowSumScheduled)


def test_the_row_sum_equals_numpy():
    a = rand(4, 64)
    _, b = run(reduction(RowSum)["main"], a, np.zeros(4, "float32"))
    np.testing.assert_allclose(b, a.sum(1), rtol=1e-5, atol=1e-6)


def test_an_inner_spatial_reduction_puts_16_outputs_on_x_and_16_partials_on_y():
    func = reduction(ColumnSumTimesTwo)["main"]
    assert bindings(func) == [
        ("j_0_fused", 3, "blockIdx.x"),  # a loop fused alone is renamed <name>_fused (TVM)
        ("j_1", 16, "threadIdx.x"), ("i_fused_1", 16, "threadIdx.y"),    # the partial sums
        ("ax1_fused", 16, "threadIdx.x"), ("ax0_0", 1, "threadIdx.y"),  # thread (x, 0) adds them
        ("ax0_fused_0", 16, "threadIdx.x"),                              # the epilogue, per output
    ]
    a = rand(40, 48)
    _, c = run(func, a, np.zeros(48, "float32"))
    np.testing.assert_allclose(c, a.sum(0) * 2, rtol=1e-5, atol=1e-5)


def test_a_symbolic_number_of_rows_over_two_axes_equals_numpy():
    func = reduction(legalized(SumRows))["sum"]
    assert bindings(func)[0] == ("ax0_ax1_fused", "n * T.int64(3)", "blockIdx.x")
    x = rand(2, 3, 300)
    _, s = run(func, x, np.zeros((2, 3), "float32"))
    np.testing.assert_allclose(s, x.sum(2), rtol=1e-5, atol=1e-5)


def test_a_one_row_linear_is_an_inner_spatial_reduction_as_in_tvm():
    mod = reduction(legalized(LinearOneRow))
    func = next(f for gv, f in mod.functions.items() if gv.name_hint == "matmul")
    assert [b[1:] for b in bindings(func)] == [
        (3, "blockIdx.x"), (16, "threadIdx.x"), (16, "threadIdx.y"),
        (16, "threadIdx.x"), (1, "threadIdx.y")]
    x, w = rand(1, 96), rand(96, 48, seed=1)
    _, _, y = run(func, x, w, np.zeros((1, 48), "float32"))
    np.testing.assert_allclose(y, x @ w, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("mod", [Scale, Matmul], ids=["elementwise", "matmul"])
def test_no_plain_reduction_is_left_to_the_next_rule(mod):
    assert_structural_equal(reduction(mod), mod)


def test_a_cpu_target_is_left_alone():
    assert_structural_equal(scheduled(RowSum, dl.gpu.Reduction(), target="llvm"), RowSum)


def test_the_simulator_agrees(simulator):
    a = rand(4, 64, seed=3)
    _, b = simulator.run(reduction(RowSum)["main"], a, np.full(4, np.nan, "float32"))
    np.testing.assert_allclose(b, a.sum(1), rtol=1e-5, atol=1e-6)
    a = rand(40, 48, seed=4)
    _, c = simulator.run(reduction(ColumnSumTimesTwo)["main"], a, np.zeros(48, "float32"))
    np.testing.assert_allclose(c, a.sum(0) * 2, rtol=1e-5, atol=1e-5)


@pytest.mark.gpu
def test_a_real_gpu_agrees():
    a = rand(40, 48, seed=5)
    _, c = run(reduction(ColumnSumTimesTwo)["main"], a, np.zeros(48, "float32"), mode="gpu")
    np.testing.assert_allclose(c, a.sum(0) * 2, rtol=1e-5, atol=1e-5)
    x = rand(5, 3, 300, seed=6)
    _, s = run(reduction(legalized(SumRows))["sum"], x, np.zeros((5, 3), "float32"),
               mode="gpu")
    np.testing.assert_allclose(s, x.sum(2), rtol=1e-5, atol=1e-5)
