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

from mlckit.tir.expr import PrimExpr

# Fields that hold no sub-expression of the expression itself: an intrinsic's Op, the
# Buffer of a load, and the combiner of a reduction (its variables are its own).
_OPAQUE_FIELDS = frozenset({"op", "buffer", "combiner"})


def child_fields(e: PrimExpr) -> Iterator[str]:
    """The names of the fields of ``e`` holding a PrimExpr or a list of them."""
    for name in e.field_names():
        if name in _OPAQUE_FIELDS:
            continue
        value = getattr(e, name)
        if isinstance(value, PrimExpr) or (
            isinstance(value, list) and any(isinstance(x, PrimExpr) for x in value)
        ):
            yield name


def children(e: PrimExpr) -> Iterator[PrimExpr]:
    """The direct sub-expressions of ``e``, in field order."""
    for name in child_fields(e):
        value = getattr(e, name)
        if isinstance(value, PrimExpr):
            yield value
        else:
            yield from (x for x in value if isinstance(x, PrimExpr))


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
    changes = {}
    for name in child_fields(e):
        value = getattr(e, name)
        if isinstance(value, PrimExpr):
            new = rewrite(value, fn)
        else:
            new = [rewrite(x, fn) for x in value]
            if all(a is b for a, b in zip(new, value)):
                new = value
        if new is not value:
            changes[name] = new
    node = e.replace(**changes) if changes else e
    replaced = fn(node)
    return node if replaced is None else replaced


def substitute(e: PrimExpr, vmap: dict) -> PrimExpr:
    """``e`` with the Vars keyed in ``vmap`` (by object) replaced by their values."""
    if not vmap:
        return e
    table = {id(k): v for k, v in vmap.items()}
    return rewrite(e, lambda x: table.get(id(x)) if getattr(x, "_is_var", False) else None)
