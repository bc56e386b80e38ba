"""ConvertToDataflow: runs of pure bindings become dataflow blocks."""

import numpy as np

import mlckit
from mlckit import relax
from mlckit.ir import assert_structural_equal
from mlckit.relax.transform import ConvertToDataflow
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
        lv0 = R.call_tir(cls.exp, (x,), out_sinfo=R.Tensor((4,), "float32"))
        lv1 = R.call_tir(cls.exp, (lv0,), out_sinfo=R.Tensor((4,), "float32"))
        gv = R.call_tir(cls.exp, (lv1,), out_sinfo=R.Tensor((4,), "float32"))
        return gv


@I.ir_module
class Expected:
    @T.prim_func
    def exp(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
        for i in range(4):
            with T.block("B"):
                vi = T.axis.spatial(4, i)
                B[vi] = T.exp(A[vi])

    @R.function
    def main(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
        cls = Expected
        with R.dataflow():
            lv0 = R.call_tir(cls.exp, (x,), out_sinfo=R.Tensor((4,), "float32"))
            lv1 = R.call_tir(cls.exp, (lv0,), out_sinfo=R.Tensor((4,), "float32"))
            gv = R.call_tir(cls.exp, (lv1,), out_sinfo=R.Tensor((4,), "float32"))
            R.output(gv)
        return gv


def test_pure_bindings_become_a_dataflow_block():
    assert_structural_equal(ConvertToDataflow()(Before), Expected)


def test_results_are_unchanged():
    x = np.linspace(0, 1, 4).astype("float32")
    vm = relax.VirtualMachine(relax.build(ConvertToDataflow()(Before), "llvm"), mlckit.cpu())
    np.testing.assert_allclose(vm["main"](x).numpy(), np.exp(np.exp(np.exp(x))), rtol=1e-5)


def test_impure_calls_split_the_runs_and_short_runs_stay():
    @I.ir_module
    class Mixed:
        @R.function(pure=False)
        def main(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
            a = R.call_pure_packed("f", x, sinfo_args=R.Tensor((4,), "float32"))
            R.print(a, format="{}")
            b = R.call_pure_packed("f", a, sinfo_args=R.Tensor((4,), "float32"))
            c = R.call_pure_packed("f", b, sinfo_args=R.Tensor((4,), "float32"))
            return c

    @I.ir_module
    class Expected:
        @R.function(pure=False)
        def main(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
            a = R.call_pure_packed("f", x, sinfo_args=R.Tensor((4,), "float32"))
            R.print(a, format="{}")
            with R.dataflow():
                b = R.call_pure_packed("f", a, sinfo_args=R.Tensor((4,), "float32"))
                c = R.call_pure_packed("f", b, sinfo_args=R.Tensor((4,), "float32"))
                R.output(c)
            return c

    assert_structural_equal(ConvertToDataflow()(Mixed), Expected)
    # with min_size 3 the run of two stays as it is
    assert_structural_equal(ConvertToDataflow(min_size=3)(Mixed), Mixed)
