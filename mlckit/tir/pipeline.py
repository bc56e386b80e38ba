"""The TIR lowering pipeline (``tvm.tir.get_tir_pipeline`` / ``get_default_tir_pipeline``):
TVM's default list of TIR passes, in TVM's order, limited to those mlckit implements.

TVM's default pipeline starts ``CanonicalizeLoop, LowerCrossThreadReduction, LowerInitBlock,
PlanAndUpdateBufferAllocationLocation, ConvertBlocksToOpaque, …, CompactBufferAllocation, …,
LowerMatchBuffer, Simplify, …, LowerOpaqueBlock, FlattenBuffer, …, VectorizeLoop, …,
StorageRewrite, …, UnrollLoop, …, Simplify, RemoveNoOp, …`` and goes on to the passes that
prepare a native call (``MakePackedAPI`` …), which mlckit's Python backends do not need.
:data:`TVM_ORDER` lists the lowering part; the pipeline runs the ones implemented
(:data:`PIPELINE_MAP` ``"default"``; ``"s_tir"`` is TVM 0.27's name for the same).

What it does today: ``tvm.lower`` and the pass stepper (``PassStepper(f, pipeline="tir")``)
run it to show the lowered TIR.  ``tvm.build`` compiles the un-lowered PrimFunc (its
backends do their own lowering while printing) unless given ``tir_pipeline=`` (a Pass or a
pipeline name: ``"s_tir"``); ``relax.build(..., tir_pipeline=p)`` runs a Pass ``p`` on the
PrimFuncs before building them.

Example::

    mod = tvm.tir.get_tir_pipeline("default")(mod)
    [p.info.name for p in tvm.tir.get_tir_pipeline()]
"""

from __future__ import annotations

from mlckit.error import TVMValueError
from mlckit.ir.transform import Pass, Sequential

from . import transform

__all__ = ["PIPELINE_MAP", "TVM_ORDER", "default_tir_pipeline", "get_default_tir_pipeline",
           "get_tir_pipeline", "register_tir_pipeline"]

# TVM's default TIR pipeline up to the lowering's end (v0.23 / 0.27), in order; the ones mlckit
# has run, the others are skipped.
TVM_ORDER = (
    "CanonicalizeLoop", "LowerCrossThreadReduction", "LowerInitBlock",
    "PlanAndUpdateBufferAllocationLocation", "ConvertBlocksToOpaque", "LiftThreadBinding",
    "ManifestSharedMemoryLocalStage", "CompactBufferAllocation", "LowerAutoCopy",
    "UnifyThreadBinding", "LowerMatchBuffer", "Simplify", "InjectPermutedLayout",
    "AnnotateIrregularLoop", "InjectSoftwarePipeline", "TransformMmaBufferLayout",
    "LowerOpaqueBlock", "FlattenBuffer", "BF16ComputeLegalize", "NarrowDataType",
    "LoopPartition", "VectorizeLoop", "InjectVirtualThread", "InjectDoubleBuffer",
    "StorageRewrite", "HoistIfThenElse", "UnrollLoop", "RenormalizeSplitPattern", "Simplify",
    "RemoveNoOp", "RewriteUnsafeSelect",
)


def default_tir_pipeline() -> Sequential:
    """TVM's default TIR lowering passes that mlckit implements, in TVM's order.

    >>> from mlckit import tir
    >>> [p.info.name for p in tir.pipeline.default_tir_pipeline()][:3]
    ['LowerInitBlock', 'PlanAndUpdateBufferAllocationLocation', 'ConvertBlocksToOpaque']
    """
    passes = [getattr(transform, name)() for name in TVM_ORDER if hasattr(transform, name)]
    return Sequential(passes, name="default_tir_pipeline")


PIPELINE_MAP = {"default": default_tir_pipeline, "s_tir": default_tir_pipeline}


def register_tir_pipeline(name: str, pipeline_factory) -> None:
    """Register a factory of a named TIR pipeline, as ``tvm.tir.register_tir_pipeline``.

    Example::

        tvm.tir.register_tir_pipeline("init_only", lambda: tvm.transform.Sequential(
            [tvm.tir.transform.LowerInitBlock()]))
    """
    PIPELINE_MAP[name] = pipeline_factory


def get_tir_pipeline(name: str = "default", **kwargs) -> Pass:
    """The pre-built TIR pipeline ``name``, as ``tvm.tir.get_tir_pipeline``.

    >>> import mlckit as tvm
    >>> len(tvm.tir.get_tir_pipeline("default")) > 0
    True
    """
    if name not in PIPELINE_MAP:
        raise TVMValueError(f"Unknown pre-built TIR pipeline {name!r}, candidates are "
                            f"{list(PIPELINE_MAP)}")
    return PIPELINE_MAP[name](**kwargs)


def get_default_tir_pipeline(target=None) -> Pass:
    """The default TIR pipeline for ``target`` (the same for every target mlckit has), as
    ``tvm.tir.get_default_tir_pipeline``.

    Example::

        seq = tvm.tir.get_default_tir_pipeline(tvm.target.Target("llvm"))
    """
    return get_tir_pipeline("default")
