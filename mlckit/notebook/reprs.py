"""HTML forms of runtime and schedule objects, for their ``_repr_html_``.

The core classes (``tir.Schedule``, ``Trace``, the VM ``Executable``, ``ProfileReport``,
``NDArray``) import these renderers inside ``_repr_html_``, so the core never imports the
notebook layer; outside a notebook they show their text form (``__repr__``/``__str__``).
Every renderer returns self-contained HTML that renders untrusted (GitHub, nbviewer, a
fresh clone's JupyterLab): inline styles only, from the list JupyterLab's sanitizer keeps;
the profile table adds a tiny script that sorts it on a click where scripts run.

Example::

    from mlckit.notebook.reprs import profile_html
    HTML(profile_html(vm.profile(x, w0, b0, w1, b1)))
"""

from __future__ import annotations

import html

import numpy as np

__all__ = ["executable_html", "ndarray_html", "profile_html", "schedule_html", "trace_html"]

_BOX = "font-family:sans-serif;font-size:13px"
_TABLE = ("border-collapse:collapse;font-size:12px;margin:4px 0")
_TH = "padding:2px 8px;text-align:left;background:#f6f8fa;border-bottom:1px solid #d0d7de"
_TD = "padding:1px 8px;text-align:left;border:none"
_PRE = "overflow-x:auto;max-width:100%;text-align:left"  # long lines scroll, never spill
_NUM = "padding:1px 8px;text-align:right;border:none;font-family:monospace"


def _code(text: str) -> str:
    """Python-highlighted code (pygments, inline styles) in a box that scrolls sideways."""
    from mlckit.script.printer.highlight import html_text

    from .columns import pre_html

    return pre_html(html_text(text))


def _esc(value) -> str:
    return html.escape(str(value))


def _header(title: str, detail: str = "") -> str:
    extra = f' <span style="color:#57606a">{_esc(detail)}</span>' if detail else ""
    return f"<div><b>{_esc(title)}</b>{extra}</div>"


# -- schedules ------------------------------------------------------------------------------
def trace_html(trace) -> str:
    """A ``Trace`` as highlighted Python (the same text as ``str(trace)``).

    Example::

        trace_html(sch.trace)
    """
    n = len(trace)
    return (f'<div style="{_BOX}">' + _header("Trace", f"{n} instruction{'s' * (n != 1)}")
            + _code(str(trace)) + "</div>")


def schedule_html(sch) -> str:
    """A ``tir.Schedule``: its trace (collapsible) and the scheduled module's TVMScript.

    Example::

        schedule_html(sch)
    """
    n = len(sch.trace) if sch.trace is not None else 0
    trace = ("" if sch.trace is None else
             f"<details><summary>trace ({n} instruction{'s' * (n != 1)})</summary>"
             f"{_code(str(sch.trace))}</details>")
    return (f'<div style="{_BOX}">' + _header("tir.Schedule", _work_on(sch)) + trace
            + _code(sch.mod.script()) + "</div>")


def _work_on(sch) -> str:
    gv = sch.func_working_on
    return f"working on {gv.name_hint}" if gv is not None else ""


# -- the VM -----------------------------------------------------------------------------------
def executable_html(ex) -> str:
    """A VM ``Executable``: its functions (kind, parameters, bytecode size), the compiled
    kernels and, folded, the bytecode (``ex.as_text()``).

    Example::

        executable_html(relax.build(MyModule, target="llvm"))
    """
    rows = []
    for info in ex.func_table:
        n_instr = info.end_instr - info.start_instr if info.kind == "vm_func" else ""
        regs = info.register_file_size if info.kind == "vm_func" else ""
        params = ", ".join(map(str, info.param_names)) if info.param_names else (
            str(info.num_args) if info.kind != "packed_func" else "")
        rows.append(f'<tr><td style="{_TD};font-family:monospace">{_esc(info.name)}</td>'
                    f'<td style="{_TD}">{_esc(info.kind)}</td>'
                    f'<td style="{_TD};font-family:monospace">{_esc(params)}</td>'
                    f'<td style="{_NUM}">{n_instr}</td><td style="{_NUM}">{regs}</td></tr>')
    head = "".join(f'<th style="{_TH}">{h}</th>' for h in
                   ("function", "kind", "parameters", "instructions", "registers"))
    kernels = ", ".join(sorted(ex.kernels)) or "none"
    target = f"target {ex.target}" if getattr(ex, "target", None) is not None else ""
    return (f'<div style="{_BOX}">' + _header("relax.Executable", target)
            + f'<table style="{_TABLE}"><thead><tr>{head}</tr></thead><tbody>'
            + "".join(rows) + "</tbody></table>"
            + f'<div>kernels ({len(ex.kernels)}): <code>{_esc(kernels)}</code></div>'
            + f"<details><summary>bytecode</summary><pre style=\"{_PRE}\">"
            + f"{_esc(ex.as_text())}</pre></details>"
            + "</div>")


_SORT_SCRIPT = (
    "<script>(function(){var s=document.currentScript,t=s&&s.previousElementSibling;"
    "if(!t||t.dataset.sortable)return;t.dataset.sortable=1;"
    "t.querySelectorAll(\"thead th\").forEach(function(th,i){th.style.cursor=\"pointer\";"
    "th.addEventListener(\"click\",function(){var b=t.tBodies[0],r=Array.from(b.rows),"
    "d=th.dataset.dir===\"desc\"?\"asc\":\"desc\";th.dataset.dir=d;"
    "r.sort(function(x,y){var a=x.cells[i].textContent,c=y.cells[i].textContent,"
    "p=parseFloat(a),q=parseFloat(c),v=isNaN(p)||isNaN(q)?a.localeCompare(c):p-q;"
    "return d===\"asc\"?v:-v});r.forEach(function(x){b.appendChild(x)})})})})();</script>"
)


def profile_html(report) -> str:
    """A VM profile report as a table sorted by total time; click a header to sort by it.

    Times carry their unit (``12.3 µs``), so notebook tests can mask them.

    Example::

        profile_html(vm.profile(x, w0, b0, w1, b1))
    """
    called = sum(r.seconds for r in report.rows) or 1e-12
    head = "".join(f'<th style="{_TH}" title="click to sort">{h}</th>' for h in
                   ("name", "calls", "total", "mean", "share"))
    rows = []
    for r in sorted(report.rows, key=lambda r: -r.seconds):
        share = 100 * r.seconds / called
        rows.append(
            f'<tr><td style="{_TD};font-family:monospace">{_esc(r.name)}</td>'
            f'<td style="{_NUM}">{r.calls}</td>'
            f'<td style="{_NUM}">{r.seconds * 1e6:.1f} µs</td>'
            f'<td style="{_NUM}">{r.seconds * 1e6 / max(r.calls, 1):.2f} µs</td>'
            f'<td style="{_NUM}">{share:.1f}%<span style="display:inline-block;height:8px;'
            f'margin-left:6px;background:#54aeff;width:{share * 0.6:.0f}px"></span></td></tr>')
    overhead = report.total_seconds - sum(r.seconds for r in report.rows)
    foot = (f'<tfoot><tr><td style="{_TD};color:#57606a">(VM dispatch and the rest)</td>'
            f'<td style="{_NUM}"></td><td style="{_NUM}">{overhead * 1e6:.1f} µs</td>'
            f'<td style="{_NUM}"></td><td style="{_NUM}"></td></tr></tfoot>')
    return (f'<div style="{_BOX}">'
            + _header(f"Profile of {report.function}", f"total {report.total_seconds * 1e3:.3f} ms")
            + f'<table class="mlckit-profile" style="{_TABLE}"><thead><tr>{head}</tr></thead>'
            + "<tbody>" + "".join(rows) + "</tbody>" + foot + "</table>" + _SORT_SCRIPT
            + "</div>")


# -- tensors -----------------------------------------------------------------------------------
def ndarray_html(arr) -> str:
    """An ``NDArray``: shape, dtype and device, then the values as NumPy prints them
    (summarised when large).

    Example::

        ndarray_html(mlckit.nd.array(np.eye(3, dtype="float32")))
    """
    values = np.array2string(arr._mlckit_numpy_view(), separator=", ")
    shape = "(" + ", ".join(map(str, arr.shape)) + ("," if len(arr.shape) == 1 else "") + ")"
    return (f'<div style="{_BOX}">' + _header("NDArray", f"{shape} {arr.dtype} on {arr.device}")
            + f'<pre style="margin:2px 0;{_PRE}">{_esc(values)}</pre></div>')
