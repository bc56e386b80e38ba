"""``RewriteReductionBlock``: split each reduction into its init and its update.

Every block that still has a ``T.init()`` is decomposed at its outermost loop that walks a
reduction iterator (``sch.decompose_reduction(block, loop)``), so the zeroing runs once per
output tile instead of being tested inside the loop nest.

Example::

    ms.postproc.RewriteReductionBlock().apply(sch)   # C -> C_init + C
"""

from __future__ import annotations

from mlckit.arith.analyzer import uses_var
from mlckit.tir.schedule import Schedule

from ..utils import block_iter_kinds, func_name
from .postproc import Postproc, block_names


class RewriteReductionBlock(Postproc):
    """Decompose the reduction of every block with an init (TVM's postproc)."""

    def apply(self, sch: Schedule) -> bool:
        fname = func_name(sch)
        for name in block_names(sch, fname):
            refs = [r for r in sch.state.func_refs[fname]
                    if r.is_block and r.stmt.name_hint == name]
            if len(refs) != 1 or refs[0].stmt.init is None:
                continue
            realize = refs[0].realize
            block = sch.get_block(name, fname)
            loops = sch.get_loops(block)
            for loop in loops:
                if _reduces(sch.get(loop), realize):
                    sch.decompose_reduction(block, loop)
                    break
        return True


def _reduces(loop, realize) -> bool:
    """Whether the block binds a reduction iterator with ``loop``'s variable."""
    var = loop.loop_var
    return any(kind == "R" and uses_var(value, lambda v: v is var)
               for value, kind in block_iter_kinds(realize))
