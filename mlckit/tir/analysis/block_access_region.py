"""Which buffer regions a block reads and writes (TVM's ``GetBlockAccessRegion``).

Used to fill the ``T.reads`` / ``T.writes`` a script leaves out.  For each access
``A[indices]`` inside the block (not inside its child blocks, whose own regions are used
instead) every index is *relaxed* over the loops that are inside the block: an index that
uses no such loop is a single point (``A[vi, vk]``); one that does covers an interval
(``for k in range(4): ... A[vi * 4 + k]`` reads ``A[vi * 4:vi * 4 + 4]``).  Accesses to the
same buffer are merged.  A block with ``T.init()`` does not list the buffers it writes among
its reads (the reduction reads what it writes).

Example::

    reads, writes = get_block_access_region(block, {A, B, C})
"""

from __future__ import annotations

from typing import Any

from mlckit.ir.node import Node
from mlckit.tir import expr as E
from mlckit.tir import stmt as S
from mlckit.tir import traversal
from mlckit.tir.buffer import BufferRegion
from mlckit.tir.expr import PrimExpr, Range


# -- substitution ---------------------------------------------------------------------------------
def substitute(obj: Any, vmap: dict) -> Any:
    """``obj`` with every Var found in ``vmap`` (keyed by ``id(var)``) replaced."""
    return traversal.substitute(obj, vmap)


# -- linear forms and intervals ------------------------------------------------------------------
class Linear:
    """``sum(coef * atom) + const`` over integer atoms (Vars or opaque sub-expressions)."""

    def __init__(self, terms: dict | None = None, const: int = 0, dtype: str = "int32"):
        self.terms: dict[int, tuple[PrimExpr, int]] = dict(terms or {})
        self.const = const
        self.dtype = dtype

    @staticmethod
    def of(expr: PrimExpr) -> Linear:
        dtype = expr.dtype
        if isinstance(expr, E.IntImm):
            return Linear({}, int(expr.value), dtype)
        if isinstance(expr, E.Add):
            return Linear.of(expr.a).add(Linear.of(expr.b))
        if isinstance(expr, E.Sub):
            return Linear.of(expr.a).add(Linear.of(expr.b).scale(-1))
        if isinstance(expr, E.Mul):
            if isinstance(expr.b, E.IntImm):
                return Linear.of(expr.a).scale(int(expr.b.value))
            if isinstance(expr.a, E.IntImm):
                return Linear.of(expr.b).scale(int(expr.a.value))
        return Linear({id(expr): (expr, 1)}, 0, dtype)

    def add(self, other: Linear) -> Linear:
        terms = dict(self.terms)
        for key, (atom, coef) in other.terms.items():
            c = terms.get(key, (atom, 0))[1] + coef
            if c:
                terms[key] = (atom, c)
            else:
                terms.pop(key, None)
        return Linear(terms, self.const + other.const, self.dtype)

    def scale(self, k: int) -> Linear:
        if k == 0:
            return Linear({}, 0, self.dtype)
        return Linear({key: (a, c * k) for key, (a, c) in self.terms.items()}, self.const * k,
                      self.dtype)

    def sub(self, other: Linear) -> Linear:
        return self.add(other.scale(-1))

    def is_const(self) -> bool:
        return not self.terms

    def to_expr(self) -> PrimExpr:
        out = None
        for atom, coef in self.terms.values():
            term = atom if coef == 1 else E.mul(atom, E.IntImm(self.dtype, coef))
            out = term if out is None else E.add(out, term)
        if out is None:
            return E.IntImm(self.dtype, self.const)
        if self.const > 0:
            return E.add(out, E.IntImm(self.dtype, self.const))
        if self.const < 0:
            return E.sub(out, E.IntImm(self.dtype, -self.const))
        return out


class Point:
    """The set holding one value, the expression ``expr``."""

    def __init__(self, expr: PrimExpr):
        self.expr = expr


class Interval:
    """The integers ``lo..hi`` (both Linear)."""

    def __init__(self, lo: Linear, hi: Linear):
        self.lo, self.hi = lo, hi


def _uses(expr: Any, dom_map: dict) -> bool:
    return traversal.uses_var(expr, lambda v: id(v) in dom_map)


def _bounds(s) -> tuple[Linear, Linear]:
    if isinstance(s, Point):
        lin = Linear.of(s.expr)
        return lin, lin
    return s.lo, s.hi


def eval_set(expr: PrimExpr, dom_map: dict):
    """The values ``expr`` takes while the loop vars of ``dom_map`` (id -> Range) vary:
    a Point, an Interval, or None when mlckit cannot bound it."""
    if not _uses(expr, dom_map):
        return Point(expr)
    if isinstance(expr, E.Var):
        dom = dom_map[id(expr)]
        lo = Linear.of(dom.min)
        return Interval(lo, lo.add(Linear.of(dom.extent)).add(Linear({}, -1, lo.dtype)))
    if isinstance(expr, (E.Add, E.Sub)):
        a, b = eval_set(expr.a, dom_map), eval_set(expr.b, dom_map)
        if a is None or b is None:
            return None
        (alo, ahi), (blo, bhi) = _bounds(a), _bounds(b)
        if isinstance(expr, E.Add):
            return Interval(alo.add(blo), ahi.add(bhi))
        return Interval(alo.sub(bhi), ahi.sub(blo))
    if isinstance(expr, E.Mul):
        const, other = (expr.b, expr.a) if isinstance(expr.b, E.IntImm) else (expr.a, expr.b)
        if not isinstance(const, E.IntImm):
            return None
        s = eval_set(other, dom_map)
        if s is None:
            return None
        lo, hi = _bounds(s)
        k = int(const.value)
        lo, hi = lo.scale(k), hi.scale(k)
        return Interval(lo, hi) if k >= 0 else Interval(hi, lo)
    if isinstance(expr, (E.FloorDiv, E.FloorMod)) and isinstance(expr.b, E.IntImm) \
            and expr.b.value > 0:
        s = eval_set(expr.a, dom_map)
        if s is None:
            return None
        lo, hi = _bounds(s)
        c = int(expr.b.value)
        if lo.is_const() and hi.is_const():
            if isinstance(expr, E.FloorDiv):
                return Interval(Linear({}, lo.const // c, lo.dtype), Linear({}, hi.const // c, lo.dtype))
            if lo.const // c == hi.const // c:
                return Interval(Linear({}, lo.const % c, lo.dtype), Linear({}, hi.const % c, lo.dtype))
        if isinstance(expr, E.FloorMod):
            return Interval(Linear({}, 0, lo.dtype), Linear({}, c - 1, lo.dtype))
        return None
    if isinstance(expr, (E.Min, E.Max)):
        a, b = eval_set(expr.a, dom_map), eval_set(expr.b, dom_map)
        if a is None or b is None:
            return None
        (alo, ahi), (blo, bhi) = _bounds(a), _bounds(b)
        if all(x.is_const() for x in (alo, ahi, blo, bhi)):
            f = min if isinstance(expr, E.Min) else max
            return Interval(Linear({}, f(alo.const, blo.const), alo.dtype),
                            Linear({}, f(ahi.const, bhi.const), alo.dtype))
        return None
    return None


def union(a, b):
    """The smallest set mlckit can describe holding both ``a`` and ``b`` (None: unbounded)."""
    if a is None or b is None:
        return None
    if isinstance(a, Point) and isinstance(b, Point):
        from mlckit.ir.structural import structural_equal

        if a.expr is b.expr or structural_equal(a.expr, b.expr):
            return a
    (alo, ahi), (blo, bhi) = _bounds(a), _bounds(b)
    dlo, dhi = alo.sub(blo), ahi.sub(bhi)
    if not (dlo.is_const() and dhi.is_const()):
        return None
    return Interval(blo if dlo.const > 0 else alo, ahi if dhi.const > 0 else bhi)


def to_range(s, extent_of_dim: PrimExpr) -> Range:
    """The Range covering the set ``s`` (the whole dimension when ``s`` is unbounded)."""
    if s is None:
        return Range(E.IntImm(extent_of_dim.dtype, 0), extent_of_dim)
    if isinstance(s, Point):
        return Range(s.expr, E.IntImm(s.expr.dtype, 1))
    diff = s.hi.sub(s.lo)
    if diff.is_const() and diff.const == 0:
        return Range(s.lo.to_expr(), E.IntImm(s.lo.dtype, 1))
    return Range(s.lo.to_expr(), diff.add(Linear({}, 1, s.lo.dtype)).to_expr())


def _is_zero(e) -> bool:
    return isinstance(e, E.IntImm) and e.value == 0


# -- the detector ----------------------------------------------------------------------------------
class _Detector:
    def __init__(self, visible: dict, block: S.Block):
        self.visible = dict(visible)  # id(buffer) -> buffer accessible from outside the block
        self.dom_map: dict = {}
        self.lets: dict = {}
        self.matched: dict = {}  # id(target buffer) -> MatchBufferRegion
        for mb in block.match_buffers:
            if id(mb.source.buffer) in self.visible:
                self.matched[id(mb.buffer)] = mb
                self.visible[id(mb.buffer)] = mb.buffer
        self.reads: list = []  # [buffer, [sets]]
        self.writes: list = []

    def update(self, table: list, buffer, sets: list) -> None:
        if id(buffer) not in self.visible:
            return
        mb = self.matched.get(id(buffer))
        if mb is not None:  # as TVM: the accessed part of the view, placed in its source
            src = mb.source.region
            lead = len(src) - len(sets)
            ranges = [to_range(st, ext) for st, ext in zip(sets, mb.buffer.shape)]
            sets = [_range_set(r, self.dom_map) for r in src[:lead]] + [
                _range_set(Range(E.add(r.min, v.min) if not _is_zero(r.min) else v.min,
                                 v.extent), self.dom_map)
                for r, v in zip(src[lead:], ranges)]
            buffer = mb.source.buffer
        for entry in table:
            if entry[0] is buffer:
                entry[1] = [union(a, b) for a, b in zip(entry[1], sets)]
                return
        table.append([buffer, sets])

    def index_sets(self, indices) -> list:
        out = []
        for index in indices:
            index = _resolve_lets(index, self.lets)
            out.append(eval_set(index, self.dom_map))
        return out

    # statements
    def stmt(self, s) -> None:
        if s is None:
            return
        if isinstance(s, S.BufferStore):
            self.update(self.writes, s.buffer, self.index_sets(s.indices))
            self.expr(s.value)
            for i in s.indices:
                self.expr(i)
        elif isinstance(s, S.For):
            self.expr(s.min)
            self.expr(s.extent)
            self.dom_map[id(s.loop_var)] = Range(s.min, s.extent)
            self.stmt(s.body)
            del self.dom_map[id(s.loop_var)]
        elif isinstance(s, S.LetStmt):
            self.expr(s.value)
            self.lets[id(s.var)] = s.value
            self.stmt(s.body)
            del self.lets[id(s.var)]
        elif isinstance(s, S.BlockRealize):
            self.child(s)
        elif isinstance(s, S.Block):  # the block itself
            for iv in s.iter_vars:
                self.expr(iv.dom.min)
                self.expr(iv.dom.extent)
            self.stmt(s.init)
            self.stmt(s.body)
        else:
            self.generic(s)

    def child(self, realize: S.BlockRealize) -> None:
        vmap = {id(iv.var): v for iv, v in zip(realize.block.iter_vars, realize.iter_values)}
        for table, regions in ((self.reads, realize.block.reads),
                               (self.writes, realize.block.writes)):
            for region in regions:
                sets = [_range_set(Range(substitute(r.min, vmap), substitute(r.extent, vmap)),
                                   self.dom_map) for r in region.region]
                self.update(table, region.buffer, sets)

    def generic(self, node) -> None:
        for name in node.field_names():
            value = getattr(node, name)
            for v in value if isinstance(value, list) else [value]:
                if isinstance(v, S.Stmt):
                    self.stmt(v)
                elif isinstance(v, PrimExpr):
                    self.expr(v)

    # expressions
    def expr(self, e) -> None:
        if isinstance(e, E.BufferLoad):
            self.update(self.reads, e.buffer, self.index_sets(e.indices))
            for i in e.indices:
                self.expr(i)
            return
        if isinstance(e, E.Var) or not isinstance(e, Node):
            return
        for name in e.field_names():
            if name in ("buffer", "op"):
                continue
            value = getattr(e, name)
            for v in value if isinstance(value, list) else [value]:
                if isinstance(v, PrimExpr):
                    self.expr(v)

    def collect(self, table: list, excluded=()) -> list:
        out = []
        for buffer, sets in table:
            if any(buffer is x for x in excluded):
                continue
            out.append(BufferRegion(buffer, [to_range(s, d) for s, d in zip(sets, buffer.shape)]))
        return out


def _range_set(r: Range, dom_map: dict):
    lo = eval_set(r.min, dom_map)
    if isinstance(r.extent, E.IntImm) and r.extent.value == 1:
        return lo
    last = E.sub(E.add(r.min, r.extent), E.IntImm(r.extent.dtype, 1))
    hi = eval_set(last, dom_map)
    if lo is None or hi is None:
        return None
    return Interval(_bounds(lo)[0], _bounds(hi)[1])


def _resolve_lets(index: PrimExpr, lets: dict) -> PrimExpr:
    for _ in range(16):
        new = substitute(index, lets)
        if new is index:
            break
        index = new
    return index


def get_block_access_region(block: S.Block, visible_buffers) -> tuple[list, list]:
    """``(reads, writes)`` of ``block``: lists of BufferRegion, in order of first access.

    ``visible_buffers`` are the buffers defined outside the block (parameters, allocations
    of enclosing blocks); accesses to other buffers (the block's own allocations) are not
    listed.

    >>> from mlckit import tir
    >>> from mlckit.script import tir as T
    >>> @T.prim_func
    ... def copy(a: T.Buffer((4,), "float32"), b: T.Buffer((4,), "float32")):
    ...     for i in range(4):
    ...         with T.block("B"):
    ...             vi = T.axis.spatial(4, i)
    ...             b[vi] = a[vi]
    >>> loop = copy.body.block.body
    >>> block = loop.body.block
    >>> tir.analysis.get_block_access_region(block, [copy.buffer_map[p] for p in copy.params])
    ([a[vi]], [b[vi]])
    """
    visible = {id(b): b for b in visible_buffers}
    det = _Detector(visible, block)
    det.stmt(block)
    writes = det.collect(det.writes)
    excluded = [w.buffer for w in writes] if block.init is not None else []
    reads = det.collect(det.reads, excluded)
    return reads, writes
