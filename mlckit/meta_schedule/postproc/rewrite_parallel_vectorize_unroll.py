"""``RewriteParallelVectorizeUnroll``: turn the root block's ``meta_schedule.parallel`` /
``vectorize`` / ``unroll_explicit`` annotations into loops.

For each block directly under the root, after the annotations are removed:

- **parallel**: the outermost loops that only walk spatial iterators (of every block under
  them), taken from the outside in until they give at least ``meta_schedule.parallel``
  jobs, are fused and parallelized;
- **vectorize**: the innermost spatial loops whose extents multiply to at most
  ``meta_schedule.vectorize`` are fused and vectorized;
- **unroll**: the outermost loop is annotated ``pragma_auto_unroll_max_step`` (and
  ``pragma_unroll_explicit``), the hint TVM's code generator unrolls by.

Example::

    ms.postproc.RewriteParallelVectorizeUnroll().apply(sch)
"""

from __future__ import annotations

from mlckit.arith.analyzer import uses_var
from mlckit.tir import expr as E
from mlckit.tir import stmt as S
from mlckit.tir.schedule import Schedule
from mlckit.tir.schedule.ir_utils import realizes_under

from ..utils import func_name, int_value
from .postproc import Postproc

KEYS = ("meta_schedule.parallel", "meta_schedule.vectorize", "meta_schedule.unroll_explicit",
        "meta_schedule.unroll_implicit")


def _spatial_only(loop) -> bool:
    """Whether every block under ``loop`` uses it only in spatial bindings."""
    var = loop.loop_var
    for realize in realizes_under(loop, stop_at_blocks=False):
        for iv, value in zip(realize.block.iter_vars, realize.iter_values):
            if iv.iter_type != E.IterVarType.DataPar and uses_var(value, lambda v: v is var):
                return False
    return True


def _free(loop) -> bool:
    return loop.kind == S.ForKind.SERIAL and not loop.annotations and \
        int_value(loop.extent) is not None


class RewriteParallelVectorizeUnroll(Postproc):
    """Apply the parallel / vectorize / unroll annotations of the root block (TVM's postproc)."""

    def apply(self, sch: Schedule) -> bool:
        fname = func_name(sch)
        root_ref = next(r for r in sch.state.func_refs[fname] if r.parent is None)
        anns = dict(root_ref.stmt.annotations or {})
        if not any(k in anns for k in KEYS):
            return True
        root = sch.get_block("root", fname)
        for key in KEYS:
            if key in anns:
                sch.unannotate(root, key)
        parallel = int(anns.get("meta_schedule.parallel", 0) or 0)
        vectorize = int(anns.get("meta_schedule.vectorize", 0) or 0)
        explicit = "meta_schedule.unroll_explicit" in anns
        unroll = int(anns.get("meta_schedule.unroll_explicit",
                              anns.get("meta_schedule.unroll_implicit", 0)) or 0)
        for block in sch.get_child_blocks(root):
            if parallel > 1:
                self._parallelize(sch, block, parallel)
            if vectorize > 1:
                self._vectorize(sch, block, vectorize)
            if unroll > 0:
                loops = sch.get_loops(block)
                if loops and not (sch.get(loops[0]).annotations or {}):
                    sch.annotate(loops[0], "pragma_auto_unroll_max_step", unroll)
                    sch.annotate(loops[0], "pragma_unroll_explicit", int(explicit))
        return True

    def _parallelize(self, sch: Schedule, block, max_jobs: int) -> None:
        chosen, jobs, prev = [], 1, None
        for loop in sch.get_loops(block):
            stmt = sch.get(loop)
            if jobs >= max_jobs or not _free(stmt) or not _spatial_only(stmt):
                break
            if prev is not None and prev.body is not stmt:  # not perfectly nested
                break
            chosen.append(loop)
            jobs *= int_value(stmt.extent)
            prev = stmt
        if jobs <= 1:
            return
        fused = sch.fuse(*chosen) if len(chosen) > 1 else chosen[0]
        sch.parallel(fused)

    def _vectorize(self, sch: Schedule, block, max_extent: int) -> None:
        loops = sch.get_loops(block)
        chosen, lanes = [], 1
        inner = sch.get_sref(block).realize
        for loop in reversed(loops):
            stmt = sch.get(loop)
            if not _free(stmt) or not _spatial_only(stmt) or stmt.body is not inner:
                break
            extent = int_value(stmt.extent)
            if lanes * extent > max_extent:
                break
            chosen.insert(0, loop)
            lanes *= extent
            inner = stmt
        if lanes <= 1:
            return
        fused = sch.fuse(*chosen) if len(chosen) > 1 else chosen[0]
        sch.vectorize(fused)
