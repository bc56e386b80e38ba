"""A small integer analyzer for index expressions (the part of TVM's ``arith`` schedules need).

- ``simplify`` puts affine index expressions in a canonical form: a sum of terms ordered
  from the largest coefficient down, then the constant (``i_0 * 32 + i_1``); it folds
  ``(i_0 * 32 + i_1) // 32`` to ``i_0`` and ``% 32`` to ``i_1`` when the bounds of ``i_1``
  allow, and merges ``f // 32 * 32 + f % 32`` back into ``f``.
- ``const_int_bound`` gives the constant interval an expression stays in while the bound
  variables range over their domains.
- ``int_set`` gives the symbolic interval ``[min, max]`` an expression covers when some
  variables are relaxed over their ranges (used to compute the regions a loop body touches).

Variables are bound with ``bind(var, Range)``; unbound variables are unknown (``SizeVar``
is non-negative).  Inside ``with ana.constraint_scope(cond):`` what ``cond`` says is known
too (``arith.constraints``); conditions, calls, casts and floating point follow the rewrite
rules of ``arith.rewrite``.

Example::

    ana = Analyzer()
    ana.bind(i1, Range(0, 4))
    ana.simplify((i0 * 4 + i1) % 4)     # i1
"""

from __future__ import annotations

import math
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from mlckit.tir import dtype as dt
from mlckit.tir import expr as E
from mlckit.tir import traversal
from mlckit.tir.expr import IntImm, PrimExpr, Range, Var

from . import constraints as C
from . import rewrite
from .linear import _key, _Lin
from .vector import simplify_vector

INF = math.inf


@dataclass(frozen=True)
class ConstIntBound:
    """``min_value <= expr <= max_value`` (``±math.inf`` when unbounded).

    >>> from mlckit import arith, tir
    >>> x = tir.Var("x", "int32")
    >>> ana = arith.Analyzer()
    >>> ana.bind(x, tir.Range(0, 8))
    >>> bound = ana.const_int_bound(x * 2 + 1)
    >>> bound, bound.is_const
    (ConstIntBound(min_value=1, max_value=15), False)
    """

    min_value: float
    max_value: float

    @property
    def is_const(self) -> bool:
        return self.min_value == self.max_value and self.min_value not in (INF, -INF)


@dataclass
class IntSet:
    """The symbolic interval ``[min_value, max_value]`` (both inclusive).

    >>> from mlckit import arith, tir
    >>> x = tir.Var("x", "int32")
    >>> ana = arith.Analyzer()
    >>> s = ana.int_set(x * 2, {x: tir.Range(0, 8)})
    >>> s, s.extent(ana)
    (IntSet(min_value=0, max_value=14), 15)
    """

    min_value: PrimExpr
    max_value: PrimExpr

    def extent(self, ana: Analyzer) -> PrimExpr:
        return ana.simplify(self.max_value - self.min_value + 1)


# -- substitution -----------------------------------------------------------------------------
def substitute(obj: Any, vmap: dict) -> Any:
    """``obj`` (a PrimExpr, Range or list of them) with the Vars in ``vmap`` replaced.

    ``vmap`` maps Var objects (or their ``id``) to expressions (``tir.traversal``).

    >>> from mlckit import arith, tir
    >>> x, y = tir.Var("x", "int32"), tir.Var("y", "int32")
    >>> arith.substitute(x + 1, {x: y * 2})
    y * 2 + 1
    """
    return traversal.substitute(obj, vmap)


def uses_var(obj: Any, pred) -> bool:
    """True when a Var for which ``pred(var)`` holds occurs in ``obj`` (``tir.traversal``)."""
    return traversal.uses_var(obj, pred)


class Analyzer:
    """Bind variable ranges, then simplify and bound integer expressions.

    >>> from mlckit import arith, tir
    >>> x = tir.Var("x", "int32")
    >>> ana = arith.Analyzer()
    >>> ana.bind(x, tir.Range(0, 8))
    >>> ana.simplify(x * 2 + x - x), ana.can_prove(x < 8), ana.can_prove(x < 7)
    (x * 2, True, False)
    """

    def __init__(self, unit_ranges_as_constants: bool = False):
        self.dom: dict[int, tuple[Var, Range]] = {}
        # TVM's Analyzer::Bind makes a variable bound to a unit range its minimum (``n`` of
        # ``for n in range(1)`` simplifies to 0); opt-in here, for the primitives that are
        # compared with TVM's output (compute_at)
        self.unit_ranges_as_constants = unit_ranges_as_constants
        self.const_vars: dict[int, int] = {}
        self.values: dict[int, PrimExpr] = {}
        # what the enclosing constraint scopes say (``arith.constraints``)
        self._facts: list = []
        self._literals: dict = {}
        self._var_bounds: dict[int, tuple] = {}
        self._closure: list | None = None
        self._disjunctions: list = []
        self._propagating = False
        # TVM's RewriteSimplifier extensions (``tir.Simplify``'s options)
        self.transitively_prove_inequalities = False
        self.apply_constraints_to_boolean_branches = False
        self.convert_boolean_to_and_of_ors = False

    # -- constraints ----------------------------------------------------------------------
    @contextmanager
    def constraint_scope(self, constraint):
        """Within the ``with`` block, ``constraint`` is known to hold (TVM's
        ``ConstraintContext``): ``with ana.constraint_scope(i < 3): ana.simplify(i < 5)``
        gives True.  Parts that read memory are not used (the memory may change)."""
        saved = (self._facts, self._literals, self._var_bounds, self._closure,
                 self._disjunctions)
        self._facts, self._literals = list(self._facts), dict(self._literals)
        self._var_bounds, self._disjunctions = dict(self._var_bounds), list(self._disjunctions)
        try:
            C.learn(self, self.simplify(E.convert(constraint)))
            C.propagate_disjunctions(self)
            yield
        finally:
            (self._facts, self._literals, self._var_bounds, self._closure,
             self._disjunctions) = saved

    def _known_facts(self) -> list:
        if not self.transitively_prove_inequalities:
            return self._facts
        if self._closure is None:
            self._closure = C.transitive_closure(self._facts)
        return self._closure

    def _literal(self, expr):
        """True/False when the scopes state ``expr`` or its negation literally, else None."""
        if not self._literals:
            return None
        return self._literals.get(C.literal_key(self, expr))

    # -- binding --------------------------------------------------------------------------
    def bind(self, var: Var, rng, allow_override: bool = True) -> None:
        if not isinstance(rng, Range):
            rng = Range(E.convert(0, var.dtype), rng)
        self.dom[id(var)] = (var, rng)
        if self.unit_ranges_as_constants and isinstance(rng.extent, IntImm) \
                and rng.extent.value == 1 and isinstance(rng.min, IntImm):
            self.const_vars[id(var)] = int(rng.min.value)
        else:
            self.const_vars.pop(id(var), None)

    def bind_value(self, var: Var, value) -> None:
        """``var`` stands for ``value`` (an integer expression): simplification substitutes
        it (TVM's ``Analyzer::Bind(var, expr)``, used for inlined lets)."""
        self.values[id(var)] = E.convert(value, var.dtype)

    def bind_loops(self, loops) -> None:
        """Bind the variable of each For loop to its range."""
        for loop in loops:
            self.bind(loop.loop_var, Range(loop.min, loop.extent))

    # -- bounds ---------------------------------------------------------------------------
    def const_int_bound(self, expr) -> ConstIntBound:
        expr = E.convert(expr)
        lo, hi = self._bound_lin(self._lin(expr)) if _is_int(expr) else (-INF, INF)
        return ConstIntBound(lo, hi)

    def _bound_lin(self, lin: _Lin) -> tuple[float, float]:
        lo = hi = lin.const
        for atom, coef in lin.terms.values():
            alo, ahi = self._bound_atom(atom)
            if coef > 0:
                lo, hi = lo + coef * alo, hi + coef * ahi
            else:
                lo, hi = lo + coef * ahi, hi + coef * alo
        if isinstance(lo, float) and math.isnan(lo):
            lo = -INF
        if isinstance(hi, float) and math.isnan(hi):
            hi = INF
        return lo, hi

    def _bound_atom(self, atom) -> tuple[float, float]:
        if isinstance(atom, IntImm):
            return atom.value, atom.value
        if isinstance(atom, Var):
            entry = self.dom.get(id(atom))
            if entry is not None:
                _, rng = entry
                mlo, mhi = self._bound_lin(self._lin(rng.min))
                elo, ehi = self._bound_lin(self._lin(rng.extent))
                lo, hi = mlo, mhi + ehi - 1
            elif isinstance(atom, E.SizeVar):
                lo, hi = 0, INF
            else:
                lo, hi = -INF, INF
            known = self._var_bounds.get(id(atom))
            if known is not None:
                lo, hi = max(lo, known[0]), min(hi, known[1])
            return lo, hi
        if isinstance(atom, (E.FloorDiv, E.FloorMod)) and isinstance(atom.b, IntImm) \
                and atom.b.value > 0:
            c = atom.b.value
            lo, hi = self._bound_lin(self._lin(atom.a))
            if isinstance(atom, E.FloorDiv):
                return (lo // c if lo != -INF else -INF), (hi // c if hi != INF else INF)
            if lo >= 0 and hi < c:
                return lo, hi
            return 0, c - 1
        if isinstance(atom, (E.Min, E.Max)):
            alo, ahi = self._bound_lin(self._lin(atom.a))
            blo, bhi = self._bound_lin(self._lin(atom.b))
            if isinstance(atom, E.Min):
                return min(alo, blo), min(ahi, bhi)
            return max(alo, blo), max(ahi, bhi)
        if isinstance(atom, E.Select):
            alo, ahi = self._bound_lin(self._lin(atom.true_value))
            blo, bhi = self._bound_lin(self._lin(atom.false_value))
            return min(alo, blo), max(ahi, bhi)
        if isinstance(atom, E.Cast) and _is_int(atom.value):
            return self._bound_lin(self._lin(atom.value))
        if isinstance(atom, E.Cast) and _is_int(atom):
            arg = _ceil_log2_arg(atom.value)
            if arg is not None:     # int(ceil(log2(n))): topi.math.ceil_log2, in loop bounds
                if isinstance(arg, E.FloatImm):
                    lo = hi = arg.value
                elif isinstance(arg, E.Cast) and _is_int(arg.value):
                    lo, hi = self._bound_lin(self._lin(arg.value))
                else:
                    lo, hi = 0, INF
                if lo > 0 and hi != INF:
                    return math.ceil(math.log2(lo)), math.ceil(math.log2(hi))
        if isinstance(atom, E.Call) and getattr(atom.op, "name", "") == "tir.shift_left":
            # x << s for x >= 0 and 0 <= s < bits (else the result is target-defined)
            xlo, xhi = self._bound_lin(self._lin(atom.args[0]))
            slo, shi = self._bound_lin(self._lin(atom.args[1]))
            if xlo >= 0 and slo >= 0 and shi < dt.bits(atom.dtype) and xhi != INF:
                lo, hi = int(xlo) << int(slo), int(xhi) << int(shi)
                if hi <= dt.max_value(atom.dtype):
                    return lo, hi
        return -INF, INF

    def can_prove(self, cond) -> bool:
        """True when ``cond`` holds for every value of the bound variables."""
        cond = self.simplify(E.convert(cond))
        return isinstance(cond, IntImm) and bool(cond.value)

    def linear_terms(self, expr) -> tuple[list[tuple[PrimExpr, int]], int]:
        """An integer ``expr`` as ``sum(coef * atom) + const``: the ``(atom, coef)`` pairs in
        order of first appearance, and ``const``.

        Example::

            Analyzer().linear_terms((i * 32 + j) * 512 + 3)   # ([(i, 16384), (j, 512)], 3)
        """
        lin = self._lin(E.convert(expr))
        return [(atom, coef) for atom, coef in lin.terms.values()], lin.const

    # -- simplification -------------------------------------------------------------------
    def canonical_simplify(self, expr):
        """TVM's canonical form of ``expr``; here the same normal form as ``simplify``.

        >>> from mlckit import arith, tir
        >>> x = tir.Var("x", "int32")
        >>> arith.Analyzer().canonical_simplify(x * 2 + x - x)
        x * 2
        """
        return self.simplify(expr)

    def simplify(self, expr):
        """A simpler expression equal to ``expr`` for every value of the bound variables
        (and wherever the enclosing constraint scopes hold)."""
        expr = E.convert(expr)
        if not isinstance(expr, PrimExpr):
            return expr
        if dt.lanes(expr.dtype) != 1:  # Ramp, Broadcast and their arithmetic: arith.vector
            return simplify_vector(self, expr)
        if _is_int(expr):
            return self._to_expr(self._lin(rewrite.simplify_atoms(self, expr)))
        return rewrite.simplify_other(self, expr)

    def _symbolic_bound(self, diff: _Lin) -> tuple[float, float]:
        """Constant bounds of ``diff`` after relaxing its bound variables over their
        (possibly symbolic) ranges: with ``i`` bound to ``[0, n)``, ``i - n`` relaxes to
        ``[-n, -1]``, so ``i - n <= -1`` although neither ``i`` nor ``n`` has a constant
        upper bound.  This is how TVM proves ``i < n`` from the loop ``for i in range(n)``
        (``Analyzer::CanProve`` with ``ProofStrength::kSymbolicBound``: the IntSet of the
        difference, then the ConstIntBound of its end; the TransitiveComparisonAnalyzer
        records the same ``i < n`` fact when the loop is bound)."""
        relax = {k: rng for k, (_v, rng) in self.dom.items()}
        if not relax or not any(uses_var(atom, lambda v: id(v) in relax)
                                for atom, _c in diff.terms.values()):
            return -INF, INF
        res = self._set_lin(diff, relax)
        if res is None:
            return -INF, INF
        smin, smax = res
        # the relaxed ends no longer contain relaxed variables; bound what is left
        return self._bound_lin(smin)[0], self._bound_lin(smax)[1]

    def _lin(self, expr) -> _Lin:
        dtype = expr.dtype
        if isinstance(expr, IntImm):
            return _Lin(dtype, {}, int(expr.value))
        if isinstance(expr, Var):
            if id(expr) in self.const_vars:
                return _Lin(dtype, {}, self.const_vars[id(expr)])
            if id(expr) in self.values:
                return self._lin(self.values[id(expr)])
            lin = _Lin(dtype)
            lin.add_term(expr, 1)
            return lin
        if isinstance(expr, E.Add):
            return self._lin(expr.a).copy().iadd(self._lin(expr.b))
        if isinstance(expr, E.Sub):
            return self._lin(expr.a).copy().iadd(self._lin(expr.b), -1)
        if isinstance(expr, E.Mul):
            la, lb = self._lin(expr.a), self._lin(expr.b)
            if lb.is_const():
                return la.scaled(lb.const)
            if la.is_const():
                return lb.scaled(la.const)
            return self._atom(E.Mul(self._to_expr(la), self._to_expr(lb)))
        if isinstance(expr, (E.FloorDiv, E.FloorMod)):
            lb = self._lin(expr.b)
            if lb.is_const() and lb.const > 0:
                return self._divmod(self._lin(expr.a), lb.const, isinstance(expr, E.FloorDiv))
            return self._atom(type(expr)(self._to_expr(self._lin(expr.a)), self._to_expr(lb)))
        if isinstance(expr, (E.Min, E.Max)):
            la, lb = self._lin(expr.a), self._lin(expr.b)
            diff = la.copy().iadd(lb, -1)
            lo, hi = self._bound_lin(diff)
            if isinstance(expr, E.Min):
                if hi <= 0:
                    return la
                if lo >= 0:
                    return lb
            else:
                if lo >= 0:
                    return la
                if hi <= 0:
                    return lb
            if la.is_const() and lb.is_const():
                f = min if isinstance(expr, E.Min) else max
                return _Lin(dtype, {}, f(la.const, lb.const))
            return self._atom(type(expr)(self._to_expr(la), self._to_expr(lb)))
        return self._atom(expr)

    def _atom(self, atom) -> _Lin:
        lin = _Lin(atom.dtype)
        lin.add_term(atom, 1)
        return lin

    def _divmod(self, lin: _Lin, c: int, is_div: bool) -> _Lin:
        dtype = lin.dtype
        if c == 1:
            return lin if is_div else _Lin(dtype)
        if lin.is_const():
            return _Lin(dtype, {}, lin.const // c if is_div else lin.const % c)
        # nested forms of a single atom
        if len(lin.terms) == 1 and lin.const == 0:
            ((atom, coef),) = lin.terms.values()
            if coef == 1 and isinstance(atom, E.FloorDiv) and is_div and _const(atom.b):
                return self._divmod(self._lin(atom.a), atom.b.value * c, True)
            if coef == 1 and isinstance(atom, E.FloorMod) and not is_div and _const(atom.b) \
                    and atom.b.value % c == 0:
                return self._divmod(self._lin(atom.a), c, False)
        quot = _Lin(dtype)
        rest = _Lin(dtype, {}, lin.const % c)
        for atom, coef in lin.terms.values():
            if coef % c == 0:
                quot.add_term(atom, coef // c)
            else:
                rest.add_term(atom, coef)
        quot.const = lin.const // c
        lo, hi = self._bound_lin(rest)
        if lo != -INF and hi != INF and lo // c == hi // c:
            k = int(lo // c)
            if is_div:
                quot.const += k
                return quot
            rest.const -= k * c
            return rest
        if not is_div:
            if rest.is_const():
                return _Lin(dtype, {}, rest.const % c)
            # x * (k * c) + y + d  ->  (y + d % c) % c, as TVM's simplifier writes it
            return self._atom(E.FloorMod(self._to_expr(rest), IntImm(dtype, c)))
        if not quot.terms:
            return self._atom(E.FloorDiv(self._to_expr(lin), IntImm(dtype, c)))
        # x * (k * c) + y + d  ->  x * k + (y + d) // c (exact for floor division; TVM keeps
        # the constant inside the division)
        inner = rest.copy()
        inner.const = lin.const
        quot.const = 0
        return quot.iadd(self._atom(E.FloorDiv(self._to_expr(inner), IntImm(dtype, c))))

    def _merge(self, lin: _Lin) -> _Lin:
        """``x // c * c + x % c`` is ``x``; ``x % c1 // c2 * c2 + x % c2`` is ``x % c1``."""
        changed = True
        while changed:
            changed = False
            for key, (atom, coef) in list(lin.terms.items()):
                if not (isinstance(atom, E.FloorMod) and _const(atom.b)):
                    continue
                c = atom.b.value
                for key2, (atom2, coef2) in list(lin.terms.items()):
                    if not (isinstance(atom2, E.FloorDiv) and _const(atom2.b)
                            and atom2.b.value == c and coef2 == coef * c):
                        continue
                    inner = atom2.a
                    if _key(inner) == _key(atom.a):
                        del lin.terms[key], lin.terms[key2]
                        lin.iadd(self._lin(inner), coef)
                        changed = True
                        break
                    if isinstance(inner, E.FloorMod) and _const(inner.b) \
                            and inner.b.value % c == 0 and _key(inner.a) == _key(atom.a):
                        del lin.terms[key], lin.terms[key2]
                        lin.add_term(inner, coef)
                        changed = True
                        break
                if changed:
                    break
        return lin

    def _to_expr(self, lin: _Lin) -> PrimExpr:
        lin = self._merge(lin.copy())
        dtype = lin.dtype
        terms = sorted(lin.terms.values(), key=lambda t: -abs(t[1]))
        pos = [t for t in terms if t[1] > 0]
        neg = [t for t in terms if t[1] < 0]
        out = None
        for atom, coef in pos:
            term = atom if coef == 1 else E.Mul(atom, IntImm(dtype, coef))
            out = term if out is None else E.Add(out, term)
        if out is None:
            if not neg:
                return IntImm(dtype, lin.const)
            if lin.const != 0:
                out = IntImm(dtype, lin.const)
                for atom, coef in neg:
                    term = atom if coef == -1 else E.Mul(atom, IntImm(dtype, -coef))
                    out = E.Sub(out, term)
                return out
            atom, coef = neg[0]
            out = E.Mul(atom, IntImm(dtype, coef))
            neg = neg[1:]
        for atom, coef in neg:
            term = atom if coef == -1 else E.Mul(atom, IntImm(dtype, -coef))
            out = E.Sub(out, term)
        if lin.const > 0:
            out = E.Add(out, IntImm(dtype, lin.const))
        elif lin.const < 0:
            out = E.Sub(out, IntImm(dtype, -lin.const))
        return out

    # -- interval sets --------------------------------------------------------------------
    def int_set(self, expr, relax: dict) -> IntSet | None:
        """The interval ``expr`` covers while the Vars of ``relax`` (Var or id -> Range) vary
        over their ranges; None when it cannot be bounded."""
        relax = {(k if isinstance(k, int) else id(k)): v for k, v in relax.items()}
        expr = E.convert(expr)
        res = self._set_lin(self._lin(expr), relax)
        if res is None:
            return None
        lo, hi = res
        return IntSet(self._to_expr(lo), self._to_expr(hi))

    def _set_lin(self, lin: _Lin, relax: dict):
        lo, hi = _Lin(lin.dtype, {}, lin.const), _Lin(lin.dtype, {}, lin.const)
        for atom, coef in lin.terms.values():
            if not uses_var(atom, lambda v: id(v) in relax):
                lo.add_term(atom, coef)
                hi.add_term(atom, coef)
                continue
            s = self._set_atom(atom, relax)
            if s is None:
                return None
            alo, ahi = s
            if coef > 0:
                lo.iadd(alo, coef)
                hi.iadd(ahi, coef)
            else:
                lo.iadd(ahi, coef)
                hi.iadd(alo, coef)
        return lo, hi

    def _set_atom(self, atom, relax: dict):
        if isinstance(atom, Var):
            rng = relax[id(atom)]
            mlo = self._lin(E.convert(rng.min))
            ext = self._lin(E.convert(rng.extent))
            if uses_var(rng.min, lambda v: id(v) in relax) or \
                    uses_var(rng.extent, lambda v: id(v) in relax):
                inner = self._set_lin(mlo.copy().iadd(ext).iadd(_Lin(mlo.dtype, {}, -1)), relax)
                start = self._set_lin(mlo, relax)
                if inner is None or start is None:
                    return None
                return start[0], inner[1]
            return mlo, mlo.copy().iadd(ext).iadd(_Lin(mlo.dtype, {}, -1))
        if isinstance(atom, (E.FloorDiv, E.FloorMod)) and _const(atom.b) and atom.b.value > 0:
            c = atom.b.value
            s = self._set_lin(self._lin(atom.a), relax)
            if s is None:
                return None
            lo, hi = s
            if isinstance(atom, E.FloorDiv):
                return self._divmod(lo, c, True), self._divmod(hi, c, True)
            diff = hi.copy().iadd(lo, -1)
            if diff.is_const() and diff.const < c:
                qlo, qhi = self._divmod(lo, c, True), self._divmod(hi, c, True)
                same = qhi.copy().iadd(qlo, -1)
                if same.is_const() and same.const == 0:
                    return self._divmod(lo, c, False), self._divmod(hi, c, False)
            return _Lin(lo.dtype, {}, 0), _Lin(lo.dtype, {}, c - 1)
        if isinstance(atom, (E.Min, E.Max)):
            a = self._set_lin(self._lin(atom.a), relax)
            b = self._set_lin(self._lin(atom.b), relax)
            if a is None or b is None:
                return None
            ctor = E.Min if isinstance(atom, E.Min) else E.Max
            return (self._lin(ctor(self._to_expr(a[0]), self._to_expr(b[0]))),
                    self._lin(ctor(self._to_expr(a[1]), self._to_expr(b[1]))))
        return None


def _ceil_log2_arg(e):
    """``n`` of ``ceil(log2(n))``, else None."""
    if isinstance(e, E.Call) and getattr(e.op, "name", "") == "tir.ceil":
        inner = e.args[0]
        if isinstance(inner, E.Call) and getattr(inner.op, "name", "") == "tir.log2":
            return inner.args[0]
    return None


def _const(e) -> bool:
    return isinstance(e, IntImm)


def _is_int(e) -> bool:
    return isinstance(e, PrimExpr) and dt.is_int(e.dtype)
