"""tvm.testing.assert_allclose: NumPy's check with TVM's absolute tolerance, on tensors too."""

import numpy as np
import pytest

import mlckit as tvm


def test_equal_within_tolerance_passes_for_tensors_and_arrays():
    x = np.linspace(0, 1, 10, dtype="float32")
    tvm.testing.assert_allclose(tvm.runtime.tensor(x), x + 1e-8)
    tvm.testing.assert_allclose(x, x * (1 + 1e-6), rtol=1e-5)


def test_a_difference_beyond_tolerance_fails():
    with pytest.raises(AssertionError, match="Not equal to tolerance"):
        tvm.testing.assert_allclose(np.ones(3), np.array([1.0, 1.0, 1.1]), rtol=1e-5)


def test_different_shapes_fail_before_broadcasting():
    with pytest.raises(AssertionError, match=r"shapes differ: actual \(3,\), desired \(1, 3\)"):
        tvm.testing.assert_allclose(np.ones(3), np.ones((1, 3)))


# -- CompareBeforeAfter: pass tests written as TVM writes its own -------------------------------
from mlckit.script import tir as T  # noqa: E402


class TestLowerInitBlockAsTVMWritesIt(tvm.testing.CompareBeforeAfter):
    transform = tvm.tir.transform.LowerInitBlock()

    def before(a: T.Buffer((4,), "float32"), s: T.Buffer((1,), "float32")):
        for k in range(4):
            with T.block("S"):
                vk = T.axis.reduce(4, k)
                with T.init():
                    s[0] = T.float32(0)
                s[0] = s[0] + a[vk]

    def expected(a: T.Buffer((4,), "float32"), s: T.Buffer((1,), "float32")):
        for k in range(4):
            with T.block("S"):
                vk = T.axis.reduce(4, k)
                T.reads(a[vk])
                T.writes(s[0])
                if vk == 0:
                    s[0] = T.float32(0)
                s[0] = s[0] + a[vk]


class TestExpectedExceptionIsRaised(tvm.testing.CompareBeforeAfter):
    def transform(self):
        return tvm.tir.transform.ConvertBlocksToOpaque()

    def before(a: T.Buffer((4,), "float32"), s: T.Buffer((1,), "float32")):
        for k in range(4):
            with T.block("S"):
                vk = T.axis.reduce(4, k)
                with T.init():
                    s[0] = T.float32(0)
                s[0] = s[0] + a[vk]

    expected = tvm.TVMError


class TestModuleOfFunctions(tvm.testing.CompareBeforeAfter):
    transform = tvm.tir.transform.LowerOpaqueBlock()

    class Before:
        def copy(a: T.Buffer((4,), "float32"), b: T.Buffer((4,), "float32")):
            for i in range(4):
                with T.block("B"):
                    b[i] = a[i]

    class Expected:
        def copy(a: T.Buffer((4,), "float32"), b: T.Buffer((4,), "float32")):
            for i in range(4):
                b[i] = a[i]


def test_compare_before_after_reports_a_difference_with_the_three_scripts():
    @T.prim_func
    def before(a: T.Buffer((4,), "float32")):
        for i in range(4):
            with T.block("A"):
                a[i] = T.float32(1)

    @T.prim_func
    def wrong(a: T.Buffer((4,), "float32")):
        for i in range(4):
            a[i] = T.float32(2)

    case = TestModuleOfFunctions()
    apply = tvm.testing._on_module(tvm.tir.transform.LowerOpaqueBlock())
    with pytest.raises(AssertionError, match="differs from the expected TIR") as err:
        case.test_compare(before, wrong, apply)
    assert "T.float32(2.0)" in str(err.value) and "before:" in str(err.value)


def test_compare_before_after_rejects_a_transform_that_is_not_a_pass():
    with pytest.raises(tvm.TVMError, match="must be a Pass"):
        class TestBad(tvm.testing.CompareBeforeAfter):  # noqa: F841 - defining it is the test
            transform = "LowerInitBlock"
