"""Visitor and mutator classes over TIR (names as in ``tvm.tir.functor``).

``PyStmtExprVisitor`` / ``PyStmtExprMutator`` dispatch each statement and expression to a
method named after its class: ``visit_for_``, ``visit_buffer_store_``, ``visit_add_``,
``visit_block_`` (TVM 0.27: ``visit_sblock_``, both work).  The default of every such method
visits the node's children by the generic rule of ``mlckit.tir.stmt_functor`` (through
``visit_stmt`` / ``visit_expr``; the mutator rebuilds only what changed), so a subclass
overrides only the methods it needs and calls ``super()`` to go on into the children.
``@visitor`` / ``@mutator`` are accepted and change nothing (TVM needs them to register
the class with its C++ side).

Example::

    @tir.functor.visitor
    class CountStores(tir.functor.PyStmtExprVisitor):
        def __init__(self):
            self.n = 0
        def visit_buffer_store_(self, op):
            self.n += 1
            super().visit_buffer_store_(op)

    v = CountStores(); v.visit_stmt(func.body); v.n
"""

from __future__ import annotations

import re

from mlckit.ir.node import Node

from . import expr as E
from . import stmt as S
from .traversal import _fields_of, _is_leaf, child_nodes

__all__ = ["PyStmtExprMutator", "PyStmtExprVisitor", "mutator", "visitor"]


def visitor(cls):
    """Class decorator kept for TVM's spelling (``@tvm.tir.functor.visitor``)."""
    return cls


mutator = visitor


def _snake(name: str) -> str:
    # BlockRealize -> block_realize, FloorDiv -> floor_div, EQ -> eq, IntImm -> int_imm
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()


_NODE_CLASSES = [
    S.AttrStmt, S.IfThenElse, S.LetStmt, S.For, S.While, S.Allocate, S.DeclBuffer,
    S.BufferStore, S.AssertStmt, S.SeqStmt, S.Evaluate, S.Block, S.BlockRealize,
    E.Var, E.SizeVar, E.BufferLoad, E.Let, E.Call, E.Add, E.Sub, E.Mul, E.Div, E.Mod,
    E.FloorDiv, E.FloorMod, E.Min, E.Max, E.EQ, E.NE, E.LT, E.LE, E.GT, E.GE, E.And, E.Or,
    E.Cast, E.Not, E.Select, E.IntImm, E.FloatImm, E.StringImm,
]
# TVM 0.27's names of the same methods
_ALIASES = {"visit_block_": "visit_sblock_", "visit_block_realize_": "visit_sblock_realize_"}


def _method_names(cls: type) -> list[str]:
    """The methods a node of ``cls`` may go to, most specific first (a SizeVar falls back
    to ``visit_size_var_``, then ``visit_var_``)."""
    names = []
    for c in cls.__mro__:
        if c in (Node, E.PrimExpr, S.Stmt, E.ExprOp, object):
            break
        name = f"visit_{_snake(c.__name__)}_"
        names.append(name)
        if name in _ALIASES:
            names.append(_ALIASES[name])
    return names


class _Dispatch:
    _table: dict

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls._table = {}

    def _method(self, node):
        cls = type(node)
        name = self._table.get(cls)
        if name is None:
            # the first candidate the subclass overrides, else the first one defined
            own = type(self)
            names = [n for n in _method_names(cls) if hasattr(own, n)]
            name = next((n for n in names if getattr(own, n) is not getattr(self._base, n)),
                        names[0] if names else "_generic")
            own._table[cls] = name
        return getattr(self, name)


class PyStmtExprVisitor(_Dispatch):
    """Walks statements and expressions; override ``visit_<node>_`` methods (module doc).

    >>> from mlckit import tir
    >>> x = tir.Var("x", "int32")
    >>> class Vars(PyStmtExprVisitor):
    ...     def __init__(self):
    ...         self.seen = []
    ...     def visit_var_(self, op):
    ...         self.seen.append(op.name)
    >>> v = Vars(); v.visit_expr(x * x + 1); v.seen
    ['x', 'x']
    """

    def visit_stmt(self, stmt) -> None:
        self._method(stmt)(stmt)

    def visit_expr(self, expr) -> None:
        self._method(expr)(expr)

    def _generic(self, node) -> None:
        for child in child_nodes(node):
            if isinstance(child, S.Stmt):
                self.visit_stmt(child)
            elif isinstance(child, E.PrimExpr):
                self.visit_expr(child)
            else:  # a Range, IterVar, BufferRegion...: look inside
                self._generic(child)


class PyStmtExprMutator(_Dispatch):
    """Rebuilds statements and expressions bottom-up; override ``visit_<node>_`` methods
    to return replacements (module doc).  Parts that do not change stay the same objects.

    >>> from mlckit import tir
    >>> x = tir.Var("x", "int32")
    >>> class MulToAdd(PyStmtExprMutator):
    ...     def visit_mul_(self, op):
    ...         op = super().visit_mul_(op)
    ...         return tir.Add(op.a, op.b)
    >>> MulToAdd().visit_expr(x * 2 + 1)
    x + 2 + 1
    """

    def visit_stmt(self, stmt):
        return self._method(stmt)(stmt)

    def visit_expr(self, expr):
        return self._method(expr)(expr)

    def _generic(self, node):
        if _is_leaf(node):
            return node
        changes = {}
        for name, is_def in _fields_of(type(node)):
            old = getattr(node, name)
            new = self._field(old, is_def)
            if new is not old:
                changes[name] = new
        if not changes:
            return node
        if isinstance(node, S.SeqStmt):
            return S.stmt_seq(*changes["seq"])
        return node.replace(**changes)

    def _field(self, value, is_def: bool):
        if isinstance(value, (list, tuple)):
            new = [self._field(v, is_def) for v in value]
            if all(a is b for a, b in zip(new, value)):
                return value
            return type(value)(new)
        if not isinstance(value, Node) or (is_def and isinstance(value, E.Var)):
            return value
        if isinstance(value, S.Stmt):
            return self.visit_stmt(value)
        if isinstance(value, E.PrimExpr):
            return self.visit_expr(value)
        return self._generic(value)  # a Range, IterVar, BufferRegion...


# every visit_<node>_ (and its TVM 0.27 alias) defaults to the generic walk
for _cls in _NODE_CLASSES:
    for _name in _method_names(_cls)[:2 if _cls in (S.Block, S.BlockRealize) else 1]:
        for _base in (PyStmtExprVisitor, PyStmtExprMutator):
            setattr(_base, _name, _base._generic)
PyStmtExprVisitor._base = PyStmtExprVisitor
PyStmtExprMutator._base = PyStmtExprMutator
