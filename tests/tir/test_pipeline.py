"""tir.get_tir_pipeline / get_default_tir_pipeline: TVM's lowering passes, in TVM's order."""

from __future__ import annotations

import pytest

import mlckit as tvm
from mlckit.error import TVMError
from mlckit.tir.pipeline import TVM_ORDER
from tests.tir.transform._mm import check_numbers, plain


def test_default_pipeline_runs_the_implemented_passes_in_tvm_order():
    names = [p.info.name for p in tvm.tir.get_tir_pipeline("default")]
    assert names == [n for n in TVM_ORDER if hasattr(tvm.tir.transform, n)]
    assert names == ["LowerInitBlock", "PlanAndUpdateBufferAllocationLocation",
                     "ConvertBlocksToOpaque", "CompactBufferAllocation",
                     "LowerMatchBuffer", "Simplify", "LowerOpaqueBlock", "FlattenBuffer", "VectorizeLoop",
                     "StorageRewrite", "UnrollLoop",
                     "Simplify", "RemoveNoOp"]


def test_default_pipeline_for_a_target_is_the_default_one():
    seq = tvm.tir.get_default_tir_pipeline(tvm.target.Target("llvm"))
    assert [p.info.name for p in seq] == [p.info.name for p in tvm.tir.get_tir_pipeline()]
    assert tvm.tirx.get_tir_pipeline("s_tir") is not None  # TVM 0.27's name for it


def test_pipeline_output_still_runs():
    check_numbers(tvm.tir.get_tir_pipeline()(plain())["mm_relu"], with_lnumpy=True)


def test_unknown_pipeline_is_rejected_with_the_candidates():
    with pytest.raises(TVMError, match="candidates are"):
        tvm.tir.get_tir_pipeline("fast")


def test_registered_pipeline_is_found_by_name():
    tvm.tir.register_tir_pipeline("init_only", lambda: tvm.transform.Sequential(
        [tvm.tir.transform.LowerInitBlock()]))
    try:
        assert [p.info.name for p in tvm.tir.get_tir_pipeline("init_only")] == ["LowerInitBlock"]
    finally:
        tvm.tir.pipeline.PIPELINE_MAP.pop("init_only")


def test_tvm_027_names_find_the_same_passes():
    # TVM 0.27 keeps the block-level passes in s_tir.transform, the rest in tirx.transform
    from mlckit import s_tir

    for name in ["LowerInitBlock", "ConvertBlocksToOpaque", "CompactBufferAllocation",
                 "LowerMatchBuffer", "StmtSimplify", "LowerOpaqueBlock"]:
        assert getattr(s_tir.transform, name)().info.name == name
    for name in ["FlattenBuffer", "UnrollLoop", "StmtSimplify", "RemoveNoOp"]:
        assert getattr(tvm.tirx.transform, name)().info.name == name


def test_compile_with_the_tir_pipeline_runs_the_lowered_kernels():
    import numpy as np

    from mlckit import relax
    from mlckit.script import ir as I
    from mlckit.script import relax as R

    @I.ir_module
    class MLP:
        @R.function
        def main(x: R.Tensor((2, 4), "float32"), w: R.Tensor((4, 3), "float32")):
            with R.dataflow():
                y = R.nn.relu(R.matmul(x, w))
                R.output(y)
            return y

    built = []

    @tvm.transform.module_pass(opt_level=0, name="Record")
    def record(mod, ctx):
        built.extend(f.script() for f in mod.functions.values())
        return mod

    pipeline = tvm.transform.Sequential([tvm.tir.get_tir_pipeline(), record])
    ex = tvm.compile(MLP, "llvm", tir_pipeline=pipeline)
    assert built and all("T.block" not in text for text in built)
    rng = np.random.default_rng(0)
    x = rng.random((2, 4), dtype="float32") - 0.5
    w = rng.random((4, 3), dtype="float32") - 0.5
    out = relax.VirtualMachine(ex, tvm.cpu())["main"](tvm.runtime.tensor(x),
                                                      tvm.runtime.tensor(w))
    np.testing.assert_allclose(out.numpy(), np.maximum(x @ w, 0), rtol=1e-5, atol=1e-6)
