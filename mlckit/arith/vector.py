"""Simplifying vector expressions (``T.Ramp``, ``T.Broadcast``, ``float32x4`` arithmetic), as
TVM's rewrite simplifier does: the lanes' scalars are simplified, and ramps and broadcasts
combine so that a vector index stays one ramp::

    T.Ramp(i * 4 + 0, 1, 4)                       ──►  T.Ramp(i * 4, 1, 4)
    T.Ramp(8, 1, 4) + T.Broadcast(4, 4)           ──►  T.Ramp(12, 1, 4)
    T.Ramp(0, 1, 4) + T.Ramp(0, 1, 4)             ──►  T.Ramp(0, 2, 4)
    T.Broadcast(x, 4) + T.Broadcast(1.0, 4)       ──►  T.Broadcast(x + 1.0, 4)

Example::

    Analyzer().simplify(Ramp(0, 1, 4) * Broadcast(2, 4))    # T.Ramp(0, 2, 4)

Scalable vectors (``T.Ramp(0, 1, T.vscale() * 4)``) combine by the same rules.
"""

from __future__ import annotations

from mlckit.tir import dtype as dt
from mlckit.tir import expr as E
from mlckit.tir.expr_vector import Broadcast, Ramp

__all__ = ["simplify_vector"]

_BINARY = (E.Add, E.Sub, E.Mul, E.Div, E.Mod, E.FloorDiv, E.FloorMod, E.Min, E.Max, E.EQ,
           E.NE, E.LT, E.LE, E.GT, E.GE, E.And, E.Or)


def simplify_vector(analyzer, expr):
    """``expr`` (a vector) simplified by ``analyzer``: its scalar parts, then the
    ramp / broadcast rules of the module docstring."""
    simplify = analyzer.simplify
    if isinstance(expr, Ramp):
        return Ramp(simplify(expr.base), simplify(expr.stride), expr.lanes)
    if isinstance(expr, Broadcast):
        return Broadcast(simplify(expr.value), expr.lanes)
    if isinstance(expr, _BINARY):
        a, b = simplify(expr.a), simplify(expr.b)
        combined = _combine(type(expr), a, b, simplify)
        if combined is not None:
            return combined
        return expr if a is expr.a and b is expr.b else type(expr)(a, b)
    if isinstance(expr, E.BufferLoad):
        indices = [simplify(i) for i in expr.indices]
        return expr.replace(indices=indices)
    return expr


def _same_lanes(a, b) -> bool:
    """Whether two vectors have one lane count (``T.vscale() * 4`` counts as -4: a lanes field
    that is an expression must not be compared with ``==``, which builds ``EQ``)."""
    return dt.lanes(a.dtype) == dt.lanes(b.dtype)


def _combine(cls, a, b, simplify):
    """One ramp or broadcast for ``cls(a, b)`` where the lanes line up; None otherwise."""
    if isinstance(a, Broadcast) and isinstance(b, Broadcast) and _same_lanes(a, b):
        return Broadcast(simplify(cls(a.value, b.value)), a.lanes)
    if cls in (E.Add, E.Sub):
        op = E.add if cls is E.Add else E.sub
        if isinstance(a, Ramp) and isinstance(b, Ramp) and _same_lanes(a, b):
            return Ramp(simplify(op(a.base, b.base)), simplify(op(a.stride, b.stride)), a.lanes)
        if isinstance(a, Ramp) and isinstance(b, Broadcast) and _same_lanes(a, b):
            return Ramp(simplify(op(a.base, b.value)), a.stride, a.lanes)
        if isinstance(a, Broadcast) and isinstance(b, Ramp) and _same_lanes(a, b):
            stride = b.stride if cls is E.Add else simplify(E.sub(0, b.stride))
            return Ramp(simplify(op(a.value, b.base)), stride, a.lanes)
    if cls is E.Mul:
        ramp, other = (a, b) if isinstance(a, Ramp) else (b, a)
        if isinstance(ramp, Ramp) and isinstance(other, Broadcast) and _same_lanes(ramp, other):
            return Ramp(simplify(E.mul(ramp.base, other.value)),
                        simplify(E.mul(ramp.stride, other.value)), ramp.lanes)
    return None
