"""UnrollLoop and Simplify after it: the course's unrolled j_1 written out (checked against
TVM 0.27's UnrollLoop and StmtSimplify output for the scheduled mm_relu)."""

from __future__ import annotations

import mlckit as tvm
from mlckit.script import tir as T

from ._mm import check_numbers


@T.prim_func
def before(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
    T.func_attr({"global_symbol": "f"})
    for k in range(16):
        for j_1 in T.unroll(4):
            B[k * 4 + j_1] = A[k * 4 + j_1] * T.float32(2)


def test_each_iteration_becomes_a_copy_with_the_value_substituted():
    @T.prim_func
    def expected(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
        T.func_attr({"global_symbol": "f"})
        for k in range(16):
            B[T.Add(k * 4, 0)] = A[T.Add(k * 4, 0)] * T.float32(2)
            B[k * 4 + 1] = A[k * 4 + 1] * T.float32(2)
            B[k * 4 + 2] = A[k * 4 + 2] * T.float32(2)
            B[k * 4 + 3] = A[k * 4 + 3] * T.float32(2)

    after = tvm.tir.transform.UnrollLoop()(tvm.IRModule({"f": before}))
    tvm.ir.assert_structural_equal(after["f"], expected)


def test_simplify_removes_the_added_zero():
    @T.prim_func
    def expected(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
        T.func_attr({"global_symbol": "f"})
        for k in range(16):
            B[k * 4] = A[k * 4] * T.float32(2)
            B[k * 4 + 1] = A[k * 4 + 1] * T.float32(2)
            B[k * 4 + 2] = A[k * 4 + 2] * T.float32(2)
            B[k * 4 + 3] = A[k * 4 + 3] * T.float32(2)

    seq = tvm.transform.Sequential([tvm.tir.transform.UnrollLoop(),
                                    tvm.tir.transform.Simplify()])
    tvm.ir.assert_structural_equal(seq(tvm.IRModule({"f": before}))["f"], expected)


def test_inner_definitions_are_renewed_in_each_copy():
    @T.prim_func
    def nested(A: T.Buffer((2, 3), "float32")):
        for i in T.unroll(2):
            for j in range(3):
                A[i, j] = T.float32(1)

    after = tvm.tir.transform.UnrollLoop()(tvm.IRModule({"f": nested}))["f"]
    first, second = after.body.seq
    assert first.loop_var is not second.loop_var  # each copy defines its own j
    assert after.script().endswith("    for j in range(3):\n        A[0, j] = T.float32(1.0)\n"
                                   "    for j in range(3):\n        A[1, j] = T.float32(1.0)")


def test_unrolled_lowered_kernel_still_computes_mm_relu():
    from ._mm import scheduled

    check_numbers(tvm.lower(scheduled())["mm_relu"])
