"""What once gave a silently wrong answer is refused, as TVM refuses it: ``/`` on integers
(TIR has several integer divisions, TVM asks which), and a reduction axis given twice."""

import numpy as np
import pytest

import mlckit
from mlckit import te, tir

from .common import refused, refused_script, script

A = te.placeholder((8,), "int32", name="A")
M = te.placeholder((8, 8), "float32", name="M")
n = te.var("n")


@pytest.mark.parametrize("action, shown", [
    (lambda: te.compute((8,), lambda i: A[i] / 2, name="B"), "`A[i] / 2`"),
    (lambda: te.compute((8,), lambda i: 2 / A[i], name="B"), "`2 / A[i]`"),
    (lambda: n / 2, "`n / 2`"),
    (lambda: tir.Var("x", "int64") / tir.Var("y", "int64"), "`x / y`"),
    (lambda: tir.Var("u", "uint8") / 3, "`u / 3`"),
], ids=["te_compute", "python_int_on_the_left", "te_var", "int64_vars", "uint8"])
def test_slash_on_integers_is_refused_and_says_what_to_write(action, shown):
    refused(action, shown, "`/` on integers", "a // b", "T.truncdiv(a, b)")


def test_slash_in_a_tir_script_on_integers_is_refused_at_its_line():
    refused_script(script("""
        from mlckit.script import tir as T

        @T.prim_func
        def halve(A: T.Buffer((8,), "int32"), B: T.Buffer((8,), "int32")):
            for i in range(8):
                with T.block("B"):
                    vi = T.axis.spatial(8, i)
                    B[vi] = A[vi] / 2  # <-
    """), "`A[vi] / 2`", "`/` on integers (int32)", "a // b")


def test_the_divisions_it_suggests_compute_what_they_say():
    floor = te.compute((8,), lambda i: A[i] // 2, name="F")
    trunc = te.compute((8,), lambda i: tir.truncdiv(A[i], 2), name="T")
    real = te.compute((8,), lambda i: A[i].astype("float32") / 2, name="R")
    a = np.arange(-4, 4, dtype="int32")
    for out, want in [(floor, a // 2), (trunc, np.trunc(a / 2).astype("int32")),
                      (real, a.astype("float32") / 2)]:
        f = mlckit.build(te.create_prim_func([A, out]), target="llvm")
        got = np.zeros(8, out.dtype)
        f(a, got)
        np.testing.assert_array_equal(got, want)


def test_slash_on_floats_is_a_float_division():
    F = te.placeholder((4,), "float32", name="F")
    half = te.compute((4,), lambda i: F[i] / 2, name="H")
    f = mlckit.build(te.create_prim_func([F, half]), target="llvm")
    x = np.arange(4, dtype="float32")
    y = np.zeros(4, "float32")
    f(x, y)
    np.testing.assert_array_equal(y, x / 2)


def test_a_reduction_axis_given_twice_is_refused():
    k = te.reduce_axis((0, 8), name="k")
    refused(lambda: te.compute((8,), lambda i: te.sum(M[i, k], axis=[k, k]), name="C"),
            "te.sum", "reduction axis k appears twice", "axis=['k', 'k']")
    refused(lambda: te.compute((8,), lambda i: te.max(M[i, k], axis=(k, k)), name="C"),
            "te.max", "appears twice")


def test_two_distinct_reduction_axes_reduce_over_both():
    k = te.reduce_axis((0, 8), name="k")
    j = te.reduce_axis((0, 8), name="j")
    total = te.compute((1,), lambda i: te.sum(M[k, j], axis=[k, j]), name="S")
    f = mlckit.build(te.create_prim_func([M, total]), target="llvm")
    m = np.random.default_rng(0).random((8, 8), dtype="float32")
    out = np.zeros(1, "float32")
    f(m, out)
    np.testing.assert_allclose(out[0], m.sum(), rtol=1e-5)
