"""TIR passes (``tvm.tir.transform``): functions PrimFunc -> PrimFunc, one module each."""

from .compact_buffer_allocation import compact_buffer_allocation

CompactBufferAllocation = compact_buffer_allocation

__all__ = ["CompactBufferAllocation", "compact_buffer_allocation"]
