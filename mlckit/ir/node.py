"""The IR node base: small declarative node classes, as in xDSL.

Every IR class is a ``@node`` dataclass.  Its dataclass fields are its structure: the generic
structural equality / hashing (``mlckit.ir.structural``) and the generic visitors walk them.
Two class attributes refine that walk:

- ``_def_fields``: fields whose variables are *defined* there (loop vars, params, bindings);
  structural equality maps the variables it meets there instead of requiring identity.
- ``_eq_ignore``: fields that carry no meaning (name hints, spans), skipped by equality.

Nodes are immutable by convention: transformations build new nodes (``node.replace(...)``).

Example::

    @node
    class Pair(Node):
        first: object
        second: object
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, ClassVar

from mlckit.ffi.views import view


@dataclass(frozen=True)
class Span:
    """A source location: file, 1-based line and column, and the source text of the line.

    >>> from mlckit import ir
    >>> span = ir.Span("model.py", 3, 5, "    y = R.ad(x, x)")
    >>> span.line, span.column
    (3, 5)
    """

    source_name: str = "<unknown>"
    line: int = 0
    column: int = 0
    end_line: int | None = None
    end_column: int | None = None

    def __str__(self) -> str:
        return f"{self.source_name}:{self.line}:{self.column}"


def node(cls=None, **kwargs):
    """Class decorator turning a ``Node`` subclass into a declarative IR node.

    A node is a frozen dataclass whose fields are its structure::

        @node
        class Evaluate(Stmt):
            value: PrimExpr
    """

    def wrap(c):
        return dataclass(eq=False, repr=False, **kwargs)(c)

    return wrap if cls is None else wrap(cls)


@dataclass(eq=False, repr=False)
class Node:
    """Base of every IR object.

    >>> from mlckit import ir, tir
    >>> isinstance(tir.Var("x", "int32"), ir.Node), isinstance(ir.GlobalVar("main"), ir.Node)
    (True, True)
    """

    span: Span | None = field(default=None, kw_only=True)

    _def_fields: ClassVar[tuple[str, ...]] = ()
    _eq_ignore: ClassVar[tuple[str, ...]] = ()

    # -- generic structure -------------------------------------------------------------
    @classmethod
    def field_names(cls) -> tuple[str, ...]:
        names = cls.__dict__.get("_field_names_cache")
        if names is None:
            names = tuple(f.name for f in dataclasses.fields(cls) if f.name != "span")
            cls._field_names_cache = names
        return names

    def replace(self, **changes) -> Node:
        """A copy of this node with some fields changed (the node itself is untouched)."""
        return dataclasses.replace(self, **changes)

    def same_as(self, other: Any) -> bool:
        """Reference equality, as ``same_as`` in TVM."""
        return self is other

    # -- views: the printer installs them (mlckit.ffi.views); the IR does not import it --
    def script(self, **kwargs) -> str:
        """TVMScript text of this object."""
        return view("script", self, **kwargs)

    def show(self, **kwargs) -> None:
        """Print TVMScript, highlighted when the terminal or notebook supports it."""
        view("show", self, **kwargs)

    def _repr_html_(self) -> str:
        return view("script_html", self)

    def __repr__(self) -> str:
        try:
            return self.script()
        except Exception:  # noqa: BLE001 - repr must never fail
            return f"<{type(self).__name__}>"

    def __str__(self) -> str:
        return self.__repr__()
