"""Space generators (TVM's names): ``ScheduleFn`` (a hand-written stochastic schedule) and
``PostOrderApply`` (the built-in rules)."""

from .post_order_apply import PostOrderApply
from .schedule_fn import ScheduleFn
from .space_generator import SpaceGenerator

__all__ = ["PostOrderApply", "ScheduleFn", "SpaceGenerator"]
