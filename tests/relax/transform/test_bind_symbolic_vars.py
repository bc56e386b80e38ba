"""BindSymbolicVars: symbolic dimensions replaced by values, everywhere in a function."""

import numpy as np
import pytest

import mlckit
from mlckit import relax
from mlckit.error import TVMKeyError
from mlckit.ir import assert_structural_equal
from mlckit.relax.transform import BindSymbolicVars
from mlckit.script import ir as I
from mlckit.script import relax as R
from mlckit.script import tir as T


@I.ir_module
class Before:
    @T.prim_func
    def exp(a: T.handle, b: T.handle):
        n = T.int64()
        A = T.match_buffer(a, (n,))
        B = T.match_buffer(b, (n,))
        for i in range(n):
            with T.block("B"):
                vi = T.axis.spatial(n, i)
                B[vi] = T.exp(A[vi])

    @R.function
    def main(x: R.Tensor(("n",), "float32")) -> R.Tensor(("n * 2",), "float32"):
        n = T.int64()
        cls = Before
        with R.dataflow():
            lv = R.call_tir(cls.exp, (x,), out_sinfo=R.Tensor((n,), "float32"))
            gv = R.call_pure_packed("vm.builtin.tile2", lv,
                                    sinfo_args=R.Tensor((n * 2,), "float32"))
            R.output(gv)
        return gv


@I.ir_module
class Expected:
    @T.prim_func
    def exp(a: T.handle, b: T.handle):
        n = T.int64()
        A = T.match_buffer(a, (n,))
        B = T.match_buffer(b, (n,))
        for i in range(n):
            with T.block("B"):
                vi = T.axis.spatial(n, i)
                B[vi] = T.exp(A[vi])

    @R.function
    def main(x: R.Tensor((8,), "float32")) -> R.Tensor((16,), "float32"):
        cls = Expected
        with R.dataflow():
            lv = R.call_tir(cls.exp, (x,), out_sinfo=R.Tensor((8,), "float32"))
            gv = R.call_pure_packed("vm.builtin.tile2", lv, sinfo_args=R.Tensor((16,), "float32"))
            R.output(gv)
        return gv


def test_name_bound_to_a_value_everywhere_and_simplified():
    assert_structural_equal(BindSymbolicVars({"n": 8})(Before), Expected)


def test_bound_function_runs_with_the_fixed_shape():
    mlckit.register_func("vm.builtin.tile2", lambda x: mlckit.nd.array(np.tile(x.numpy(), 2)),
                         override=True)
    x = np.linspace(0, 1, 8).astype("float32")
    vm = relax.VirtualMachine(relax.build(BindSymbolicVars({"n": 8}, "main")(Before), "llvm"),
                              mlckit.cpu())
    np.testing.assert_allclose(vm["main"](x).numpy(), np.tile(np.exp(x), 2), rtol=1e-6)


def test_unknown_names_are_refused():
    with pytest.raises(TVMKeyError, match="no symbolic variable 'm' \\(it has: n\\)"):
        BindSymbolicVars({"m": 8})(Before)
