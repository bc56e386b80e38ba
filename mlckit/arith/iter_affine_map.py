"""Iterator maps: block bindings written as TVM's ``arith.IterMapSimplify`` writes them.

TVM's ``split`` and ``fuse`` do not simplify a block's bindings with the general simplifier:
they detect an *iterator map* (``arith.DetectIterMap``) and print it back.  An iterator map
describes each binding as a sum of *splits* of *marks*:

- an ``IterMark`` is an iterator with an extent: a loop variable, or a fused sum of splits
  (``i_0 * 4 + i_1`` with extent 16);
- an ``IterSplit`` is ``source // lower_factor % extent * scale`` of a mark;
- an ``IterSum`` is ``sum(splits) + base``.

A block predicate ``T.where(i_0 * 4 + i_1 < 10)`` makes ``i_0 * 4 + i_1`` a mark of its own
(extent 10), and a binding that contains it is written around it: after re-splitting ``i_1``
TVM prints ``(i_0_0 * 4 + i_0_1) * 2 + i_1`` and not the flattened ``i_0_0 * 8 + ...``.
When the bindings are not such a map TVM leaves them as they are (only substituted).

This is a port of the part of TVM's algorithm that schedules on constant-extent loops reach
(constant scales, no padding); outside it ``iter_map_simplify`` returns None and the caller
uses the general simplifier.  The nodes are in :mod:`~mlckit.arith.iter_map_nodes`, the
rewriting of expressions into them in :mod:`~mlckit.arith.iter_map_rewriter`; this module
checks the result (surjective, predicates as bounds) and prints it back.

Example::

    iter_map_simplify([(i_0 * 2 + i_1) * 2 + j], {i_0: Range(0, 3), i_1: Range(0, 2),
                      j: Range(0, 2)}, T.LT(i_0 * 2 + i_1, 5))
    # [(i_0 * 2 + i_1) * 2 + j]     (i_0 * 2 + i_1 is a mark of extent 5)
"""

from __future__ import annotations

from mlckit.tir import expr as E
from mlckit.tir.expr import IntImm, PrimExpr, Range, Var

from .iter_map_nodes import IterMark, IterSplit, IterSum, Unsupported, _int, _NotAMap, _uses
from .iter_map_rewriter import _Rewriter


# -- surjectivity -----------------------------------------------------------------------------
def _surjective(rewriter: _Rewriter, sums: list[IterSum], bijective: bool = False) -> bool:
    """Each mark is covered by non-overlapping splits whose extents tile a divisor of it
    (``bijective``: tile all of it)."""
    splits: dict[int, list[IterSplit]] = {}
    marks: dict[int, IterMark] = {}

    def collect(mark: IterMark) -> None:
        if id(mark) in marks:
            return
        marks[id(mark)] = mark
        if isinstance(mark.source, IterSum):
            for s in mark.source.args:
                collect(s.source)
                splits.setdefault(id(s.source), []).append(s)

    for s in sums:
        for a in s.args:
            collect(a.source)
            splits.setdefault(id(a.source), []).append(a)
    for key, mark in marks.items():
        group = splits.get(key, [])
        used = [False] * len(group)
        expected = 1
        for _ in group:
            j = next((j for j, s in enumerate(group) if not used[j]
                      and s.lower_factor == expected), None)
            if j is None:
                if bijective:  # a gap: onto a coarser grid, not one-to-one
                    return False
                j = _skip_lower_factor(group, used, expected)
                if j is None:
                    return False
            used[j] = True
            expected = group[j].lower_factor * group[j].extent
        if expected == 0 or mark.extent % expected != 0 or bijective and expected != mark.extent:
            return False
    return True


def _all_iters_used(sums: list[IterSum], iters: dict) -> bool:
    """Every input iterator of more than one value is the source of some mark (an unused
    one would send several points to one place)."""
    used: set = set()

    def visit(source) -> None:
        if isinstance(source, IterSum):
            for a in source.args:
                visit(a.source.source)
        elif isinstance(source, Var):
            used.add(id(source))
        elif isinstance(source, E.Sub) and isinstance(source.a, Var):
            used.add(id(source.a))

    for s in sums:
        for a in s.args:
            visit(a.source.source)
    return all(id(v) in used or (isinstance(r.extent, IntImm) and r.extent.value == 1)
               for v, r in iters.values())


def _skip_lower_factor(group, used, expected) -> int | None:
    res = None
    for i, s in enumerate(group):
        if used[i]:
            continue
        if expected == 0 or s.lower_factor % expected != 0:
            return None
        if res is None or (s.lower_factor and group[res].lower_factor % s.lower_factor == 0):
            res = i
    return res


# -- predicates -------------------------------------------------------------------------------
def _bound_constraints(pred, input_iters: dict, ids) -> list | None:
    """``a < b and c <= d and ...`` as ``(iter, lower, upper)`` constraints (single variables
    narrow their range in ``input_iters`` instead); None if the predicate is not of that form."""
    out = []
    while True:
        if isinstance(pred, E.And) and isinstance(pred.b, (E.LT, E.LE, E.GT, E.GE)):
            cmp, rest = pred.b, pred.a
        elif isinstance(pred, E.And) and isinstance(pred.a, (E.LT, E.LE, E.GT, E.GE)):
            cmp, rest = pred.a, pred.b
        elif isinstance(pred, (E.LT, E.LE, E.GT, E.GE)):
            cmp, rest = pred, None
        else:
            return None
        lhs, rhs = cmp.a, cmp.b
        if not (lhs.dtype.startswith(("int", "uint")) and rhs.dtype.startswith(("int", "uint"))):
            return None
        greater = isinstance(cmp, (E.GT, E.GE))
        equal = isinstance(cmp, (E.LE, E.GE))
        if _uses(lhs, ids) or _uses(rhs, ids):
            if isinstance(lhs, IntImm) or not _uses(lhs, ids):
                bound_at_left = True
            elif isinstance(rhs, IntImm) or not _uses(rhs, ids):
                bound_at_left = False
            else:
                raise Unsupported("iterators on both sides of a comparison")
            bound, it = (lhs, rhs) if bound_at_left else (rhs, lhs)
            bound = _int(bound)
            lower = upper = None
            if greater == bound_at_left:   # bound > it, bound >= it, it < bound, it <= bound
                upper = bound + 1 if equal else bound
            else:
                lower = bound if equal else bound + 1
            if isinstance(it, Var) and id(it) in input_iters:
                var, rng = input_iters[id(it)]
                lo, hi = _int(rng.min), _int(rng.min) + _int(rng.extent)
                lo = lo if lower is None else max(lo, lower)
                hi = hi if upper is None else min(hi, upper)
                input_iters[id(it)] = (var, Range(IntImm(var.dtype, lo), IntImm(var.dtype, hi - lo)))
            else:
                out.append((it, lower, upper))
        if rest is None:
            return out
        pred = rest


def _size(e) -> int:
    n = 1
    for name in e.field_names():
        v = getattr(e, name)
        if isinstance(v, PrimExpr):
            n += _size(v)
    return n


def detect_iter_map(indices, input_iters: dict, predicate=None,
                    simplify_trivial: bool = False, bijective: bool = False
                    ) -> list[IterSum] | None:
    """``indices`` as a surjective iterator map over ``input_iters`` (Var -> Range) under
    ``predicate`` (``bijective``: one-to-one as well, TVM's ``IterMapLevel.Bijective``); None
    when they are not one.  Raises ``Unsupported`` outside this port."""
    iters = {id(v): (v, r) for v, r in input_iters.items()}
    constraints = []
    if predicate is not None and not (isinstance(predicate, IntImm) and predicate.value):
        constraints = _bound_constraints(predicate, iters, iters)
        if constraints is None:
            return None
    constraints.sort(key=lambda c: _size(c[0]))
    rewriter = _Rewriter(iters, simplify_trivial)
    try:
        for it, lower, upper in constraints:
            rewriter.add_constraint(it, lower, upper)
        if not rewriter.constraints_nested():
            return None
        sums = [rewriter.rewrite(E.convert(e)) for e in indices]
    except _NotAMap:
        return None
    if bijective and not _all_iters_used(sums, iters):
        return None
    return sums if _surjective(rewriter, sums, bijective) else None


# -- back to expressions ----------------------------------------------------------------------
def iter_map_to_expr(x) -> PrimExpr:
    """An IterSum or IterSplit as a PrimExpr (TVM's ``NormalizeIterMapToExpr``)."""
    if isinstance(x, IterSplit):
        return _split_to_expr(x)
    out = IntImm(x.base.dtype, 0)
    for arg in x.args:
        out = E.add(out, _split_to_expr(arg))
    return E.add(out, x.base)


def _split_to_expr(s: IterSplit) -> PrimExpr:
    src = s.source.source
    source = iter_map_to_expr(src) if isinstance(src, IterSum) else src
    dtype = source.dtype
    scale = IntImm(dtype, s.scale)
    if s.extent == s.source.extent and s.lower_factor == 1:
        return E.mul(source, scale)
    if s.source.extent == s.lower_factor * s.extent:
        if s.extent == 1 and s.source.extent != 1:
            return IntImm(dtype, 0)
        return E.mul(E.floordiv(source, IntImm(dtype, s.lower_factor)), scale)
    full = IntImm(dtype, s.extent * s.lower_factor)
    return E.mul(E.floordiv(E.floormod(source, full), IntImm(dtype, s.lower_factor)), scale)


def iter_map_simplify(indices, input_iters: dict, predicate=None,
                      preserve_unit_iters: bool = True) -> list[PrimExpr] | None:
    """Block bindings as TVM's ``IterMapSimplify`` writes them (see the module docstring):
    the iterator map printed back, or ``indices`` unchanged when they are not one.  None when
    the bindings are outside this port (the caller simplifies them another way)."""
    try:
        sums = detect_iter_map(indices, input_iters, predicate, not preserve_unit_iters)
        if sums is None and predicate is not None and \
                not (isinstance(predicate, IntImm) and predicate.value):
            sums = detect_iter_map(indices, input_iters, None, not preserve_unit_iters)
    except Unsupported:
        return None
    if sums is None:
        return list(indices)
    return [iter_map_to_expr(s) for s in sums]


__all__ = ["IterMark", "IterSplit", "IterSum", "detect_iter_map", "iter_map_simplify",
           "iter_map_to_expr"]
