"""TIR passes (``tvm.tir.transform``): TVM's lowering passes by TVM's names, one module each.

Each ``Name()`` returns a pass over every PrimFunc of an IRModule (``pass(mod) -> mod``), as
in TVM; the function ``name(func)`` beside it rewrites one PrimFunc.

Example::

    mod = tvm.tir.transform.LowerInitBlock()(mod)
"""

from ._pass import prim_func_pass
from .compact_buffer_allocation import CompactBufferAllocation, compact_buffer_allocation
from .flatten_buffer import FlattenBuffer, flatten_buffer
from .convert_blocks_to_opaque import ConvertBlocksToOpaque, convert_blocks_to_opaque
from .lower_init_block import LowerInitBlock, lower_init_block
from .lower_opaque_block import LowerOpaqueBlock, lower_opaque_block

__all__ = [
    "CompactBufferAllocation",
    "ConvertBlocksToOpaque",
    "LowerInitBlock",
    "LowerOpaqueBlock",
    "compact_buffer_allocation",
    "convert_blocks_to_opaque",
    "lower_init_block",
    "lower_opaque_block",
    "prim_func_pass",
]
