"""Simplify / StmtSimplify: expressions simplified with the loop ranges known."""

from __future__ import annotations

import mlckit as tvm
from mlckit.script import tir as T


def test_a_condition_the_loop_range_decides_keeps_only_its_branch():
    @T.prim_func
    def before(A: T.Buffer((16,), "float32")):
        T.func_attr({"global_symbol": "f"})
        for i in range(16):
            if i < 16:
                A[i] = T.float32(1)
            else:
                A[i] = T.float32(2)

    @T.prim_func
    def expected(A: T.Buffer((16,), "float32")):
        T.func_attr({"global_symbol": "f"})
        for i in range(16):
            A[i] = T.float32(1)

    after = tvm.tir.transform.Simplify()(tvm.IRModule({"f": before}))
    tvm.ir.assert_structural_equal(after["f"], expected)


def test_indices_of_loads_inside_values_are_simplified():
    @T.prim_func
    def before(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
        T.func_attr({"global_symbol": "f"})
        for i in range(16):
            B[i * 1 + 0] = A[i // 1 + 0] + A[(i + 16) % 16]

    @T.prim_func
    def expected(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
        T.func_attr({"global_symbol": "f"})
        for i in range(16):
            B[i] = A[i] + A[i]

    after = tvm.tirx.transform.StmtSimplify()(tvm.IRModule({"f": before}))
    tvm.ir.assert_structural_equal(after["f"], expected)


def test_what_is_simplest_already_is_returned_unchanged():
    @T.prim_func
    def f(A: T.Buffer((16,), "float32")):
        for i in range(16):
            A[i] = T.float32(1)

    assert tvm.tir.transform.Simplify()(tvm.IRModule({"f": f}))["f"] is f
