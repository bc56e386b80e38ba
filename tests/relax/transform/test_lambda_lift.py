"""LambdaLift: local functions move to the module, named after their place."""

import numpy as np
import pytest

import mlckit
from mlckit import relax
from mlckit.error import TVMNotImplementedError
from mlckit.ir import assert_structural_equal
from mlckit.relax.transform import LambdaLift
from mlckit.script import ir as I
from mlckit.script import relax as R
from mlckit.script import tir as T


@I.ir_module
class Before:
    @T.prim_func
    def exp(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
        for i in range(4):
            with T.block("B"):
                vi = T.axis.spatial(4, i)
                B[vi] = T.exp(A[vi])

    @R.function
    def main(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
        cls = Before

        @R.function
        def inner(y: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
            z = R.call_tir(cls.exp, (y,), out_sinfo=R.Tensor((4,), "float32"))
            return z

        a = inner(x)
        gv = inner(a)
        return gv


@I.ir_module
class Expected:
    @T.prim_func
    def exp(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
        for i in range(4):
            with T.block("B"):
                vi = T.axis.spatial(4, i)
                B[vi] = T.exp(A[vi])

    @R.function(private=True)
    def main_inner(y: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
        cls = Expected
        z = R.call_tir(cls.exp, (y,), out_sinfo=R.Tensor((4,), "float32"))
        return z

    @R.function
    def main(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
        cls = Expected
        a = cls.main_inner(x)
        gv = cls.main_inner(a)
        return gv


def test_local_function_becomes_a_private_module_function():
    assert_structural_equal(LambdaLift()(Before), Expected)


def test_lifted_module_runs_on_the_vm():
    x = np.linspace(0, 1, 4).astype("float32")
    vm = relax.VirtualMachine(relax.build(LambdaLift()(Before), "llvm"), mlckit.cpu())
    np.testing.assert_allclose(vm["main"](x).numpy(), np.exp(np.exp(x)), rtol=1e-6)


def test_closures_are_refused_with_the_captured_variables():
    @I.ir_module
    class Closure:
        @R.function
        def main(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
            @R.function
            def inner(y: R.Tensor((4,), "float32")) -> R.Tuple(R.Tensor((4,), "float32"),
                                                               R.Tensor((4,), "float32")):
                return (x, y)

            t = inner(x)
            gv = t[0]
            return gv

    with pytest.raises(TVMNotImplementedError, match="'main_inner' captures x"):
        LambdaLift()(Closure)
