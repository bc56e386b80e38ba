"""``%%relax`` and ``%%tir``: a notebook cell of TVMScript, parsed with the notebook's names.

``%load_ext mlckit`` registers both.  The cell holds an ``@I.ir_module`` class, or defs: a
decorated def is parsed in its decorator's dialect, an undecorated one in the magic's
(``%%relax``: a Relax function, ``%%tir``: a PrimFunc).  ``I``, ``T`` and ``R`` need no
import.  Each definition is bound in the notebook under its name and displayed; ``-q``
binds without displaying.  A mistake shows the located diagnostic (line, column, caret)
and no traceback of the parser's insides.

Example (in a notebook)::

    %load_ext mlckit

    %%relax
    def main(x: R.Tensor((4,), "float32")):
        with R.dataflow():
            y = R.add(x, x)
            R.output(y)
        return y

    main.show()        # `main` is now a relax.Function in the notebook
"""

from __future__ import annotations

import sys
from typing import Any

from IPython.core.magic import Magics, cell_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring
from IPython.display import display

from mlckit.script.parser.entry import parse_definitions

__all__ = ["ScriptMagics", "load_ipython_extension", "parse_cell"]


def parse_cell(cell: str, dialect: str, namespace: dict[str, Any] | None = None,
               source_name: str = "<cell>", magic_line: str | None = None) -> dict[str, Any]:
    """Parse the TVMScript of a cell: ``{name: IR object}`` for each definition, in order.

    ``dialect`` ("relax" or "tir") is the one of undecorated defs; ``namespace`` the names
    the script may use (the notebook's); ``magic_line`` the cell's first line
    (``%%relax``), counted so that errors give the line numbers the learner sees.

    Example::

        parse_cell('def main(x: R.Tensor((4,), "float32")):\\n    return x\\n', "relax")
    """
    first_line, full_text = 1, cell
    if magic_line is not None:
        first_line, full_text = 2, magic_line + "\n" + cell
    return parse_definitions(cell, extra_vars=namespace, dialect=dialect,
                             source_name=source_name, first_line=first_line,
                             full_text=full_text)


def _cell_name(shell) -> str:
    """IPython's name of the cell being run ("Cell In[3]"), found from the calling frames."""
    format_name = getattr(getattr(shell, "compile", None), "format_code_name", None)
    frame = sys._getframe(1)
    while frame is not None and format_name is not None:
        label = format_name(frame.f_code.co_filename)
        if label:
            return " ".join(label)
        frame = frame.f_back
    return "<cell>"


@magics_class
class ScriptMagics(Magics):
    """The ``%%relax`` and ``%%tir`` cell magics (registered by ``%load_ext mlckit``)."""

    def _run(self, dialect: str, line: str, cell: str, args) -> Any:
        results = parse_cell(cell, dialect, self.shell.user_ns, _cell_name(self.shell),
                             f"%%{dialect} {line}".rstrip())
        self.shell.user_ns.update(results)
        if args.quiet:
            return None
        objs = list(results.values())
        if len(objs) == 1:
            return objs[0]
        for obj in objs:
            display(obj)
        return None

    @magic_arguments()
    @argument("-q", "--quiet", action="store_true", help="bind the definitions without displaying them")
    @cell_magic
    def relax(self, line: str, cell: str):
        """Parse the cell as TVMScript; undecorated defs are Relax functions (``@R.function``)."""
        return self._run("relax", line, cell, parse_argstring(self.relax, line))

    @magic_arguments()
    @argument("-q", "--quiet", action="store_true", help="bind the definitions without displaying them")
    @cell_magic
    def tir(self, line: str, cell: str):
        """Parse the cell as TVMScript; undecorated defs are PrimFuncs (``@T.prim_func``)."""
        return self._run("tir", line, cell, parse_argstring(self.tir, line))


def load_ipython_extension(ipython) -> None:
    """Register ``%%relax`` and ``%%tir`` (what ``%load_ext mlckit`` calls)."""
    ipython.register_magics(ScriptMagics)
