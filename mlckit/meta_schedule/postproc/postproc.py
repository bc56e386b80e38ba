"""``Postproc``: what runs on every sampled schedule before it is measured.

``apply(sch)`` finishes the program (turns annotations into loops, decomposes reductions)
with schedule primitives — recorded in the trace after ``sch.enter_postproc()`` — and
returns False to reject a candidate.  ``Postproc.create("llvm")`` gives TVM's CPU list.

Example::

    for p in ms.postproc.Postproc.create("llvm"):
        assert p.apply(sch)
"""

from __future__ import annotations

from mlckit.tir.schedule import Schedule

DEFAULTS: dict[str, object] = {}


class Postproc:
    """The interface of a postprocessor (TVM's ``meta_schedule.postproc.Postproc``)."""

    target = None

    def initialize_with_tune_context(self, context) -> None:
        self.target = context.target

    def apply(self, sch: Schedule) -> bool:
        raise NotImplementedError

    def clone(self) -> Postproc:
        import copy

        return copy.deepcopy(self)

    @staticmethod
    def create(kind: str = "llvm") -> list[Postproc]:
        """The default postprocessors for a target kind (``"llvm"``, ``"c"``)."""
        from mlckit.error import TVMValueError

        factory = DEFAULTS.get(kind)
        if factory is None:
            raise TVMValueError(f"meta_schedule has no default postprocessors for target kind "
                                f"{kind!r} (it has: {', '.join(sorted(DEFAULTS))})")
        return factory()


def block_names(sch: Schedule, func_name: str = "main") -> list[str]:
    """The names of the function's blocks (root excluded), in program order."""
    return [r.stmt.name_hint for r in sch.state.func_refs[func_name]
            if r.is_block and r.parent is not None]
