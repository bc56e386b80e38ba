"""A PrimFunc with TVM's ``tir.noalias`` is compiled with Numba's ``noalias`` flag (LLVM may
assume its arrays never overlap, as TVM's codegen does), and a call whose written array
overlaps another argument is refused; without the attribute, overlapping arrays are fine."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mlckit.backend import numba_cpu
from mlckit.backend.numba_cpu import ArgumentError, NumbaFunction, declares_noalias
from mlckit.script import from_source

from ...kernels import make_matmul, tile_matmul

DOUBLE = textwrap.dedent('''
    @T.prim_func
    def double(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4, 8), "float32")):
        {attr}
        for i, j in T.grid(4, 8):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj] * T.float32(2)
''')


def _double(noalias: bool):
    attr = 'T.func_attr({"tir.noalias": True})' if noalias else "pass"
    return from_source(DOUBLE.format(attr=attr))


def test_the_attribute_is_read_in_both_of_tvms_spellings():
    func = _double(False)
    assert not declares_noalias(func)
    assert declares_noalias(func.with_attr("tir.noalias", True))
    assert declares_noalias(func.with_attr("tirx.noalias", True))
    assert not declares_noalias(func.with_attr("tir.noalias", False))


def test_the_generated_module_says_the_arrays_never_overlap():
    assert f"# {numba_cpu.NOALIAS}\n" in numba_cpu.build(_double(True), cache=False).source
    assert "noalias" not in numba_cpu.build(_double(False), cache=False).source


def test_an_output_overlapping_an_input_is_refused_under_noalias():
    f = numba_cpu.build(_double(True), cache=False)
    a = np.arange(32, dtype="float32").reshape(4, 8)
    with pytest.raises(ArgumentError, match=r"argument 2 \(B\), which the kernel writes, "
                                            r"shares memory with argument 1 \(A\)"):
        f(a, a)
    np.testing.assert_array_equal(a, np.arange(32, dtype="float32").reshape(4, 8))  # untouched
    b = np.zeros((4, 8), "float32")
    f(a.copy(), b)  # a copy, as the message says
    np.testing.assert_array_equal(b, a * 2)


def test_without_the_attribute_an_array_may_be_both_read_and_written():
    f = numba_cpu.build(_double(False), cache=False)
    a = np.arange(32, dtype="float32").reshape(4, 8)
    f(a, a)
    np.testing.assert_array_equal(a, np.arange(32, dtype="float32").reshape(4, 8) * 2)


def test_the_plain_tiles_inner_loop_is_vectorized_as_tvms_llvm_vectorizes_it():
    # C[i, j] += A[i, k] * B[k, j] over 32 neighbouring j: with the promise (and flat
    # indices without negative wraparound) LLVM packs the j loop into vector instructions
    func = tile_matmul(make_matmul(64), 32, 32, 4).mod["main"]
    f = numba_cpu.build(func, cache=False)
    assert isinstance(f, NumbaFunction) and f.noalias
    assert numba_cpu.NO_LOOP_VECTORIZER not in f.source  # no lanes: LLVM's loop vectorizer on
    llvm = "\n".join(f.dispatcher.inspect_llvm().values())
    assert "fmul <" in llvm or "fmul fast <" in llvm or ".fmuladd.v" in llvm
    rng = np.random.default_rng(0)
    a, b = (rng.uniform(-1, 1, (64, 64)).astype("float32") for _ in range(2))
    c = np.full((64, 64), np.nan, "float32")
    f(a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-5)


def test_the_unchecked_entry_keeps_the_check_where_a_written_array_may_overlap():
    f = numba_cpu.build(_double(True), cache=False)
    arrays = [((4, 8), np.dtype("float32"))] * 2
    assert f.unchecked_entry(arrays) is not None
    assert f.unchecked_entry(arrays, may_overlap=[0]) is not None  # one caller's array
    assert f.unchecked_entry(arrays, may_overlap=[0, 1]) is None   # B written, may be A
    g = numba_cpu.build(_double(False), cache=False)
    assert g.unchecked_entry(arrays, may_overlap=[0, 1]) is not None  # no promise made


def test_overlapping_views_are_refused_and_disjoint_views_of_one_array_are_not():
    f = numba_cpu.build(_double(True), cache=False)
    whole = np.arange(64, dtype="float32").reshape(8, 8)
    a, b = np.ascontiguousarray(whole[:4]), whole[4:]   # b: a view of whole's lower half
    f(whole[:4], b)  # disjoint halves of one array: allowed
    np.testing.assert_array_equal(b, a * 2)
    flat = np.zeros(40, "float32")
    with pytest.raises(ArgumentError, match="shares memory"):
        f(flat[:32].reshape(4, 8), flat[8:].reshape(4, 8))  # overlapping views
