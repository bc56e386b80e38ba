"""``GPUScheduleRule``: a schedule rule that only applies to GPU targets (TVM's
``dlight.gpu.GPUScheduleRule``)."""

from __future__ import annotations

from mlckit.tir.schedule import ScheduleError

from ..base import ScheduleRule

__all__ = ["GPUScheduleRule"]


class GPUScheduleRule(ScheduleRule):
    """A rule for targets with the ``gpu`` key (``cuda``).  Subclasses write
    ``schedule(func, target)``: a ``Schedule`` of ``func``, or None when the rule does not
    match; ``apply`` returns None for other targets, and also when one of mlckit's schedule
    primitives refuses a step (a ``ScheduleError`` on the rule's own copy of ``func``), so
    that ``ApplyDefaultSchedule`` goes on to the next rule.

    >>> from mlckit import dlight as dl
    >>> isinstance(dl.gpu.Matmul(), dl.gpu.GPUScheduleRule)
    True
    """

    def is_target_available(self, target) -> bool:
        return "gpu" in target.keys

    def apply(self, func, target, tunable):
        if not self.is_target_available(target):
            return None
        try:
            return self.schedule(func, target)
        except ScheduleError:
            return None

    def schedule(self, func, target):
        raise NotImplementedError
