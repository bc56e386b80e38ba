"""The simplification ``te.create_prim_func`` applies to compute bodies and loop bounds.

TVM runs its arithmetic simplifier (with no variable bounds) over each stored value; the
visible effects are on integer index arithmetic and on integer comparisons, which it puts in
a canonical form: ``>=`` and ``>`` become ``<=`` and ``<`` with the sides swapped, and
constants move to one side (``yy - 1 < 14`` is ``yy < 15``; ``yy >= 1`` is ``1 <= yy``).
Integer arithmetic goes through ``mlckit.arith``'s canonical linear form.  Floating-point
values are left as they are (their constants were already folded when built).
"""

from __future__ import annotations

from mlckit.arith import Analyzer
from mlckit.tir import dtype as dt
from mlckit.tir import expr as E
from mlckit.tir.expr import IntImm, PrimExpr

from .expr_util import rewrite

_INT_ARITH = (E.Add, E.Sub, E.Mul, E.FloorDiv, E.FloorMod, E.Min, E.Max)
_COMPARE = (E.LT, E.LE, E.GT, E.GE, E.EQ, E.NE)


def simplify(e: PrimExpr) -> PrimExpr:
    """``e`` with its integer arithmetic and comparisons in canonical form."""
    analyzer = Analyzer()

    def visit(node):
        if isinstance(node, _COMPARE):
            return _compare(node, analyzer)
        if isinstance(node, _INT_ARITH) and dt.is_int(node.dtype):
            return analyzer.simplify(node)
        return None

    return rewrite(e, visit)


def _compare(node, analyzer: Analyzer):
    a, b = node.a, node.b
    if not (dt.is_int(a.dtype) and dt.is_int(b.dtype)):
        return None
    cls = type(node)
    if cls is E.GE:
        cls, a, b = E.LE, b, a
    elif cls is E.GT:
        cls, a, b = E.LT, b, a
    a_rest, a_const = _split_offset(a)
    b_rest, b_const = _split_offset(b)
    if b_rest is None and a_rest is not None:
        a, b = a_rest, IntImm(b.dtype, b_const - a_const)
    elif a_rest is None and b_rest is not None:
        a, b = IntImm(a.dtype, a_const - b_const), b_rest
    decided = analyzer.simplify(cls(a, b))
    return decided if isinstance(decided, IntImm) else cls(a, b)


def _split_offset(e) -> tuple[PrimExpr | None, int]:
    """``(x, c)`` with ``e == x + c`` for a constant ``c``; ``x`` is None for a constant."""
    if isinstance(e, IntImm):
        return None, int(e.value)
    if isinstance(e, (E.Add, E.Sub)) and isinstance(e.b, IntImm):
        return e.a, int(e.b.value) if isinstance(e, E.Add) else -int(e.b.value)
    return e, 0
