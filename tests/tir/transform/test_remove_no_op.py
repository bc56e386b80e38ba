"""RemoveNoOp: statements that do nothing are dropped, written as TVM's own pass tests are."""

from __future__ import annotations

import pytest

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


# -- stores of the value already there, proven from what holds around them -------------------
class TestStoreOfAnElementProvablyTheSameIsDropped(tvm.testing.CompareBeforeAfter):
    # in the else branch i == 0, so A[i] = A[0] stores A[i] into itself
    transform = tvm.tir.transform.RemoveNoOp()

    def before(A: T.Buffer((16,), "int32")):
        for i in range(16):
            if i != 0:
                A[i] = A[i - 1]
            else:
                A[i] = A[0]

    def expected(A: T.Buffer((16,), "int32")):
        for i in range(16):
            if i != 0:
                A[i] = A[i - 1]


class TestStoreThroughALetOfTheSameIndexIsDropped(tvm.testing.CompareBeforeAfter):
    transform = tvm.tir.transform.RemoveNoOp()

    def before(A: T.Buffer((16,), "int32")):
        for io, ii in T.grid(4, 4):
            i = 4 * io + ii
            A[4 * io + ii] = A[i]

    def expected(A: T.Buffer((16,), "int32")):
        T.evaluate(0)


class TestStoreOfTheValuePlusZeroIsDropped(tvm.testing.CompareBeforeAfter):
    transform = tvm.tir.transform.RemoveNoOp()

    def before(A: T.Buffer((16,), "int32")):
        for i in range(16):
            A[i] = A[i] + 0 * i

    def expected(A: T.Buffer((16,), "int32")):
        T.evaluate(0)


class TestAnUnusedLetGoesItsBodyStays(tvm.testing.CompareBeforeAfter):
    transform = tvm.tir.transform.RemoveNoOp()

    def before(A: T.Buffer((16,), "int32")):
        x = 5
        A[0] = 1

    def expected(A: T.Buffer((16,), "int32")):
        A[0] = 1


class TestAConstantConditionKeepsItsBranch(tvm.testing.CompareBeforeAfter):
    transform = tvm.tir.transform.RemoveNoOp()

    def before(A: T.Buffer((16,), "int32")):
        if T.bool(False):
            A[0] = 1
        else:
            A[1] = 2

    def expected(A: T.Buffer((16,), "int32")):
        A[1] = 2


# -- with use_dataflow_analysis: stores compared with the statements around them ---------------
class WithDataflow(tvm.testing.CompareBeforeAfter):
    def transform(self):
        def with_dataflow(mod):
            config = {"tir.RemoveNoOp": {"use_dataflow_analysis": True}}
            with tvm.transform.PassContext(config=config):
                return tvm.tir.transform.RemoveNoOp()(mod)

        return with_dataflow


class TestAStoreOverwrittenAtOnceIsDropped(WithDataflow):

    def before(A: T.Buffer((16,), "int32")):
        for i in range(16):
            A[i] = 7
            A[i] = i

    def expected(A: T.Buffer((16,), "int32")):
        for i in range(16):
            A[i] = i


class TestAnOverwrittenStoreKeepsItsCalls(WithDataflow):

    def before(A: T.Buffer((16,), "int32")):
        for i in range(16):
            A[i] = T.call_extern("next_value", dtype="int32")
            A[i] = i

    def expected(A: T.Buffer((16,), "int32")):
        for i in range(16):
            T.evaluate(T.call_extern("next_value", dtype="int32"))
            A[i] = i


class TestALoopOverwrittenByALaterLoopIsDropped(WithDataflow):
    # the first loop writes A[2:10] where i < 8, all inside what the last loop writes; the
    # loop between writes B only

    def before(A: T.Buffer((16,), "int32"), B: T.Buffer((16,), "int32")):
        for i in range(2, 10):
            if i < 8:
                A[i] = 1
        for j in range(16):
            B[j] = 2
        for k in range(16):
            if k // 4 < 2:
                A[k] = 3

    def expected(A: T.Buffer((16,), "int32"), B: T.Buffer((16,), "int32")):
        for j in range(16):
            B[j] = 2
        for k in range(16):
            if k // 4 < 2:
                A[k] = 3


class TestALoopReadBeforeItIsOverwrittenIsKept(WithDataflow):

    def before(A: T.Buffer((16,), "int32"), B: T.Buffer((16,), "int32")):
        for i in range(16):
            A[i] = 1
        for j in range(16):
            B[j] = A[j]
        for k in range(16):
            A[k] = 3

    expected = before


class TestALoopOverwrittenInPartIsKept(WithDataflow):

    def before(A: T.Buffer((16,), "int32")):
        for i in range(16):
            A[i] = 1
        for k in range(16):
            if k < 12:
                A[k] = 3

    expected = before


class TestAStoreOfTheValueAnEarlierLoopWroteIsDropped(WithDataflow):

    def before(A: T.Buffer((16,), "int32")):
        for i in range(16):
            A[i] = i * 2
        A[5] = 10
        A[6] = 11

    def expected(A: T.Buffer((16,), "int32")):
        for i in range(16):
            A[i] = i * 2
        A[6] = 11


class TestOfTwoEqualLoopsOneStays(WithDataflow):
    # the first is overwritten by the second, and the second stores what the first did:
    # dropping both would lose the values

    def before(A: T.Buffer((16,), "int32")):
        for i in range(16):
            A[i] = i
        for i in range(16):
            A[i] = i

    def expected(A: T.Buffer((16,), "int32")):
        for i in range(16):
            A[i] = i


class TestWithoutDataflowAnalysisOverwritesAreKept(tvm.testing.CompareBeforeAfter):
    transform = tvm.tir.transform.RemoveNoOp()

    def before(A: T.Buffer((16,), "int32")):
        for i in range(16):
            A[i] = 7
            A[i] = i

    expected = before


def test_an_unknown_config_field_is_a_clear_error():
    @T.prim_func
    def f(A: T.Buffer((4,), "int32")):
        A[0] = 1

    with tvm.transform.PassContext(config={"tir.RemoveNoOp": {"dataflow": True}}):
        with pytest.raises(tvm.error.TVMError, match="unknown field"):
            tvm.tir.transform.RemoveNoOp()(tvm.IRModule({"main": f}))
