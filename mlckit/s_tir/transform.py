"""``s_tir.transform``: passes over schedulable TensorIR (TVM >= 0.24 keeps the block-level
passes such as ``CompactBufferAllocation`` here), the passes of :mod:`mlckit.tir.transform`.

Example::

    from mlckit import s_tir
    func = s_tir.transform.CompactBufferAllocation(sch.mod["main"])
    mod = s_tir.transform.LowerInitBlock()(mod)
"""

from mlckit.tir.transform import (
    CompactBufferAllocation,
    ConvertBlocksToOpaque,
    LowerInitBlock,
    LowerMatchBuffer,
    LowerOpaqueBlock,
    PlanAndUpdateBufferAllocationLocation,
    StmtSimplify,
    ThreadSync,
)

__all__ = ["CompactBufferAllocation", "ConvertBlocksToOpaque", "LowerInitBlock",
           "LowerMatchBuffer", "LowerOpaqueBlock", "StmtSimplify",
           "PlanAndUpdateBufferAllocationLocation", "ThreadSync"]
