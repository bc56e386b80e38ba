"""``PassStepper``: run a pass pipeline once, recording every pass, then step through it.

The passes run once, under a ``PassContext`` with a recording instrument (the module before
and after each pass, and its time); stepping only reads what was recorded, nothing re-runs.
Nested pipelines (a ``Sequential`` inside a ``Sequential``) are flattened to the passes that
do the work.  The model is plain Python; ``PassStepper.view()`` (or displaying the stepper in
a notebook) wires it to an ipywidgets view.

Example::

    stepper = PassStepper(MyModule)           # the build pipeline: relax.vm_lowering_pipeline()
    print(stepper)                            # one line per pass: changed?, name, time
    tir = PassStepper(mm_relu, pipeline="tir")  # the TIR lowering passes, unchanged ones folded
    step = stepper.steps[1]
    step.name, step.changed, step.seconds
    print(stepper.diff(1))                    # unified diff of the TVMScript
    [s.name for s in stepper.changed_steps]   # "only passes that changed"
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass, field

from mlckit.error import TVMError, TVMIndexError, TVMTypeError, TVMValueError
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

    def diff(self, context: int = 3, func: str | None = None) -> str:
        """The unified diff of ``before`` and ``after`` ("" when nothing changed), of the
        whole module or of function ``func`` only."""
        before, after = self.texts(func)
        return unified_diff(before, after, f"before {self.name}", f"after {self.name}", context)

    def texts(self, func: str | None = None) -> tuple[str, str]:
        """The TVMScript before and after the pass: of the module, or of function ``func``
        ("" where the module has no such function)."""
        if func is None:
            return self.before, self.after
        return _function_text(self.module_before, func), _function_text(self.module_after, func)


def _function_text(mod: IRModule, name: str) -> str:
    for gv, f in mod.functions.items():
        if gv.name_hint == name:
            return f.script()
    return ""


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


def _graph_side(title: str, mod: IRModule, func: str | None) -> str:
    """One side of :meth:`PassStepper.graph_html`: a title and the drawn graph, or why
    there is none."""
    import html

    from .graph import graph

    head = f'<div style="font-size:12px;font-weight:bold">{html.escape(title)}</div>'
    names = [gv.name_hint for gv in mod.functions]
    if func not in names:
        body = f"<i>no function {html.escape(str(func))} here</i>"
    else:
        try:
            body = graph(mod, func)._repr_mimebundle_().get("text/html", "")
        except TVMError as err:  # a function kind the graph view does not draw
            body = f"<i>{html.escape(str(err))}</i>"
        body = body or "<i>install Graphviz to draw graphs</i>"
    return f'<div style="flex:1 1 0;min-width:0;overflow-x:auto">{head}{body}</div>'


def _as_pipeline(passes, pipeline: str | None = None) -> Pass:
    if pipeline not in (None, "relax", "tir"):
        raise TVMValueError(f"PassStepper: pipeline must be \"relax\" or \"tir\", got "
                            f"{pipeline!r}")
    if passes is None and pipeline == "tir":
        from mlckit.tir.pipeline import get_tir_pipeline

        return get_tir_pipeline("default")
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
    build pipeline (``relax.vm_lowering_pipeline()``; with ``pipeline="tir"`` the TIR
    lowering pipeline, ``tir.get_tir_pipeline()``, and ``mod`` may be a PrimFunc).  They run once, now, under the current
    ``PassContext``'s settings; ``result`` is the final module.  ``steps[i]`` is a
    :class:`PassStep`; ``diff(i)`` its unified diff; ``changed_steps`` the steps that
    changed the IR.  Display it in a notebook (or call ``view()``) to step with a slider.

    ``fold``: show the passes that changed nothing folded away, as Compiler Explorer does
    (the text form folds each run of them into one line, the view starts with "only passes
    that changed"); by default on for the TIR pipeline, whose passes mostly find nothing to
    do in a given kernel, and off otherwise.

    Example::

        stepper = PassStepper(MyModule)
        stepper.steps[0].name          # 'ToNonDataflow' (or 'LegalizeOps' when it exists)
        print(stepper.diff(0))
        tir = PassStepper(mm_relu, pipeline="tir")   # LowerInitBlock, ConvertBlocksToOpaque ...
        print(tir)                                   # (3 unchanged: ...) folded
    """

    def __init__(self, mod, passes=None, pipeline: str | None = None,
                 fold: bool | None = None):
        if not isinstance(mod, IRModule):
            from mlckit.relax.expr import Function
            from mlckit.tir.function import PrimFunc

            if isinstance(mod, PrimFunc):
                mod = IRModule({str((mod.attrs or {}).get("global_symbol", "main")): mod})
            elif isinstance(mod, Function):
                mod = IRModule({"main": mod})
            else:
                raise TVMTypeError(f"PassStepper expects an IRModule, got {type(mod).__name__}")
        self.module = mod
        self.pipeline = _as_pipeline(passes, pipeline)
        self.fold = pipeline == "tir" if fold is None else bool(fold)
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

    @property
    def functions(self) -> list[str]:
        """The names of the functions the module has before or after any pass, in the order
        they first appear (passes add functions: fused ones, legalized kernels)."""
        names: dict[str, None] = {}
        for mod in [self.module, *(s.module_after for s in self.steps)]:
            for gv in mod.functions:
                names.setdefault(gv.name_hint, None)
        return list(names)

    def diff(self, i: int, context: int = 3, func: str | None = None) -> str:
        """The unified diff (difflib) of step ``i``'s TVMScript ("" when it changed nothing),
        of the whole module or of function ``func`` only.

        Example::

            print(stepper.diff(1))     # --- before CallTIRRewrite / +++ after ... / @@ ...
            print(stepper.diff(1, func="main"))
        """
        return self.step(i).diff(context, func)

    def diff_html(self, i: int, mode: str = "unified", context: int = 3,
                  func: str | None = None) -> str:
        """Step ``i``'s diff as HTML: ``mode`` "unified" or "side_by_side"; of the whole
        module or of function ``func``."""
        s = self.step(i)
        before, after = s.texts(func)
        return diff_html(before, after, mode, f"before {s.name}", f"after {s.name}", context)

    def graph_html(self, i: int, func: str | None = None) -> str:
        """The graph of function ``func`` (default: ``main``) before and after step ``i``,
        side by side (:func:`mlckit.notebook.graph`; images that render anywhere).

        Example::

            HTML(stepper.graph_html(0, "main"))
        """
        s = self.step(i)
        func = func or self.default_function()
        sides = [_graph_side(f"before {s.name}", s.module_before, func),
                 _graph_side(f"after {s.name}", s.module_after, func)]
        return ('<div class="mlckit-graphs" style="display:flex;gap:8px;width:100%;'
                'align-items:flex-start;text-align:left">' + "".join(sides) + "</div>")

    def default_function(self) -> str | None:
        """The function shown when none is chosen: ``main``, else the first there is."""
        names = self.functions
        return "main" if "main" in names else (names[0] if names else None)

    def view_html(self, i: int, mode: str = "unified", func: str | None = None) -> str:
        """What the view shows of step ``i``: its diff (``mode`` "unified" or
        "side_by_side") or its ``"graph"`` before and after; of ``func`` or the module."""
        if mode == "graph":
            return self.graph_html(i, func)
        return self.diff_html(i, mode, func=func)

    # -- text form --------------------------------------------------------------------
    def summary(self, fold: bool = False) -> str:
        """One line per pass: ``*`` when it changed the IR, its index, name and time;
        ``fold``: each run of passes that changed nothing folded into one line, as Compiler
        Explorer does."""
        width = max((len(s.name) for s in self.steps), default=4)
        lines = [f"PassStepper: {len(self.steps)} pass(es), {len(self.changed_steps)} changed "
                 f"the IR, {self.total_seconds * 1e3:.2f} ms in all"]
        unchanged: list[str] = []
        for s in self.steps:
            if fold and not s.changed:
                unchanged.append(s.name)
                continue
            if unchanged:
                lines.append(f"        ({len(unchanged)} unchanged: {', '.join(unchanged)})")
                unchanged = []
            mark = "*" if s.changed else " "
            # the time unpadded: stored notebook outputs mask it, so its width must not move
            lines.append(f"  {mark} {s.index:>2}  {s.name:<{width}}  {s.seconds * 1e3:.3f} ms")
        if unchanged:
            lines.append(f"        ({len(unchanged)} unchanged: {', '.join(unchanged)})")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return self.summary(self.fold)

    # -- the notebook view -------------------------------------------------------------
    def view(self):
        """The ipywidgets view of this stepper (one per stepper, made on first use)."""
        if self._view is None:
            from .pass_stepper_view import PassStepperView

            self._view = PassStepperView(self)
        return self._view

    def _repr_mimebundle_(self, include=None, exclude=None):
        """The live widget, a picture of it (``text/html``) and the summary as text."""
        try:
            view = self.view()
        except ImportError:  # no ipywidgets: the text form
            return {"text/plain": repr(self)}
        return view.mimebundle(include=include, exclude=exclude)

    def _ipython_display_(self) -> None:
        """Displayed by a cell: the widget, its picture kept in step with the model."""
        try:
            view = self.view()
        except ImportError:
            print(repr(self))
            return
        view.live.display()
