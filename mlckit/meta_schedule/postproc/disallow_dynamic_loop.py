"""``DisallowDynamicLoop``: reject candidates with a loop whose extent is not a constant.

Example::

    assert ms.postproc.DisallowDynamicLoop().apply(sch)
"""

from __future__ import annotations

from mlckit.tir import stmt as S
from mlckit.tir.expr import IntImm
from mlckit.tir.schedule import Schedule

from .postproc import Postproc


class DisallowDynamicLoop(Postproc):
    """False when any loop of the scheduled module has a non-constant extent."""

    def apply(self, sch: Schedule) -> bool:
        return all(isinstance(r.stmt.extent, IntImm)
                   for refs in sch.state.func_refs.values() for r in refs
                   if isinstance(r.stmt, S.For))
