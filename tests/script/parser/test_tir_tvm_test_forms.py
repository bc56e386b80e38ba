"""Forms TVM's own pass tests write in TVMScript: expression helpers given ``dtype=``,
simplifier hints, buffer views of a ``T.allocate`` declared in the body, op attributes."""

from __future__ import annotations

import numpy as np

import mlckit as tvm
from mlckit.backend import lnumpy
from mlckit.script import tir as T


def test_expression_helpers_accept_and_drop_dtype_as_tvms_builder_does():
    @T.prim_func
    def f(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
        for i in range(4):
            B[i] = T.if_then_else(i < 2, T.exp(A[i], dtype="float32"), A[i], dtype="float32")

    @T.prim_func
    def g(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
        for i in range(4):
            B[i] = T.if_then_else(i < 2, T.exp(A[i]), A[i])

    tvm.ir.assert_structural_equal(f.with_attr("global_symbol", "g"), g)
    a = np.arange(4, dtype="float32")
    b = np.zeros(4, "float32")
    lnumpy.build(f)(a, b)
    np.testing.assert_allclose(b, np.where(np.arange(4) < 2, np.exp(a), a), rtol=1e-6)


def test_likely_assume_and_shifts_print_as_tvm_writes_them():
    @T.prim_func
    def f(n: T.int32, A: T.Buffer((4,), "int32")):
        T.evaluate(T.assume(n == 0))
        for i in range(4):
            if T.likely(i < 3, dtype="bool"):
                A[i] = T.shift_left(1, i, dtype="int32") + T.shift_right(A[i], 1)

    script = f.script()
    assert "\n    T.assume(n == 0)\n" in script  # an evaluated call prints bare, as in TVM
    assert "if T.likely(i < 3):" in script
    assert "A[i] = T.shift_left(1, i) + T.shift_right(A[i], 1)" in script
    tvm.ir.assert_structural_equal(tvm.script.from_source(script), f)


def test_a_buffer_view_of_an_allocation_may_be_declared_in_the_body_and_runs():
    @T.prim_func
    def f(A: T.Buffer((8,), "int32")):
        data = T.allocate([8], "int32")
        B = T.Buffer([2, 4], "int32", data)
        for i, j in T.grid(2, 4):
            B[i, j] = i * 4 + j
        for i, j in T.grid(2, 4):
            A[i * 4 + j] = B[i, j] * 2

    a = np.zeros(8, "int32")
    lnumpy.build(f)(a)
    np.testing.assert_array_equal(a, np.arange(8) * 2)


def test_undeclared_buffer_views_are_equal_when_their_fields_and_data_agree():
    @T.prim_func
    def f():
        data = T.allocate([8], "int32")
        B = T.Buffer([8], "int32", data)
        B[0] = 1

    @T.prim_func
    def g():
        data = T.allocate([8], "int32")
        B = T.Buffer([8], "int32", data)
        B[0] = 1

    @T.prim_func
    def h():
        data = T.allocate([8], "int32")
        B = T.Buffer([2, 4], "int32", data)
        B[0, 0] = 1

    tvm.ir.assert_structural_equal(f.with_attr("global_symbol", "g"), g)
    assert not tvm.ir.structural_equal(f.with_attr("global_symbol", "h"), h)


def test_register_op_attr_sets_the_attribute_and_returns_the_function():
    @tvm.ir.register_op_attr("tir.test_forms_intrin", "FDoc")
    def intrin(x):
        return x + 1

    assert intrin(1) == 2
    assert tvm.ir.Op.get("tir.test_forms_intrin").get_attr("FDoc") is intrin


def test_a_nested_loop_may_reuse_a_name_as_another_variable_printed_apart():
    # TVM accepts it (Python scoping: the inner `i` is a new variable) and prints it `i_1`
    @T.prim_func
    def f(A: T.Buffer((4, 4), "float32")):
        for i in range(4):
            for i in range(4):
                A[i, i] = A[i, i] + T.float32(1)

    assert "for i, i_1 in T.grid(4, 4):\n        A[i_1, i_1] = A[i_1, i_1] + T.float32(1.0)" in f.script()
    for target in ("llvm", "lnumpy"):
        a = np.zeros((4, 4), "float32")
        tvm.build(f, target=target)(a)
        np.testing.assert_array_equal(a, np.diag(np.full(4, 4, "float32")))
