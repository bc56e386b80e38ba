"""TIR passes (``tvm.tir.transform``): TVM's lowering passes by TVM's names, one module each.

Each ``Name()`` returns a pass over every PrimFunc of an IRModule (``pass(mod) -> mod``), as
in TVM; the function ``name(func)`` beside it rewrites one PrimFunc.  In TVM's pipeline order
(:mod:`mlckit.tir.pipeline`): LowerInitBlock, PlanAndUpdateBufferAllocationLocation,
ConvertBlocksToOpaque, CompactBufferAllocation,
LowerMatchBuffer, Simplify, LowerOpaqueBlock, FlattenBuffer, VectorizeLoop, StorageRewrite,
UnrollLoop, Simplify, RemoveNoOp; then, for a GPU, ThreadSync (after the lowering, as in
TVM's device passes).

Example::

    mod = tvm.tir.transform.LowerInitBlock()(mod)
"""

from ._pass import prim_func_pass
from .common_subexpr_elim import CommonSubexprElim, CommonSubexprElimTIR, common_subexpr_elim
from .compact_buffer_allocation import CompactBufferAllocation, compact_buffer_allocation
from .convert_blocks_to_opaque import ConvertBlocksToOpaque, convert_blocks_to_opaque
from .flatten_buffer import FlattenBuffer, flatten_buffer
from .keep_auto_unrolled_loops import KeepAutoUnrolledLoops, keep_auto_unrolled_loops
from .legalize_half import LegalizeHalf, legalize_half
from .lower_init_block import LowerInitBlock, lower_init_block
from .lower_match_buffer import LowerMatchBuffer, lower_match_buffer
from .lower_opaque_block import LowerOpaqueBlock, lower_opaque_block
from .plan_update_buffer_allocation_location import (
    PlanAndUpdateBufferAllocationLocation,
    plan_update_buffer_allocation_location,
)

# what the Numba backend runs to make code fast, visible in TVMScript (not TVM passes)
from .promote_invariant_elements import PromoteInvariantElements, promote_invariant_elements
from .remove_no_op import RemoveNoOp, remove_no_op
from .scalarize_local_buffers import ScalarizeLocalBuffers, scalarize_local_buffers
from .simplify import Simplify, StmtSimplify, simplify
from .storage_rewrite import StorageRewrite, storage_rewrite
from .thread_bindings_to_loops import ThreadBindingsToLoops, thread_bindings_to_loops
from .thread_sync import ThreadSync, ThreadSyncError, thread_sync
from .unroll_loop import UnrollLoop, unroll_loop
from .vectorize_loop import VectorizeLoop, vectorize_loop

__all__ = [
    "CommonSubexprElim",
    "CommonSubexprElimTIR",
    "CompactBufferAllocation",
    "ConvertBlocksToOpaque",
    "FlattenBuffer",
    "KeepAutoUnrolledLoops",
    "LegalizeHalf",
    "LowerInitBlock",
    "LowerMatchBuffer",
    "LowerOpaqueBlock",
    "PlanAndUpdateBufferAllocationLocation",
    "RemoveNoOp",
    "Simplify",
    "StmtSimplify",
    "StorageRewrite",
    "ThreadBindingsToLoops",
    "ThreadSync",
    "ThreadSyncError",
    "UnrollLoop",
    "common_subexpr_elim",
    "compact_buffer_allocation",
    "convert_blocks_to_opaque",
    "flatten_buffer",
    "keep_auto_unrolled_loops",
    "legalize_half",
    "lower_init_block",
    "lower_match_buffer",
    "lower_opaque_block",
    "plan_update_buffer_allocation_location",
    "prim_func_pass",
    "remove_no_op",
    "simplify",
    "storage_rewrite",
    "thread_bindings_to_loops",
    "thread_sync",
    "unroll_loop",
    "VectorizeLoop",
    "vectorize_loop",
    "PromoteInvariantElements",
    "promote_invariant_elements",
    "ScalarizeLocalBuffers",
    "scalarize_local_buffers",
]
