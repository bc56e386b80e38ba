"""DeadCodeElimination: unused bindings and unreachable functions go; results stay."""

import numpy as np
import pytest

import mlckit
from mlckit import relax
from mlckit.error import TVMKeyError
from mlckit.ir import assert_structural_equal
from mlckit.relax.transform import DeadCodeElimination
from mlckit.script import ir as I
from mlckit.script import relax as R
from mlckit.script import tir as T


@I.ir_module
class Before:
    @T.prim_func(private=True)
    def exp(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
        for i in range(4):
            with T.block("B"):
                vi = T.axis.spatial(4, i)
                B[vi] = T.exp(A[vi])

    @T.prim_func(private=True)
    def neg(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
        for i in range(4):
            with T.block("B"):
                vi = T.axis.spatial(4, i)
                B[vi] = T.float32(0) - A[vi]

    @T.prim_func(private=True)
    def never_called(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
        for i in range(4):
            with T.block("B"):
                vi = T.axis.spatial(4, i)
                B[vi] = A[vi]

    @R.function(private=True)
    def helper(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
        cls = Before
        y = R.call_tir(cls.neg, (x,), out_sinfo=R.Tensor((4,), "float32"))
        return y

    @R.function
    def main(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
        cls = Before
        with R.dataflow():
            lv0 = R.call_tir(cls.exp, (x,), out_sinfo=R.Tensor((4,), "float32"))
            unused = cls.helper(lv0)
            unused2 = R.call_tir(cls.exp, (unused,), out_sinfo=R.Tensor((4,), "float32"))
            gv = R.call_tir(cls.exp, (lv0,), out_sinfo=R.Tensor((4,), "float32"))
            R.output(gv)
        return gv


@I.ir_module
class Expected:
    @T.prim_func(private=True)
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
            gv = R.call_tir(cls.exp, (lv0,), out_sinfo=R.Tensor((4,), "float32"))
            R.output(gv)
        return gv


def test_unused_bindings_and_the_functions_only_they_used_are_removed():
    assert_structural_equal(DeadCodeElimination()(Before), Expected)


def test_results_are_unchanged():
    x = np.linspace(-1, 1, 4).astype("float32")
    for mod in (Before, DeadCodeElimination()(Before)):
        vm = relax.VirtualMachine(relax.build(mod, "llvm"), mlckit.cpu())
        np.testing.assert_allclose(vm["main"](x).numpy(), np.exp(np.exp(x)), rtol=1e-6)


def test_entry_functions_keep_what_they_reach():
    out = DeadCodeElimination(["helper"])(Before)
    assert sorted(gv.name_hint for gv in out.functions) == ["exp", "helper", "main", "neg"]


def test_public_functions_are_entries():
    @I.ir_module
    class Mod:
        @T.prim_func
        def public_kernel(A: T.Buffer((4,), "float32")):
            T.evaluate(0)

        @R.function
        def main(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
            return x

    assert_structural_equal(DeadCodeElimination()(Mod), Mod)


def test_impure_calls_are_kept():
    @I.ir_module
    class Mod:
        @R.function(pure=False)
        def main(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
            y = R.call_packed("my_log", x, sinfo_args=R.Tensor((4,), "float32"))
            z = x
            return x

    @I.ir_module
    class Expected:
        @R.function(pure=False)
        def main(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
            y = R.call_packed("my_log", x, sinfo_args=R.Tensor((4,), "float32"))
            return x

    assert_structural_equal(DeadCodeElimination()(Mod), Expected)


def test_unknown_entry_function_is_named():
    with pytest.raises(TVMKeyError, match="entry function 'nope' is not in the module"):
        DeadCodeElimination(["nope"])(Before)


def test_runs_at_opt_level_one_in_a_sequence():
    seq = mlckit.transform.Sequential([DeadCodeElimination()])
    with mlckit.transform.PassContext(opt_level=0):
        assert_structural_equal(seq(Before), Before)
    assert_structural_equal(seq(Before), Expected)
