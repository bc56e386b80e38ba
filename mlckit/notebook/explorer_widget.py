"""The ipywidgets view of a :class:`~mlckit.notebook.ScheduleExplorer`.

It only wires controls to the model and renders what the model holds: a block and a loop
to pick; one button per primitive legal there, with inputs for its parameters (the others
listed with the reason they do not apply); undo / redo; the TVMScript, its lnumpy twin and
the diff to the step before in tabs; the trace as Python to copy; the run time of each step
as a small plot.  An error shows inline, in red.

Picking a block or a loop proposes parameters for the inputs the learner has not edited
since the last step; what they typed stays.  The handlers hold the explorer's ``lock``:
JupyterLab 4.6 with ipykernel 7 handles some widget messages on a thread of their own (a
subshell), so a pick can be handled after the typing and the click that followed it.

Example::

    view = ScheduleExplorer(mm_relu).view()
    view.pick("Y", "j")           # as choosing in the two dropdowns would
    view.click("split")           # as clicking the button would
    view.widget                   # the ipywidgets.VBox to display
"""

from __future__ import annotations

import html
import io
import re

import ipywidgets as W

from mlckit.error import TVMError

from .diff import diff_html
from .explorer_primitives import (
    BLOCK,
    BOOL,
    CHOICE,
    INT,
    LOOPS,
    PRIMITIVES,
    Param,
    Primitive,
    format_param,
    parse_param,
)
from .pictures import LiveDisplay, explorer_header, explorer_picture

__all__ = ["ScheduleExplorerView", "history_svg"]

# width 0 + min-width 100%: the box takes the panel's width, never its longest line's, and
# scrolls (a flex item would otherwise grow to fit a long line of code)
_CODE = ("overflow:auto;max-height:30em;font-size:12px;width:0;min-width:100%;"
         "box-sizing:border-box")
_PRE = "white-space:pre;overflow-x:auto;margin:0;"  # no wrapping: code lines scroll
_ERROR = ("background:#ffebe9;color:#cf222e;border:1px solid #ff8182;border-radius:4px;"
          "padding:4px 8px;font-family:monospace;white-space:pre-wrap")


class ScheduleExplorerView:
    """Widgets over a ScheduleExplorer; ``widget`` is the whole of it."""

    def __init__(self, explorer):
        self.explorer = explorer
        self.header = W.HTML()
        self.block = W.Dropdown(description="block", layout=W.Layout(width="14em"))
        self.loop = W.Dropdown(description="loop", layout=W.Layout(width="18em"))
        self.undo_button = W.Button(description="↶ undo", tooltip="go back one step",
                                    layout=W.Layout(width="7em"))
        self.redo_button = W.Button(description="↷ redo", tooltip="redo the step undone",
                                    layout=W.Layout(width="7em"))
        self.buttons: dict[str, W.Button] = {}
        self.inputs: dict[str, dict[str, W.Widget]] = {}
        self.rows: dict[str, W.Box] = {}
        for spec in PRIMITIVES.values():
            self._make_row(spec)
        self.primitives = W.Box(list(self.rows.values()), layout=W.Layout(
            flex_flow="row wrap", grid_gap="4px 6px", margin="4px 0"))
        self.not_here = W.HTML()
        self.error = W.HTML()
        self.script = W.HTML()
        self.lnumpy = W.HTML()
        self.diff = W.HTML()
        self.tabs = W.Tab([self.script, self.lnumpy, self.diff],
                          layout=W.Layout(flex="2 1 0", min_width="0"))
        self.trace = W.HTML()
        self.timing = W.HTML()
        self.script.add_class("mlckit-explorer-script")
        self.lnumpy.add_class("mlckit-explorer-lnumpy")
        self.diff.add_class("mlckit-explorer-diff")
        self.trace.add_class("mlckit-explorer-trace")
        self.timing.add_class("mlckit-explorer-timing")
        self.error.add_class("mlckit-explorer-error")
        self.timing.layout = W.Layout(flex="1 1 0", min_width="18em")
        self.widget = W.VBox([
            self.header,
            W.HBox([self.block, self.loop, self.undo_button, self.redo_button]),
            self.primitives, self.not_here, self.error,
            W.HBox([self.tabs, self.timing], layout=W.Layout(width="100%", grid_gap="12px")),
            self.trace,
        ])
        self.widget.add_class("mlckit-explorer")
        self.live = LiveDisplay(self.mimebundle)
        self._syncing = False
        self._input_error: str | None = None
        self._proposed: dict[tuple[str, str], object] = {}  # the values the view last wrote
        self._shown = None  # the step shown: a refusal keeps it, and the inputs as typed
        self.block.observe(self._on_block, names="value")
        self.loop.observe(self._on_loop, names="value")
        self.undo_button.on_click(lambda _: self.explorer.undo())
        self.redo_button.on_click(lambda _: self.explorer.redo())
        explorer.observe(self._on_model)
        self._refresh()

    # -- what a learner does --------------------------------------------------------------
    def pick(self, block: str | None, loop=None) -> None:
        """Choose ``block`` and ``loop`` (a printed name, or ``(block, name)`` for a loop of
        another nest), as the dropdowns do; None picks the first."""
        self.block.value = block if block is not None else self.block.value
        if loop is not None:
            self.loop.value = loop

    def click(self, primitive: str) -> None:
        """Press the button of ``primitive`` (its parameters as the inputs hold them)."""
        self.buttons[primitive].click()

    # -- building -------------------------------------------------------------------------
    def _make_row(self, spec: Primitive) -> None:
        button = W.Button(description=spec.name, tooltip=spec.help, button_style="info",
                          layout=W.Layout(width="auto", flex="0 0 auto"))
        button.add_class(f"mlckit-primitive-{spec.name}")
        button.on_click(lambda _, name=spec.name: self._on_click(name))
        inputs = {p.name: _input(p) for p in spec.params}
        self.buttons[spec.name] = button
        self.inputs[spec.name] = inputs
        self.rows[spec.name] = W.HBox([button, *inputs.values()], layout=W.Layout(
            border="1px solid #d0d7de", padding="2px", grid_gap="4px", align_items="center"))

    # -- events ---------------------------------------------------------------------------
    def _on_model(self, event: str) -> None:
        self._on_model_event(event)
        self.live.changed()  # the stored picture follows the steps cells take

    def _on_model_event(self, event: str) -> None:
        if event == "measured":
            self._render_header()
            self._render_timing()
        elif self.explorer.current is self._shown:  # a refusal: only the error is new
            self._input_error = None
            self._render_error()
        else:
            self._input_error = None
            self._refresh()

    def _on_block(self, change) -> None:
        with self.explorer.lock:
            if not self._syncing:
                self._refresh_loops()
                self._render_primitives("propose")

    def _on_loop(self, change) -> None:
        with self.explorer.lock:
            if not self._syncing:
                self._render_primitives("propose")

    def _on_click(self, name: str) -> None:
        with self.explorer.lock:
            self._apply(name)

    def _apply(self, name: str) -> None:
        spec = PRIMITIVES[name]
        try:
            params = {p.name: parse_param(p, self.inputs[name][p.name].value)
                      for p in spec.params}
        except TVMError as err:
            self._input_error = str(err)
            self._render_error()
            return
        block = self.block.value
        loop = None if spec.target in (BLOCK, LOOPS) else self.loop.value
        self.explorer.apply(name, block=block, loop=loop, **params)

    # -- rendering ------------------------------------------------------------------------
    def _refresh(self) -> None:
        """Everything, after the model moved (a step, an undo, a refusal)."""
        ex = self.explorer
        self._syncing = True
        try:
            blocks = ex.blocks()
            keep = self.block.value
            self.block.options = blocks
            self.block.value = keep if keep in blocks else (blocks[0] if blocks else None)
        finally:
            self._syncing = False
        self._refresh_loops()
        self.undo_button.disabled = not ex.can_undo
        self.redo_button.disabled = not ex.can_redo
        self._shown = ex.current
        self._render_primitives("reset")
        self._render_error()
        self._render_header()
        self._render_code()
        self._render_timing()

    def _refresh_loops(self) -> None:
        ex, block = self.explorer, self.block.value
        keep = self.loop.value
        options = []
        if block is not None:
            options = [(name, name) for name in ex.loops(block)]
            options += [(f"{name}  (above {owner})", (owner, name))
                        for owner, name in ex.other_loops(block)]
        values = [v for _, v in options]
        self._syncing = True
        try:
            self.loop.options = options
            self.loop.value = keep if keep in values else (values[0] if values else None)
        finally:
            self._syncing = False

    def _render_primitives(self, inputs: str) -> None:
        """Show the rows of the primitives legal for the picked block and loop, list the
        others, and set their inputs to the proposed parameters: all of them (``inputs`` is
        "reset": a new step), or those the learner has not edited ("propose": a new pick)."""
        ex = self.explorer
        block, loop = self.block.value, self.loop.value
        why_not = ex.legality(block, loop)
        sel = ex.selection(block, loop)
        hidden = []
        for name, spec in PRIMITIVES.items():
            legal = why_not[name] is None
            self.rows[name].layout.display = None if legal else "none"
            self.buttons[name].disabled = not legal
            if not legal:
                hidden.append(f"<li><b>{name}</b>: {html.escape(why_not[name])}</li>")
                continue
            for p, widget in self.inputs[name].items():
                written = self._proposed.get((name, p), widget.value)
                if inputs == "reset" or widget.value == written:
                    param = next(q for q in spec.params if q.name == p)
                    widget.value = format_param(param, param.default_for(sel))
                    self._proposed[(name, p)] = widget.value
        self.not_here.value = (
            f"<details><summary>not here: {len(hidden)} primitive(s)</summary>"
            f"<ul style='margin:2px 0'>{''.join(hidden)}</ul></details>" if hidden else "")

    def _render_error(self) -> None:
        message = self._input_error or self.explorer.error
        self.error.value = (f'<div style="{_ERROR}">{html.escape(message)}</div>'
                            if message else "")

    def _render_header(self) -> None:
        self.header.value = explorer_header(self.explorer)

    def _render_code(self) -> None:
        ex = self.explorer
        cur = ex.current
        self.script.value = _code_html(cur.script)
        self.lnumpy.value = _code_html(cur.lnumpy)
        if cur.index == 0:
            self.diff.value = "<i>step 0: nothing before it</i>"
        else:
            before = ex.history[-2]
            self.diff.value = f'<div style="{_CODE}">' + diff_html(
                before.script, cur.script, "unified", f"step {before.index}",
                f"step {cur.index}") + "</div>"
        self.tabs.titles = ("TVMScript", "lnumpy", "diff to the step before")
        self.trace.value = (
            "<b>trace</b> <small>(Python: select and copy)</small>"
            f'<pre style="{_CODE};{_PRE}user-select:text;background:#f6f8fa;padding:6px;margin:2px 0">'
            f"{html.escape(cur.trace)}</pre>")

    def _render_timing(self) -> None:
        steps = self.explorer.history
        if all(s.seconds is None for s in steps):
            note = next((s.measure_error for s in steps if s.measure_error), None)
            self.timing.value = ("<b>run time</b>: "
                                 + (html.escape(note) if note else "not measured"))
            return
        rows = "".join(
            f"<tr{' style=font-weight:bold' if s is steps[-1] else ''}><td>{s.index}</td>"
            f"<td>{html.escape(s.primitive or 'start')}</td><td>{s.time_text}</td>"
            f"<td>{'' if s.agrees is None else '✓' if s.agrees else '✗'}</td></tr>"
            for s in steps)
        self.timing.value = (
            f"<b>run time</b> of each step{history_svg(steps)}"
            f"<table style='font-size:12px'>{rows}</table>"
            "<small>built with Numba, run on random inputs; ✓: the same results as step 0"
            "</small>")

    # -- display --------------------------------------------------------------------------
    def mimebundle(self, include=None, exclude=None) -> dict:
        """The widget's display data, a picture of it as ``text/html`` (shown where the
        widget cannot run) and the explorer's text form as ``text/plain``."""
        bundle = self.widget._repr_mimebundle_(include=include, exclude=exclude) or {}
        bundle["text/html"] = explorer_picture(self.explorer)
        bundle["text/plain"] = self.explorer.text()
        return bundle


def _input(param: Param) -> W.Widget:
    """The input of a parameter, labelled with its name."""
    label = {"description": param.name, "style": {"description_width": "initial"},
             "tooltip": param.help or param.name}
    if param.kind == BOOL:
        return W.Checkbox(value=bool(param.default), indent=False,
                          layout=W.Layout(width="auto"), **label)
    if param.kind == CHOICE:
        return W.Dropdown(options=list(param.choices), value=param.default,
                          layout=W.Layout(width="auto"), **label)
    box = 3.5 if param.kind == INT else 7.5  # em for the value, then room for the label
    return W.Text(layout=W.Layout(width=f"{box + len(param.name) * 0.6:.1f}em"), **label)


def _code_html(text: str) -> str:
    """Python-highlighted code that scrolls instead of wrapping its lines."""
    from mlckit.script.printer.highlight import html_text

    code = html_text(text).replace("<pre style=\"", f"<pre style=\"{_PRE}", 1)
    return f'<div style="{_CODE}">{code}</div>'


def history_svg(steps) -> str:
    """The run time of each step as a small bar chart (matplotlib, SVG text); the last
    step's bar is the dark one.

    Example::

        HTML(history_svg(ex.history))
    """
    import matplotlib
    from matplotlib.figure import Figure

    xs = [s.index for s in steps]
    ms = [(s.seconds or 0.0) * 1e3 for s in steps]
    fig = Figure(figsize=(3.4, 1.6), dpi=96)
    ax = fig.add_subplot()
    ax.bar(xs, ms, color=["#9ecae1"] * (len(xs) - 1) + ["#1f77b4"], width=0.6)
    ax.set_xticks(xs)
    ax.set_xlim(-0.6, max(len(xs), 5) - 0.4)  # a few steps do not make wide bars
    ax.set_xlabel("step", fontsize=8)
    ax.set_ylabel("ms", fontsize=8)
    ax.tick_params(labelsize=7)
    ax.spines[["top", "right"]].set_visible(False)
    fig.tight_layout(pad=0.3)
    out = io.StringIO()
    with matplotlib.rc_context({"svg.hashsalt": "mlckit", "svg.fonttype": "none"}):
        fig.savefig(out, format="svg", metadata={"Date": None})
    text = out.getvalue()
    svg = text[text.index("<svg"):]
    # scale with the panel instead of the figure's fixed size
    head, rest = svg.split(">", 1)
    head = re.sub(r'\s(width|height)="[^"]*"', "", head)
    return f'{head} style="width:100%;max-width:26em;height:auto">{rest}'
