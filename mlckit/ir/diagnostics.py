"""Errors a learner can cause in a script, shown with file, line, column and a caret."""

from __future__ import annotations

import linecache

from mlckit.error import TVMError

from .node import Span


class DiagnosticError(TVMError):
    """A parse or well-formedness error, located in the source.

    ``str(err)`` reads::

        error: undefined variable 'lv0'
         --> model.py:12:22
           |
        12 |         lv1 = R.add(lv0, x)
           |                     ^^^
    """

    def __init__(self, message: str, span: Span | None = None, source: str | None = None):
        self.message = message
        self.span = span
        self.source = source
        super().__init__(self.render())

    @property
    def line(self) -> int | None:
        return self.span.line if self.span else None

    @property
    def column(self) -> int | None:
        return self.span.column if self.span else None

    def source_line(self) -> str | None:
        if self.span is None or self.span.line <= 0:
            return None
        if self.source is not None:
            lines = self.source.splitlines()
            if self.span.line <= len(lines):
                return lines[self.span.line - 1]
            return None
        text = linecache.getline(self.span.source_name, self.span.line)
        return text.rstrip("\n") if text else None

    def render(self, level: str = "error") -> str:
        out = [f"{level}: {self.message}"]
        if self.span is None:
            return out[0]
        out.append(f" --> {self.span}")
        text = self.source_line()
        if text is not None:
            num = str(self.span.line)
            pad = " " * len(num)
            col = max(self.span.column, 1)
            width = 1
            if self.span.end_line == self.span.line and self.span.end_column:
                width = max(self.span.end_column - col, 1)
            out += [f"{pad} |", f"{num} | {text}", f"{pad} | {' ' * (col - 1)}{'^' * width}"]
        return "\n".join(out)

    def _render_traceback_(self):
        # IPython calls this instead of printing the parser's internal traceback.
        return [self.render()]


class DiagnosticWarning(UserWarning):
    """A located warning about a script (TVM warns, the program is still built).

    ``str(w)`` reads like a :class:`DiagnosticError`, starting with ``warning:``.
    """

    def __init__(self, message: str, span: Span | None = None, source: str | None = None):
        self.message = message
        self.span = span
        self.source = source
        text = DiagnosticError.render(self, level="warning")  # type: ignore[arg-type]
        super().__init__(text)

    source_line = DiagnosticError.source_line
