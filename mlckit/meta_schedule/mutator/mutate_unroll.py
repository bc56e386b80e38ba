"""``MutateUnroll``: pick another unroll depth for ``meta_schedule.unroll_explicit``.

Example::

    new = ms.mutator.MutateUnroll().apply(trace_json, random.Random(0))
"""

from __future__ import annotations

import random

from .mutator import Mutator, decided, with_decision

UNROLL_KEYS = ("meta_schedule.unroll_explicit", "meta_schedule.unroll_implicit")


class MutateUnroll(Mutator):
    """Change the decision of a ``sample_categorical`` that feeds an unroll annotation."""

    def apply(self, trace_json, rng: random.Random):
        insts = trace_json[0]
        annotated = {inst[1][1] for inst in insts
                     if inst[0] == "Annotate" and inst[2] and inst[2][0] in UNROLL_KEYS}
        choices = [(i, d) for i, d in decided(trace_json, "SampleCategorical")
                   if insts[i][3] and insts[i][3][0] in annotated and len(insts[i][2][0]) > 1]
        if not choices:
            return None
        index, old = rng.choice(choices)
        n = len(insts[index][2][0])
        new = rng.choice([k for k in range(n) if k != int(old)])
        return with_decision(trace_json, index, new)
