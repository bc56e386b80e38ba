"""relax.op.where: NumPy's np.where with broadcasting — shapes as TVM infers them, results
as NumPy's through the VM, and what TVM refuses refused by name."""

import numpy as np
import pytest

from mlckit import relax, tir
from mlckit.error import TVMError
from mlckit.ir import assert_structural_equal
from mlckit.script import from_source
from mlckit.script import ir as I
from mlckit.script import relax as R

from .helpers import infer, one_call_module, run, tensor


def var(shape, dtype="float32", name="x"):
    return relax.Var(name, relax.TensorStructInfo(shape, dtype))


def test_where_broadcasts_its_three_inputs():
    n = tir.Var("n", "int64")
    sinfo = infer(relax.op.where(var((n, 1), "bool", "c"), var((4,)), var((1, 4), name="y")))
    assert_structural_equal(sinfo, relax.TensorStructInfo((n, 4), "float32"))


@pytest.mark.parametrize("target", ["llvm", "lnumpy"])
def test_where_equals_numpy(target):
    mod = one_call_module(relax.op.where, tensor((3, 1), "bool"), tensor((4,)), tensor((3, 4)))
    c = np.array([[True], [False], [True]])
    x = np.arange(4, dtype="float32")
    y = -np.ones((3, 4), "float32")
    np.testing.assert_array_equal(run(mod, c, x, y, target=target), np.where(c, x, y))


def test_where_prints_and_parses_as_tvm():
    @I.ir_module
    class Module:
        @R.function
        def main(c: R.Tensor((2,), "bool"), x: R.Tensor((2,), "float32"),
                 y: R.Tensor((2,), "float32")):
            gv = R.where(c, x, y)
            return gv

    assert "R.where(c, x, y)" in Module.script()
    assert_structural_equal(from_source(Module.script()), Module)


def test_where_with_a_float_condition_is_refused():
    with pytest.raises(TVMError, match="relax.where: requires condition to be bool, but its "
                                       "dtype is float32"):
        infer(relax.op.where(var((2,), name="c"), var((2,)), var((2,), name="y")))


def test_where_of_different_dtypes_is_refused():
    with pytest.raises(TVMError, match=r"relax.where: the dtypes of x1 \(float32\) and x2 "
                                       r"\(int32\) must be equal"):
        infer(relax.op.where(var((2,), "bool", "c"), var((2,)), var((2,), "int32", "y")))


def test_where_of_shapes_that_cannot_broadcast_names_them():
    with pytest.raises(TVMError, match=r"relax.where: cannot broadcast x1 \(3,\) and x2 \(4,\)"):
        infer(relax.op.where(var((3,), "bool", "c"), var((3,)), var((4,), name="y")))
