"""Whole-function TIR walks and rewrites (names as in ``tvm.tir.stmt_functor``).

The walks (``post_order_visit``, ``pre_order_visit``, ``ir_transform``, ``substitute``,
``uses_var``) are the generic ones of ``mlckit.tir.traversal``, re-exported here under TVM's
names; this module also registers TIR's statement classes with them.

``renew_defs(func)``: a copy of a PrimFunc in which every variable, buffer and block is a new
object (names kept).  Inlining one PrimFunc's body into another twice (``FuseTIR`` with a
kernel called twice) needs it: each copy must define its own loop variables and buffers.

Example::

    post_order_visit(func.body, lambda n: print(type(n).__name__))
    copy = renew_defs(func)
    assert_structural_equal(copy, func)
    assert copy.params[0] is not func.params[0]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mlckit.ir.node import Node

from .buffer import Buffer
from .function import PrimFunc
from .stmt import Block, SeqStmt, Stmt, stmt_seq
from .traversal import (
    child_nodes,
    ir_transform,
    post_order_visit,
    pre_order_visit,
    register_statements,
    stmt_uses_var,
    substitute,
    uses_var,
)

__all__ = ["child_nodes", "ir_transform", "node_rewriter", "post_order_visit",
           "pre_order_visit", "renew_defs", "stmt_uses_var", "substitute", "uses_var"]

register_statements(Stmt, SeqStmt, stmt_seq, (Buffer,))


# -- whole functions --------------------------------------------------------------------------
def node_rewriter(rewrite: Callable[[Node], Any] | None = None,
                  copy: Callable[[Node], bool] | None = None) -> Callable[[Any], Any]:
    """A function that rebuilds IR (nodes, lists, tuples, dicts) bottom-up, each node once.

    ``rewrite(node)`` gives a node's replacement, or None to rebuild it from its rewritten
    fields — a new node only where a field changed, or where ``copy(node)`` says so.  Op and
    GlobalVar (global names) are kept.  One returned function shares its memo across calls,
    so a variable used in several places becomes one new variable.

    Example::

        visit = node_rewriter(lambda x: FloatImm("float32", x.value)
                              if isinstance(x, FloatImm) else None)
        body = visit(func.body)
    """
    memo: dict[int, Any] = {}
    keep: list = []  # the originals stay alive, so their ids are not reused meanwhile

    def visit(x):
        if isinstance(x, Node):
            hit = memo.get(id(x))
            if hit is not None:
                return hit
            if hasattr(x, "_structural_key"):  # Op, GlobalVar: global names, not definitions
                return x
            new = rewrite(x) if rewrite is not None else None
            if new is None:
                changes = {}
                for name in type(x).field_names():
                    old = getattr(x, name)
                    got = visit(old)
                    if got is not old:
                        changes[name] = got
                new = x.replace(**changes) if changes or (copy and copy(x)) else x
            memo[id(x)] = new
            keep.append(x)
            return new
        if isinstance(x, list):
            new = [visit(y) for y in x]
            return x if all(a is b for a, b in zip(new, x)) else new
        if isinstance(x, tuple):
            new = tuple(visit(y) for y in x)
            return x if all(a is b for a, b in zip(new, x)) else new
        if isinstance(x, dict):
            items = [(visit(k), visit(v)) for k, v in x.items()]
            if all(a is k and b is v for (a, b), (k, v) in zip(items, x.items())):
                return x
            return dict(items)
        return x

    return visit


def renew_defs(func: PrimFunc) -> PrimFunc:
    """``func`` with fresh variables, buffers and blocks (see the module doc).

    Example::

        copy = renew_defs(mod["dense"])
    """
    return node_rewriter(copy=lambda x: getattr(x, "_is_var", False) or isinstance(x, Block))(
        func)
