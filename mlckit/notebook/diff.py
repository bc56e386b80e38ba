"""Diffs of two texts (TVMScript before / after a step): unified text, and HTML.

Built on :mod:`difflib`; the HTML is self-contained (inline styles), so it renders the same
in JupyterLab, VS Code and a saved notebook.

Example::

    print(unified_diff(before, after, "before", "after"))
    HTML(diff_html(before, after, mode="side_by_side"))
"""

from __future__ import annotations

import difflib
import html
import itertools

from mlckit.error import TVMValueError

from .columns import Cell, columns_html

__all__ = ["DIFF_MODES", "diff_html", "unified_diff"]

DIFF_MODES = ("unified", "side_by_side")

_LINE_STYLES = {
    "+": "background:#e6ffec;color:#1a7f37",
    "-": "background:#ffebe9;color:#cf222e",
    "@": "background:#ddf4ff;color:#0969da",
}
_PRE = ("margin:0;padding:6px;font-family:monospace;font-size:12px;line-height:1.35;"
        "white-space:pre;overflow-x:auto")

_SIDE_COLOURS = {"delete": "#ffebe9", "insert": "#e6ffec", "replace": "#fff8c5"}


def unified_diff(before: str, after: str, from_name: str = "before", to_name: str = "after",
                 context: int = 3) -> str:
    """The unified diff of two texts ("" when they are equal).

    Example::

        >>> print(unified_diff("a\\nb\\n", "a\\nc\\n"))
        --- before
        +++ after
        @@ -1,2 +1,2 @@
         a
        -b
        +c
    """
    lines = difflib.unified_diff(before.splitlines(), after.splitlines(), from_name, to_name,
                                 n=context, lineterm="")
    return "\n".join(lines)


def diff_html(before: str, after: str, mode: str = "unified", from_name: str = "before",
              to_name: str = "after", context: int = 3) -> str:
    """The diff of two texts as HTML: ``mode`` "unified" (one column, added lines green,
    removed red) or "side_by_side" (two columns sharing the width, each scrolling on its
    own).

    Example::

        diff_html(step.before, step.after, mode="side_by_side")
    """
    if mode not in DIFF_MODES:
        raise TVMValueError(f"diff mode {mode!r} is not one of {', '.join(DIFF_MODES)}")
    if before == after:
        return f'<pre style="{_PRE};color:#57606a">(no change)</pre>'
    if mode == "unified":
        rows = []
        for line in unified_diff(before, after, from_name, to_name, context).splitlines():
            style = _LINE_STYLES.get(line[:1], "")
            if line.startswith(("---", "+++")):
                style = "font-weight:bold"
            rows.append(f'<span style="{style}">{html.escape(line)}</span>' if style
                        else html.escape(line))
        return f'<pre class="mlckit-diff" style="{_PRE}">' + "\n".join(rows) + "</pre>"
    return _side_by_side(before.splitlines(), after.splitlines(), from_name, to_name, context)


def _side_by_side(a: list[str], b: list[str], from_name: str, to_name: str,
                  context: int) -> str:
    """Two columns (:mod:`.columns`): changed lines and ``context`` lines around them, a
    gap facing lines only one side has; removed lines red, added green, changed yellow."""
    left, right = [], []
    matcher = difflib.SequenceMatcher(a=a, b=b, autojunk=False)
    for g, group in enumerate(matcher.get_grouped_opcodes(context)):
        if g:  # lines left out between two hunks
            left.append(Cell(None, '<span style="color:#8c959f">⋯</span>'))
            right.append(Cell(None, '<span style="color:#8c959f">⋯</span>'))
        for tag, i1, i2, j1, j2 in group:
            colour = _SIDE_COLOURS.get(tag, "")
            for i, j in itertools.zip_longest(range(i1, i2), range(j1, j2)):
                left.append(Cell(None, None, colour and "#f6f8fa") if i is None else
                            Cell(i + 1, html.escape(a[i]), colour))
                right.append(Cell(None, None, colour and "#f6f8fa") if j is None else
                              Cell(j + 1, html.escape(b[j]), colour))
    return columns_html([(from_name, left), (to_name, right)], "mlckit-diff")
