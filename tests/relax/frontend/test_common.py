"""relax.frontend.detach_params: bound weights moved out of the functions' attributes."""

import numpy as np
import pytest

import mlckit as tvm
from mlckit import relax
from mlckit.error import TVMError
from mlckit.ir import IRModule
from mlckit.script import ir as I
from mlckit.script import relax as R


@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2,), "float32"), w: R.Tensor((2,), "float32")):
        y = R.add(x, w)
        return y


def test_detach_params_moves_the_params_attribute_out_and_keeps_the_rest():
    w = tvm.nd.array(np.arange(2, dtype="float32"))
    mod = IRModule({"main": Module["main"].with_attr("params", [w])})
    detached, params = relax.frontend.detach_params(mod)
    assert "params" not in detached["main"].attrs
    tvm.ir.assert_structural_equal(detached["main"], Module["main"])
    assert list(params) == ["main"] and params["main"][0] is w


def test_detach_params_of_a_module_without_params_changes_nothing():
    detached, params = relax.frontend.detach_params(Module)
    assert params == {}
    tvm.ir.assert_structural_equal(detached, Module)


def test_detach_params_refuses_params_that_are_not_arrays():
    mod = IRModule({"main": Module["main"].with_attr("params", [1.0])})
    with pytest.raises(TVMError, match="the \"params\" of function 'main' must be NDArrays, "
                                       "found float"):
        relax.frontend.detach_params(mod)
