"""The schedule rule interface (TVM's ``dlight.ScheduleRule``).

Example::

    @ScheduleRule.from_callable("MyTileAndBind")
    def my_rule(func, target, tunable): ...
"""

from __future__ import annotations

from mlckit.target import Target
from mlckit.tir.function import PrimFunc

__all__ = ["ScheduleRule"]


class ScheduleRule:
    """A way to schedule a PrimFunc: ``apply(func, target, tunable)`` returns a
    ``tir.Schedule`` of ``func`` or None when the rule does not apply.

    >>> from mlckit import dlight as dl
    >>> isinstance(dl.gpu.Matmul(), dl.ScheduleRule)
    True
    """

    def apply(self, func: PrimFunc, target: Target, tunable: bool):
        raise NotImplementedError

    def is_target_available(self, target: Target) -> bool:
        return True

    @staticmethod
    def from_callable(name: str):
        """Make a rule instance of a function.

        The function is ``(func, target, tunable) -> Schedule | None``::

            @ScheduleRule.from_callable("MyTileAndBind")
            def my_rule(func, target, tunable): ...
            ApplyDefaultSchedule(my_rule, gpu.Fallback())
        """

        def decorate(fn):
            rule_type = type(name, (ScheduleRule,), {
                "apply": lambda self, func, target, tunable: fn(func, target, tunable),
                "__doc__": fn.__doc__})
            return rule_type()

        return decorate
