"""``MutateComputeLocation``: move a block to another sampled compute location.

The trace is replayed up to the ``sample_compute_location`` it changes, so the new decision
is one of the locations valid at that point.

Example::

    mutator = ms.mutator.MutateComputeLocation()
    mutator.initialize_with_tune_context(ctx)        # it needs the workload
    new = mutator.apply(trace_json, random.Random(0))
"""

from __future__ import annotations

import random

from mlckit.error import TVMError
from mlckit.tir.schedule import Schedule, Trace
from mlckit.tir.schedule.compute_location import compute_locations

from .mutator import Mutator, decided, with_decision


class MutateComputeLocation(Mutator):
    """Change the decision of a ``sample_compute_location`` (TVM's mutator)."""

    mod = None

    def initialize_with_tune_context(self, context) -> None:
        self.mod = context.mod

    def apply(self, trace_json, rng: random.Random):
        choices = decided(trace_json, "SampleComputeLocation")
        if not choices or self.mod is None:
            return None
        index, old = rng.choice(choices)
        insts, decisions = trace_json
        sch = Schedule(self.mod)
        try:
            Trace.apply_json_to_schedule(
                [insts[:index], [[i, d] for i, d in decisions if int(i) < index]], sch)
            locations = compute_locations(sch, _output_named(sch, insts, index))
        except TVMError:
            return None
        others = [i for i in locations if i != int(old)]
        if not others:
            return None
        return with_decision(trace_json, index, rng.choice(others))


def _output_named(sch: Schedule, insts, index: int):
    """The BlockRV the instruction ``index`` samples for, found by replaying names."""
    name = insts[index][1][0]
    trace = sch.trace.as_json()
    # replay names match the JSON names: the replayed trace names outputs in the same order
    for inst_json, inst in zip(trace[0], sch.trace.insts):
        for out_name, rv in zip(inst_json[3], inst.outputs):
            if out_name == name:
                return rv
    raise TVMError(f"the trace does not define {name!r} before instruction {index}")
