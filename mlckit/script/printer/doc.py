"""The printer's intermediate form: small Python-syntax trees ("docs"), as in TVM.

IR objects are first turned into docs (``IdDoc``, ``CallDoc``, ``ForDoc`` …) by the
docsifier (``core.py`` and the per-dialect modules); ``doc_printer.py`` then turns docs into
text.  Keeping the two steps apart means parentheses, indentation and line layout are
decided in one place only.

Example::

    T = IdDoc("T")
    T.attr("grid").call(LiteralDoc(128), LiteralDoc(128))     # T.grid(128, 128)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any


class Doc:
    """Base of all docs."""


class ExprDoc(Doc):
    """A Python expression.  The helpers build bigger expressions around this one."""

    def attr(self, name: str) -> AttrAccessDoc:
        """``self.name``"""
        return AttrAccessDoc(self, name)

    def call(self, *args: ExprDoc, **kwargs: ExprDoc) -> CallDoc:
        """``self(*args, **kwargs)`` (keyword order is kept)."""
        return CallDoc(self, list(args), list(kwargs.items()))

    def call_kw(self, args: list, kwargs: list[tuple[str, ExprDoc]]) -> CallDoc:
        """``self(*args, k=v, ...)`` with keywords given as (name, doc) pairs."""
        return CallDoc(self, list(args), list(kwargs))

    def __getitem__(self, indices) -> IndexDoc:
        """``self[indices]``; a list gives several comma-separated indices."""
        return IndexDoc(self, list(indices) if isinstance(indices, list) else [indices])


@dataclass(eq=False)
class IdDoc(ExprDoc):
    """A name: ``x``."""

    name: str


@dataclass(eq=False)
class LiteralDoc(ExprDoc):
    """A Python literal: None, bool, int, float or str."""

    value: Any


@dataclass(eq=False)
class AttrAccessDoc(ExprDoc):
    value: ExprDoc
    name: str


@dataclass(eq=False)
class IndexDoc(ExprDoc):
    value: ExprDoc
    indices: list  # of ExprDoc / SliceDoc


@dataclass(eq=False)
class CallDoc(ExprDoc):
    callee: ExprDoc
    args: list
    kwargs: list  # of (name, ExprDoc)


class OpKind(Enum):
    """Operators; ``kind.token`` is the Python spelling."""

    USUB = "usub"
    INVERT = "invert"
    NOT = "not"
    ADD = "add"
    SUB = "sub"
    MULT = "mult"
    DIV = "div"
    FLOOR_DIV = "floor_div"
    MOD = "mod"
    POW = "pow"
    LT = "lt"
    LTE = "lte"
    EQ = "eq"
    NOT_EQ = "not_eq"
    GT = "gt"
    GTE = "gte"
    AND = "and"
    OR = "or"
    IF_THEN_ELSE = "if_then_else"

    @property
    def token(self) -> str:
        return _TOKENS[self]

    @property
    def is_unary(self) -> bool:
        return self in (OpKind.USUB, OpKind.INVERT, OpKind.NOT)


_TOKENS = {
    OpKind.USUB: "-", OpKind.INVERT: "~", OpKind.NOT: "not ", OpKind.ADD: "+",
    OpKind.SUB: "-", OpKind.MULT: "*", OpKind.DIV: "/", OpKind.FLOOR_DIV: "//",
    OpKind.MOD: "%", OpKind.POW: "**", OpKind.LT: "<", OpKind.LTE: "<=", OpKind.EQ: "==",
    OpKind.NOT_EQ: "!=", OpKind.GT: ">", OpKind.GTE: ">=", OpKind.AND: "and",
    OpKind.OR: "or", OpKind.IF_THEN_ELSE: "if",
}


@dataclass(eq=False)
class OperationDoc(ExprDoc):
    """``a + b``, ``not a``, ``b if a else c`` (operands: cond, then, else)."""

    kind: OpKind
    operands: list


@dataclass(eq=False)
class TupleDoc(ExprDoc):
    elements: list


@dataclass(eq=False)
class ListDoc(ExprDoc):
    elements: list


@dataclass(eq=False)
class DictDoc(ExprDoc):
    keys: list
    values: list


@dataclass(eq=False)
class SliceDoc(Doc):
    """``start:stop:step`` inside an index."""

    start: ExprDoc | None
    stop: ExprDoc | None
    step: ExprDoc | None = None


@dataclass(eq=False)
class LambdaDoc(ExprDoc):
    args: list
    body: ExprDoc


# -- statements -------------------------------------------------------------------------
class StmtDoc(Doc):
    """A Python statement.

    ``source_nodes``: the IR nodes it was printed from (set by the docsifier), so that a
    printed line can be traced back to its statement (``script_with_line_map``).
    """

    source_nodes: tuple = ()


@dataclass(eq=False)
class StmtBlockDoc(Doc):
    """Several statements at the same indentation (not itself a statement)."""

    stmts: list


@dataclass(eq=False)
class AssignDoc(StmtDoc):
    """``lhs: annotation = rhs`` (rhs or annotation may be None; a TupleDoc lhs unpacks)."""

    lhs: ExprDoc
    rhs: ExprDoc | None = None
    annotation: ExprDoc | None = None


@dataclass(eq=False)
class ExprStmtDoc(StmtDoc):
    expr: ExprDoc


@dataclass(eq=False)
class AssertDoc(StmtDoc):
    test: ExprDoc
    msg: ExprDoc | None = None


@dataclass(eq=False)
class ReturnDoc(StmtDoc):
    value: ExprDoc


@dataclass(eq=False)
class IfDoc(StmtDoc):
    predicate: ExprDoc
    then_branch: list
    else_branch: list = field(default_factory=list)


@dataclass(eq=False)
class WhileDoc(StmtDoc):
    predicate: ExprDoc
    body: list


@dataclass(eq=False)
class ForDoc(StmtDoc):
    lhs: ExprDoc
    rhs: ExprDoc
    body: list


@dataclass(eq=False)
class ScopeDoc(StmtDoc):
    """``with rhs as lhs:`` (lhs may be None)."""

    lhs: ExprDoc | None
    rhs: ExprDoc
    body: list


@dataclass(eq=False)
class FunctionDoc(StmtDoc):
    name: IdDoc
    args: list  # of AssignDoc (lhs: annotation)
    decorators: list
    return_type: ExprDoc | None
    body: list


@dataclass(eq=False)
class ClassDoc(StmtDoc):
    name: IdDoc
    decorators: list
    body: list


@dataclass(eq=False)
class CommentDoc(StmtDoc):
    """``# comment`` (an empty comment prints as an empty line)."""

    comment: str
