"""Columns of code side by side, as HTML that renders anywhere and fits its box.

Used by ``side_by_side`` (TVMScript beside lnumpy) and the side-by-side diff.  The markup
is what an untrusted notebook, GitHub or a static page keeps (JupyterLab's sanitizer drops
``<style>``, ``<script>``, ``id`` and ``data-*``): only ``<div>``/``<span>`` with inline
styles from the sanitizer's allowed list (``display``, ``flex``, ``overflow-x``,
``white-space``, ``text-align``, ``width``, ``height``, colours …).

The columns share the width of the output (``flex: 1 1 0``) and each scrolls sideways on
its own (``overflow-x: auto``); a line never wraps and every line has the same fixed
height, so row *n* of one column stays level with row *n* of the others.

Example::

    from mlckit.notebook.columns import Cell, columns_html
    HTML(columns_html([("before", [Cell(1, "x = 1")]), ("after", [Cell(1, "x = 2")])]))
"""

from __future__ import annotations

import html
from dataclasses import dataclass

from mlckit.error import TVMValueError

__all__ = ["Cell", "LINE_PX", "columns_html", "pre_html"]

LINE_PX = 17  # every line's height: rows stay level across columns
_FONT = "font-family:monospace;font-size:12px"
_NUMBER = ("display:inline-block;width:3.2em;text-align:right;color:#8c959f;"
           "padding-right:0.8em")
_HEAD = ("font-family:sans-serif;font-size:12px;font-weight:bold;background:#f6f8fa;"
         "padding:1px 6px;white-space:nowrap;text-align:left")


@dataclass(frozen=True)
class Cell:
    """One row of a column: its line ``number`` (None: no number), its ``code`` as HTML
    (None: a gap facing a line of another column), a ``background`` colour, and the
    statement numbers ``link`` shared with linked lines of other columns (for hovering,
    where scripts run)."""

    number: int | None
    code: str | None
    background: str = ""
    link: str = ""


def pre_html(code_html: str, max_height: str = "") -> str:
    """Highlighted code (a ``<pre>``, e.g. pygments') in a box that scrolls sideways
    instead of running past the output's edge.

    Example::

        pre_html(html_text(mod.script()))
    """
    height = f";max-height:{max_height};overflow-y:auto" if max_height else ""
    # lines never wrap (JupyterLab wraps a <pre> anywhere, even inside a word): they scroll
    code_html = code_html.replace('<pre style="', '<pre style="white-space:pre;', 1)
    return (f'<div class="mlckit-code" style="overflow-x:auto;max-width:100%;'
            f'text-align:left{height}">{code_html}</div>')


def columns_html(columns: list[tuple[str, list[Cell]]], css_class: str = "") -> str:
    """Columns of equally many rows, side by side, each scrolling on its own.

    Example::

        columns_html([("TVMScript", left_cells), ("lnumpy", right_cells)])
    """
    heights = {len(cells) for _, cells in columns}
    if len(heights) > 1:
        raise TVMValueError(f"columns of different lengths: {sorted(heights)}")
    parts = []
    for k, (title, cells) in enumerate(columns):
        border = "border-left:1px solid #d0d7de;" if k else ""
        lines = "".join(_line(cell) for cell in cells)
        parts.append(
            f'<div class="mlckit-column" style="flex:1 1 0;min-width:0;overflow-x:auto;'
            f'overflow-y:hidden;{border}text-align:left">'
            f'<div style="{_HEAD}">{html.escape(title)}</div>'
            f'<div style="display:inline-block;min-width:100%;{_FONT};'
            f'line-height:{LINE_PX}px">{lines}</div></div>')
    cls = f"mlckit-columns {css_class}".strip()
    # width 0 + min-width 100%: as wide as the output (or panel) it is in, never as wide as
    # its longest line, also inside a widget's flex box
    return (f'<div class="{cls}" style="display:flex;align-items:flex-start;width:0;'
            f'min-width:100%;box-sizing:border-box;border:1px solid #d0d7de;'
            f'text-align:left">' + "".join(parts) + "</div>")


def _line(cell: Cell) -> str:
    number = "" if cell.number is None else str(cell.number)
    background = f"background:{cell.background};" if cell.background else ""
    link = f' data-s="{cell.link}"' if cell.link else ""
    return (f'<div{link} style="white-space:pre;height:{LINE_PX}px;padding-right:6px;'
            f'{background}text-align:left"><span style="{_NUMBER}">{number}</span>'
            f'{cell.code or ""}</div>')
