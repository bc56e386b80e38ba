"""A condition as an AND of ORs, simplified group by group (TVM's ``SimplifyAsAndOfOrs``).

With ``tir.Simplify``'s ``convert_boolean_to_and_of_ors`` option a boolean expression is
multiplied out into groups joined by ``and``, each group a list of terms joined by ``or``;
repeated groups go, two terms of one group that simplify together are merged, and two
groups that differ in one term are simplified knowing the terms they share are false::

    A[0] or (A[1] and A[2])                              ->  (A[0] or A[1]) and (A[0] or A[2])
    (i == 0 or k == 20) and (i == 0 or k != 30)          ->  i == 0 or k == 20

Example::

    ana.convert_boolean_to_and_of_ors = True
    ana.simplify(tir.Or(a, tir.And(b, c)))               # (a or b) and (a or c)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mlckit.tir import expr as E

from .linear import _key

if TYPE_CHECKING:
    from .analyzer import Analyzer

_TRUE, _FALSE = E.IntImm("bool", True), E.IntImm("bool", False)


def _and_parts(e) -> list:
    if isinstance(e, E.And):
        return _and_parts(e.a) + _and_parts(e.b)
    if isinstance(e, E.Or):
        return [E.Or(x, y) for x in _and_parts(e.a) for y in _and_parts(e.b)]
    return [e]


def _or_parts(e) -> list:
    if isinstance(e, E.Or):
        return _or_parts(e.a) + _or_parts(e.b)
    if isinstance(e, E.And):
        return [E.And(x, y) for x in _or_parts(e.a) for y in _or_parts(e.b)]
    return [e]


def _is(e, value: bool) -> bool:
    return isinstance(e, E.IntImm) and bool(e.value) == value


class _AndOfOrs:
    def __init__(self, ana: Analyzer, expr):
        self.ana, self.key = ana, _key
        self.chunks: list[list] = []
        for outer in _and_parts(expr):
            terms: list = []
            for inner in _or_parts(outer):
                if not any(self.same(inner, t) for t in terms):
                    terms.append(inner)
            keys = sorted(map(str, (self.key(t) for t in terms)))
            if not any(len(c) == len(terms) and sorted(map(str, (self.key(t) for t in c))) == keys
                       for c in self.chunks):
                self.chunks.append(terms)

    def same(self, x, y) -> bool:
        return self.key(x) == self.key(y)

    def merge(self, x, y, is_and: bool):
        """``x or y`` (``x and y``) simplified, as the new pair (the first may become the
        neutral constant)."""
        joint = E.And(x, y) if is_and else E.Or(x, y)
        out = self.ana.simplify(joint)
        if self.same(out, joint):
            return x, y
        if isinstance(out, type(joint)):
            return out.a, out.b
        return (_TRUE if is_and else _FALSE), out

    def simplify(self) -> None:
        for chunk in self.chunks:                       # within each OR group
            for i in range(len(chunk)):
                for j in range(i + 1, len(chunk)):
                    chunk[i], chunk[j] = self.merge(chunk[i], chunk[j], False)
        self.remove_constants()
        chunks = self.chunks
        for i in range(len(chunks)):                    # across the groups
            for j in range(i + 1, len(chunks)):
                ci, cj = chunks[i], chunks[j]
                if len(ci) == 1 and len(cj) == 1:
                    ci[0], cj[0] = self.merge(ci[0], cj[0], True)
                    continue
                i_only = [n for n, t in enumerate(ci) if not any(self.same(t, u) for u in cj)]
                if not i_only:                          # ci's terms all in cj: cj holds
                    chunks[j] = [_TRUE]
                    continue
                j_only = [n for n, t in enumerate(cj) if not any(self.same(t, u) for u in ci)]
                if not j_only:
                    chunks[i] = [_TRUE]
                    continue
                if len(ci) == len(cj) and len(i_only) == 1:
                    di, dj = i_only[0], j_only[0]
                    shared = [self.ana.simplify(E.Not(t)) for n, t in enumerate(ci) if n != di]
                    known = shared[0]
                    for t in shared[1:]:
                        known = E.And(known, t)
                    with self.ana.constraint_scope(known):
                        ci[di], cj[dj] = self.merge(ci[di], cj[dj], True)
        self.remove_constants()

    def remove_constants(self) -> None:
        chunks = []
        for chunk in self.chunks:
            if any(_is(t, True) for t in chunk):
                continue
            chunk = [t for t in chunk if not _is(t, False)]
            if not chunk:
                self.chunks = [[]]
                return
            chunks.append(chunk)
        self.chunks = chunks

    def as_expr(self):
        out = _TRUE
        for chunk in self.chunks:
            group = _FALSE
            for t in chunk:
                group = t if _is(group, False) else E.Or(group, t)
            out = group if _is(out, True) else E.And(out, group)
        return out


def simplify_as_and_of_ors(ana: Analyzer, expr):
    """``expr`` (a boolean) as a simplified AND of ORs (see the module docstring)."""
    ana.convert_boolean_to_and_of_ors = False       # the groups simplify as usual
    try:
        form = _AndOfOrs(ana, ana.simplify(expr))
        form.simplify()
        return form.as_expr()
    finally:
        ana.convert_boolean_to_and_of_ors = True
