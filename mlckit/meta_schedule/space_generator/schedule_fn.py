"""``ScheduleFn``: a design space written by hand — a function that schedules with sampling.

The function receives a fresh ``tir.Schedule`` of the workload and may return it, return
nothing (it changed the schedule in place) or return a list of schedules.  The search
re-samples its trace: ``sample_perfect_tile`` / ``sample_categorical`` take new decisions,
everything else replays as written.

Example::

    def stochastic_schedule_mm(sch):
        block_C = sch.get_block("C", "main")
        i, j, k = sch.get_loops(block=block_C)
        j_0, j_1 = sch.split(loop=j, factors=sch.sample_perfect_tile(loop=j, n=2))
        sch.reorder(i, j_0, k, j_1)
        sch.decompose_reduction(block_C, k)
        return sch

    space = ms.space_generator.ScheduleFn(stochastic_schedule_mm)
"""

from __future__ import annotations

from mlckit.ir.module import IRModule
from mlckit.tir.schedule import Schedule

from ..error import SpaceGeneratorError
from .space_generator import SpaceGenerator


class ScheduleFn(SpaceGenerator):
    """A design space given by a Python function of a ``tir.Schedule`` (TVM's ``ScheduleFn``)."""

    def __init__(self, sch_fn, sch_rules="from-target", postprocs="from-target",
                 mutator_probs="from-target"):
        super().__init__(sch_rules, postprocs, mutator_probs)
        if not callable(sch_fn):
            raise SpaceGeneratorError(f"ScheduleFn needs a function of a tir.Schedule, got "
                                      f"{type(sch_fn).__name__}")
        self.sch_fn = sch_fn

    def generate_design_space(self, mod: IRModule, seed: int | None = None) -> list[Schedule]:
        name = getattr(self.sch_fn, "__name__", repr(self.sch_fn))
        sch = Schedule(mod, seed=seed)
        try:
            result = self.sch_fn(sch)
        except Exception as err:
            raise SpaceGeneratorError(
                f"the space function {name!r} raised {type(err).__name__}: {err}") from err
        if result is None:
            result = [sch]
        elif isinstance(result, Schedule):
            result = [result]
        if not (isinstance(result, (list, tuple)) and result
                and all(isinstance(s, Schedule) for s in result)):
            raise SpaceGeneratorError(
                f"the space function {name!r} must return a tir.Schedule, a list of them or "
                f"None, got {type(result).__name__}")
        return list(result)
