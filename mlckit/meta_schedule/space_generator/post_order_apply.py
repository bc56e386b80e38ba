"""``PostOrderApply``: the built-in design space — every schedule rule tried on every block.

Blocks are visited in program order with the root block last (so its annotations come
after the tiling, as in TVM's traces); each rule maps every schedule so far to the
schedules it leads to.  What comes out are the design spaces (three for a matmul on CPU:
tiling without a write cache, and with one at tile level 1 or 2).

Example::

    space = ms.space_generator.PostOrderApply()          # TVM's CPU rules
    space.initialize_with_tune_context(ms.TuneContext(mod, target="llvm"))
    for sch in space.generate_design_space(mod):
        print(sch.trace)
"""

from __future__ import annotations

from mlckit.ir.module import IRModule
from mlckit.tir.schedule import Schedule

from ..error import SpaceGeneratorError
from ..utils import func_name
from .space_generator import SpaceGenerator


class PostOrderApply(SpaceGenerator):
    """Apply the schedule rules to each block in turn (TVM's ``PostOrderApply``)."""

    def generate_design_space(self, mod: IRModule, seed: int | None = None) -> list[Schedule]:
        if self.sch_rules == "from-target":
            raise SpaceGeneratorError("PostOrderApply: call initialize_with_tune_context "
                                      "first (the rules depend on the target)")
        sch = Schedule(mod, seed=seed)
        fname = func_name(sch)
        refs = sch.state.func_refs[fname]
        names = [r.stmt.name_hint for r in refs if r.is_block and r.parent is not None]
        names = [n for n in names if names.count(n) == 1] + ["root"]
        blocks = [sch.get_block(n, fname) for n in names]
        states = [sch]
        for block in blocks:
            for rule in self.sch_rules:
                nxt: list[Schedule] = []
                for state in states:
                    try:
                        nxt.extend(rule.apply(state, block))
                    except Exception as err:
                        raise SpaceGeneratorError(
                            f"schedule rule {type(rule).__name__} failed on block "
                            f"{names[blocks.index(block)]!r}: {err}") from err
                states = nxt
        return states
