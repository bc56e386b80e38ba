"""float16 on a CPU (tir.transform.LegalizeHalf): kernels build and run, store float16 and compute in
float32; the numbers agree with NumPy's float16 within what float16 warrants; the
conversions are exact (every float16, and float32 rounded to nearest, ties to even)."""

import numpy as np
import pytest

import mlckit
from mlckit import relax, te, tir
from mlckit.backend import numba_cpu, numba_cuda
from mlckit.script import ir as I
from mlckit.script import relax as R
from mlckit.script import tir as T

N = 65536
RNG = np.random.default_rng(0)


@T.prim_func
def widen(A: T.Buffer((N,), "float16"), B: T.Buffer((N,), "float32")):
    for i in range(N):
        with T.block("B"):
            vi = T.axis.spatial(N, i)
            B[vi] = T.Cast("float32", A[vi])


@T.prim_func
def narrow(A: T.Buffer((N,), "float32"), B: T.Buffer((N,), "float16")):
    for i in range(N):
        with T.block("B"):
            vi = T.axis.spatial(N, i)
            B[vi] = T.Cast("float16", A[vi])


@T.prim_func
def axpy(A: T.Buffer((64,), "float16"), B: T.Buffer((64,), "float16"),
         C: T.Buffer((64,), "float16"), s: T.float16):
    for i in range(64):
        with T.block("C"):
            vi = T.axis.spatial(64, i)
            C[vi] = A[vi] * s + T.exp(B[vi]) + T.float16(1.5)


def test_every_float16_widens_exactly():
    f = mlckit.build(widen, target="llvm")
    halves = np.arange(N, dtype=np.uint16).view(np.float16)
    out = np.zeros(N, "float32")
    f(halves, out)
    want = halves.astype(np.float32)
    nan = np.isnan(want)
    assert np.isnan(out[nan]).all()
    np.testing.assert_array_equal(out[~nan].view(np.uint32), want[~nan].view(np.uint32))


@pytest.mark.parametrize("values", ["random_bits", "in_float16_range", "exact_halves",
                                    "midpoints"])
def test_float32_narrows_to_the_nearest_float16_ties_to_even(values):
    halves = np.arange(N, dtype=np.uint16).view(np.float16)
    finite = halves[np.isfinite(halves)]
    with np.errstate(all="ignore"):
        x = {
            "random_bits": lambda: RNG.integers(0, 2 ** 32, N, dtype=np.uint64)
            .astype(np.uint32).view(np.float32),
            "in_float16_range": lambda: (RNG.standard_normal(N) * 10.0 ** RNG.integers(-8, 5, N))
            .astype(np.float32),
            "exact_halves": lambda: halves.astype(np.float32),
            # halfway between neighbouring float16s: the ties
            "midpoints": lambda: ((finite[:-1].astype(np.float64) + np.nextafter(
                finite[:-1], np.float16(np.inf)).astype(np.float64)) / 2).astype(np.float32),
        }[values]()
        want = x.astype(np.float16)
    f = mlckit.build(narrow, "llvm")
    x = np.resize(x, N)
    want = np.resize(want, N)
    out = np.zeros(N, "float16")
    f(x, out)
    nan = np.isnan(want)
    assert np.isnan(out[nan]).all()
    np.testing.assert_array_equal(out[~nan].view(np.uint16), want[~nan].view(np.uint16))


@pytest.mark.parametrize("target", ["llvm", "lnumpy"])
def test_a_float16_kernel_computes_numpys_answer(target):
    f = mlckit.build(axpy, target=target)
    a = RNG.standard_normal(64).astype("float16")
    b = RNG.standard_normal(64).astype("float16")
    c = np.zeros(64, "float16")
    f(a, b, c, 0.5)
    want = a * np.float16(0.5) + np.exp(b) + np.float16(1.5)
    assert c.dtype == np.float16
    # NumPy rounds after each operation, the kernel where it stores: an ulp or two apart
    np.testing.assert_allclose(c.astype("float32"), want.astype("float32"), rtol=2e-3,
                               atol=2e-3)


def test_the_source_stores_float16_bits_and_computes_in_float32():
    src = numba_cpu.build(axpy).source
    assert ("C[i] = float_to_half(half_to_float(A[i]) * s + "
            "np.exp(half_to_float(B[i])) + np.float32(1.5))") in src
    assert "def half_to_float(h):" in src and "def float_to_half(x):" in src


def test_a_scheduled_float16_matmul_accumulates_in_float16():
    A = te.placeholder((64, 64), "float16", name="A")
    B = te.placeholder((64, 64), "float16", name="B")
    k = te.reduce_axis((0, 64), name="k")
    C = te.compute((64, 64), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    sch = tir.Schedule(te.create_prim_func([A, B, C]))
    block = sch.get_block("C")
    i, j, kk = sch.get_loops(block)
    i0, i1 = sch.split(i, [None, 8])
    j0, j1 = sch.split(j, [None, 8])
    sch.reorder(i0, j0, kk, i1, j1)
    sch.parallel(i0)
    sch.vectorize(j1)
    sch.reverse_compute_at(sch.cache_write(block, 0, "local"), j0)
    sch.decompose_reduction(block, kk)
    f = mlckit.build(sch.mod["main"], target="llvm")
    a = RNG.standard_normal((64, 64)).astype("float16")
    b = RNG.standard_normal((64, 64)).astype("float16")
    c = np.zeros((64, 64), "float16")
    f(a, b, c)
    want = np.zeros((64, 64), "float16")  # NumPy float16, summed in the kernel's order
    for step in range(64):
        want = want + a[:, step:step + 1] * b[step:step + 1, :]
    # each partial sum rounds to float16: a few units in the last place of |C| <= 32
    np.testing.assert_allclose(c.astype("float32"), want.astype("float32"), atol=0.125)


@T.prim_func
def axpy_gpu(A: T.Buffer((4, 32), "float16"), B: T.Buffer((4, 32), "float16"),
             C: T.Buffer((4, 32), "float16"), s: T.float16):
    for i in T.thread_binding(4, thread="blockIdx.x"):
        for j in T.thread_binding(32, thread="threadIdx.x"):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = A[vi, vj] * s + T.exp(B[vi, vj])


@pytest.mark.parametrize("mode", ["cpu", "sim"])
def test_a_float16_cuda_kernel_without_a_gpu(mode):
    f = numba_cuda.build(axpy_gpu, mode=mode)
    a = RNG.standard_normal((4, 32)).astype("float16")
    b = RNG.standard_normal((4, 32)).astype("float16")
    c = np.zeros((4, 32), "float16")
    f(a, b, c, 0.5)
    want = a * np.float16(0.5) + np.exp(b)
    np.testing.assert_allclose(c.astype("float32"), want.astype("float32"), rtol=2e-3,
                               atol=2e-3)


@I.ir_module
class Dense:
    @R.function
    def main(x: R.Tensor((16, 32), "float16"), w: R.Tensor((32, 8), "float16"),
             b: R.Tensor((8,), "float16")):
        with R.dataflow():
            y = R.matmul(x, w)
            z = R.add(y, b)
            R.output(z)
        return z


def test_float16_tensors_through_legalize_ops_and_the_vm():
    ex = relax.build(relax.transform.LegalizeOps()(Dense), target="llvm")
    vm = relax.VirtualMachine(ex, mlckit.cpu())
    x = RNG.standard_normal((16, 32)).astype("float16")
    w = RNG.standard_normal((32, 8)).astype("float16")
    b = RNG.standard_normal(8).astype("float16")
    z = vm["main"](x, w, b)
    assert z.dtype == "float16"
    want = np.matmul(x, w) + b
    np.testing.assert_allclose(z.numpy().astype("float32"), want.astype("float32"),
                               atol=0.05, rtol=5e-3)
