"""dlight.gpu.RMSNorm: a thread block per row, each thread reading 8 consecutive elements
of the row into registers once; their squares summed into one partial sum per thread (in
shared memory, one thread adding them up: mlckit has no cross-thread all-reduce), then the
same 8 elements normalised and written out."""

from __future__ import annotations

import numpy as np
import pytest

import mlckit.dlight as dl
from mlckit import IRModule
from mlckit.ir import assert_structural_equal
from mlckit.script import ir as I
from mlckit.script import relax as R
from mlckit.script import tir as T

from .common import bindings, legalized, rand, run, scheduled


@I.ir_module
class RmsNorm:  # the blocks TVM 0.27 legalizes R.nn.rms_norm into, its casts left out
    @T.prim_func
    def main(x: T.Buffer((4, 16), "float32"), w: T.Buffer((16,), "float32"),
             y: T.Buffer((4, 16), "float32")):
        sq = T.alloc_buffer((4, 16))
        red = T.alloc_buffer((4,))
        rs = T.alloc_buffer((4,))
        nm = T.alloc_buffer((4, 16))
        for i, j in T.grid(4, 16):
            with T.block("T_multiply"):
                vi, vj = T.axis.remap("SS", [i, j])
                sq[vi, vj] = x[vi, vj] * x[vi, vj]
        for i, k in T.grid(4, 16):
            with T.block("T_multiply_red"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    red[vi] = T.float32(0)
                red[vi] = red[vi] + sq[vi, vk]
        for i in range(4):
            with T.block("rsqrt"):
                vi = T.axis.remap("S", [i])
                rs[vi] = T.rsqrt(red[vi] / T.float32(16) + T.float32(1e-5))
        for i, j in T.grid(4, 16):
            with T.block("T_rms_norm"):
                vi, vj = T.axis.remap("SS", [i, j])
                nm[vi, vj] = rs[vi] * x[vi, vj] * w[vj]
        for i, j in T.grid(4, 16):
            with T.block("T_cast"):
                vi, vj = T.axis.remap("SS", [i, j])
                y[vi, vj] = nm[vi, vj]


@I.ir_module
class RmsNormScheduled:
    @T.prim_func
    def main(x: T.Buffer((4, 16), "float32"), w: T.Buffer((16,), "float32"),
             y: T.Buffer((4, 16), "float32")):
        T.func_attr({"tir.is_scheduled": True})
        sq = T.alloc_buffer((4, 16), scope="local")
        red = T.alloc_buffer((4,), scope="shared")
        rs = T.alloc_buffer((4,), scope="shared")
        nm = T.alloc_buffer((4, 16), scope="local")
        x_local = T.alloc_buffer((4, 16), scope="local")
        red_rf = T.alloc_buffer((2, 4), scope="shared")
        for ax0 in T.thread_binding(4, thread="blockIdx.x"):
            for ax1_0 in T.thread_binding(2, thread="threadIdx.x"):  # 8 elements each
                for ax1_1 in range(1):
                    for ax1_2 in T.vectorized(8):
                        with T.block("x_local"):
                            v0 = T.axis.spatial(4, ax0)
                            v1 = T.axis.spatial(16, ax1_0 * 8 + ax1_1 * 8 + ax1_2)
                            T.reads(x[v0, v1])
                            T.writes(x_local[v0, v1])
                            x_local[v0, v1] = x[v0, v1]
            for ax0_1 in T.thread_binding(2, thread="threadIdx.x"):  # their partial sums
                for ax0_2 in range(8):
                    with T.block("T_multiply"):
                        vi = T.axis.spatial(4, ax0)
                        vj = T.axis.spatial(16, ax0_1 * 8 + ax0_2)
                        T.reads(x_local[vi, vj])
                        T.writes(sq[vi, vj])
                        sq[vi, vj] = x_local[vi, vj] * x_local[vi, vj]
                for ax1 in range(8):
                    with T.block("T_multiply_red_rf"):
                        vk_0, vi = T.axis.remap("SS", [ax0_1, ax0])
                        vk_1 = T.axis.reduce(1, 0)
                        vk_2 = T.axis.reduce(8, ax1)
                        T.reads(sq[vi, vk_0 * 8 + vk_1 * 8 + vk_2])
                        T.writes(red_rf[vk_0, vi])
                        with T.init():
                            red_rf[vk_0, vi] = T.float32(0)
                        red_rf[vk_0, vi] = red_rf[vk_0, vi] + sq[vi, vk_0 * 8 + vk_1 * 8 + vk_2]
            for ax0_0 in T.thread_binding(1, thread="threadIdx.x"):  # one thread adds them
                for ax0_1 in range(2):
                    with T.block("T_multiply_red"):
                        vk_0 = T.axis.reduce(2, ax0_0 * 2 + ax0_1)
                        vi = T.axis.spatial(4, ax0)
                        T.reads(red_rf[vk_0, vi])
                        T.writes(red[vi])
                        with T.init():
                            red[vi] = T.float32(0)
                        red[vi] = red[vi] + red_rf[vk_0, vi]
            with T.block("rsqrt"):
                vi = T.axis.spatial(4, ax0)
                T.reads(red[vi])
                T.writes(rs[vi])
                rs[vi] = T.rsqrt(red[vi] / T.float32(16) + T.float32(1e-5))
            for ax0_0 in T.thread_binding(2, thread="threadIdx.x"):  # the same 8 elements
                for ax0_1, ax0_2 in T.grid(1, 8):
                    with T.block("T_rms_norm"):
                        vi = T.axis.spatial(4, ax0)
                        vj = T.axis.spatial(16, ax0_0 * 8 + ax0_1 * 8 + ax0_2)
                        T.reads(rs[vi], x_local[vi, vj], w[vj])
                        T.writes(nm[vi, vj])
                        nm[vi, vj] = rs[vi] * x_local[vi, vj] * w[vj]
                for ax0_1 in T.vectorized(8):
                    with T.block("y_local"):
                        v0 = T.axis.spatial(4, ax0)
                        v1 = T.axis.spatial(16, ax0_0 * 8 + ax0_1)
                        T.reads(nm[v0, v1])
                        T.writes(y[v0, v1])
                        y[v0, v1] = nm[v0, v1]


def rms_norm_module(rows: tuple, d: int):
    """TVM 0.27's legalized ``R.nn.rms_norm`` over ``rows + (d,)``, with its copy ("cast")
    blocks of the input, the weight and the output."""
    shape = (*rows, d)
    r = len(rows)

    @T.prim_func
    def main(x: T.Buffer(shape, "float32"), w: T.Buffer((d,), "float32"),
             y: T.Buffer(shape, "float32")):
        xc = T.alloc_buffer(shape)
        sq = T.alloc_buffer(shape)
        red = T.alloc_buffer(rows)
        rs = T.alloc_buffer(rows)
        wc = T.alloc_buffer((d,))
        nm = T.alloc_buffer(shape)
        for idx in T.grid(*shape):
            with T.block("T_cast"):
                v = T.axis.remap("S" * (r + 1), idx)
                xc[v] = x[v]
        for idx in T.grid(*shape):
            with T.block("T_multiply"):
                v = T.axis.remap("S" * (r + 1), idx)
                sq[v] = xc[v] * xc[v]
        for idx in T.grid(*shape):
            with T.block("T_multiply_red"):
                v = T.axis.remap("S" * r + "R", idx)
                with T.init():
                    red[v[:-1]] = T.float32(0)
                red[v[:-1]] = red[v[:-1]] + sq[v]
        for idx in T.grid(*rows):
            with T.block("rsqrt"):
                v = T.axis.remap("S" * r, idx)
                rs[v] = T.rsqrt(red[v] / T.float32(d) + T.float32(1e-6))
        for j in range(d):
            with T.block("T_cast_1"):
                vj = T.axis.remap("S", [j])
                wc[vj] = w[vj]
        for idx in T.grid(*shape):
            with T.block("T_rms_norm"):
                v = T.axis.remap("S" * (r + 1), idx)
                nm[v] = rs[v[:-1]] * xc[v] * wc[v[-1]]
        for idx in T.grid(*shape):
            with T.block("T_cast_2"):
                v = T.axis.remap("S" * (r + 1), idx)
                y[v] = nm[v]

    return main


def reference(x, w, eps=1e-6):
    return x / np.sqrt((x * x).mean(-1, keepdims=True) + eps) * w


def rmsnorm(mod):
    return scheduled(mod, dl.gpu.RMSNorm())


def test_an_rms_norm_gets_a_thread_block_per_row_and_8_elements_per_thread():
    assert_structural_equal(rmsnorm(RmsNorm), RmsNormScheduled)


def test_the_rms_norm_equals_numpy():
    x, w = rand(4, 16), rand(16, seed=1)
    *_, y = run(rmsnorm(RmsNorm)["main"], x, w, np.zeros((4, 16), "float32"))
    np.testing.assert_allclose(y, reference(x, w, 1e-5), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("rows,d,threads", [((2, 4), 64, 8), ((3,), 4096, 512), ((2,), 36, 36)],
                         ids=["3-d", "512-threads", "8-does-not-divide"])
def test_tvms_legalized_kernel_with_its_copies_equals_numpy(rows, d, threads):
    func = rmsnorm(IRModule({"main": rms_norm_module(rows, d)}))["main"]
    n_rows = int(np.prod(rows))
    assert [b[1:] for b in bindings(func)] == [
        (n_rows, "blockIdx.x"), (threads, "threadIdx.x"), (threads, "threadIdx.x"),
        (1, "threadIdx.x"), (threads, "threadIdx.x")]
    x, w = rand(*rows, d, seed=2), rand(d, seed=3)
    *_, y = run(func, x, w, np.zeros_like(x))
    np.testing.assert_allclose(y, reference(x, w), rtol=1e-4, atol=1e-5)


def layer_norm_and_mlckit_rms_norm():
    @I.ir_module
    class Norms:
        @R.function
        def main(x: R.Tensor((4, 32), "float32"), g: R.Tensor((32,), "float32"),
                 b: R.Tensor((32,), "float32")):
            with R.dataflow():
                y = R.nn.layer_norm(x, g, b, axes=[-1])
                z = R.nn.rms_norm(y, g, axes=[-1])
                R.output(z)
            return z

    mod = legalized(Norms)
    return [IRModule({"main": mod[name]}) for name in ("layer_norm", "rms_norm")]


@pytest.mark.parametrize("mod", layer_norm_and_mlckit_rms_norm(),
                         ids=["layer-norm", "mlckit-rms-norm"])
def test_kernels_without_an_rsqrt_block_are_left_to_the_next_rule(mod):
    # mlckit legalizes R.nn.rms_norm into three blocks, rsqrt inside the last (as TVM v0.23)
    assert_structural_equal(rmsnorm(mod), mod)


@I.ir_module
class SymbolicRow:
    @T.prim_func
    def main(a: T.handle, w: T.Buffer((1,), "float32"), b: T.handle):
        d = T.int64()
        x = T.match_buffer(a, (4, d))
        y = T.match_buffer(b, (4, d))
        sq = T.alloc_buffer((4, d))
        red = T.alloc_buffer((4,))
        rs = T.alloc_buffer((4,))
        nm = T.alloc_buffer((4, d))
        for i, j in T.grid(4, d):
            with T.block("T_multiply"):
                vi, vj = T.axis.remap("SS", [i, j])
                sq[vi, vj] = x[vi, vj] * x[vi, vj]
        for i, k in T.grid(4, d):
            with T.block("T_multiply_red"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    red[vi] = T.float32(0)
                red[vi] = red[vi] + sq[vi, vk]
        for i in range(4):
            with T.block("rsqrt"):
                vi = T.axis.remap("S", [i])
                rs[vi] = T.rsqrt(red[vi] + T.float32(1e-5))
        for i, j in T.grid(4, d):
            with T.block("T_rms_norm"):
                vi, vj = T.axis.remap("SS", [i, j])
                nm[vi, vj] = rs[vi] * x[vi, vj] * w[0]
        for i, j in T.grid(4, d):
            with T.block("T_cast"):
                vi, vj = T.axis.remap("SS", [i, j])
                y[vi, vj] = nm[vi, vj]


def test_a_symbolic_row_length_is_left_to_the_next_rule():
    assert_structural_equal(rmsnorm(SymbolicRow), SymbolicRow)


def test_the_simulator_agrees(simulator):
    func = rmsnorm(IRModule({"main": rms_norm_module((2, 3), 16)}))["main"]
    x, w = rand(2, 3, 16, seed=4), rand(16, seed=5)
    *_, y = simulator.run(func, x, w, np.zeros_like(x))
    np.testing.assert_allclose(y, reference(x, w), rtol=1e-4, atol=1e-5)


@pytest.mark.gpu
def test_a_real_gpu_agrees():
    for rows, d in [((2, 4), 64), ((3,), 4096), ((2,), 36)]:
        func = rmsnorm(IRModule({"main": rms_norm_module(rows, d)}))["main"]
        x, w = rand(*rows, d, seed=6), rand(d, seed=7)
        *_, y = run(func, x, w, np.zeros_like(x), mode="gpu")
        np.testing.assert_allclose(y, reference(x, w), rtol=1e-4, atol=1e-5)
