"""dlight.gpu.GeneralReduction: softmax, layer norm and the like, one thread block per row;
the row's reductions computed at the row's loop into shared memory by the row's threads
(partial results, then one thread combining them), the last block over 256 threads."""

from __future__ import annotations

import numpy as np
import pytest

import mlckit.dlight as dl
from mlckit.ir import assert_structural_equal
from mlckit.script import ir as I
from mlckit.script import relax as R
from mlckit.script import tir as T

from .common import bindings, legalized, rand, run, scheduled
from .kernels import RowSum, Scale


@I.ir_module
class MinusRowMax:
    @T.prim_func
    def main(A: T.Buffer((4, 64), "float32"), B: T.Buffer((4, 64), "float32")):
        M = T.alloc_buffer((4,))
        for i, k in T.grid(4, 64):
            with T.block("M"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    M[vi] = T.min_value("float32")
                M[vi] = T.max(M[vi], A[vi, vk])
        for i, j in T.grid(4, 64):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj] - M[vi]


@I.ir_module
class MinusRowMaxScheduled:
    @T.prim_func
    def main(A: T.Buffer((4, 64), "float32"), B: T.Buffer((4, 64), "float32")):
        T.func_attr({"tir.is_scheduled": True})
        M = T.alloc_buffer((4,), scope="shared")
        M_rf = T.alloc_buffer((64, 4), scope="shared")
        for i in T.thread_binding(4, thread="blockIdx.x"):
            for ax0 in T.thread_binding(64, thread="threadIdx.x"):
                for ax1 in range(1):
                    for ax2 in T.serial(1, annotations={"pragma_auto_unroll_max_step": 256,
                                                        "pragma_unroll_explicit": 1}):
                        with T.block("M_rf"):
                            vk_1 = T.axis.spatial(64, ax0)
                            vi = T.axis.spatial(4, i + ax1)
                            vk_0 = T.axis.reduce(1, ax2)
                            with T.init():
                                M_rf[vk_1, vi] = T.min_value("float32")
                            M_rf[vk_1, vi] = T.max(M_rf[vk_1, vi], A[vi, vk_0 * 64 + vk_1])
            for ax1 in T.thread_binding(1, thread="threadIdx.x"):  # noqa: B007 - fused alone: 0
                for ax0 in range(64):
                    with T.block("M"):
                        vk_1 = T.axis.reduce(64, ax0)
                        vi = T.axis.spatial(4, i)  # the unit loop ax1, fused alone, is 0 (as TVM)
                        with T.init():
                            M[vi] = T.min_value("float32")
                        M[vi] = T.max(M[vi], M_rf[vk_1, vi])
            for j_1 in T.thread_binding(256, thread="threadIdx.x"):
                for j_0 in T.serial(1, annotations={"pragma_auto_unroll_max_step": 256,
                                                    "pragma_unroll_explicit": 1}):
                    with T.block("B"):
                        vi = T.axis.spatial(4, i)
                        vj = T.axis.spatial(64, j_0 * 256 + j_1)
                        T.where(j_0 * 256 + j_1 < 64)
                        B[vi, vj] = A[vi, vj] - M[vi]


@I.ir_module
class Softmax:
    @R.function
    def main(x: R.Tensor(("n", 300), "float32")):
        with R.dataflow():
            z = R.nn.softmax(x, axis=-1)
            R.output(z)
        return z


@I.ir_module
class Softmax3D:
    @R.function
    def main(x: R.Tensor((2, 3, 100), "float32")):
        with R.dataflow():
            z = R.nn.softmax(x, axis=-1)
            R.output(z)
        return z


@I.ir_module
class LayerNorm:
    @R.function
    def main(x: R.Tensor((4, 96), "float32"), g: R.Tensor((96,), "float32"),
             b: R.Tensor((96,), "float32")):
        with R.dataflow():
            y = R.nn.layer_norm(x, g, b, axes=[-1])
            R.output(y)
        return y


def general(mod):
    return scheduled(mod, dl.gpu.GeneralReduction())


def softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def test_a_row_reduction_and_its_use_share_one_thread_block_per_row():
    assert_structural_equal(general(MinusRowMax), MinusRowMaxScheduled)


def test_softmax_over_a_symbolic_number_of_rows_equals_numpy():
    func = general(legalized(Softmax))["softmax"]
    # 300 = 2 x 150: the partial maxima and sums over 150 threads, the output over 256
    assert [b[1:] for b in bindings(func)] == [
        ("n", "blockIdx.x"),
        (150, "threadIdx.x"), (1, "threadIdx.x"),   # the row's maximum
        (150, "threadIdx.x"), (1, "threadIdx.x"),   # the row's sum of exponentials
        (256, "threadIdx.x")]                       # the normalised row
    x = rand(3, 300) * 4
    _, z = run(func, x, np.zeros((3, 300), "float32"))
    np.testing.assert_allclose(z, softmax(x), rtol=1e-5, atol=1e-6)


def test_softmax_over_two_leading_axes_equals_numpy():
    func = general(legalized(Softmax3D))["softmax"]
    assert bindings(func)[0] == ("i0_i1_fused", 6, "blockIdx.x")
    x = rand(2, 3, 100)
    _, z = run(func, x, np.zeros((2, 3, 100), "float32"))
    np.testing.assert_allclose(z, softmax(x), rtol=1e-5, atol=1e-6)


def test_layer_norm_reduces_its_two_sums_on_one_thread():
    # one block computes the sum and the sum of squares: rfactor does not split it
    func = general(legalized(LayerNorm))["layer_norm"]
    assert [b[1:] for b in bindings(func)] == [
        (4, "blockIdx.x"), (1, "threadIdx.x"), (256, "threadIdx.x")]
    x, g, b = rand(4, 96), rand(96, seed=1), rand(96, seed=2)
    *_, y = run(func, x, g, b, np.zeros((4, 96), "float32"))
    ref = (x - x.mean(1, keepdims=True)) / np.sqrt(x.var(1, keepdims=True) + 1e-5) * g + b
    np.testing.assert_allclose(y, ref, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("mod", [RowSum, Scale], ids=["lone-reduction", "elementwise"])
def test_no_chain_ending_in_an_elementwise_block_is_left_to_the_next_rule(mod):
    assert_structural_equal(general(mod), mod)


def test_the_simulator_agrees(simulator):
    x = rand(4, 64, seed=3)
    _, b = simulator.run(general(MinusRowMax)["main"], x, np.zeros((4, 64), "float32"))
    np.testing.assert_allclose(b, x - x.max(1, keepdims=True), rtol=1e-6)
    x = rand(2, 3, 100, seed=4)
    _, z = simulator.run(general(legalized(Softmax3D))["softmax"], x,
                         np.zeros((2, 3, 100), "float32"))
    np.testing.assert_allclose(z, softmax(x), rtol=1e-5, atol=1e-6)


@pytest.mark.gpu
def test_a_real_gpu_agrees():
    x = rand(7, 300, seed=5) * 4
    _, z = run(general(legalized(Softmax))["softmax"], x, np.zeros((7, 300), "float32"),
               mode="gpu")
    np.testing.assert_allclose(z, softmax(x), rtol=1e-5, atol=1e-6)
    x, g, b = rand(4, 96, seed=6), rand(96, seed=7), rand(96, seed=8)
    *_, y = run(general(legalized(LayerNorm))["layer_norm"], x, g, b,
                np.zeros((4, 96), "float32"), mode="gpu")
    ref = (x - x.mean(1, keepdims=True)) / np.sqrt(x.var(1, keepdims=True) + 1e-5) * g + b
    np.testing.assert_allclose(y, ref, rtol=1e-4, atol=1e-4)
