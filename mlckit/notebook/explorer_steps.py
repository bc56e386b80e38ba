"""The records of a ``ScheduleExplorer``: its steps (:class:`Step`), the steps it refused
(:class:`Refusal`), the loops of a step (:class:`LoopInfo`), and an ``apply`` call as text.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from mlckit.tir.schedule import Schedule
from mlckit.tir.schedule.query import loop_srefs


@dataclass(frozen=True)
class LoopInfo:
    """A loop of the function: its printed ``name`` and the ``blocks`` under it."""

    name: str
    blocks: tuple[str, ...]
    var: object = field(repr=False, compare=False)


@dataclass(eq=False)
class Step:
    """One step of an exploration: ``index`` (0 is the function as given), the
    ``primitive`` and ``args`` of the ``apply`` call (``call`` as text), the printed names
    of the loops or blocks it made (``new_names``), the schedule ``sch``, its ``script``
    (TVMScript), ``lnumpy`` twin, ``diff`` to the step before, and the measured run time
    ``seconds`` with ``agrees`` (its results equal step 0's), or why not (``measure_error``).

    Example::

        step = ex.apply("split", block="Y", loop="j", factors=[None, 4])
        step.ok, step.index, step.new_names      # True, 1, ['j_0', 'j_1']
        print(step.diff); print(step.trace)
    """

    index: int
    primitive: str | None
    args: dict
    call: str
    new_names: list[str]
    sch: Schedule = field(repr=False)
    script: str = field(repr=False)
    lnumpy: str = field(repr=False)
    diff: str = field(repr=False)
    loops: list[LoopInfo] = field(repr=False, default_factory=list)
    blocks: list[str] = field(repr=False, default_factory=list)
    seconds: float | None = None
    agrees: bool | None = None
    measure_error: str | None = None
    measurement: object = field(default=None, repr=False)
    pending: bool = False  # being measured
    handles: list = field(default_factory=list, repr=False)

    ok = True

    @property
    def trace(self) -> str:
        """The schedule's trace as Python (``str(sch.trace)``)."""
        return str(self.sch.trace)

    @property
    def label(self) -> str:
        """``call`` and the names it made: ``split(block="Y", …) → j_0, j_1``."""
        made = f" → {', '.join(self.new_names)}" if self.new_names else ""
        return f"{self.call}{made}"

    @property
    def time_text(self) -> str:
        """The run time for a person: ``2.71 ms``, or why there is none."""
        if self.seconds is None:
            if self.pending:
                return "measuring…"
            return "not measured" if self.measure_error is None else "not measurable"
        ms = self.seconds * 1e3
        return f"{ms:.2f} ms" if ms < 1000 else f"{self.seconds:.2f} s"

    def __repr__(self) -> str:
        return f"step {self.index}: {self.label}"


@dataclass(eq=False)
class Refusal:
    """A step the schedule refused: the ``call`` and the ``error`` message (the explorer
    stays where it was).

    Example::

        r = ex.apply("compute_inline", block="Y")
        r.ok, r.error          # False, 'ScheduleError: compute_inline: block `Y` is a reduction …'
    """

    primitive: str
    args: dict
    call: str
    error: str

    ok = False

    def __repr__(self) -> str:
        return f"refused: {self.call}: {self.error}"


def _loop_table(sch: Schedule, func_name: str, names: dict) -> tuple[list[LoopInfo], list[str]]:
    """Every loop of the function with its printed name and the blocks under it (in program
    order), and the block names (``Step.loops``, ``Step.blocks``)."""
    order: list = []
    under: dict[int, list[str]] = {}
    blocks = []
    for sref in sch.state.func_refs[func_name]:
        if not sref.is_block or sref.parent is None:
            continue
        blocks.append(sref.stmt.name_hint)
        for lp in loop_srefs(sref):
            var = lp.stmt.loop_var
            if id(var) not in under:
                under[id(var)] = []
                order.append(var)
            under[id(var)].append(sref.stmt.name_hint)
    loops = [LoopInfo(names.get(id(v), v.name_hint), tuple(under[id(v)]), v) for v in order]
    return loops, blocks


def format_value(v) -> str:
    """A parameter value as Python, strings in double quotes: ``["j_0", "k"]``."""
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, list):
        return "[" + ", ".join(format_value(x) for x in v) + "]"
    if isinstance(v, tuple):
        return "(" + ", ".join(format_value(x) for x in v) + ("," if len(v) == 1 else "") + ")"
    return repr(v)


def format_call(primitive: str, args: dict) -> str:
    """``split(block="Y", loop="j", factors=[None, 8])``: an apply call as text."""
    return f"{primitive}({', '.join(f'{k}={format_value(v)}' for k, v in args.items())})"
