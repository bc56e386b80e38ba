"""``SpaceGenerator``: what turns a workload into design spaces — schedules whose traces
hold sampling instructions, re-sampled by the search.

A generator also carries what the search needs alongside: the schedule rules (for
``PostOrderApply``), the postprocessors run on every candidate and the mutators with their
probabilities.  ``"from-target"`` (the default) picks TVM's defaults for the target kind.

Example::

    space = ms.space_generator.ScheduleFn(stochastic_schedule_mm)
    space.generate_design_space(MyModule)     # [Schedule]
"""

from __future__ import annotations

from mlckit.error import TVMTypeError
from mlckit.ir.module import IRModule
from mlckit.tir.schedule import Schedule

from ..mutator import Mutator
from ..postproc import Postproc
from ..schedule_rule import ScheduleRule


class SpaceGenerator:
    """The interface of a space generator (TVM's ``meta_schedule.SpaceGenerator``).

    >>> from mlckit import meta_schedule as ms
    >>> issubclass(ms.space_generator.PostOrderApply, ms.space_generator.SpaceGenerator)
    True
    """

    def __init__(self, sch_rules="from-target", postprocs="from-target",
                 mutator_probs="from-target"):
        self.sch_rules = sch_rules
        self.postprocs = postprocs
        self.mutator_probs = mutator_probs
        self.target = None

    def initialize_with_tune_context(self, context) -> None:
        """Resolve ``"from-target"`` into the target kind's defaults and hand the context on."""
        self.target = context.target
        kind = self.target.kind.name
        if self.sch_rules == "from-target":
            self.sch_rules = ScheduleRule.create(kind)
        if self.postprocs == "from-target":
            self.postprocs = Postproc.create(kind)
        if self.mutator_probs == "from-target":
            self.mutator_probs = Mutator.create(kind)
        for piece in list(self.sch_rules or []) + list(self.postprocs or []) + \
                list(self.mutator_probs or {}):
            piece.initialize_with_tune_context(context)

    def generate_design_space(self, mod: IRModule, seed: int | None = None) -> list[Schedule]:
        raise NotImplementedError

    @staticmethod
    def create(kind="post-order-apply", *args, **kwargs) -> SpaceGenerator:
        """``"post-order-apply"``, a function (``ScheduleFn``) or a SpaceGenerator."""
        from .post_order_apply import PostOrderApply
        from .schedule_fn import ScheduleFn

        if isinstance(kind, SpaceGenerator):
            return kind
        if callable(kind):
            return ScheduleFn(kind, *args, **kwargs)
        if kind == "post-order-apply":
            return PostOrderApply(*args, **kwargs)
        raise TVMTypeError(f"space must be 'post-order-apply', a function of a tir.Schedule or "
                           f"a SpaceGenerator, got {kind!r}")
