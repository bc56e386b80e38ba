"""mlckit.build: targets, modules, time_evaluator."""

from __future__ import annotations

import numpy as np
import pytest

import mlckit
from mlckit.ir import IRModule

from ..backend import kernels as K


def test_build_module_by_name_and_time_evaluator():
    mod = IRModule({"relu": K.relu, "linear": K.linear})
    rt = mlckit.build(mod, target="llvm")
    a = mlckit.nd.array(np.linspace(-1, 1, 1024, dtype="float32"))
    b = mlckit.nd.empty((1024,), "float32")
    rt["relu"](a, b)
    np.testing.assert_array_equal(b.numpy(), np.maximum(a.numpy(), 0))
    result = rt.time_evaluator("relu", mlckit.cpu(), number=3, repeat=2)(a, b)
    assert len(result.results) == 2 and result.mean > 0 and result.median > 0
    assert "mean (ms)" in str(result)
    assert "def relu(A, B):" in rt.get_source()


@pytest.mark.parametrize("target", ["llvm", "numba", "lnumpy", "llvm -mcpu=native"])
def test_targets(target):
    f = mlckit.build(K.relu, target=target)
    a = np.linspace(-1, 1, 1024, dtype="float32")
    out = np.zeros(1024, "float32")
    f(a, out)  # one function: callable directly
    np.testing.assert_array_equal(out, np.maximum(a, 0))
    assert f.backend == ("lnumpy" if target == "lnumpy" else "numba_cpu")


def test_errors():
    with pytest.raises(mlckit.TVMError, match="unknown target kind 'vlkan'.*did you mean 'vulkan'"):
        mlckit.build(K.relu, target="vlkan")
    with pytest.raises(mlckit.TVMError, match="no backend for target kind 'vulkan'"):
        mlckit.build(K.relu, target="vulkan")
    with pytest.raises(mlckit.TVMError, match="PrimFunc or an IRModule"):
        mlckit.build("relu")
    with pytest.raises(AttributeError, match="no function 'nope'"):
        mlckit.build(K.relu, target="lnumpy")["nope"]
