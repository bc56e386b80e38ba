"""relax.analysis.remove_all_unused: dead bindings go, outputs and side effects stay."""

import numpy as np

import mlckit
from mlckit import relax
from mlckit.ir import assert_structural_equal
from mlckit.relax.analysis import remove_all_unused, well_formed
from mlckit.script import ir as I
from mlckit.script import relax as R
from mlckit.script import tir as T


@T.prim_func(private=True)
def double(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
    for i in range(4):
        with T.block("B"):
            vi = T.axis.spatial(4, i)
            B[vi] = A[vi] * T.float32(2)


@I.ir_module
class Module:
    @T.prim_func(private=True)
    def double(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
        for i in range(4):
            with T.block("B"):
                vi = T.axis.spatial(4, i)
                B[vi] = A[vi] * T.float32(2)

    @R.function
    def main(x: R.Tensor((4,), "float32")):
        cls = Module
        with R.dataflow():
            lv0 = R.call_tir(cls.double, (x,), out_sinfo=R.Tensor((4,), "float32"))
            lv1 = R.call_tir(cls.double, (lv0,), out_sinfo=R.Tensor((4,), "float32"))
            lv2 = R.call_tir(cls.double, (x,), out_sinfo=R.Tensor((4,), "float32"))
            gv0 = R.call_tir(cls.double, (lv2,), out_sinfo=R.Tensor((4,), "float32"))
            gv1 = R.call_tir(cls.double, (gv0,), out_sinfo=R.Tensor((4,), "float32"))
            R.output(gv0, gv1)
        return gv0


@I.ir_module
class Cleaned:
    @T.prim_func(private=True)
    def double(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
        for i in range(4):
            with T.block("B"):
                vi = T.axis.spatial(4, i)
                B[vi] = A[vi] * T.float32(2)

    @R.function
    def main(x: R.Tensor((4,), "float32")):
        cls = Cleaned
        with R.dataflow():
            lv2 = R.call_tir(cls.double, (x,), out_sinfo=R.Tensor((4,), "float32"))
            gv0 = R.call_tir(cls.double, (lv2,), out_sinfo=R.Tensor((4,), "float32"))
            R.output(gv0)
        return gv0


def test_unused_chains_and_unreturned_outputs_are_removed():
    out = remove_all_unused(Module["main"])
    assert_structural_equal(out, Cleaned["main"])
    mod = Module.copy()
    mod["main"] = out
    assert well_formed(mod)
    vm = relax.VirtualMachine(relax.build(mod, target="llvm"), mlckit.cpu())
    x = np.arange(4, dtype="float32")
    np.testing.assert_allclose(vm["main"](x).numpy(), 4 * x)


def test_nothing_to_remove_returns_the_input():
    assert remove_all_unused(Cleaned["main"]) is Cleaned["main"]


def test_impure_calls_are_kept_and_pure_dead_code_outside_dataflow_goes():
    @R.function(pure=False)
    def before(x: R.Tensor((4,), "float32")):
        a = R.call_tir(double_gv, (x,), out_sinfo=R.Tensor((4,), "float32"))
        b = R.call_packed("test.log", a, sinfo_args=R.Object)
        c = R.call_tir(double_gv, (x,), out_sinfo=R.Tensor((4,), "float32"))
        s = R.shape_of(c)
        return x

    @R.function(pure=False)
    def expected(x: R.Tensor((4,), "float32")):
        a = R.call_tir(double_gv, (x,), out_sinfo=R.Tensor((4,), "float32"))
        b = R.call_packed("test.log", a, sinfo_args=R.Object)
        return x

    assert_structural_equal(remove_all_unused(before).without_attr("global_symbol"),
                            expected.without_attr("global_symbol"))


def test_match_cast_keeps_its_value_alive():
    @R.function
    def before(x: R.Tensor(ndim=1, dtype="float32")):
        n = T.int64()
        with R.dataflow():
            y = R.call_tir(double_gv, (x,), out_sinfo=R.Tensor((4,), "float32"))
            z = R.match_cast(y, R.Tensor((n,), "float32"))
            dead = R.call_tir(double_gv, (x,), out_sinfo=R.Tensor((4,), "float32"))
            R.output(z)
        return x

    @R.function
    def expected(x: R.Tensor(ndim=1, dtype="float32")):
        n = T.int64()
        with R.dataflow():
            y = R.call_tir(double_gv, (x,), out_sinfo=R.Tensor((4,), "float32"))
            z = R.match_cast(y, R.Tensor((n,), "float32"))
            R.output(z)
        return x

    assert_structural_equal(remove_all_unused(before).without_attr("global_symbol"),
                            expected.without_attr("global_symbol"))


double_gv = Module.get_global_var("double")
