"""The rewrite rules for what is not an integer sum: conditions, calls, casts, floats.

Integer index arithmetic goes through the Analyzer's linear forms; this module handles the
rest as TVM's ``RewriteSimplifier`` does, using what the enclosing constraint scopes say
(``arith.constraints``)::

    i < 3 and i < 5              ->  i < 3            (with apply_constraints_to_boolean_branches)
    i < 3 or 3 <= i              ->  True
    T.if_then_else(c, x, y)      ->  x                (inside ``if c``)
    T.ceil(T.log2(14.0))         ->  4.0
    T.shift_left(2, 3)           ->  16
    A[0] + (5.0 - 5.0)           ->  A[0]

``if_then_else`` and ``Select`` simplify each branch knowing the condition (or its negation),
and ``a and b`` / ``a or b`` are simplified knowing the other side when the
``apply_constraints_to_boolean_branches`` option is on.

Example::

    with ana.constraint_scope(i < 12):
        ana.simplify(T.if_then_else(i < 12, 1.0, 2.0))     # 1.0
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from mlckit.tir import dtype as dt
from mlckit.tir import expr as E

from . import constraints as C
from .linear import _key

if TYPE_CHECKING:
    from .analyzer import Analyzer

_ARITH = (E.Add, E.Sub, E.Mul, E.Div, E.Mod, E.FloorDiv, E.FloorMod, E.Min, E.Max)


def _bool(v: bool) -> E.IntImm:
    return E.IntImm("bool", bool(v))


def _is_const(e) -> bool:
    return isinstance(e, (E.IntImm, E.FloatImm))


def simplify_atoms(ana: Analyzer, expr):
    """``expr`` (an integer expression) with the calls, selects, casts and loads inside it
    simplified; its sums and products are left to the linear forms."""
    if isinstance(expr, _ARITH):
        a, b = simplify_atoms(ana, expr.a), simplify_atoms(ana, expr.b)
        return expr if a is expr.a and b is expr.b else type(expr)(a, b)
    if isinstance(expr, (E.Call, E.Select, E.Cast, E.BufferLoad, E.Let)):
        return simplify_other(ana, expr)
    return expr


def simplify_other(ana: Analyzer, expr):
    """``expr`` simplified, where it is not an integer sum (see the module docstring)."""
    if isinstance(expr, (E.And, E.Or)):
        return _and_or(ana, expr)
    if isinstance(expr, E.CmpExpr):
        return _compare(ana, expr)
    if isinstance(expr, E.Not):
        a = ana.simplify(expr.a)
        if isinstance(a, E.IntImm):
            return _bool(not a.value)
        out = C.negate(a)
        known = ana._literal(out)
        return _bool(known) if known is not None else out
    if isinstance(expr, E.Var):
        known = ana._literal(expr) if dt.is_bool(expr.dtype) else None
        return _bool(known) if known is not None else expr
    if isinstance(expr, E.Call):
        return _call(ana, expr)
    if isinstance(expr, E.Select):
        cond, t, f = _branches(ana, expr.condition, expr.true_value, expr.false_value)
        if isinstance(cond, E.IntImm):
            return t                              # the branch taken
        return _remake(expr, condition=cond, true_value=t, false_value=f)
    if isinstance(expr, E.Cast):
        return _cast(ana, expr)
    if isinstance(expr, E.BufferLoad):
        indices = [ana.simplify(i) for i in expr.indices]
        if all(a is b for a, b in zip(indices, expr.indices)):
            return expr
        return expr.replace(indices=indices)
    if isinstance(expr, _ARITH):
        return _float_arith(ana, expr)
    if isinstance(expr, E.Let):
        value, body = ana.simplify(expr.value), ana.simplify(expr.body)
        return _remake(expr, value=value, body=body)
    return expr


def _remake(node, **fields):
    changed = {k: v for k, v in fields.items() if v is not getattr(node, k)}
    return node.replace(**changed) if changed else node


# -- comparisons and boolean operators ---------------------------------------------------
def _compare(ana: Analyzer, expr):
    a, b = ana.simplify(expr.a), ana.simplify(expr.b)
    node = expr if a is expr.a and b is expr.b else type(expr)(a, b)
    if C._int_operands(node):
        return int_compare(ana, node)
    if _is_const(a) and _is_const(b):
        ops = {E.LT: lambda x, y: x < y, E.LE: lambda x, y: x <= y, E.GT: lambda x, y: x > y,
               E.GE: lambda x, y: x >= y, E.EQ: lambda x, y: x == y, E.NE: lambda x, y: x != y}
        return _bool(ops[type(node)](a.value, b.value))
    known = ana._literal(node)
    return _bool(known) if known is not None else node


def int_compare(ana: Analyzer, expr):
    """An integer comparison whose operands are simplified already."""
    a, b = expr.a, expr.b
    known = ana._literal(expr)
    if known is not None:
        return E.IntImm("bool", known)
    diff = ana._lin(a).copy().iadd(ana._lin(b), -1)
    lo, hi = ana._bound_lin(diff)
    if lo == -C.INF or hi == C.INF:
        slo, shi = ana._symbolic_bound(diff)
        lo, hi = max(lo, slo), min(hi, shi)
    nonzero = False
    facts = ana._known_facts()
    if facts:
        lo, hi, nonzero = C.bound_by_facts(ana, diff, facts, lo, hi)
    nonzero = nonzero or lo > 0 or hi < 0
    verdict = None
    if isinstance(expr, E.LT):
        verdict = True if hi < 0 else False if lo >= 0 else None
    elif isinstance(expr, E.LE):
        verdict = True if hi <= 0 else False if lo > 0 else None
    elif isinstance(expr, E.GT):
        verdict = True if lo > 0 else False if hi <= 0 else None
    elif isinstance(expr, E.GE):
        verdict = True if lo >= 0 else False if hi < 0 else None
    elif isinstance(expr, E.EQ):
        verdict = True if lo == hi == 0 else False if nonzero else None
    elif isinstance(expr, E.NE):
        verdict = False if lo == hi == 0 else True if nonzero else None
    if verdict is not None:
        return E.IntImm("bool", verdict)
    # what is known narrows the comparison (TVM's RewriteSimplifier: knowing a >= b,
    # a <= b is a == b; knowing a != b, it is a < b)
    if isinstance(expr, E.LE) and (lo >= 0 or nonzero):
        return int_compare(ana, E.EQ(a, b) if lo >= 0 else E.LT(a, b))
    if isinstance(expr, E.GE) and (hi <= 0 or nonzero):
        return int_compare(ana, E.EQ(b, a) if hi <= 0 else E.LT(b, a))
    if isinstance(expr, E.NE) and (lo >= 0 or hi <= 0):
        return int_compare(ana, E.LT(b, a) if lo >= 0 else E.LT(a, b))
    # as TVM's rewrite rules (x + c1 < c2 -> x < c2 - c1): the constant goes to the side
    # that is a constant (0 <= h - 1 -> 1 <= h)
    la, lb = ana._lin(a), ana._lin(b)
    if lb.is_const() and not la.is_const() and la.const != 0:
        k = la.const
        return type(expr)(ana._to_expr(la.copy().iadd(C._const(la, -k))),
                          E.IntImm(b.dtype, lb.const - k))
    if la.is_const() and not lb.is_const() and lb.const != 0:
        k = lb.const
        a = E.IntImm(a.dtype, la.const - k)
        b = ana._to_expr(lb.copy().iadd(C._const(lb, -k)))
        expr = type(expr)(a, b)
    if isinstance(expr, (E.EQ, E.NE)) and la.is_const() and not lb.is_const():
        return type(expr)(b, a)          # c == x -> x == c
    return expr


def _and_or(ana: Analyzer, expr):
    is_and = isinstance(expr, E.And)
    if ana.apply_constraints_to_boolean_branches:
        a, b = _with_other_side(ana, expr.a, expr.b, is_and)
    else:
        a, b = ana.simplify(expr.a), ana.simplify(expr.b)
    for x, y in ((a, b), (b, a)):
        if isinstance(x, E.IntImm):
            if bool(x.value) == is_and:       # True and y, False or y
                return y
            return _bool(not is_and)
    if _complementary(ana, a, b):            # x and not x, x or not x
        return _bool(not is_and)
    # only between two leaves (as TVM's local rules): on chains of and/or, asking each side
    # under the other would take time exponential in the depth
    if not isinstance(a, (E.And, E.Or)) and not isinstance(b, (E.And, E.Or)):
        combined = _implied(ana, a, b, is_and)
        if combined is not None:
            return combined
    out = E.And(a, b) if is_and else E.Or(a, b)
    if a is expr.a and b is expr.b:
        out = expr
    known = ana._literal(out)
    if known is not None:
        return _bool(known)
    if ana.convert_boolean_to_and_of_ors:
        from .and_of_ors import simplify_as_and_of_ors

        return simplify_as_and_of_ors(ana, out)
    return out


def _implied(ana: Analyzer, a, b, is_and: bool):
    """``a or b`` when ``not a`` implies ``b`` is True, ``a and b`` when ``a`` implies
    ``not b`` is False.  Where one side implies the other (``k == 20`` implies
    ``k != 30``) the pair is the weaker side (an ``or``) or the stronger (an ``and``): for
    two (in)equalities, as TVM's rules ``x == c1 or x != c2``, and for any conditions with
    ``apply_constraints_to_boolean_branches``."""
    with ana.constraint_scope(a if is_and else C.negate(a)):
        b_given = ana.simplify(b)
    if isinstance(b_given, E.IntImm) and bool(b_given.value) != is_and:
        return _bool(not is_and)
    both_equalities = all(isinstance(x, (E.EQ, E.NE)) for x in (a, b))
    if not (ana.apply_constraints_to_boolean_branches or both_equalities):
        return None
    if not is_and:                                       # a or b
        with ana.constraint_scope(a):
            if _is_true(ana.simplify(b)):
                return b
    elif _is_true(b_given):                              # a and b, a implies b
        return a
    with ana.constraint_scope(b):
        if _is_true(ana.simplify(a)):
            return a if not is_and else b
    return None


def _is_true(e) -> bool:
    return isinstance(e, E.IntImm) and bool(e.value)


def _with_other_side(ana: Analyzer, a, b, is_and: bool):
    """``a`` simplified knowing ``b`` (``not b`` for an ``or``), then ``b`` knowing the new
    ``a``, until neither changes (at most twice each, as TVM)."""
    a, b = ana.simplify(a), ana.simplify(b)
    quiet = 0
    for step in range(4):
        target, other = (a, b) if step % 2 == 0 else (b, a)
        with ana.constraint_scope(other if is_and else C.negate(other)):
            new = ana.simplify(target)
        if new is target or _same(new, target):
            quiet += 1
            if quiet >= 2:
                break
            continue
        quiet = 0
        if step % 2 == 0:
            a = new
        else:
            b = new
    return a, b


def _same(x, y) -> bool:
    return _key(x) == _key(y)


def _complementary(ana: Analyzer, a, b) -> bool:
    """``b`` is ``not a`` (as comparisons: ``i < 3`` and ``3 <= i``)."""
    fa = C.comparison_fact(ana, C.negate(a)) if isinstance(a, E.CmpExpr) else None
    fb = C.comparison_fact(ana, b) if isinstance(b, E.CmpExpr) else None
    if fa is not None and fb is not None:
        return fa.signature() == fb.signature()
    return _same(C.negate(a), b)


# -- calls, casts, floating point ---------------------------------------------------------
def _branches(ana: Analyzer, cond, t, f):
    cond = ana.simplify(cond)
    if isinstance(cond, E.IntImm):
        return cond, ana.simplify(t if cond.value else f), None
    with ana.constraint_scope(cond):
        t = ana.simplify(t)
    with ana.constraint_scope(C.negate(cond)):
        f = ana.simplify(f)
    return cond, t, f


def _call(ana: Analyzer, expr):
    name = getattr(expr.op, "name", "")
    if name == "tir.if_then_else":
        cond, t, f = _branches(ana, *expr.args)
        if isinstance(cond, E.IntImm):
            return t
        args = [cond, t, f]
    else:
        args = [ana.simplify(a) for a in expr.args]
    if all(a is b for a, b in zip(args, expr.args)):
        out = expr
    else:
        out = expr.replace(args=args)
    if name == "tir.likely":
        if isinstance(args[0], E.IntImm):
            return args[0]
        known = ana._literal(args[0])
        return _bool(known) if known is not None else out
    if name in ("tir.shift_left", "tir.shift_right") and all(
            isinstance(a, E.IntImm) for a in args) and 0 <= args[1].value < dt.bits(expr.dtype):
        x, s = args[0].value, args[1].value
        v = x << s if name == "tir.shift_left" else x >> s
        if dt.min_value(expr.dtype) <= v <= dt.max_value(expr.dtype):   # else target-defined
            return E.IntImm(expr.dtype, v)
    if name == "tir.ceil":
        x = args[0]
        if isinstance(x, E.FloatImm):
            return E.FloatImm(expr.dtype, float(math.ceil(x.value)))
        if isinstance(x, E.Call) and getattr(x.op, "name", "") == "tir.log2" \
                and isinstance(x.args[0], E.FloatImm) and x.args[0].value > 0:
            # ceil(log2(n)) (topi.math.ceil_log2) is exact whatever the target's rounding
            return E.FloatImm(expr.dtype, float(math.ceil(math.log2(x.args[0].value))))
    return out


def _cast(ana: Analyzer, expr):
    value = ana.simplify(expr.value)
    if value.dtype == expr.dtype:
        return value
    if isinstance(value, (E.IntImm, E.FloatImm)):
        if dt.is_float(expr.dtype):
            return E.FloatImm(expr.dtype, float(value.value))
        if dt.is_int(expr.dtype) and math.isfinite(value.value):
            v = int(value.value)                       # C's conversion: toward zero
            if dt.min_value(expr.dtype) <= v <= dt.max_value(expr.dtype):
                return E.IntImm(expr.dtype, v)
        if dt.is_bool(expr.dtype):
            return _bool(value.value != 0)
    return expr if value is expr.value else _remake(expr, value=value)


def _float_arith(ana: Analyzer, expr):
    """Floating point ``+ - * /``, min and max: constants fold, ``x + 0``, ``x * 1`` go."""
    a, b = ana.simplify(expr.a), ana.simplify(expr.b)
    if isinstance(a, E.FloatImm) and isinstance(b, E.FloatImm):
        x, y = a.value, b.value
        folded = {E.Add: lambda: x + y, E.Sub: lambda: x - y, E.Mul: lambda: x * y,
                  E.Min: lambda: min(x, y), E.Max: lambda: max(x, y),
                  E.Div: lambda: x / y if y != 0 else None}.get(type(expr))
        v = folded() if folded is not None else None
        if v is not None:
            return E.FloatImm(expr.dtype, v)
    if isinstance(b, E.FloatImm):
        if isinstance(expr, (E.Add, E.Sub)) and b.value == 0:
            return a
        if isinstance(expr, (E.Mul, E.Div)) and b.value == 1:
            return a
    if isinstance(a, E.FloatImm):
        if isinstance(expr, E.Add) and a.value == 0:
            return b
        if isinstance(expr, E.Mul) and a.value == 1:
            return b
    return expr if a is expr.a and b is expr.b else type(expr)(a, b)
