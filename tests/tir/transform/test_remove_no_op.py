"""RemoveNoOp: statements that do nothing are dropped, written as TVM's own pass tests are."""

from __future__ import annotations

import mlckit as tvm
from mlckit.script import tir as T


class TestLoopOfNothingIsDropped(tvm.testing.CompareBeforeAfter):
    transform = tvm.tir.transform.RemoveNoOp()

    def before(A: T.Buffer((4,), "float32")):
        for i in range(4):  # noqa: B007 - a loop of nothing is what is tested
            T.evaluate(0)
        A[0] = T.float32(1)

    def expected(A: T.Buffer((4,), "float32")):
        A[0] = T.float32(1)


class TestStoreOfWhatIsThereIsDropped(tvm.testing.CompareBeforeAfter):
    transform = tvm.tir.transform.RemoveNoOp()

    def before(A: T.Buffer((4,), "float32")):
        for i in range(4):
            A[i] = A[i]
            A[i] = A[i] + T.float32(1)

    def expected(A: T.Buffer((4,), "float32")):
        for i in range(4):
            A[i] = A[i] + T.float32(1)


class TestEmptyElseIsDropped(tvm.testing.CompareBeforeAfter):
    transform = tvm.tir.transform.RemoveNoOp()

    def before(A: T.Buffer((4,), "float32")):
        for i in range(4):
            if i < 2:
                A[i] = T.float32(1)
            else:
                T.evaluate(0)

    def expected(A: T.Buffer((4,), "float32")):
        for i in range(4):
            if i < 2:
                A[i] = T.float32(1)


class TestStoreOfAnotherElementIsKept(tvm.testing.CompareBeforeAfter):
    transform = tvm.tir.transform.RemoveNoOp()

    def before(A: T.Buffer((4,), "float32")):
        for i in range(3):
            A[i] = A[i + 1]

    expected = before


class TestLoopThatNeverRunsIsDropped(tvm.testing.CompareBeforeAfter):
    transform = tvm.tir.transform.RemoveNoOp()

    def before(A: T.Buffer((16,), "int32"), B: T.Buffer((16,), "int32")):
        for i in range(16):
            for j in range(i - 20):
                B[i] = A[i] + j

    def expected(A: T.Buffer((16,), "int32"), B: T.Buffer((16,), "int32")):
        T.evaluate(0)


class TestEmptyThenBecomesANegatedCondition(tvm.testing.CompareBeforeAfter):
    transform = tvm.tir.transform.RemoveNoOp()

    def before(A: T.Buffer((16,), "int32")):
        for i in range(16):
            if i < 8:
                T.evaluate(0)
            else:
                A[i] = 42

    def expected(A: T.Buffer((16,), "int32")):
        for i in range(16):
            if not (i < 8):
                A[i] = 42


def test_an_unused_let_keeps_the_side_effects_of_its_value():
    @T.prim_func
    def before():
        T.func_attr({"global_symbol": "main"})
        x = T.call_extern("extern_func", dtype="int32")
        T.evaluate(0)

    @T.prim_func
    def expected():
        T.func_attr({"global_symbol": "main"})
        T.evaluate(T.call_extern("extern_func", dtype="int32"))

    after = tvm.tir.transform.RemoveNoOp()(tvm.IRModule({"main": before}))["main"]
    tvm.ir.assert_structural_equal(after, expected)


def test_an_allocation_whose_body_does_nothing_is_removed_with_its_declarations():
    @T.prim_func
    def before():
        T.func_attr({"global_symbol": "main"})
        A = T.decl_buffer([4, 4], "int32", scope="local")
        A_flat = T.decl_buffer(16, "int32", scope="local", data=A.data)
        T.evaluate(0)

    @T.prim_func
    def expected():
        T.func_attr({"global_symbol": "main"})
        T.evaluate(0)

    after = tvm.tir.transform.RemoveNoOp()(tvm.IRModule({"main": before}))["main"]
    tvm.ir.assert_structural_equal(after, expected)
