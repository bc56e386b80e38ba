"""``AutoInline``: inline elementwise producers into their consumers.

A block that only computes an intermediate buffer elementwise (spatial iterators, no
reduction, one store) is folded into the blocks that read it, as
``sch.compute_inline(block)`` does by hand.  On CPUs TVM inlines into consumers only (not
into producers), and so does this rule.

Example::

    rule = ms.schedule_rule.AutoInline(into_producer=False, into_consumer=True)
"""

from __future__ import annotations

from mlckit.tir import expr as E
from mlckit.tir import stmt as S
from mlckit.tir.schedule import Schedule, ScheduleError

from .schedule_rule import ScheduleRule, block_is_valid, is_root


class AutoInline(ScheduleRule):
    """Inline spatial, elementwise blocks that write an intermediate buffer."""

    def __init__(self, into_producer: bool = False, into_consumer: bool = True,
                 inline_const_tensor: bool = True, disallow_if_then_else: bool = True,
                 require_injective: bool = True, require_ordered: bool = True,
                 disallow_op=None):
        self.into_producer = into_producer
        self.into_consumer = into_consumer

    def apply(self, sch: Schedule, block) -> list[Schedule]:
        if not block_is_valid(sch, block) or is_root(sch, block):
            return [sch]
        stmt = sch.get(block)
        func = sch.mod[sch.get_sref(block).func_name]
        params = {id(b) for b in func.buffer_map.values()}
        spatial = all(iv.iter_type == E.IterVarType.DataPar for iv in stmt.iter_vars)
        if not spatial or stmt.init is not None or not isinstance(stmt.body, S.BufferStore):
            return [sch]
        if self.into_consumer and id(stmt.body.buffer) not in params:
            trial = sch.copy()
            try:
                trial.compute_inline(block)
                return [trial]
            except ScheduleError:
                pass
        if self.into_producer:
            trial = sch.copy()
            try:
                trial.reverse_compute_inline(block)
                return [trial]
            except ScheduleError:
                pass
        return [sch]
