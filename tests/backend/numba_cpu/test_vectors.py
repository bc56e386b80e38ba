"""numba_cpu.vectors: TIR's ramps and broadcasts as LLVM vector values in Numba, and the
generator printing a vector store as one statement of them (codegen_vector_llvm)."""

from __future__ import annotations

import re
import textwrap

import numpy as np
import pytest
from numba import njit

from mlckit import tir
from mlckit.backend import lnumpy, numba_cpu
from mlckit.backend.numba_cpu.vectors import broadcast, ramp, ramps
from mlckit.backend.numba_cpu.views import flat_view
from mlckit.script import from_source

from ...kernels import tile_matmul
from ..test_codegen_vector import MATMUL, TILE_2D


# -- the Numba extension -------------------------------------------------------------------------
@njit
def _scale_rows(A, B, C):
    A_1, B_1, C_1 = flat_view(A), flat_view(B), flat_view(C)
    for i in range(4):
        C_1[ramp(i * 16, 1, 16)] = max(A_1[ramp(i * 16, 1, 16)] * broadcast(np.float32(2.0), 16),
                                       B_1[ramps(i * 16, 1, 4, 4, 0)])


def test_ramp_broadcast_and_max_compute_what_numpy_does():
    a = np.arange(64, dtype=np.float32).reshape(8, 8) - 20
    b = np.full((8, 8), 7, np.float32)
    c = np.zeros((8, 8), np.float32)
    _scale_rows(a, b, c)
    expected = np.concatenate([np.maximum(a.ravel()[i * 16:(i + 1) * 16] * 2,
                                          np.tile(b.ravel()[i * 16:i * 16 + 4], 4))
                               for i in range(4)])
    np.testing.assert_array_equal(c.ravel(), expected)


@njit
def _mixed(A, C):
    # 3 ramps of 4 lanes, 8 apart; a ramp of stride 2; each of 3 elements in 4 lanes
    C[ramps(0, 1, 4, 3, 8)] = -A[ramp(1, 2, 12)] + A[ramps(0, 0, 4, 3, 1)] * A[ramp(2, 1, 12)]


@pytest.mark.parametrize("dtype", ["int32", "int64", "float64"])
def test_ramps_of_any_stride_and_count_load_and_store_their_lanes(dtype):
    a = np.arange(40).astype(dtype)
    c = np.zeros(40, dtype)
    _mixed(a, c)
    lanes = [k // 4 * 8 + k % 4 for k in range(12)]
    expected = np.zeros(40, dtype)
    expected[lanes] = -a[1 + 2 * np.arange(12)] + a[[k // 4 for k in range(12)]] * a[2:14]
    np.testing.assert_array_equal(c, expected)


@njit
def _halve(A, B):
    B[ramp(0, 1, 8)] = min(A[ramp(0, 1, 8)] / broadcast(np.float32(2.0), 8),
                           A[ramp(8, 1, 8)] - A[ramp(0, 1, 8)])


def test_a_strided_array_is_read_at_its_stride():
    base = np.arange(32, dtype=np.float32)
    a = base[::2]  # 16 elements, 8 bytes apart
    b = np.zeros(8, np.float32)
    _halve(a, b)
    np.testing.assert_array_equal(b, np.minimum(a[:8] / 2, a[8:] - a[:8]))


@njit
def _last_lane(A, B):
    B[ramp(0, 0, 8)] = B[ramp(0, 0, 8)] + A[ramp(0, 1, 8)]


def test_lanes_storing_one_element_leave_the_last_lanes_value():
    a = np.arange(8, dtype=np.float32)
    b = np.ones(1, np.float32)
    _last_lane(a, b)
    np.testing.assert_array_equal(b, [1 + a[7]])


# -- the generator ---------------------------------------------------------------------------------
def _matmul_inputs():
    rng = np.random.default_rng(0)
    return (rng.uniform(-1, 1, (64, 64)).astype("float32"),
            rng.uniform(-1, 1, (64, 64)).astype("float32"))


def test_a_vectorized_matmul_store_is_one_statement_of_llvm_vectors():
    func = tile_matmul(from_source(MATMUL), 8, 8, 4, vectorize=True, unroll=True).mod["main"]
    f = numba_cpu.build(func, cache=False)
    assert "from mlckit.backend.numba_cpu.vectors import broadcast, ramp\n" in f.source
    # the element every lane reads and the base of B's ramp named once, before the store
    assert re.search(r"A_1_e = A_1\[[^\]]+\]  # the same element in every lane\n", f.source)
    assert re.search(r"B_1_at = cse_var_\d+ \+ 64\n", f.source)  # the unrolled k_1 = 1
    assert re.search(r"C_1\[ramp\((cse_var_\d+), 1, 8\)\] = C_1\[ramp\(\1, 1, 8\)\] \+ "
                     r"broadcast\(A_1_e, 8\) \* B_1\[ramp\(B_1_at, 1, 8\)\]\n", f.source)
    assert "C_v0" not in f.source and numba_cpu.NO_LOOP_VECTORIZER not in f.source
    llvm = f.dispatcher.inspect_llvm(f.dispatcher.signatures[0])
    assert re.search(r"fmul (?:fast )?<8 x float>", llvm)
    a, b = _matmul_inputs()
    results = []
    for build in (lnumpy.build, lambda fn: numba_cpu.build(fn, cache=False)):
        c = np.full((64, 64), 99, "float32")
        build(func)(a, b, c)
        results.append(c)
    np.testing.assert_array_equal(results[1], results[0])  # the same float32 operations
    np.testing.assert_allclose(results[1], a @ b, rtol=1e-5, atol=1e-5)


def test_a_fused_tile_of_rows_is_ramps():
    f = numba_cpu.build(from_source(TILE_2D), cache=False)
    # lane r is element (r // 4, r % 4) of a 16 x 4 tile: 16 ramps of 4 lanes, B's rows apart
    assert "B_1_at = i_0 * 1024 + j_0 * 4\n" in f.source  # named once for B's and A's lanes
    assert ("B_1[ramps(B_1_at, 1, 4, 16, 64)] = B_1[ramps(B_1_at, 1, 4, 16, 64)] + "
            "A_1[ramps(B_1_at, 1, 4, 16, 64)] * broadcast(np.float32(2.0), 64)\n") in f.source
    rng = np.random.default_rng(0)
    a, b = (rng.uniform(-1, 1, (32, 64)).astype("float32") for _ in range(2))
    out = b.copy()
    f(a, out)
    np.testing.assert_array_equal(out, b + a * np.float32(2))


CAST = textwrap.dedent('''
    @T.prim_func
    def widen(A: T.Buffer((4, 16), "int32"), B: T.Buffer((4, 16), "float32")):
        T.func_attr({"tir.noalias": True})
        for i in range(4):
            for j in T.vectorized(16):
                with T.block("b"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    B[vi, vj] = T.Cast("float32", A[vi, vj]) * T.float32(0.5)
''')


def test_what_llvm_vectors_do_not_cover_is_written_by_lanes():
    # a cast is not arithmetic numba_cpu.vectors has: lanes, for the SLP vectorizer, and no
    # loop vectorizer around them (its gathers)
    f = numba_cpu.build(from_source(CAST), cache=False)
    assert "ramp(" not in f.source and "B_v15 = " in f.source
    assert f"# {numba_cpu.NO_LOOP_VECTORIZER}\n" in f.source
    a = np.arange(64, dtype="int32").reshape(4, 16) - 30
    b = np.zeros((4, 16), "float32")
    f(a, b)
    np.testing.assert_array_equal(b, a.astype("float32") * 0.5)


def test_a_parallel_body_keeps_its_lanes():
    # in a prange body one array reached under two names loses writes (FlatParams.in_prange)
    sch = tir.Schedule(from_source(MATMUL))
    i, j, k = sch.get_loops(sch.get_block("C"))
    j0, j1 = sch.split(j, [None, 8])
    sch.reorder(i, j0, k, j1)
    sch.parallel(i)
    sch.vectorize(j1)
    f = numba_cpu.build(sch.mod["main"], cache=False)
    assert "prange" in f.source and "ramp(" not in f.source
    a, b = _matmul_inputs()
    c = np.zeros((64, 64), "float32")
    f(a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-5)


INT_ADD = textwrap.dedent('''
    @T.prim_func
    def shift(A: T.Buffer((64,), "int16"), B: T.Buffer((64,), "int16")):
        T.func_attr({"tir.noalias": True})
        for i in range(4):
            for j in T.vectorized(16):
                with T.block("b"):
                    vi = T.axis.spatial(64, i * 16 + j)
                    B[vi] = A[vi] + T.int16(3)
''')


def test_an_integer_broadcast_has_the_buffers_type():
    # Numba's integer literals are int64; the broadcast says int16, as the vector it joins
    f = numba_cpu.build(from_source(INT_ADD), cache=False)
    assert "broadcast(np.int16(3), 16)" in f.source
    a = np.arange(64, dtype="int16") - 40
    b = np.zeros(64, "int16")
    f(a, b)
    np.testing.assert_array_equal(b, a + np.int16(3))
