"""numba_cpu's LLVM pipeline: LLVM unrolls no loop partially (a long loop stays one
iteration per trip, as written) but still unrolls small constant loops fully, holds no
memory in registers of its own accord (LICM promotion), does not vectorize a loop a second
time around lanes the schedule vectorized, and kernels call the C library's own math
functions."""

from __future__ import annotations

import ctypes
import ctypes.util
import re
import sys
import textwrap

import numpy as np
import pytest

from mlckit import tir
from mlckit.backend import lnumpy, numba_cpu
from mlckit.backend.numba_cpu import entry as entry_module
from mlckit.script import from_source

from ...kernels import make_matmul, tile_matmul

ROWS = '''
@T.prim_func
def rows(A: T.Buffer((64, {k}), "float32"), B: T.Buffer(({k},), "float32"),
         C: T.Buffer((64,), "float32")):
    T.func_attr({{"tir.noalias": True}})
    for i, k in T.grid(64, {k}):
        with T.block("C"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                C[vi] = T.float32(0)
            C[vi] = C[vi] + A[vi, vk] * B[vk]
'''


def _multiplies(k: int) -> int:
    """The float multiplies (scalar or vector) in the optimised LLVM IR of ``k``-long dot
    products of 64 rows."""
    f = numba_cpu.build(from_source(textwrap.dedent(ROWS.format(k=k))), cache=False)
    llvm = f.dispatcher.inspect_llvm(f.dispatcher.signatures[0])
    return len(re.findall(r"fmul (?:float|<\d+ x float>)", llvm))


def test_a_long_reduction_loop_is_not_unrolled_partially():
    # unrolled by 8, the naive matmul's column walk of B defeats the stride prefetcher
    assert _multiplies(512) == 1


def test_a_small_constant_loop_is_still_unrolled_fully():
    # its three multiplies written out (LLVM may then vectorize the loop over the rows)
    assert _multiplies(3) >= 3


def test_llvm_does_not_hold_the_tiled_matmuls_row_of_c_in_registers():
    # LICM promoted the 32 elements of C[i, j_0 * 32 : j_0 * 32 + 32] over the loop of k_1,
    # and spilled half of them (3 GFLOP/s instead of 5.9 at 512^3); holding C is what
    # cache_write(C, 0, "local") asks for (vectorizing the row, as TVM's LLVM does under
    # tir.noalias: test_noalias.py)
    f = numba_cpu.build(tile_matmul(make_matmul(64), 32, 32, 4).mod["main"], cache=False)
    llvm = f.dispatcher.inspect_llvm(f.dispatcher.signatures[0])
    assert ".promoted" not in llvm
    rng = np.random.default_rng(0)
    a, b = (rng.uniform(-1, 1, (64, 64)).astype("float32") for _ in range(2))
    c = np.full((64, 64), np.nan, "float32")
    f(a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-5)


LAYER_NORM = '''
@T.prim_func
def layer_norm(A: T.Buffer((16, 256), "float32"), gamma: T.Buffer((256,), "float32"),
               beta: T.Buffer((256,), "float32"), B: T.Buffer((16, 256), "float32")):
    T.func_attr({"tir.noalias": True})
    s = T.alloc_buffer((16,), "float32")
    sq = T.alloc_buffer((16,), "float32")
    for i, k in T.grid(16, 256):
        with T.block("sum"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                s[vi] = T.float32(0)
            s[vi] = s[vi] + A[vi, vk]
    for i, k in T.grid(16, 256):
        with T.block("sqsum"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                sq[vi] = T.float32(0)
            sq[vi] = sq[vi] + (A[vi, vk] - s[vi] / T.float32(256)) * (
                A[vi, vk] - s[vi] / T.float32(256))
    for i, j in T.grid(16, 256):
        with T.block("norm"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = (A[vi, vj] - s[vi] / T.float32(256)) / T.sqrt(
                sq[vi] / T.float32(256) + T.float32(1e-5)) * gamma[vj] + beta[vj]
'''


def test_a_vectorized_row_is_vector_code_without_gathers():
    # one row at a time, the normalisation vectorized by 16: LLVM vectors (numba_cpu.vectors),
    # which LLVM's loop vectorizer leaves alone; written as lanes, it vectorized the loop
    # around them once more, reading each lane with a gather (289 gathers;
    # benchmarks/schedules.py's layer_norm: 2.6 against 4.4 GB/s): test_vectors.py
    sch = tir.Schedule(from_source(textwrap.dedent(LAYER_NORM)))
    i = sch.get_loops(sch.get_block("sum"))[0]
    for name in ("sqsum", "norm"):
        sch.reverse_compute_at(sch.get_block(name), i)
    _, j1 = sch.split(sch.get_loops(sch.get_block("norm"))[-1], [None, 16])
    sch.vectorize(j1)
    f = numba_cpu.build(sch.mod["main"], cache=False)
    assert "ramp(" in f.source
    # a float32 through a function may be Numba's float64: the broadcast says float32
    assert "broadcast(np.float32(np.sqrt(sq[0] / np.float32(256.0)" in f.source
    llvm = f.dispatcher.inspect_llvm(f.dispatcher.signatures[0])
    assert "masked.gather" not in llvm
    assert re.search(r"fdiv (?:fast )?<\d+ x float>", llvm)  # the lanes, packed
    rng = np.random.default_rng(0)
    a = rng.uniform(-1, 1, (16, 256)).astype("float32")
    g, b = (rng.uniform(0.5, 1.5, 256).astype("float32") for _ in range(2))
    out = np.zeros_like(a)
    f(a, g, b, out)
    mean, var = a.mean(axis=1, keepdims=True), a.var(axis=1, keepdims=True)
    np.testing.assert_allclose(out, (a - mean) / np.sqrt(var + 1e-5) * g + b, rtol=1e-4,
                               atol=1e-4)


def test_a_version_numba_compiles_at_a_call_is_compiled_in_the_pipeline_too(monkeypatch):
    # read-only arrays are another Numba type; f(...) enters the one compiled version with
    # them (the same machine values) through numba_cpu.entry, Numba's dispatcher compiles a
    # version for them at its first call: outside llvm_pipeline its lanes stayed scalar (the
    # SLP vectorizer off)
    monkeypatch.setattr(entry_module, "REPEATS", 1)  # the entry from the first kernel on
    f = numba_cpu.build(tile_matmul(make_matmul(64), 8, 32, 4, vectorize=True).mod["main"],
                        cache=False)
    rng = np.random.default_rng(0)
    a, b = (rng.uniform(-1, 1, (64, 64)).astype("float32") for _ in range(2))
    for x in (a, b):
        x.setflags(write=False)
    c = np.zeros((64, 64), "float32")
    f(a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)
    assert len(f.dispatcher.signatures) == 1  # nothing compiled at the call
    c[:] = 0
    f.dispatcher(a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)
    read_only = [sig for sig in f.dispatcher.signatures if not sig[0].mutable]
    assert len(read_only) == 1
    assert re.search(r"fmul (?:fast )?<", f.dispatcher.inspect_llvm(read_only[0]))


def test_the_pipeline_options_hold_only_while_mlckit_compiles():
    from numba.core import config

    before = config.SLP_VECTORIZE
    with numba_cpu.llvm_pipeline():
        inside = config.SLP_VECTORIZE
    assert config.SLP_VECTORIZE == before
    assert inside or "NUMBA_SLP_VECTORIZE" in __import__("os").environ


EXP = '''
@T.prim_func
def e(A: T.Buffer((4096,), "float32"), B: T.Buffer((4096,), "float32")):
    for i in range(4096):
        with T.block("B"):
            vi = T.axis.spatial(4096, i)
            B[vi] = T.exp(A[vi])
'''


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the binding is made on Linux")
def test_exp_is_the_c_librarys_expf():
    import llvmlite.binding as llvm

    func = from_source(textwrap.dedent(EXP))
    f = numba_cpu.build(func, cache=False)
    libm = ctypes.CDLL(ctypes.util.find_library("m") or "libm.so.6")
    assert llvm.address_of_symbol("expf") == ctypes.cast(libm.expf, ctypes.c_void_p).value
    a = np.random.default_rng(0).uniform(-80, 80, 4096).astype("float32")
    b = np.empty_like(a)
    f(a, b)
    libm.expf.restype, libm.expf.argtypes = ctypes.c_float, [ctypes.c_float]
    expected = np.array([libm.expf(float(x)) for x in a[:256]], "float32")
    np.testing.assert_array_equal(b[:256], expected)  # the same function: the same bits
    ref = np.empty_like(a)
    lnumpy.build(func)(a, ref)
    np.testing.assert_allclose(b, ref, rtol=1e-6)
