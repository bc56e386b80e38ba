"""Static pictures of the widgets: what a notebook shows where the widget cannot run.

A widget needs a kernel, or a trusted notebook with its stored state; GitHub, nbviewer, a
static site and JupyterLab on a fresh clone (untrusted) show none.  Beside its live form,
each widget's display data carries ``text/html``: a picture of its state built here from
the model alone (inline styles only, as :mod:`.columns`), and :class:`LiveDisplay` keeps
that picture in step when later cells change the model, so a saved notebook holds the
picture of the last state.

Example::

    HTML(explorer_picture(ScheduleExplorer(mm_relu, measure=False)))
"""

from __future__ import annotations

import html

from .columns import pre_html
from .diff import diff_html

__all__ = ["LiveDisplay", "explorer_picture", "pass_stepper_picture"]

_BOX = ("font-family:sans-serif;font-size:13px;text-align:left;max-width:100%;"
        "box-sizing:border-box;border:1px solid #d0d7de;border-radius:4px;padding:6px")
_NOTE = "color:#57606a;font-size:11px;margin-top:4px"
_TD = "padding:0 8px 0 0;text-align:left;border:none;white-space:nowrap"
_ERROR = ("background:#ffebe9;color:#cf222e;border:1px solid #ff8182;border-radius:4px;"
          "padding:4px 8px;font-family:monospace;white-space:pre-wrap;margin:4px 0")
NOTE = "a picture of the widget's last state; run the notebook to use it"


def _code(text: str, max_height: str = "30em") -> str:
    from mlckit.script.printer.highlight import html_text

    return pre_html(html_text(text), max_height)


def _section(title: str, body: str, open_: bool = False) -> str:
    return (f"<details{' open' if open_ else ''}><summary>{html.escape(title)}</summary>"
            f"{body}</details>")


# -- ScheduleExplorer ----------------------------------------------------------------------
def explorer_header(ex) -> str:
    """The explorer's header line (the widget shows the same)."""
    cur = ex.current
    what = "the function as given" if cur.index == 0 else html.escape(cur.label)
    result = "" if cur.agrees is None else (
        " · same results as step 0" if cur.agrees else
        ' · <b style="color:#cf222e">results differ from step 0</b>')
    return (f"<b>ScheduleExplorer</b> · <code>{html.escape(ex.title)}</code> · step "
            f"{cur.index} of {len(ex.steps) - 1}: {what} · {cur.time_text}{result}")


def explorer_picture(ex) -> str:
    """A ScheduleExplorer as it stands: the header, the TVMScript beside the steps and
    their run times, the lnumpy twin and the diff (folded), and the trace.

    Example::

        explorer_picture(ex)          # the text/html of the explorer's display data
    """
    cur = ex.current
    rows = "".join(
        f'<tr><td style="{_TD}">{s.index}</td><td style="{_TD}">'
        f"{html.escape(s.primitive or 'start')}</td><td style=\"{_TD}\">{s.time_text}</td>"
        f"<td style=\"{_TD}\">{'' if s.agrees is None else '✓' if s.agrees else '✗'}</td></tr>"
        for s in ex.history)
    steps = (f'<table style="font-size:12px;border-collapse:collapse;margin:0">{rows}</table>'
             '<div style="font-size:11px;color:#57606a">✓: the same results as step 0</div>')
    error = f'<div style="{_ERROR}">{html.escape(ex.error)}</div>' if ex.error else ""
    diff = ("<i>step 0: nothing before it</i>" if cur.index == 0 else
            diff_html(ex.history[-2].script, cur.script, "unified",
                      f"step {cur.index - 1}", f"step {cur.index}"))
    return (
        f'<div class="mlckit-explorer-picture" style="{_BOX}">'
        f"<div>{explorer_header(ex)}</div>{error}"
        '<div style="display:flex;flex-wrap:wrap;gap:12px;align-items:flex-start;margin-top:4px">'
        f'<div style="flex:2 1 24em;min-width:0"><b>TVMScript</b>{_code(cur.script)}</div>'
        f'<div style="flex:1 1 12em;min-width:0"><b>steps</b>{steps}</div></div>'
        + _section("lnumpy", _code(cur.lnumpy))
        + _section("diff to the step before", diff)
        + "<b>trace</b>" + _code(cur.trace, "20em")
        + f'<div style="{_NOTE}">{NOTE}</div></div>')


# -- PassStepper ---------------------------------------------------------------------------
def pass_stepper_picture(stepper, index: int | None = None, mode: str = "unified",
                         func: str | None = None, fold: bool = False) -> str:
    """A PassStepper as it stands: the passes (the selected one in bold) and what the
    selected pass did (``mode``: "unified", "side_by_side" or "graph"; ``func``: one
    function, or None for the whole module); ``fold``: each run of passes that changed
    nothing is one grey row, as in the stepper's folded text form.

    Example::

        pass_stepper_picture(stepper, 2, "graph", "main")
    """
    rows = []
    unchanged: list = []

    def fold_unchanged():
        if unchanged:
            names = ", ".join(html.escape(s.name) for s in unchanged)
            rows.append(f'<tr style="color:#57606a"><td style="{_TD}">○</td><td style="{_TD}">'
                        f'</td><td style="{_TD}" colspan="2">({len(unchanged)} unchanged: '
                        f"{names})</td></tr>")
            unchanged.clear()

    for s in stepper.steps:
        if fold and not s.changed and s.index != index:
            unchanged.append(s)
            continue
        fold_unchanged()
        weight = "font-weight:bold;background:#ddf4ff;" if s.index == index else ""
        rows.append(f'<tr style="{weight}"><td style="{_TD}">{"●" if s.changed else "○"}</td>'
                    f'<td style="{_TD}">{s.index}</td><td style="{_TD}">{html.escape(s.name)}</td>'
                    f'<td style="{_TD}">{s.seconds * 1e3:.2f} ms</td></tr>')
    fold_unchanged()
    passes = (f'<div style="flex:0 0 auto;max-width:45%;overflow-x:auto">'
              f'<table style="font-size:12px;border-collapse:collapse;margin:0">{"".join(rows)}'
              "</table></div>")
    shown = ""
    if index is not None:
        s = stepper.step(index)
        where = f" · function <code>{html.escape(func)}</code>" if func else ""
        state = "changed the IR" if s.changed else "left the IR unchanged"
        shown = (f"<div><b>{s.index}: {html.escape(s.name)}</b> {state}{where}</div>"
                 + stepper.view_html(index, mode, func))
    return (f'<div class="mlckit-pass-stepper-picture" style="{_BOX}">'
            f"<div>{html.escape(stepper.summary().splitlines()[0])}</div>"
            '<div style="display:flex;gap:12px;align-items:flex-start;margin-top:4px">'
            f'{passes}<div style="flex:1 1 0;min-width:0">{shown}</div></div>'
            f'<div style="{_NOTE}">{NOTE}</div></div>')


# -- keeping the picture in step -------------------------------------------------------------
class LiveDisplay:
    """Displays a widget's display data (live widget + picture) with a display id, and
    updates it when code run in a cell changes the model (``changed()``), so the saved
    notebook stores the picture of the last state.  A change made by clicking in the widget
    leaves the output alone: re-rendering it would take the focus from the control in use.

    Example::

        live = LiveDisplay(view.mimebundle)
        live.display()        # in a cell
        live.changed()        # after the model moved
    """

    def __init__(self, bundle):
        self._bundle = bundle
        self._handles: list = []

    def display(self) -> None:
        from IPython.display import display

        handle = display(self._bundle(), raw=True, display_id=True)
        if handle is not None:
            self._handles.append(handle)

    def changed(self) -> None:
        if not self._handles or not _running_a_cell():
            return
        bundle = self._bundle()
        for handle in self._handles:
            handle.update(bundle, raw=True)


def _running_a_cell() -> bool:
    """Whether the kernel is executing a cell now (not handling a widget's message)."""
    from IPython import get_ipython

    kernel = getattr(get_ipython(), "kernel", None)
    if kernel is None:
        return False
    try:
        parent = kernel.get_parent("shell")
    except TypeError:  # ipykernel < 6
        parent = getattr(kernel, "_parent_header", {})
    return (parent or {}).get("header", {}).get("msg_type") == "execute_request"
