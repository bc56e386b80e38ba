"""``GPUScheduleRule``: a schedule rule that only applies to GPU targets (TVM's
``dlight.gpu.GPUScheduleRule``)."""

from __future__ import annotations

from mlckit.tir.schedule import Schedule

from ..base import ScheduleRule

__all__ = ["GPUScheduleRule"]


class GPUScheduleRule(ScheduleRule):
    """A rule for targets with the ``gpu`` key (``cuda``); ``apply`` returns None elsewhere."""

    def is_target_available(self, target) -> bool:
        return "gpu" in target.keys

    @staticmethod
    def schedule_of(func) -> Schedule:
        return Schedule(func)
