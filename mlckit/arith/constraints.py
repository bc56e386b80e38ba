"""Known facts: what the conditions of enclosing ``if``s, ``T.assume`` and loops say.

TVM's Analyzer learns constraints through ``ConstraintContext`` (in Python
``with analyzer.constraint_scope(cond):``); each of its sub-analyzers takes what it can
(the const-int bound of ``i`` from ``i < 3``, the literal ``cond`` for the rewrite rules, the
inequalities between two expressions for the transitive comparisons).  Here one
representation serves all of them: every integer comparison is kept as a linear form
``f`` with ``f >= 0``, ``f == 0`` or ``f != 0``, and anything else (a boolean Var, an ``or``)
as a literal known to be true or false::

    i < 3          ->  2 - i >= 0
    i == n         ->  i - n == 0
    not (i < j)    ->  i - j >= 0
    a or b         ->  literal (a or b) is True

A question about ``q`` (the difference of the two sides of a comparison) is answered by
writing ``q = k * f + r`` for a known ``f`` and bounding the rest ``r``: from ``i - n == 0``,
``i - n - 1 = 1 * (i - n) - 1`` is exactly -1, so ``i < n + 1`` holds.  With
``transitively_prove_inequalities`` (``tir.Simplify``'s option, TVM's
``kTransitivelyProveInequalities``) sums of two known inequalities are known as well:
``i < j`` and ``j < k`` give ``k - i - 2 >= 0``, so ``i < k``.

Facts that read memory (a BufferLoad, an impure call) are not kept: the buffer may change
while the condition's scope lasts (TVM keeps only pure constraints, too).

Example::

    with ana.constraint_scope(i < 3):
        ana.simplify(i < 5)            # True
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import TYPE_CHECKING

from mlckit.tir import dtype as dt
from mlckit.tir import expr as E
from mlckit.tir import traversal

from .linear import _key, _Lin

if TYPE_CHECKING:
    from .analyzer import Analyzer

INF = math.inf

GE, EQ, NE = "ge", "eq", "ne"


class Fact:
    """``lin >= 0`` (kind ``ge``), ``lin == 0`` (``eq``) or ``lin != 0`` (``ne``)."""

    __slots__ = ("kind", "lin")

    def __init__(self, kind: str, lin: _Lin):
        self.kind, self.lin = kind, lin

    def signature(self) -> tuple:
        terms = tuple(sorted((k, c) for k, (_a, c) in self.lin.terms.items()))
        return self.kind, terms, self.lin.const


def is_pure(e) -> bool:
    """True when ``e`` reads no memory and calls nothing with side effects."""
    found = []

    def visit(x):
        if isinstance(x, E.BufferLoad) or (isinstance(x, E.Call) and getattr(
                x.op, "name", "") not in _PURE_CALLS):
            found.append(x)

    traversal.post_order_visit(e, visit)
    return not found


_PURE_CALLS = {"tir.likely", "tir.shift_left", "tir.shift_right", "tir.if_then_else",
               "tir.ceil", "tir.floor", "tir.log2", "tir.exp", "tir.log", "tir.sqrt",
               "tir.round", "tir.trunc", "tir.fabs", "tir.abs", "tir.clz", "tir.pow",
               "tir.bitwise_and", "tir.bitwise_or", "tir.bitwise_xor", "tir.bitwise_not"}


def negate(e):
    """``not e`` with the ``not`` pushed inwards (``not (a and b)`` is ``not a or not b``,
    ``not (i < j)`` is ``i >= j``)."""
    if isinstance(e, E.IntImm):
        return E.IntImm("bool", not e.value)
    if isinstance(e, E.Not):
        return e.a
    if isinstance(e, E.And):
        return E.Or(negate(e.a), negate(e.b))
    if isinstance(e, E.Or):
        return E.And(negate(e.a), negate(e.b))
    flipped = {E.LT: E.GE, E.LE: E.GT, E.GT: E.LE, E.GE: E.LT, E.EQ: E.NE, E.NE: E.EQ}
    if type(e) in flipped and _int_operands(e):
        return flipped[type(e)](e.a, e.b)
    return E.Not(e)


def _int_operands(cmp) -> bool:
    return dt.is_int(cmp.a.dtype) and dt.is_int(cmp.b.dtype) and dt.lanes(cmp.a.dtype) == 1


def split_and(e) -> list:
    """The conjuncts of ``e`` (``not (a or b)`` counts as ``not a and not b``)."""
    if isinstance(e, E.And):
        return split_and(e.a) + split_and(e.b)
    if isinstance(e, E.Not) and isinstance(e.a, (E.Or, E.Not)):
        return split_and(negate(e.a))
    return [e]


def comparison_fact(ana: Analyzer, cmp) -> Fact | None:
    """The fact an integer comparison states, or None for anything else."""
    if not isinstance(cmp, E.CmpExpr) or not _int_operands(cmp):
        return None
    d = ana._lin(cmp.a).copy().iadd(ana._lin(cmp.b), -1)   # a - b
    if isinstance(cmp, E.LT):           # b - a - 1 >= 0
        return Fact(GE, d.scaled(-1).iadd(_const(d, -1)))
    if isinstance(cmp, E.LE):
        return Fact(GE, d.scaled(-1))
    if isinstance(cmp, E.GT):
        return Fact(GE, d.iadd(_const(d, -1)))
    if isinstance(cmp, E.GE):
        return Fact(GE, d)
    if isinstance(cmp, E.EQ):
        return Fact(EQ, d)
    return Fact(NE, d)


def literal_key(ana: Analyzer, e):
    """A key equal for equal conditions however written (``j >= 6`` and ``6 <= j``)."""
    if isinstance(e, (E.And, E.Or)):
        return type(e).__name__, literal_key(ana, e.a), literal_key(ana, e.b)
    if isinstance(e, E.Not):
        return "not", literal_key(ana, e.a)
    fact = comparison_fact(ana, e)
    if fact is None:
        return _key(e)
    kind, terms, const = fact.signature()
    if kind != GE and terms and terms[0][1] < 0:       # i - n == 0 is n - i == 0
        terms, const = tuple((k, -c) for k, c in terms), -const
    return kind, terms, const


def _const(lin: _Lin, c: int) -> _Lin:
    out = lin.copy()
    out.terms, out.const = {}, c
    return out


def _ratio(q: _Lin, f: _Lin) -> Fraction | None:
    """``k`` with ``q - k * f`` free of one atom the two share, or None."""
    for key, (_atom, cf) in f.terms.items():
        hit = q.terms.get(key)
        if hit is not None:
            return Fraction(hit[1], cf)
    return None


def _rest(q: _Lin, f: _Lin, k: Fraction):
    """``q - k * f`` as (its terms, its constant as a Fraction), or None when ``k * f``
    leaves a fractional coefficient."""
    rest = q.copy()
    for atom, cf in f.terms.values():
        c = Fraction(cf) * k
        if c.denominator != 1:
            return None
        rest.add_term(atom, -int(c))
    rest.const = 0
    return rest, Fraction(q.const) - k * f.const


def bound_by_facts(ana: Analyzer, q: _Lin, facts: list, lo, hi):
    """Tighten ``lo <= q <= hi`` with ``facts``; also say whether ``q != 0`` is known."""
    nonzero = False
    for fact in facts:
        k = _ratio(q, fact.lin)
        if k is None:
            continue
        res = _rest(q, fact.lin, k)
        if res is None:
            continue
        rest, const = res                      # q = k * f + rest + const
        rlo, rhi = ana._bound_lin(rest) if rest.terms else (0, 0)
        rlo, rhi = rlo + const, rhi + const
        if fact.kind == GE:
            if k > 0 and rlo != -INF:
                lo = max(lo, math.ceil(rlo))
            elif k < 0 and rhi != INF:
                hi = min(hi, math.floor(rhi))
        elif fact.kind == EQ:
            if rlo != -INF:
                lo = max(lo, math.ceil(rlo))
            if rhi != INF:
                hi = min(hi, math.floor(rhi))
        elif rlo == rhi == 0:                   # q = k * f with f != 0
            nonzero = True
    return lo, hi, nonzero


def propagate_disjunctions(ana: Analyzer) -> None:
    """A known ``a or b`` whose ``a`` is now known false makes ``b`` known (not while
    already propagating: the scopes the simplification enters would start it again)."""
    if ana._propagating:
        return
    ana._propagating = True
    try:
        _propagate_disjunctions_once(ana)
    finally:
        ana._propagating = False


def _propagate_disjunctions_once(ana: Analyzer) -> None:
    progress = True
    while progress and ana._disjunctions:
        progress = False
        for n, (a, b) in enumerate(ana._disjunctions):
            for x, y in ((a, b), (b, a)):
                sx = ana.simplify(x)
                if isinstance(sx, E.IntImm) and not sx.value:
                    del ana._disjunctions[n]
                    learn(ana, ana.simplify(y))
                    progress = True
                    break
            if progress:
                break


def learn(ana: Analyzer, constraint) -> None:
    """Record what ``constraint`` (simplified) says in ``ana``'s current scope."""
    ana._closure = None
    for part in split_and(constraint):
        if isinstance(part, E.IntImm) or not is_pure(part):
            continue
        fact = comparison_fact(ana, part)
        if isinstance(part, E.Or):
            ana._disjunctions.append((part.a, part.b))
        if fact is None:
            ana._literals[literal_key(ana, part)] = True
            ana._literals[literal_key(ana, negate(part))] = False
            continue
        ana._facts.append(fact)
        _learn_var_bound(ana, fact)


def _learn_var_bound(ana: Analyzer, fact) -> None:
    """A fact about one variable (``3 * i - 2 >= 0``) bounds it (``i >= 1``), as TVM's
    ConstIntBound learns ``i < 3`` inside ``if i < 3``."""
    if len(fact.lin.terms) != 1 or fact.kind == NE:
        return
    ((atom, coef),) = fact.lin.terms.values()
    if not isinstance(atom, E.Var):
        return
    lo, hi = ana._var_bounds.get(id(atom), (-INF, INF))
    bound = Fraction(-fact.lin.const, coef)          # coef * v + const >= 0
    if coef > 0 or fact.kind == EQ:
        lo = max(lo, math.ceil(bound))
    if coef < 0 or fact.kind == EQ:
        hi = min(hi, math.floor(bound))
    ana._var_bounds[id(atom)] = (lo, hi)


def transitive_closure(facts: list) -> list:
    """``facts`` with the sums of two inequalities (an equality counts as two) that cancel
    an atom, and the inequations rewritten through an equality."""
    ges = []
    for f in facts:
        if f.kind == GE:
            ges.append(f.lin)
        elif f.kind == EQ:
            ges.extend([f.lin, f.lin.scaled(-1)])
    out = list(facts)
    seen = {f.signature() for f in facts}

    def add(kind, lin):
        fact = Fact(kind, lin)
        sig = fact.signature()
        if lin.terms and sig not in seen:
            seen.add(sig)
            out.append(fact)

    for n, f1 in enumerate(ges):
        for f2 in ges[n + 1:]:
            for key, (_a, c1) in f1.terms.items():
                hit = f2.terms.get(key)
                if hit is None or (hit[1] > 0) == (c1 > 0):
                    continue
                c2 = hit[1]
                g = math.gcd(abs(c1), abs(c2))
                add(GE, f1.scaled(abs(c2) // g).iadd(f2, abs(c1) // g))
    eqs = [f.lin for f in facts if f.kind == EQ]
    for f in facts:
        if f.kind != NE:
            continue
        for e in eqs:
            for key, (_a, c1) in f.lin.terms.items():
                hit = e.terms.get(key)
                if hit is None or c1 % hit[1]:
                    continue
                add(NE, f.lin.copy().iadd(e, -(c1 // hit[1])))
    return out
