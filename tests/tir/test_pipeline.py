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
    assert names == ["LowerInitBlock", "ConvertBlocksToOpaque", "CompactBufferAllocation",
                     "LowerMatchBuffer", "Simplify", "LowerOpaqueBlock", "FlattenBuffer", "UnrollLoop", "Simplify",
                     "RemoveNoOp"]


def test_default_pipeline_for_a_target_is_the_default_one():
    seq = tvm.tir.get_default_tir_pipeline(tvm.target.Target("llvm"))
    assert [p.info.name for p in seq] == [p.info.name for p in tvm.tir.get_tir_pipeline()]
    assert tvm.tirx.get_tir_pipeline("s_tir") is not None  # TVM 0.27's name for it


def test_pipeline_output_still_runs():
    check_numbers(tvm.tir.get_tir_pipeline()(plain())["mm_relu"])


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
