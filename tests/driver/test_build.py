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


# -- tir_pipeline: the PrimFuncs lowered before the backend gets them --------------------------
# lnumpy once: its Python loops take 8 s over the 128³ kernel
@pytest.mark.parametrize("target, pipeline", [("llvm", "s_tir"), ("llvm", "pass"),
                                              ("lnumpy", "pass")])
def test_build_runs_the_tir_pipeline_before_the_backend(target, pipeline):
    from tests.tir.transform._mm import scheduled

    if pipeline == "pass":
        pipeline = mlckit.tir.get_default_tir_pipeline(mlckit.target.Target("llvm"))
    rt = mlckit.build(scheduled(), target=target, tir_pipeline=pipeline)
    source = rt.get_source()
    # the backend printed the lowered kernel: the matmul's accumulator Y shrank to 4 floats
    # and the flat views of the parameters index one dimension
    assert "(4,)" in source and "A_1" in source
    rng = np.random.default_rng(0)
    a = rng.uniform(-1, 1, (128, 128)).astype("float32")
    b = rng.uniform(-1, 1, (128, 128)).astype("float32")
    c = np.zeros((128, 128), "float32")
    rt["mm_relu"](a, b, c)
    np.testing.assert_allclose(c, np.maximum(a @ b, 0), rtol=1e-4, atol=1e-4)


def test_compile_passes_its_tir_pipeline_on():
    seen = []

    @mlckit.tir.transform.prim_func_pass(opt_level=0)
    def lower_and_record(func, mod, ctx):
        lowered = mlckit.tir.transform.lower_opaque_block(
            mlckit.tir.transform.convert_blocks_to_opaque(func))
        seen.append(lowered)
        return lowered

    ex = mlckit.compile(K.relu, "lnumpy", tir_pipeline=lower_and_record)
    assert len(seen) == 1 and "T.block" not in seen[0].script()
    a = np.linspace(-1, 1, 1024, dtype="float32")
    b = np.empty(1024, "float32")
    ex["relu"](a, b)
    np.testing.assert_array_equal(b, np.maximum(a, 0))


def test_a_tir_pipeline_that_is_not_a_pass_is_refused():
    with pytest.raises(mlckit.TVMError, match="tir_pipeline must be a Pass or a pipeline name"):
        mlckit.build(K.relu, "llvm", tir_pipeline=3)
    with pytest.raises(mlckit.TVMError, match="Unknown pre-built TIR pipeline 'fast'"):
        mlckit.build(K.relu, "llvm", tir_pipeline="fast")
