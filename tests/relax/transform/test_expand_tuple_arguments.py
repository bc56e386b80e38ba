"""ExpandTupleArguments and RemoveUnusedParameters: private functions' signatures trimmed."""

import numpy as np

import mlckit
from mlckit import relax
from mlckit.ir import assert_structural_equal
from mlckit.relax.transform import ExpandTupleArguments, RemoveUnusedParameters
from mlckit.script import ir as I
from mlckit.script import relax as R
from mlckit.script import tir as T


@I.ir_module
class TupleParam:
    @T.prim_func
    def add(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32"),
            C: T.Buffer((4,), "float32")):
        for i in range(4):
            with T.block("C"):
                vi = T.axis.spatial(4, i)
                C[vi] = A[vi] + B[vi]

    @R.function(private=True)
    def pair_sum(t: R.Tuple(R.Tensor((4,), "float32"), R.Tensor((4,), "float32"))) \
            -> R.Tensor((4,), "float32"):
        cls = TupleParam
        a = t[0]
        b = t[1]
        c = R.call_tir(cls.add, (a, b), out_sinfo=R.Tensor((4,), "float32"))
        return c

    @R.function
    def main(x: R.Tensor((4,), "float32"), y: R.Tensor((4,), "float32")) \
            -> R.Tensor((4,), "float32"):
        cls = TupleParam
        t = (x, y)
        gv = cls.pair_sum(t)
        return gv


@I.ir_module
class Expanded:
    @T.prim_func
    def add(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32"),
            C: T.Buffer((4,), "float32")):
        for i in range(4):
            with T.block("C"):
                vi = T.axis.spatial(4, i)
                C[vi] = A[vi] + B[vi]

    @R.function(private=True)
    def pair_sum(t_0: R.Tensor((4,), "float32"), t_1: R.Tensor((4,), "float32")) \
            -> R.Tensor((4,), "float32"):
        cls = Expanded
        c = R.call_tir(cls.add, (t_0, t_1), out_sinfo=R.Tensor((4,), "float32"))
        return c

    @R.function
    def main(x: R.Tensor((4,), "float32"), y: R.Tensor((4,), "float32")) \
            -> R.Tensor((4,), "float32"):
        cls = Expanded
        gv = cls.pair_sum(x, y)
        return gv


def test_tuple_parameter_is_passed_field_by_field():
    assert_structural_equal(ExpandTupleArguments()(TupleParam), Expanded)


def test_expanded_module_computes_the_same():
    x, y = np.arange(4, dtype="float32"), np.ones(4, "float32")
    vm = relax.VirtualMachine(relax.build(ExpandTupleArguments()(TupleParam), "llvm"),
                              mlckit.cpu())
    np.testing.assert_array_equal(vm["main"](x, y).numpy(), x + y)


@I.ir_module
class UnusedParam:
    @R.function(private=True)
    def first(a: R.Tensor((4,), "float32"), b: R.Tensor((4,), "float32")) \
            -> R.Tensor((4,), "float32"):
        return a

    @R.function
    def main(x: R.Tensor((4,), "float32"), y: R.Tensor((4,), "float32")) \
            -> R.Tensor((4,), "float32"):
        cls = UnusedParam
        gv = cls.first(x, y)
        return gv


@I.ir_module
class Trimmed:
    @R.function(private=True)
    def first(a: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
        return a

    @R.function
    def main(x: R.Tensor((4,), "float32"), y: R.Tensor((4,), "float32")) \
            -> R.Tensor((4,), "float32"):
        cls = Trimmed
        gv = cls.first(x)
        return gv


def test_unused_parameter_and_its_argument_are_removed():
    assert_structural_equal(RemoveUnusedParameters()(UnusedParam), Trimmed)
    x, y = np.arange(4, dtype="float32"), np.ones(4, "float32")
    vm = relax.VirtualMachine(relax.build(RemoveUnusedParameters()(UnusedParam), "llvm"),
                              mlckit.cpu())
    np.testing.assert_array_equal(vm["main"](x, y).numpy(), x)


def test_public_functions_keep_their_signature():
    @I.ir_module
    class Public:
        @R.function
        def main(a: R.Tensor((4,), "float32"), b: R.Tensor((4,), "float32")) \
                -> R.Tensor((4,), "float32"):
            return a

    assert_structural_equal(RemoveUnusedParameters()(Public), Public)
    assert_structural_equal(ExpandTupleArguments()(Public), Public)
