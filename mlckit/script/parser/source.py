"""Where a script's text comes from, and how AST positions map back to it."""

from __future__ import annotations

import ast
import inspect
import linecache
import re
import textwrap

from mlckit.error import TVMError
from mlckit.ir.node import Span


class SourceNotFoundError(TVMError, OSError):
    """The text of a decorated function or class cannot be read (e.g. typed at a bare
    ``python`` prompt), so TVMScript cannot parse it."""


class Source:
    """The source of one script: a decorated function or class, or a string.

    ``span(node)`` gives the location of an AST node in the *original* file (line numbers
    and columns as the learner sees them), so errors point at the right place.
    """

    def __init__(self, text: str, source_name: str = "<string>", start_line: int = 1,
                 full_text: str | None = None):
        dedented = textwrap.dedent(text)
        first = next((ln for ln in text.splitlines() if ln.strip()), "")
        first_dedented = next((ln for ln in dedented.splitlines() if ln.strip()), "")
        self.col_offset = len(first) - len(first_dedented)
        self.text = dedented
        self.source_name = source_name
        self.start_line = start_line
        # the whole text errors are rendered from (None: read the file through linecache)
        self.full_text = full_text

    @staticmethod
    def from_object(obj) -> Source:
        """The source of a function or class defined in a file or a notebook cell."""
        try:
            if inspect.isclass(obj):
                lines, start, name = _class_source(obj)
            else:
                lines, start = inspect.getsourcelines(obj)
                name = inspect.getsourcefile(obj) or inspect.getfile(obj)
        except (OSError, TypeError) as err:
            raise SourceNotFoundError(
                f"cannot read the source of {getattr(obj, '__name__', obj)!r}: TVMScript needs "
                "its text (define it in a file or a notebook cell, or use mlckit.script.from_source)"
            ) from err
        if start == 0:
            start = 1
        full = None if linecache.getlines(name) else "".join(inspect.findsource(obj)[0])
        return Source("".join(lines), name, start, full)

    @staticmethod
    def from_string(text: str, source_name: str = "<string>") -> Source:
        return Source(text, source_name, 1, full_text=text)

    def parse(self) -> ast.Module:
        try:
            return ast.parse(self.text)
        except SyntaxError as err:
            from mlckit.ir.diagnostics import DiagnosticError

            span = Span(self.source_name, (err.lineno or 1) + self.start_line - 1,
                        (err.offset or 1) + self.col_offset)
            raise DiagnosticError(f"invalid Python syntax: {err.msg}", span, self.full_text) from None

    def span(self, node: ast.AST) -> Span:
        line = getattr(node, "lineno", 1)
        col = getattr(node, "col_offset", 0)
        end_line = getattr(node, "end_lineno", None)
        end_col = getattr(node, "end_col_offset", None)
        return Span(
            self.source_name,
            line + self.start_line - 1,
            col + 1 + self.col_offset,
            None if end_line is None else end_line + self.start_line - 1,
            None if end_col is None else end_col + 1 + self.col_offset,
        )


def _class_source(cls) -> tuple[list[str], int, str]:
    """Source lines, first line and file of a class.

    ``inspect`` finds classes through their module's file, which fails for classes defined
    in a notebook cell; a method's code object knows its cell, so start from there.
    """
    methods = [v for v in vars(cls).values() if hasattr(v, "__code__")]
    if not methods:
        lines, start = inspect.getsourcelines(cls)
        return lines, start, inspect.getsourcefile(cls) or inspect.getfile(cls)
    code = min((m.__code__ for m in methods), key=lambda c: c.co_firstlineno)
    filename = code.co_filename
    all_lines = linecache.getlines(filename)
    if not all_lines:
        raise OSError(f"no source for {filename}")
    header = re.compile(rf"^(\s*)class\s+{re.escape(cls.__name__)}\b")
    for index in range(min(code.co_firstlineno, len(all_lines)) - 1, -1, -1):
        match = header.match(all_lines[index])
        if match:
            indent = match.group(1)
            first = index
            while first > 0 and all_lines[first - 1].startswith(indent + "@"):
                first -= 1
            body = inspect.getblock(all_lines[index:])
            return all_lines[first:index] + list(body), first + 1, filename
    raise OSError(f"could not find the definition of class {cls.__name__}")
