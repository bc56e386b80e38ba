"""Syntax highlighting of printed TVMScript with pygments (imported only when used).

- :func:`show_text` prints highlighted text in a terminal, an HTML block in a notebook, and
  plain text otherwise (a pipe, a file, a test's captured output);
- :func:`html_text` returns highlighted HTML with inline styles (no CSS classes, no script),
  so it renders the same in Jupyter, VS Code and a static HTML export.

Without pygments both fall back to plain text (HTML-escaped in a ``<pre>`` block).
"""

from __future__ import annotations

import html
import sys

DEFAULT_HTML_STYLE = "default"
DEFAULT_TERMINAL_STYLE = "default"


def _in_notebook() -> bool:
    """True inside a running Jupyter kernel (not merely when ipykernel is importable)."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    return getattr(shell, "kernel", None) is not None


def html_text(text: str, style: str | None = None) -> str:
    """``text`` as Python-highlighted HTML with inline styles."""
    try:
        from pygments import highlight
        from pygments.formatters import HtmlFormatter
        from pygments.lexers import PythonLexer
    except ImportError:
        return f"<pre>{html.escape(text)}</pre>"
    formatter = HtmlFormatter(style=style or DEFAULT_HTML_STYLE, noclasses=True)
    return highlight(text, PythonLexer(), formatter)


def terminal_text(text: str, style: str | None = None) -> str:
    """``text`` highlighted with ANSI colour codes (plain when pygments is missing)."""
    try:
        from pygments import highlight
        from pygments.formatters import Terminal256Formatter
        from pygments.lexers import PythonLexer
    except ImportError:
        return text
    formatter = Terminal256Formatter(style=style or DEFAULT_TERMINAL_STYLE)
    return highlight(text, PythonLexer(), formatter).rstrip("\n")


def show_text(text: str, style: str | None = None, file=None) -> None:
    """Print ``text``: as HTML in a notebook, with colours on a terminal, else plainly."""
    out = file if file is not None else sys.stdout
    if file is None and _in_notebook():
        try:
            from IPython.display import HTML, display
        except ImportError:
            pass
        else:
            display(HTML(html_text(text, style)))
            return
    isatty = getattr(out, "isatty", None)
    if isatty is not None and isatty():
        print(terminal_text(text, style), file=out)
    else:
        print(text, file=out)
