"""The TVMScript printer: IR objects -> TVMScript text, in TVM v0.23's style or TVM 0.27's
(``tir_spelling``: each PrimFunc prints as it was written unless told).

    script(obj, **options) -> str      # what Node.script() returns
    script_with_line_map(obj)          # the same text, each line mapped to its IR nodes
    show(obj, **options)               # print it, highlighted where that is possible
    to_html(obj) -> str                # highlighted HTML (Node._repr_html_)
    script_and_names(obj) -> (str, {id(var): name})   # which name each variable printed as

Options are the fields of :class:`PrinterConfig` (``name``, ``verbose_expr``,
``module_alias``, ``syntax_sugar``, ``indent_spaces``, ``tir_spelling`` …).

Layout: ``doc.py`` (the Python-syntax docs), ``doc_printer.py`` (docs -> text),
``core.py`` (frames, naming, dispatch), ``tir.py`` / ``relax.py`` / ``ir.py`` (one function
per node class, registered with :func:`register`), ``highlight.py`` (pygments).
"""

from __future__ import annotations

from mlckit.ffi.views import register_view
from mlckit.ir.node import Node

from . import ir, relax, te, tir  # noqa: F401 - register the per-dialect printers
from .core import PrintedScript, PrinterConfig, print_script, register
from .highlight import html_text, show_text

__all__ = ["PrintedScript", "PrinterConfig", "register", "script", "script_and_names",
           "script_with_line_map", "show", "to_html"]


def script(obj, **options) -> str:
    """The TVMScript text of ``obj`` (an IRModule, function, statement, expression …).

    Example::

        script(mod)                       # '# from tvm.script import ir as I\\n...'
        script(i * 4 + 1)                 # 'i * 4 + 1'
        script(func, name="mm_relu")      # print the function under another name
        script(func, tir_spelling="tirx") # TVM >= 0.24: tirx as T, s_tir=True, T.sblock
    """
    return print_script(obj, PrinterConfig(**options))


def script_and_names(obj, **options) -> tuple[str, dict[int, str]]:
    """The TVMScript text of ``obj`` and the name each of its variables and buffers printed
    as, keyed by ``id(var)`` (valid while ``obj`` is alive).  Names clash-renamed by the
    printer (a second ``i`` prints as ``i_1``) are given as printed.

    Example::

        text, names = script_and_names(func)
        names[id(loop.loop_var)]          # 'j_0'
    """
    names: dict[int, str] = {}
    return print_script(obj, PrinterConfig(**options), names=names), names


def script_with_line_map(obj, **options) -> PrintedScript:
    """``script(obj)``'s text, as a :class:`PrintedScript` that maps each line to the IR
    nodes it was printed from (``text.line_to_nodes[n]``, ``text.node_lines(stmt)``).

    Example::

        text = script_with_line_map(mm_relu)
        text.line_to_nodes[7]      # (For i, For j, For k): the T.grid line
    """
    return print_script(obj, PrinterConfig(**options), line_map=True)


def show(obj, style: str | None = None, **options) -> None:
    """Print ``obj``'s TVMScript: highlighted in a notebook or terminal, plain otherwise."""
    show_text(script(obj, **options), style=style)


def to_html(obj, style: str | None = None, **options) -> str:
    """``obj``'s TVMScript as highlighted HTML with inline styles (no JavaScript)."""
    return html_text(script(obj, **options), style=style)


# IR nodes print themselves through these (Node.script / .show / _repr_html_ ask
# mlckit.ffi.views): the IR core sits below the printer and does not import it.
register_view("script", Node, script)
register_view("show", Node, show)
register_view("script_html", Node, to_html)
