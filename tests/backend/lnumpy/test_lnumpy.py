"""lnumpy: readable source, statement -> line mapping, bounds and argument checks."""

from __future__ import annotations

import numpy as np
import pytest

import mlckit
from mlckit.backend import ArgumentError, lnumpy
from mlckit.script import tir as T
from mlckit.tir import BufferStore

from .. import kernels as K


@T.prim_func
def shifted(A: T.Buffer((8, 4), "float32"), B: T.Buffer((8, 4), "float32")):
    for i, j in T.grid(8, 4):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi + 1, vj] * T.float32(2)


@T.prim_func
def negative_index(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi] = A[vi - 1]


@T.prim_func
def bad_write(A: T.Buffer((8,), "int32")):
    for i in range(8):
        with T.block("A"):
            vi = T.axis.spatial(8, i)
            A[vi * 2] = 1


@T.prim_func
def local_overflow(A: T.Buffer((4,), "float32")):
    tmp = T.alloc_buffer((2,), "float32")
    for i in range(4):
        with T.block("tmp"):
            vi = T.axis.spatial(4, i)
            tmp[vi] = A[vi]


def test_mlckit_lnumpy_to_source_is_course_style():
    src = mlckit.lnumpy.to_source(K.mm_relu)
    assert src.startswith("def mm_relu(A, B, C):\n")
    assert 'Y = np.empty((128, 128), dtype="float32")' in src
    assert "if vk == 0:" in src
    assert "Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B[vk, vj]" in src


def test_every_store_is_mapped_to_its_line():
    src = lnumpy.to_source(K.mm_relu)
    stores = [s for s in src.line_to_stmt.values() if isinstance(s, BufferStore)]
    assert len({id(s) for s in stores}) == 3  # init, update, relu
    for store in stores:
        lines = src.stmt_lines(store)  # the init also owns its `if vk == 0:` line
        text = src.line(lines[-1]).strip()
        assert text.startswith(f"{store.buffer.name}[")


def test_out_of_bounds_read_names_buffer_indices_loops_and_statement():
    f = lnumpy.build(shifted)
    with pytest.raises(lnumpy.OutOfBoundsError) as info:
        f(np.ones((8, 4), "float32"), np.zeros((8, 4), "float32"))
    err = info.value
    msg = str(err)
    assert err.buffer == "A" and err.indices == (8, 0)
    assert err.loop_values == {"i": 7, "j": 0}
    assert err.iter_values == {"vi": 7, "vj": 0}
    assert "A[8, 0]" in msg and "shape (8, 4)" in msg
    assert "i=7, j=0" in msg and "vi=7, vj=0" in msg
    assert "B[vi, vj] = A[vi + 1, vj] * T.float32(2.0)" in msg


def test_negative_index_is_an_error_not_a_wraparound():
    with pytest.raises(lnumpy.OutOfBoundsError, match=r"A\[-1\]"):
        lnumpy.build(negative_index)(np.ones(8, "float32"), np.zeros(8, "float32"))


def test_out_of_bounds_write_and_local_buffer():
    with pytest.raises(lnumpy.OutOfBoundsError, match=r"write to buffer A: A\[8\]"):
        lnumpy.build(bad_write)(np.zeros(8, "int32"))
    with pytest.raises(lnumpy.OutOfBoundsError, match=r"buffer tmp: tmp\[2\]") as info:
        lnumpy.build(local_overflow)(np.zeros(4, "float32"))
    assert info.value.loop_values == {"i": 2}


@pytest.mark.parametrize(
    "args, match",
    [
        ((np.zeros((8, 4), "float32"),), r"takes 2 arguments \(A, B\) but 1 was given"),
        ((np.zeros((8, 4), "float32"), np.zeros((8, 4), "float64")), r"argument 2 \(B\) does not match .*expected dtype float32, got float64"),
        ((np.zeros((8, 4), "float32"), np.zeros((8, 5), "float32")), r"dimension 1 is 5, expected 4"),
        ((np.zeros((8, 4), "float32"), np.zeros(32, "float32")), r"expected 2 dimensions, got 1"),
        ((np.zeros((8, 4), "float32"), [[0.0] * 4] * 8), r"must be a NumPy array"),
    ],
)
def test_wrong_arguments_are_rejected_before_running(args, match):
    with pytest.raises(ArgumentError, match=match):
        lnumpy.build(shifted)(*args)


def test_symbolic_sizes_must_agree_across_buffers():
    f = lnumpy.build(K.mm_symbolic)
    a, b = np.zeros((5, 16), "float32"), np.zeros((16, 3), "float32")
    with pytest.raises(ArgumentError, match=r"symbolic size n = 5 \(from A.shape\[0\]\)"):
        f(a, b, np.zeros((4, 3), "float32"))
    f(a, b, np.zeros((5, 3), "float32"))


def test_float32_arithmetic_stays_float32():
    @T.prim_func
    def scale(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
        for i in range(4):
            with T.block("B"):
                vi = T.axis.spatial(4, i)
                B[vi] = T.exp(A[vi]) * T.float32(0.1) + T.float32(1e-8)

    a = np.array([0.3, 1.7, -2.0, 5.5], "float32")
    out = np.zeros(4, "float32")
    lnumpy.build(scale)(a, out)
    expected = np.exp(a) * np.float32(0.1) + np.float32(1e-8)  # all float32 in NumPy
    np.testing.assert_array_equal(out, expected)


def test_integer_division_semantics():
    @T.prim_func
    def divs(A: T.Buffer((4,), "int32"), B: T.Buffer((4, 4), "int32")):
        for i in range(4):
            with T.block("B"):
                vi = T.axis.spatial(4, i)
                B[vi, 0] = T.floordiv(A[vi], 3)
                B[vi, 1] = T.floormod(A[vi], 3)
                B[vi, 2] = T.truncdiv(A[vi], 3)
                B[vi, 3] = T.truncmod(A[vi], 3)

    a = np.array([-7, -1, 5, 9], "int32")
    for target in ("lnumpy", "llvm"):
        out = np.zeros((4, 4), "int32")
        mlckit.build(divs, target=target)(a, out)
        np.testing.assert_array_equal(out[:, 0], a // 3)
        np.testing.assert_array_equal(out[:, 1], a % 3)
        np.testing.assert_array_equal(out[:, 2], [-2, 0, 1, 3])
        np.testing.assert_array_equal(out[:, 3], [-1, -1, 2, 0])


def test_if_let_select_and_if_then_else():
    @T.prim_func
    def misc(A: T.Buffer((6,), "float32"), B: T.Buffer((6,), "float32")):
        for i in range(6):
            with T.block("B"):
                vi = T.axis.spatial(6, i)
                x = T.float32(2) * A[vi]
                if vi % 2 == 0:
                    B[vi] = T.Select(x > T.float32(0), x, T.float32(0))
                else:
                    B[vi] = T.if_then_else(vi < 3, A[vi], -A[vi])

    a = np.array([1, -2, 3, -4, -5, 6], "float32")
    expected = np.array([2, -2, 6, 4, 0, -6], "float32")
    for target in ("lnumpy", "llvm"):
        out = np.zeros(6, "float32")
        mlckit.build(misc, target=target)(a, out)
        np.testing.assert_array_equal(out, expected)


@T.prim_func
def vector_calls(A: T.Buffer((3,), "float32"), B: T.Buffer((3,), "float32")):
    for i in T.vectorized(3):
        with T.block("B"):
            vi = T.axis.spatial(3, i)
            B[vi] = T.sigmoid(A[vi]) + T.exp10(A[vi])


def test_vectorized_sigmoid_and_exp10_of_lowered_tir_use_element_constants():
    # after VectorizeLoop the calls are float32x3: their 1.0 / 10.0 are float32 scalars
    lowered = mlckit.lower(vector_calls)["vector_calls"]
    f = lnumpy.build(lowered)
    assert "T.sigmoid(A[T.Ramp(0, 1, 3)])" in lowered.script()
    assert "np.float32(1.0)" in f.source and "float32x3" not in f.source
    a = np.array([0.5, 1.0, 2.0], "float32")
    b = np.zeros(3, "float32")
    f(a, b)
    expected = 1 / (1 + np.exp(-a)) + np.power(np.float32(10), a)
    np.testing.assert_allclose(b, expected, rtol=1e-6)
