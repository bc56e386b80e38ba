"""``ParallelizeVectorizeUnroll``: ask for parallel, vectorized and unrolled loops.

The rule only annotates the root block — ``meta_schedule.parallel`` (how many parallel jobs:
``max_jobs_per_core`` times the target's cores), ``meta_schedule.vectorize`` (the longest
vector) and ``meta_schedule.unroll_explicit`` (an unroll depth sampled from
``unroll_max_steps``).  The postprocessor ``RewriteParallelVectorizeUnroll`` turns the
annotations into loops once the tiling is known.

Example::

    rule = ms.schedule_rule.ParallelizeVectorizeUnroll(
        max_jobs_per_core=16, max_vectorize_extent=64, unroll_max_steps=[0, 16, 64, 512])
"""

from __future__ import annotations

from mlckit.tir.schedule import Schedule

from ..utils import num_cores
from .schedule_rule import ScheduleRule, block_is_valid, is_root


class ParallelizeVectorizeUnroll(ScheduleRule):
    """Annotate the root block with the parallel / vectorize / unroll limits (TVM's rule)."""

    def __init__(self, max_jobs_per_core: int = 16, max_vectorize_extent: int = 64,
                 unroll_max_steps=(0, 16, 64, 512), unroll_explicit: bool = True):
        self.max_jobs_per_core = max_jobs_per_core
        self.max_vectorize_extent = max_vectorize_extent
        self.unroll_max_steps = [int(s) for s in unroll_max_steps or ()]
        self.unroll_explicit = unroll_explicit

    def apply(self, sch: Schedule, block) -> list[Schedule]:
        if not block_is_valid(sch, block) or not is_root(sch, block):
            return [sch]
        sch = sch.copy()
        if self.max_jobs_per_core != -1:
            cores = num_cores(self.target) if self.target is not None else 1
            sch.annotate(block, "meta_schedule.parallel", self.max_jobs_per_core * cores)
        if self.max_vectorize_extent != -1:
            sch.annotate(block, "meta_schedule.vectorize", self.max_vectorize_extent)
        if self.unroll_max_steps:
            n = len(self.unroll_max_steps)
            v = sch.sample_categorical(candidates=self.unroll_max_steps, probs=[1.0 / n] * n)
            key = "meta_schedule.unroll_explicit" if self.unroll_explicit else \
                "meta_schedule.unroll_implicit"
            sch.annotate(block, key, v)
        return [sch]
