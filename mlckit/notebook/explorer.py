"""``ScheduleExplorer``: try schedule primitives on a TensorIR function, one step at a time.

The model (this module) holds the steps taken: each one a ``tir.Schedule`` with its
TVMScript, its low-level NumPy twin, the diff to the step before and its measured run time.
``apply`` tries a primitive on a copy of the current schedule, so a refused step leaves
everything as it was; ``undo`` / ``redo`` move along the steps.  Blocks are named by their
names and loops by the names they print with (``j_0`` after splitting ``j``).  In a notebook
the explorer displays as a widget (:mod:`~mlckit.notebook.explorer_widget`); everywhere it
has a text form (``print(ex)``).  The records it keeps (``Step``, ``Refusal``, ``LoopInfo``)
are in :mod:`~mlckit.notebook.explorer_steps`; how it finds the blocks and loops an ``apply``
call names, in :mod:`~mlckit.notebook.explorer_targets`.

Example::

    ex = ScheduleExplorer(mm_relu)
    ex.apply("split", block="Y", loop="j", factors=[None, 4])     # step 1: j_0, j_1
    ex.apply("reorder", block="Y", loops=["j_0", "k", "j_1"])
    ex.apply("reverse_compute_at", block="C", loop="j_0")
    ex.legal_primitives("Y", "k")         # ['split', 'unroll', 'decompose_reduction', …]
    ex.undo(); ex.redo()
    print(ex.sch.trace)                    # the steps as Python
    ex                                     # the widget, in a notebook
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable

from mlckit.error import TVMError, TVMTypeError, TVMValueError
from mlckit.ir.module import IRModule
from mlckit.tir.function import PrimFunc
from mlckit.tir.schedule import Schedule
from mlckit.tir.schedule.rv import BlockRV, LoopRV

from .diff import unified_diff
from .explorer_primitives import BLOCK, BLOCK_LOOP, LOOP, LOOPS, PRIMITIVES, Primitive, Selection
from .explorer_steps import (  # noqa: F401 - format_value: its import path before the split
    LoopInfo,
    Refusal,
    Step,
    _loop_table,
    format_call,
    format_value,
)
from .explorer_targets import LoopNames, _Handles, _handles, _missing_target, _primitive
from .kernel_timer import KernelTimer

__all__ = ["LoopInfo", "Refusal", "ScheduleExplorer", "Step"]


def _serialized(method):
    """``method`` run holding the explorer's :attr:`~ScheduleExplorer.lock`."""

    @functools.wraps(method)
    def run(self, *args, **kwargs):
        with self.lock:
            return method(self, *args, **kwargs)

    return run


def _check_schedulable(func_or_mod) -> None:
    """ScheduleExplorer explores TensorIR: a Relax function, or a module without a PrimFunc,
    is refused up front with what to do instead."""
    hint = ("legalize the Relax module first (relax.transform.LegalizeOps()(mod)), then "
            "explore one of its PrimFuncs: ScheduleExplorer(mod, func_name=...)")
    if isinstance(func_or_mod, PrimFunc):
        return
    if isinstance(func_or_mod, IRModule):
        if not any(isinstance(f, PrimFunc) for f in func_or_mod.functions.values()):
            raise TVMTypeError(f"ScheduleExplorer: the module has no PrimFunc to schedule; {hint}")
        return
    kind = ("a Relax function" if type(func_or_mod).__module__.startswith("mlckit.relax")
            else f"a {type(func_or_mod).__name__}")
    raise TVMTypeError(f"ScheduleExplorer schedules TensorIR, not {kind}; {hint}")


class ScheduleExplorer(LoopNames):
    """Explore schedules of a PrimFunc (or of one PrimFunc of an IRModule), step by step.

    ``measure``: build each step with Numba and time it on random inputs (``seed``).

    ``lock`` serializes the changes (``apply``, ``undo``, ``redo``) and the views' event
    handlers: JupyterLab 4.6 with ipykernel 7 handles widget messages on a subshell, a
    thread of its own, so a click may arrive while a cell or another click is applying a step.

    Example::

        ex = ScheduleExplorer(mm_relu)
        step = ex.apply("split", block="Y", loop="j", factors=[None, 8])
        step.new_names                   # ['j_0', 'j_1']
        ex.apply("vectorize", block="Y", loop="k")   # refused: ex.error says why
        ex.sch.mod.show()
    """

    def __init__(self, func_or_mod, func_name: str | None = None, *, measure: bool = True,
                 seed: int = 0):
        _check_schedulable(func_or_mod)
        sch = Schedule(func_or_mod)
        if func_name is not None:
            sch.work_on(func_name)
        elif sch.func_working_on is None:
            names = ", ".join(gv.name_hint for gv, f in sch.mod.functions.items()
                              if isinstance(f, PrimFunc))
            raise TVMValueError(f"ScheduleExplorer: the module has several PrimFuncs ({names}): "
                                "pass func_name=... to choose one")
        self.func_name: str = sch.func_working_on.name_hint
        self.timer = KernelTimer(seed=seed) if measure else None
        self.lock = threading.RLock()
        self.error: str | None = None
        self._observers: list[Callable[[str], None]] = []
        self._legality: dict[tuple, dict[str, str | None]] = {}
        self._view = None
        self._steps: list[Step] = [self._make_step(0, sch, None, {}, "start", [], None)]
        self._pos = 0
        self._measure(self._steps[0])

    # -- state ----------------------------------------------------------------------------
    @property
    def current(self) -> Step:
        """The step shown now."""
        return self._steps[self._pos]

    @property
    def sch(self):
        """The current ``tir.Schedule`` (read it; change it through :meth:`apply`)."""
        return self.current.sch

    @property
    def steps(self) -> list[Step]:
        """Every step kept: the history, then the steps undone that ``redo`` brings back."""
        return list(self._steps)

    @property
    def history(self) -> list[Step]:
        """The steps up to the current one, step 0 (the function as given) first."""
        return self._steps[:self._pos + 1]

    @property
    def times(self) -> list[float | None]:
        """The run time of each step of the history, in seconds (None: not measured)."""
        return [s.seconds for s in self.history]

    @property
    def can_undo(self) -> bool:
        return self._pos > 0

    @property
    def can_redo(self) -> bool:
        return self._pos + 1 < len(self._steps)

    @property
    def title(self) -> str:
        """The function's name: the one it has in the schedule's module, as the TVMScript,
        the lnumpy twin and the trace (``func_name="main"``) all call it — TVM names a lone
        PrimFunc ``main`` when it makes a schedule of it."""
        return self.func_name

    def blocks(self) -> list[str]:
        """The names of the blocks of the current function, in program order."""
        return list(self.current.blocks)

    def loops(self, block: str) -> list[str]:
        """The printed names of the loops above ``block``, outermost first."""
        self._check_block(block)
        return [lp.name for lp in self.current.loops if block in lp.blocks]

    def other_loops(self, block: str) -> list[tuple[str, str]]:
        """The loops not above ``block``, as ``(a block under it, loop name)`` pairs (the
        targets of ``compute_at`` / ``reverse_compute_at``)."""
        self._check_block(block)
        return [(lp.blocks[0], lp.name) for lp in self.current.loops if block not in lp.blocks]

    def observe(self, callback: Callable[[str], None]) -> None:
        """Call ``callback(event)`` after each change: ``"step"`` (apply, undo, redo, a
        refusal) and ``"measured"`` (a run time arrived).  Views use this."""
        self._observers.append(callback)

    def _notify(self, event: str) -> None:
        for callback in list(self._observers):
            callback(event)

    # -- stepping -------------------------------------------------------------------------
    @_serialized
    def apply(self, primitive: str, block: str | None = None,
              loop: str | tuple[str, str] | None = None, **params) -> Step | Refusal:
        """Apply ``primitive`` to ``block`` / ``loop`` with ``params``; the new step, or a
        :class:`Refusal` saying why not (then :attr:`error` holds the message and nothing
        changed).  ``loop`` is a printed loop name (for ``compute_at`` a loop of another
        nest; ``("C", "i")`` picks the ``i`` above block ``C`` when the name alone is
        ambiguous); ``fuse`` and ``reorder`` take ``loops=[...]``.

        Example::

            ex.apply("split", block="Y", loop="j", factors=[None, 8])
            ex.apply("reorder", block="Y", loops=["j_0", "k", "j_1"])
            ex.apply("compute_inline", block="B")
        """
        args = {k: v for k, v in (("block", block), ("loop", loop)) if v is not None}
        args.update(params)
        call = format_call(primitive, args)
        work = self.sch.copy()
        try:
            spec = _primitive(primitive)
            result, handles = self._run(work, spec, block, loop, params)
        except TVMError as err:
            refusal = Refusal(primitive, args, call, getattr(err, "short", str(err)))
            self.error = refusal.error
            self._notify("step")
            return refusal
        step = self._make_step(self._pos + 1, work, primitive, args, call, result, self.current)
        step.handles = handles
        step.pending = self.timer is not None
        del self._steps[self._pos + 1:]
        self._steps.append(step)
        self._pos += 1
        self.error = None
        self._notify("step")
        if self._measure(step):
            self._notify("measured")
        return step

    @_serialized
    def undo(self) -> Step:
        """Go back one step (the undone step can be redone until a new one is applied)."""
        if self.can_undo:
            self._pos -= 1
            self.error = None
        else:
            self.error = "nothing to undo"
        self._notify("step")
        return self.current

    @_serialized
    def redo(self) -> Step:
        """Go forward to the step undone last."""
        if self.can_redo:
            self._pos += 1
            self.error = None
        else:
            self.error = "nothing to redo"
        self._notify("step")
        return self.current

    # -- what is legal here ---------------------------------------------------------------
    def selection(self, block: str | None, loop: str | tuple[str, str] | None) -> Selection:
        """The :class:`Selection` of ``block`` and ``loop`` in the current step."""
        nest = tuple(self.loops(block)) if block is not None else ()
        return Selection(block, loop, nest)

    @_serialized
    def legality(self, block: str | None = None,
                 loop: str | tuple[str, str] | None = None) -> dict[str, str | None]:
        """For each primitive, None when it applies to ``block`` / ``loop`` with its default
        parameters (tried on a copy of the schedule), else the reason it does not."""
        key = (self.current, block, loop)  # the Step itself: it stays alive in the cache
        if key not in self._legality:
            sel = self.selection(block, loop)
            self._legality[key] = {name: self._try(spec, sel) for name, spec in PRIMITIVES.items()}
        return dict(self._legality[key])

    def legal_primitives(self, block: str | None = None,
                         loop: str | tuple[str, str] | None = None) -> list[str]:
        """The primitives that apply to ``block`` / ``loop`` here (with default parameters).

        Example::

            ex.legal_primitives("Y", "k")   # ['split', 'unroll', 'decompose_reduction', …]
        """
        return [name for name, why in self.legality(block, loop).items() if why is None]

    def _try(self, spec: Primitive, sel: Selection) -> str | None:
        missing = _missing_target(spec, sel)
        if missing is not None:
            return missing
        why = spec.needs(sel)
        if why is not None:
            return why
        params = spec.defaults(sel)
        try:
            self._run(self.sch.copy(), spec, sel.block, sel.loop, params)
        except TVMError as err:
            return str(err)
        return None

    # -- running a primitive --------------------------------------------------------------
    def _run(self, work: Schedule, spec: Primitive, block, loop, params: dict):
        """Apply ``spec`` on ``work``: the handles it returned, and every handle of ``work``
        known so far (the next step reuses them)."""
        unknown = set(params) - {p.name for p in spec.params}
        if unknown:
            expected = ", ".join(p.name for p in spec.params) or "none"
            raise TVMValueError(f"{spec.name}: unknown parameter(s) {', '.join(sorted(unknown))} "
                                f"(its parameters: {expected})")
        kwargs = {p.name: params.get(p.name, p.default) for p in spec.params
                  if spec.target != LOOPS or p.name != "loops"}
        for p in spec.params:
            if callable(kwargs.get(p.name)):
                raise TVMValueError(f"{spec.name}: give {p.name}=...")
        h = _Handles(work, self.current.handles)
        method = getattr(work, spec.name)
        if spec.target == LOOPS:
            names = params.get("loops")
            if not names:
                raise TVMValueError(f"{spec.name}: give the loops, e.g. loops=['i', 'j']")
            block = self._require_block(spec, block)
            result = method(*[h.loop(*self._own_loop(block, n, spec.name)) for n in names],
                            **kwargs)
        elif spec.target == BLOCK:
            result = method(h.block(self._require_block(spec, block)), **kwargs)
        elif spec.target == LOOP:
            result = method(h.loop(*self._any_loop(block, loop, spec.name)), **kwargs)
        else:
            block = self._require_block(spec, block)
            if loop is None:
                raise TVMValueError(f"{spec.name}: give loop=...")
            if spec.target == BLOCK_LOOP:
                where = self._own_loop(block, loop, spec.name)
            else:
                where = self._other_loop(block, loop, spec.name)
            result = method(h.block(block), h.loop(*where), **kwargs)
        made = _handles(result)
        return made, h.known() + made

    # -- steps ----------------------------------------------------------------------------
    def _make_step(self, index: int, sch: Schedule, primitive, args: dict, call: str,
                   result: list, before: Step | None) -> Step:
        from mlckit.backend.lnumpy import to_source
        from mlckit.script.printer import script_and_names

        text, names = script_and_names(sch.mod)
        func = sch.mod[self.func_name]
        loops, blocks = _loop_table(sch, self.func_name, names)
        new_names = []
        for rv in result:
            if isinstance(rv, LoopRV):
                new_names.append(names.get(id(sch.get(rv).loop_var), "?"))
            elif isinstance(rv, BlockRV):
                new_names.append(sch.get(rv).name_hint)
        diff = "" if before is None else unified_diff(before.script, text, f"step {before.index}",
                                                      f"step {index}")
        return Step(index, primitive, dict(args), call, new_names, sch, text,
                    str(to_source(func, self.func_name)), diff, loops, blocks)

    def _measure(self, step: Step) -> bool:
        """Time ``step`` (when measuring); whether a time or an error was recorded."""
        if self.timer is None:
            return False
        try:
            m = self.timer.measure(step.sch.mod[self.func_name])
        except Exception as err:  # noqa: BLE001 - a failed build is shown, never fatal
            step.measure_error = f"{type(err).__name__}: {err}"
            return True
        finally:
            step.pending = False
        step.seconds, step.measurement = m.seconds, m
        first = self._steps[0].measurement if self._steps else None
        step.agrees = True if first is None or first is m else m.agrees_with(first)
        return True

    # -- text form ------------------------------------------------------------------------
    def text(self) -> str:
        """Everything the widget shows, as plain text."""
        cur = self.current
        lines = [f"ScheduleExplorer: {self.title}, step {cur.index} of {len(self._steps) - 1}"]
        width = max(len(s.label) for s in self.history)
        for s in self.history:
            result = "" if s.agrees is None else (
                "  reference" if s.index == 0 else "  same results" if s.agrees
                else "  DIFFERENT results")
            lines.append(f"  {s.index:>2}  {s.label:<{width}}  {s.time_text}{result}")
        if self.error:
            lines.append(f"error: {self.error}")
        sections = [("TVMScript", cur.script), ("lnumpy", cur.lnumpy)]
        if cur.index > 0:
            sections.append((f"diff to step {cur.index - 1}", cur.diff or "(no change)"))
        sections.append(("trace", cur.trace))
        for title, body in sections:
            lines += ["", title, "-" * len(title), body.rstrip("\n")]
        return "\n".join(lines)

    __str__ = text

    def __repr__(self) -> str:
        return f"<ScheduleExplorer {self.title}: step {self.current.index} of {len(self._steps) - 1}>"

    # -- notebook -------------------------------------------------------------------------
    def view(self):
        """The widget view of this explorer (:class:`ScheduleExplorerView`; one per
        explorer, made on first use: each display shows it again, in step)."""
        if self._view is None:
            from .explorer_widget import ScheduleExplorerView

            self._view = ScheduleExplorerView(self)
        return self._view

    def _repr_mimebundle_(self, include=None, exclude=None):
        """The live widget, a picture of it (``text/html``) and the text form."""
        try:
            view = self.view()
        except ImportError:  # no ipywidgets: the text form
            return {"text/plain": self.text()}
        return view.mimebundle(include=include, exclude=exclude)

    def _ipython_display_(self) -> None:
        """Displayed by a cell: the widget, its picture kept in step with later cells."""
        try:
            view = self.view()
        except ImportError:
            print(self.text())
            return
        view.live.display()
