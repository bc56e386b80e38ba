"""``ScheduleRule``: what the built-in search space does to one block.

A rule's ``apply(sch, block)`` returns the schedules it leads to: ``[sch]`` when it does not
apply, several when it opens alternatives (multi-level tiling with and without a write
cache).  Rules only call schedule primitives, so what they do is recorded in the trace and
their sampling decisions are what the search later changes.

``ScheduleRule.create("llvm")`` gives TVM's rules for CPUs, in TVM's order.

Example::

    rules = ms.schedule_rule.ScheduleRule.create("llvm")
    space = ms.space_generator.PostOrderApply(sch_rules=rules)
"""

from __future__ import annotations

from mlckit.tir.schedule import Schedule, ScheduleError

# target kind -> the factory of its default rules (filled by the rule modules' package)
DEFAULTS: dict[str, object] = {}


class ScheduleRule:
    """The interface of a schedule rule (TVM's ``meta_schedule.schedule_rule.ScheduleRule``)."""

    target = None

    def initialize_with_tune_context(self, context) -> None:
        """Learn the target (rules that need the core count read it here)."""
        self.target = context.target

    def apply(self, sch: Schedule, block) -> list[Schedule]:
        raise NotImplementedError

    def clone(self) -> ScheduleRule:
        import copy

        return copy.deepcopy(self)

    @staticmethod
    def create(kind: str = "llvm") -> list[ScheduleRule]:
        """The default rules for a target kind (``"llvm"``, ``"c"``)."""
        from mlckit.error import TVMValueError

        factory = DEFAULTS.get(kind)
        if factory is None:
            raise TVMValueError(f"meta_schedule has no default schedule rules for target kind "
                                f"{kind!r} (it has: {', '.join(sorted(DEFAULTS))})")
        return factory()


def block_is_valid(sch: Schedule, block) -> bool:
    """Whether ``block`` still names a block (an earlier rule may have inlined it)."""
    try:
        sch.get_sref(block)
    except ScheduleError:
        return False
    return True


def is_root(sch: Schedule, block) -> bool:
    return sch.get_sref(block).parent is None
