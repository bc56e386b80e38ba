"""Walking and rewriting the expressions of tensor computations.

A compute body is a PrimExpr tree that may hold ``ProducerLoad`` (``A[i, k]``) and
``Reduce`` (``te.sum(...)``) nodes.  These helpers see the sub-expressions of any PrimExpr
generically, from its fields, so they need no list of node classes::

    for e in post_order(body):          # children before parents
        ...
    new = rewrite(body, lambda e: ...)  # bottom-up; return a replacement or None
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from mlckit.tir import stmt_functor
from mlckit.tir.expr import PrimExpr
from mlckit.tir.stmt_functor import child_nodes, ir_transform


def children(e: PrimExpr) -> Iterator[PrimExpr]:
    """The direct sub-expressions of ``e``, in field order (``tir.stmt_functor``'s rule)."""
    return (c for c in child_nodes(e) if isinstance(c, PrimExpr))


def post_order(e: PrimExpr, enter: Callable[[PrimExpr], bool] | None = None) -> Iterator[PrimExpr]:
    """Every sub-expression of ``e`` (``e`` included), children before their parent.

    ``enter(node)`` returning False skips the children of ``node`` (it is still yielded)."""
    if enter is None or enter(e):
        for c in children(e):
            yield from post_order(c, enter)
    yield e


def rewrite(e: PrimExpr, fn: Callable[[PrimExpr], PrimExpr | None]) -> PrimExpr:
    """``e`` rebuilt bottom-up: each node, with its children already rewritten, is passed
    to ``fn``, which returns its replacement or None to keep it.  Unchanged parts are shared."""
    if not isinstance(e, PrimExpr):
        return e
    return ir_transform(e, None, lambda x: fn(x) if isinstance(x, PrimExpr) else None)


def substitute(e: PrimExpr, vmap: dict) -> PrimExpr:
    """``e`` with the Vars keyed in ``vmap`` (by object) replaced by their values."""
    return stmt_functor.substitute(e, vmap)
