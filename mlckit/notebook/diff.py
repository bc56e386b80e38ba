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
import re

from mlckit.error import TVMValueError

__all__ = ["DIFF_MODES", "diff_html", "unified_diff"]

DIFF_MODES = ("unified", "side_by_side")

_LINE_STYLES = {
    "+": "background:#e6ffec;color:#1a7f37",
    "-": "background:#ffebe9;color:#cf222e",
    "@": "background:#ddf4ff;color:#0969da",
}
_PRE = ("margin:0;padding:6px;font-family:monospace;font-size:12px;line-height:1.35;"
        "white-space:pre;overflow-x:auto")

_TABLE_CSS = """
table.mlckit-diff {font-family:monospace;font-size:12px;border-collapse:collapse;border:none}
table.mlckit-diff td {padding:0 6px;white-space:pre;vertical-align:top;border:none}
table.mlckit-diff th {padding:2px 6px;text-align:left;background:#f6f8fa;border:none}
table.mlckit-diff td.diff_header {color:#8c959f;text-align:right}
table.mlckit-diff td.diff_next {display:none}
table.mlckit-diff .diff_add {background:#e6ffec}
table.mlckit-diff .diff_chg {background:#fff8c5}
table.mlckit-diff .diff_sub {background:#ffebe9}
"""


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
    removed red) or "side_by_side" (two columns, :class:`difflib.HtmlDiff`).

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
    table = difflib.HtmlDiff(tabsize=4).make_table(
        before.splitlines(), after.splitlines(), html.escape(from_name), html.escape(to_name),
        context=True, numlines=context)
    table = table.replace('<table class="diff"', '<table class="mlckit-diff diff"', 1)
    # difflib numbers its anchors with a global counter: drop them, so that the same diff
    # always renders the same (stored notebook outputs compare equal)
    table = re.sub(r' (id|name)="(difflib_chg_|from|to)[^"]*"', "", table)
    table = re.sub(r'<a href="#difflib_chg_[^"]*">([^<]*)</a>', r"\1", table)
    return f"<div><style>{_TABLE_CSS}</style>{table}</div>"
