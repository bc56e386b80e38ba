"""``PassStepper``: run a pass pipeline once, recording every pass, then step through it.

The passes run once, under a ``PassContext`` with a recording instrument (the module before
and after each pass, and its time); stepping only reads what was recorded, nothing re-runs.
Nested pipelines (a ``Sequential`` inside a ``Sequential``) are flattened to the passes that
do the work.  The model is plain Python; ``PassStepper.view()`` (or displaying the stepper in
a notebook) wires it to an ipywidgets view.

Example::

    stepper = PassStepper(MyModule)           # the build pipeline: relax.vm_lowering_pipeline()
    print(stepper)                            # one line per pass: changed?, name, time
    step = stepper.steps[1]
    step.name, step.changed, step.seconds
    print(stepper.diff(1))                    # unified diff of the TVMScript
    [s.name for s in stepper.changed_steps]   # "only passes that changed"
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass, field

from mlckit.error import TVMIndexError, TVMTypeError
from mlckit.instrument import PassInstrument
from mlckit.ir.module import IRModule
from mlckit.ir.transform import Pass, PassContext, Sequential

from .diff import diff_html, unified_diff

__all__ = ["PassStep", "PassStepper", "RecordPasses"]


@dataclass(frozen=True)
class PassStep:
    """One pass as it ran: ``name``, ``before`` / ``after`` (TVMScript of the module),
    ``changed`` (the text differs), ``seconds`` (time the pass took), and the modules
    themselves (``module_before`` / ``module_after``).

    >>> from mlckit import relax
    >>> from mlckit.notebook import PassStepper
    >>> from mlckit.script import ir as I, relax as R
    >>> @I.ir_module
    ... class MLP:
    ...     @R.function
    ...     def main(x: R.Tensor((1, 4), "float32"), w: R.Tensor((4, 3), "float32")):
    ...         with R.dataflow():
    ...             y = R.nn.relu(R.matmul(x, w))
    ...             R.output(y)
    ...         return y
    >>> step = PassStepper(MLP, relax.get_pipeline("zero")).steps[0]
    >>> step.name, step.changed, "R.call_tir" in step.after
    ('LegalizeOps', True, True)
    """

    index: int
    name: str
    before: str
    after: str
    seconds: float
    module_before: IRModule = field(repr=False, compare=False)
    module_after: IRModule = field(repr=False, compare=False)

    @property
    def changed(self) -> bool:
        return self.before != self.after

    def diff(self, context: int = 3) -> str:
        """The unified diff of ``before`` and ``after`` ("" when nothing changed)."""
        return unified_diff(self.before, self.after, f"before {self.name}",
                            f"after {self.name}", context)


class RecordPasses(PassInstrument):
    """An instrument recording each innermost pass (one that runs no pass inside it):
    the module before and after, and the time in between.  ``steps`` holds
    ``(name, module_before, module_after, seconds)`` tuples.

    Example::

        rec = RecordPasses()
        with PassContext(instruments=[rec]):
            relax.vm_lowering_pipeline()(mod)
        [name for name, *_ in rec.steps]
    """

    def __init__(self):
        self.steps: list[tuple[str, IRModule, IRModule, float]] = []
        self._open: list[list] = []  # [name, module, start, has_inner]

    def enter_pass_ctx(self) -> None:
        self.steps = []
        self._open = []

    def run_before_pass(self, mod, info) -> None:
        if self._open:
            self._open[-1][3] = True
        self._open.append([info.name, mod, 0.0, False])
        self._open[-1][2] = time.perf_counter()

    def run_after_pass(self, mod, info) -> None:
        end = time.perf_counter()
        name, before, start, has_inner = self._open.pop()
        if not has_inner:
            self.steps.append((name, before, mod, end - start))


def _as_pipeline(passes) -> Pass:
    if passes is None:
        from mlckit.relax.build import vm_lowering_pipeline

        return vm_lowering_pipeline()
    if isinstance(passes, Pass):
        return passes
    if isinstance(passes, Iterable):
        return Sequential(list(passes), name="PassStepper")
    raise TVMTypeError(f"PassStepper expects a pass, a list of passes or None, got "
                       f"{type(passes).__name__}")


class PassStepper:
    """Step through the passes of a pipeline applied to ``mod``.

    ``passes``: a pass (a ``Sequential`` is flattened), a list of passes, or None for the
    build pipeline (``relax.vm_lowering_pipeline()``).  They run once, now, under the current
    ``PassContext``'s settings; ``result`` is the final module.  ``steps[i]`` is a
    :class:`PassStep`; ``diff(i)`` its unified diff; ``changed_steps`` the steps that
    changed the IR.  Display it in a notebook (or call ``view()``) to step with a slider.

    Example::

        stepper = PassStepper(MyModule)
        stepper.steps[0].name          # 'ToNonDataflow' (or 'LegalizeOps' when it exists)
        print(stepper.diff(0))
    """

    def __init__(self, mod, passes=None):
        if not isinstance(mod, IRModule):
            from mlckit.relax.expr import Function

            if not isinstance(mod, Function):
                raise TVMTypeError(f"PassStepper expects an IRModule, got {type(mod).__name__}")
            mod = IRModule({"main": mod})
        self.module = mod
        self.pipeline = _as_pipeline(passes)
        recorder = RecordPasses()
        outer = PassContext.current()
        ctx = PassContext(opt_level=outer.opt_level, required_pass=outer.required_pass,
                          disabled_pass=outer.disabled_pass,
                          instruments=[*outer.instruments, recorder], config=outer.config)
        with ctx:
            self.result = self.pipeline(mod)
        texts: dict[int, str] = {}

        def text(m: IRModule) -> str:
            if id(m) not in texts:
                texts[id(m)] = m.script()
            return texts[id(m)]

        self.steps: list[PassStep] = [
            PassStep(i, name, text(before), text(after), seconds, before, after)
            for i, (name, before, after, seconds) in enumerate(recorder.steps)
        ]
        self._view = None

    # -- the model --------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.steps)

    def __getitem__(self, i: int) -> PassStep:
        return self.step(i)

    def step(self, i: int) -> PassStep:
        """Step ``i`` (negative indices count from the end)."""
        if not -len(self.steps) <= i < len(self.steps):
            raise TVMIndexError(f"step {i} is out of range: the pipeline ran {len(self.steps)} "
                                f"pass(es)")
        return self.steps[i]

    @property
    def changed_steps(self) -> list[PassStep]:
        """The steps whose pass changed the IR ("only passes that changed")."""
        return [s for s in self.steps if s.changed]

    @property
    def total_seconds(self) -> float:
        return sum(s.seconds for s in self.steps)

    def diff(self, i: int, context: int = 3) -> str:
        """The unified diff (difflib) of step ``i``'s TVMScript ("" when it changed nothing).

        Example::

            print(stepper.diff(1))     # --- before CallTIRRewrite / +++ after ... / @@ ...
        """
        return self.step(i).diff(context)

    def diff_html(self, i: int, mode: str = "unified", context: int = 3) -> str:
        """Step ``i``'s diff as HTML: ``mode`` "unified" or "side_by_side"."""
        s = self.step(i)
        return diff_html(s.before, s.after, mode, f"before {s.name}", f"after {s.name}", context)

    # -- text form --------------------------------------------------------------------
    def summary(self) -> str:
        """One line per pass: ``*`` when it changed the IR, its index, name and time."""
        width = max((len(s.name) for s in self.steps), default=4)
        lines = [f"PassStepper: {len(self.steps)} pass(es), {len(self.changed_steps)} changed "
                 f"the IR, {self.total_seconds * 1e3:.2f} ms in all"]
        for s in self.steps:
            mark = "*" if s.changed else " "
            # the time unpadded: stored notebook outputs mask it, so its width must not move
            lines.append(f"  {mark} {s.index:>2}  {s.name:<{width}}  {s.seconds * 1e3:.3f} ms")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return self.summary()

    # -- the notebook view -------------------------------------------------------------
    def view(self):
        """The ipywidgets view of this stepper (one per stepper, made on first use)."""
        if self._view is None:
            from .pass_stepper_view import PassStepperView

            self._view = PassStepperView(self)
        return self._view

    def _repr_mimebundle_(self, include=None, exclude=None):
        bundle = self.view().widget._repr_mimebundle_(include=include, exclude=exclude) or {}
        bundle["text/plain"] = self.summary()
        return bundle
