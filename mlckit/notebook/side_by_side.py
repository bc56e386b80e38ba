"""``side_by_side(prim_func)``: TVMScript and its lnumpy twin, line for line.

Both texts come with a map from each line to the TIR statements it was written for: the
printer's (``script_with_line_map``) and the lnumpy generator's (``line_to_stmt``).  Lines
of the same statement are aligned in the same row (:class:`difflib.SequenceMatcher` over
the statement sequence).  The HTML renders anywhere, untrusted notebooks and GitHub
included: two columns of inline-styled lines (:mod:`.columns`) that share the width and
scroll each on its own; where scripts run, a tiny script adds the links (hovering a line
outlines every line of its statement in both columns).  ``str(view)`` is the terminal's
form.

Example::

    from mlckit.notebook import side_by_side
    view = side_by_side(mm_relu)
    view                        # in a notebook: two aligned, highlighted columns
    print(view)                 # in a terminal: the same rows as text
    view.linked_lines(8)        # lnumpy lines of TVMScript line 8 (the T.grid loops)
"""

from __future__ import annotations

import difflib
import itertools
from dataclasses import dataclass

from mlckit.error import TVMTypeError
from mlckit.ir.module import IRModule
from mlckit.tir.function import PrimFunc

from .columns import Cell, columns_html

__all__ = ["SideBySide", "side_by_side"]


@dataclass(frozen=True)
class Row:
    """One row of the view: a TVMScript line and an lnumpy line (None: a gap)."""

    left: int | None
    right: int | None


def side_by_side(func, name: str | None = None) -> SideBySide:
    """TVMScript and the lnumpy twin of a PrimFunc (or of PrimFunc ``name`` of an IRModule).

    Example::

        side_by_side(mm_relu)
        side_by_side(sch.mod, "main")      # a scheduled function
    """
    if isinstance(func, IRModule):
        prims = {gv.name_hint: f for gv, f in func.functions.items() if isinstance(f, PrimFunc)}
        if name is None and len(prims) == 1:
            name = next(iter(prims))
        if name not in prims:
            raise TVMTypeError(f"side_by_side needs the name of a PrimFunc of the module "
                               f"(it has: {', '.join(sorted(prims)) or 'none'}), got {name!r}")
        func = prims[name]
    if not isinstance(func, PrimFunc):
        raise TVMTypeError(f"side_by_side shows a tir.PrimFunc, got {type(func).__name__}")
    return SideBySide(func)


class SideBySide:
    """The aligned view of a PrimFunc's TVMScript (left) and lnumpy source (right).

    ``tvmscript`` / ``lnumpy``: the two texts; ``rows``: the aligned :class:`Row` s;
    ``left_ids[n]`` / ``right_ids[n]``: the statement numbers of each line (lines sharing
    one are linked); ``linked_lines(n)``: the lnumpy lines linked to TVMScript line ``n``.

    >>> from mlckit.script import ir as I, tir as T
    >>> @I.ir_module
    ... class Mod:
    ...     @T.prim_func
    ...     def copy(a: T.Buffer((4,), "float32"), b: T.Buffer((4,), "float32")):
    ...         for i in range(4):
    ...             with T.block("B"):
    ...                 vi = T.axis.spatial(4, i)
    ...                 b[vi] = a[vi]
    >>> from mlckit.notebook import SideBySide
    >>> print(SideBySide(Mod["copy"]).lnumpy)
    def copy(a, b):
        for i in range(4):
            # block "B"
            vi = i
            b[vi] = a[vi]
    <BLANKLINE>
    """

    def __init__(self, func: PrimFunc):
        from mlckit.backend.lnumpy import to_source
        from mlckit.script.printer import script_with_line_map

        self.func = func
        self.tvmscript = script_with_line_map(func)
        self.lnumpy = to_source(func)
        numbers: dict[int, int] = {}

        def number(node) -> int:
            return numbers.setdefault(id(node), len(numbers))

        left_lines = self.tvmscript.splitlines()
        right_lines = self.lnumpy.splitlines()
        self.left_ids: dict[int, tuple[int, ...]] = {}
        for n, line in enumerate(left_lines, 1):
            nodes = self.tvmscript.line_to_nodes.get(n, ())
            if nodes and not line.lstrip().startswith("@"):  # decorators: no twin line
                self.left_ids[n] = tuple(number(x) for x in nodes)
        self.right_ids: dict[int, tuple[int, ...]] = {}
        def_line = f"def {self.lnumpy.func_name}("
        for n, line in enumerate(right_lines, 1):
            stmt = self.lnumpy.line_to_stmt.get(n)
            if stmt is None and line.startswith(def_line):
                stmt = func  # the def line is the function's, as on the left
            if stmt is not None:
                self.right_ids[n] = (number(stmt),)
        self.rows = _align(self._keys(self.left_ids, left_lines, skip_comments=True),
                           self._keys(self.right_ids, right_lines))
        self._left_lines, self._right_lines = left_lines, right_lines

    @staticmethod
    def _keys(ids: dict[int, tuple[int, ...]], lines: list[str],
              skip_comments: bool = False) -> list:
        """One alignment key per line: (statement, whether the line starts it).  Lines of
        no statement match nothing, nor do comments with ``skip_comments`` (TVMScript's
        ``# with T.block("root"):``, whose statement starts on the next line)."""
        keys, seen = [], set()
        for n, line in enumerate(lines, 1):
            if n not in ids or (skip_comments and line.lstrip().startswith("#")):
                keys.append(("line", n, id(ids)))
                continue
            first = ids[n][0]
            keys.append((first, first not in seen))
            seen.add(first)
        return keys

    # -- links -------------------------------------------------------------------------------
    def linked_lines(self, left_line: int) -> list[int]:
        """The lnumpy lines written for the statement(s) of TVMScript line ``left_line``."""
        ids = set(self.left_ids.get(left_line, ()))
        return [n for n, s in self.right_ids.items() if ids & set(s)]

    def linked_tvmscript_lines(self, right_line: int) -> list[int]:
        """The TVMScript lines of the statement lnumpy line ``right_line`` was written for."""
        ids = set(self.right_ids.get(right_line, ()))
        return [n for n, s in self.left_ids.items() if ids & set(s)]

    # -- text form ---------------------------------------------------------------------------
    def text(self) -> str:
        """The rows as plain text: ``n  TVMScript │ n  lnumpy``."""
        width = max((len(line) for line in self._left_lines), default=0)
        out = [f"{'':>4}{'TVMScript':<{width}} │ {'':>4}lnumpy"]
        for row in self.rows:
            left = self._left_lines[row.left - 1] if row.left else ""
            right = self._right_lines[row.right - 1] if row.right else ""
            ln = f"{row.left:>3} " if row.left else " " * 4
            rn = f"{row.right:>3} " if row.right else " " * 4
            out.append(f"{ln}{left:<{width}} │ {rn}{right}".rstrip())
        return "\n".join(out)

    def __str__(self) -> str:
        return self.text()

    def __repr__(self) -> str:
        return self.text()

    # -- HTML ------------------------------------------------------------------------------------
    def html(self) -> str:
        """HTML that renders anywhere (inline styles only; see :mod:`.columns`): the two
        columns share the output's width and scroll sideways each on its own, rows level.
        Where scripts run (a trusted notebook), hovering a line highlights every line of
        its statement in both columns."""
        left = _highlighted_lines(self.tvmscript, len(self._left_lines))
        right = _highlighted_lines(self.lnumpy, len(self._right_lines))
        left_cells, right_cells = [], []
        for row in self.rows:
            for n, lines, ids, cells in ((row.left, left, self.left_ids, left_cells),
                                         (row.right, right, self.right_ids, right_cells)):
                if n is None:
                    cells.append(Cell(None, None))
                else:
                    cells.append(Cell(n, lines[n - 1], link=" ".join(map(str, ids.get(n, ())))))
        return (columns_html([("TVMScript", left_cells), ("lnumpy", right_cells)],
                             "mlckit-side-by-side") + _SCRIPT)

    def _repr_html_(self) -> str:
        return self.html()


def _align(left: list, right: list) -> list[Row]:
    """Rows pairing lines with equal keys (in order); other lines face a gap or each other."""
    rows: list[Row] = []
    matcher = difflib.SequenceMatcher(a=left, b=right, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            rows += [Row(i + 1, j + 1) for i, j in zip(range(i1, i2), range(j1, j2))]
        else:
            for i, j in itertools.zip_longest(range(i1, i2), range(j1, j2)):
                rows.append(Row(None if i is None else i + 1, None if j is None else j + 1))
    return rows


def _highlighted_lines(text: str, n_lines: int) -> list[str]:
    """Each line of ``text`` as Python-highlighted HTML with inline styles (pygments)."""
    from pygments import highlight
    from pygments.formatters import HtmlFormatter
    from pygments.lexers import PythonLexer

    formatter = HtmlFormatter(nowrap=True, noclasses=True, style="default")
    out = highlight(text, PythonLexer(stripnl=False, ensurenl=True), formatter).split("\n")
    return [line if line else "" for line in out[:n_lines]] + [""] * max(0, n_lines - len(out))


# Hovering a line highlights the lines of its statement in both columns.  Only where
# scripts run: the picture itself needs none.  It finds its view as the element before it.
_SCRIPT = (
    "<script>(function(){var s=document.currentScript,t=s&&s.previousElementSibling;"
    "if(!t||t.dataset.linked)return;t.dataset.linked=1;var on=[];"
    "function off(){on.forEach(function(x){x.style.outline=''});on=[]}"
    't.addEventListener("mouseover",function(e){off();var c=e.target.closest("[data-s]");'
    'if(!c||!c.dataset.s)return;c.dataset.s.split(" ").forEach(function(k){'
    "t.querySelectorAll('[data-s~=\"'+k+'\"]').forEach(function(x){"
    "x.style.outline='2px solid #f4c542';x.style.outlineOffset='-2px';on.push(x)})})});"
    't.addEventListener("mouseleave",off)})();</script>'
)
