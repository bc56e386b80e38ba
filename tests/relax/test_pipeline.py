"""relax.get_pipeline / relax.pipeline: TVM's zero and default pipelines, relax.build and
tvm.compile using them."""

import numpy as np
import pytest

import mlckit
from mlckit import relax, topi
from mlckit.error import TVMValueError
from mlckit.ir import assert_structural_equal
from mlckit.ir.instrument import PassInstrument
from mlckit.ir.transform import PassContext


def _mlp():
    rng = np.random.default_rng(0)
    ws = [rng.standard_normal(s).astype("float32") for s in [(16, 8), (16,), (4, 16), (4,)]]
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorStructInfo((2, 8), "float32"))
    with bb.function("main", [x]):
        with bb.dataflow():
            lv = bb.emit_te(topi.nn.dense, x, relax.const(ws[0]))
            lv = bb.emit_te(topi.add, lv, relax.const(ws[1]))
            lv = bb.emit_te(topi.nn.relu, lv)
            lv = bb.emit_te(topi.nn.dense, lv, relax.const(ws[2]))
            gv = bb.emit_output(bb.call_te(topi.add, lv, relax.const(ws[3])))
        bb.emit_func_output(gv)
    return bb.get(), ws


def _numpy_mlp(x, ws):
    return np.maximum(x @ ws[0].T + ws[1], 0) @ ws[2].T + ws[3]


X = np.random.default_rng(1).standard_normal((2, 8)).astype("float32")


def test_zero_pipeline_fuses_into_two_kernels():
    mod, ws = _mlp()
    fused = relax.get_pipeline("zero")(mod)
    assert sorted(gv.name_hint for gv in fused.functions) == [
        "fused_dense1_add1", "fused_dense_add_relu", "main"]
    vm = relax.VirtualMachine(mlckit.compile(fused, "llvm"), mlckit.cpu())
    np.testing.assert_allclose(vm["main"](X).numpy(), _numpy_mlp(X, ws), rtol=1e-5, atol=1e-5)


def test_zero_pipeline_is_the_module_pass_of_tvm():
    mod, _ = _mlp()
    names = []

    class Names(PassInstrument):
        def run_before_pass(self, mod, info):
            names.append(info.name)

    with PassContext(instruments=[Names()]):
        relax.pipeline.zero_pipeline()(mod)
    top = [n for n in names if n in ("f_zero_pipeline", "AnnotateTIROpPattern", "FoldConstant",
                                     "FuseOps", "FuseTIR")]
    assert top == ["f_zero_pipeline", "AnnotateTIROpPattern", "FoldConstant", "FuseOps",
                   "FuseTIR"]
    if not hasattr(relax.transform, "LegalizeOps"):
        assert "LegalizeOps" not in names


def test_default_pipeline_lowers_without_fusing():
    mod, ws = _mlp()
    default = relax.get_pipeline("default")(mod)
    assert_structural_equal(default, relax.vm_lowering_pipeline()(mod))
    assert_structural_equal(relax.get_pipeline("default_build")(mod), default)
    assert not any(gv.name_hint.startswith("fused") for gv in default.functions)
    for kwargs in ({}, {"relax_pipeline": "default"}, {"pipeline": relax.vm_lowering_pipeline()}):
        vm = relax.VirtualMachine(relax.build(mod, "llvm", **kwargs), mlckit.cpu())
        np.testing.assert_allclose(vm["main"](X).numpy(), _numpy_mlp(X, ws), rtol=1e-5,
                                   atol=1e-5)


def test_build_without_a_pipeline_takes_a_lowered_module():
    mod, ws = _mlp()
    lowered = relax.pipeline.default_build_pipeline()(mod)
    ex = mlckit.compile(lowered, "llvm", relax_pipeline=None)
    vm = relax.VirtualMachine(ex, mlckit.cpu())
    np.testing.assert_allclose(vm["main"](X).numpy(), _numpy_mlp(X, ws), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("target", ["llvm", "lnumpy"])
def test_default_pipeline_of_a_target_fuses_and_lowers(target):
    mod, ws = _mlp()
    pipeline = relax.get_default_pipeline(mlckit.target.Target(target))
    ex = relax.build(mod, target, relax_pipeline=pipeline)
    assert sorted(gv.name_hint for gv in ex.mod.functions if gv.name_hint.startswith("fused")) \
        == ["fused_dense1_add1", "fused_dense_add_relu"]
    vm = relax.VirtualMachine(ex, mlckit.cpu())
    np.testing.assert_allclose(vm["main"](X).numpy(), _numpy_mlp(X, ws), rtol=1e-5, atol=1e-5)


def test_gpu_targets_have_no_default_pipeline():
    with pytest.raises(TVMValueError, match="'cuda' is not yet supported by default pipeline"):
        relax.get_default_pipeline("cuda")


def test_unknown_and_duplicate_pipeline_names():
    with pytest.raises(TVMValueError, match="Unknown pre-built pipeline 'fast', candidates are "
                                            r"\['zero', 'default', 'default_build'"):
        relax.get_pipeline("fast")
    with pytest.raises(TVMValueError, match="'zero' has already been registered"):
        relax.register_pipeline("zero")


def test_registered_pipeline_is_found_by_name():
    name = "test_only_fuse"

    @relax.register_pipeline(name)
    def only_fuse():
        return mlckit.transform.Sequential([relax.transform.AnnotateTIROpPattern(),
                                            relax.transform.FuseOps()])

    try:
        mod, _ = _mlp()
        fused = relax.get_pipeline(name)(mod)
        assert "fused_dense_add_relu" in fused and "dense" in fused
    finally:
        del relax.pipeline.PIPELINE_MAP[name]


def test_tir_pipeline_runs_on_the_kernels():
    mod, ws = _mlp()
    seen = []

    @mlckit.transform.module_pass(opt_level=0, name="CountKernels")
    def count(m, ctx):
        seen.append(sorted(gv.name_hint for gv in m.functions))
        return m

    vm = relax.VirtualMachine(relax.build(mod, "llvm", tir_pipeline=count), mlckit.cpu())
    assert seen == [["add", "add1", "dense", "dense1", "relu"]]
    np.testing.assert_allclose(vm["main"](X).numpy(), _numpy_mlp(X, ws), rtol=1e-5, atol=1e-5)
    with pytest.raises(TVMValueError, match="tir_pipeline 's_tir' is not supported"):
        relax.build(mod, "llvm", tir_pipeline="s_tir")


def test_zero_pipeline_legalizes_folds_and_fuses_high_level_operators():
    from mlckit.script import ir as I
    from mlckit.script import relax as R

    ones = np.ones(8, "float32")

    @I.ir_module
    class Module:
        @R.function
        def main(x: R.Tensor((4, 8), "float32"), y: R.Tensor((8,), "float32")) \
                -> R.Tensor((4, 8), "float32"):
            with R.dataflow():
                lv0 = R.add(x, y)
                lv1 = R.exp(lv0)
                two = R.add(R.const(ones), R.const(ones))
                gv = R.multiply(lv1, two)
                R.output(gv)
            return gv

    out = relax.get_pipeline("zero")(Module)
    assert sorted(gv.name_hint for gv in out.functions) == ["fused_add_tir_exp_multiply", "main"]
    call = out["main"].body.blocks[0].bindings[0].value
    np.testing.assert_array_equal(call.args[1].fields[2].data, ones * 2)  # folded
    x = np.random.default_rng(2).standard_normal((4, 8)).astype("float32")
    y = np.linspace(-1, 1, 8).astype("float32")
    for mod in (Module, out):
        vm = relax.VirtualMachine(mlckit.compile(mod, "llvm"), mlckit.cpu())
        np.testing.assert_allclose(vm["main"](x, y).numpy(), np.exp(x + y) * 2, rtol=1e-5)


def test_the_cpu_default_pipeline_reads_transposed_weights_in_place():
    mod, ws = _mlp()
    seen = []

    class Names(PassInstrument):
        def run_before_pass(self, mod, info):
            seen.append(info.name)

    with PassContext(instruments=[Names()]):
        relax.get_default_pipeline("llvm")(mod)
    assert seen.index("FuseTransposeMatmul") < seen.index("LegalizeOps") < seen.index("FuseOps")
