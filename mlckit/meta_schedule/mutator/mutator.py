"""``Mutator``: change one sampling decision of a trace (the evolutionary search's step).

Mutators work on a trace's JSON form (``[instructions, decisions]``, see
``tir.schedule.Trace.as_json``) without post-processing: ``apply(trace_json, rng)`` returns
a new JSON trace, or None when it finds nothing to change.  Replaying the result on the
workload (and post-processing it again) gives the mutated program.

Example::

    new = ms.mutator.MutateTileSize().apply(sch.trace.as_json(), random.Random(0))
"""

from __future__ import annotations

import copy
import random

DEFAULTS: dict[str, object] = {}


class Mutator:
    """The interface of a mutator (TVM's ``meta_schedule.mutator.Mutator``)."""

    def initialize_with_tune_context(self, context) -> None:
        pass

    def apply(self, trace_json, rng: random.Random):
        raise NotImplementedError

    def clone(self) -> Mutator:
        return copy.deepcopy(self)

    @staticmethod
    def create(kind: str = "llvm") -> dict[Mutator, float]:
        """The default mutators of a target kind and their probabilities."""
        from mlckit.error import TVMValueError

        factory = DEFAULTS.get(kind)
        if factory is None:
            raise TVMValueError(f"meta_schedule has no default mutators for target kind "
                                f"{kind!r} (it has: {', '.join(sorted(DEFAULTS))})")
        return factory()


def decided(trace_json, kind: str) -> list[tuple[int, object]]:
    """``(instruction index, decision)`` of the instructions of ``kind`` with a decision."""
    insts, decisions = trace_json
    return [(int(i), d) for i, d in decisions if insts[int(i)][0] == kind]


def with_decision(trace_json, index: int, decision):
    """A copy of ``trace_json`` in which instruction ``index`` takes ``decision``."""
    insts, decisions = trace_json
    new = [[i, decision if int(i) == index else d] for i, d in decisions]
    return [copy.deepcopy(insts), new]
