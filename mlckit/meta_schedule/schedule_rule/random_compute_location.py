"""``RandomComputeLocation``: sample where an untiled block is computed.

For a block directly under the root, with loops whose outermost holds only this block, not
tiled by ``MultiLevelTiling`` and with at least one consumer (TVM's conditions), the rule
samples a location — inline, root, or a consumer's loop — and computes the block there::

    loc = sch.sample_compute_location(block)
    sch.compute_at(block, loc, preserve_unit_loops=True)

Example::

    rule = ms.schedule_rule.RandomComputeLocation()
"""

from __future__ import annotations

from mlckit.tir.schedule import Schedule
from mlckit.tir.schedule.query import child_block_srefs, consumer_srefs, loop_srefs, scope_sref

from .schedule_rule import ScheduleRule, block_is_valid, is_root


class RandomComputeLocation(ScheduleRule):
    """Compute an untiled block at a sampled location (TVM's rule)."""

    def apply(self, sch: Schedule, block) -> list[Schedule]:
        if not self._applies(sch, block):
            return [sch]
        sch = sch.copy()
        loc = sch.sample_compute_location(block)
        sch.compute_at(block, loc, preserve_unit_loops=True)
        return [sch]

    @staticmethod
    def _applies(sch: Schedule, block) -> bool:
        # asked of the schedule state, not through primitives: a rule that does not apply
        # leaves nothing in the trace
        if not block_is_valid(sch, block) or is_root(sch, block):
            return False
        sref = sch.get_sref(block)
        if scope_sref(sref) is None or scope_sref(sref).parent is not None:
            return False  # not a direct child of the root block
        loops = loop_srefs(sref)
        if not loops or len(child_block_srefs(sch.state, loops[0])) > 1:
            return False
        if "meta_schedule.tiling_structure" in (sref.stmt.annotations or {}):
            return False
        return bool(consumer_srefs(sch.state, sref))
