"""What a statement writes into buffers, and what is known where: the small dataflow facts
``RemoveNoOp`` uses (with ``use_dataflow_analysis``) to drop a store that a later one
overwrites, or one storing the value already there.

- :class:`ProofContext`: what holds at a point of a statement: the loop ranges around it,
  the conditions of the ``if``\\ s it is in, the values of the ``let``\\ s; ``prove(cond)``.
- :func:`writes_of`: a statement made only of loops, conditionals, lets and stores, as the
  list of its stores, each with the loops, conditions and lets around it (:class:`Write`);
  None for a statement doing anything else.
- :func:`solve_point`: the iteration of a :class:`Write` that stores into given indices, if
  provably one does.  Then the write *covers* that element (it is overwritten), and the
  value it stores there is known.

TVM's ``ControlFlowGraph`` (``src/tir/analysis/control_flow_graph.cc``) tracks the same
facts as buffer-touch predicates across a whole function; this is a smaller version that
compares statements of one sequence, enough for a loop overwritten by a later loop or a
store of the value an earlier loop wrote::

    for i in range(16): A[i] = 100      (overwritten: dropped)
    for i in range(16): A[i] = i        ──►   for i in range(16): A[i] = i
    A[4] = 4                            (known value: dropped)

Example::

    writes = writes_of(loop)
    w = writes[0]
    solve_point(w, [T.int32(4)], ProofContext())   # {id(i): 4}: the iteration writing A[4]
"""

from __future__ import annotations

from dataclasses import dataclass, field

from mlckit.arith.analyzer import Analyzer
from mlckit.ir.node import Node
from mlckit.ir.structural import structural_equal

from .. import expr as E
from .. import stmt as S
from ..traversal import substitute
from .var_use import var_ids

__all__ = ["ProofContext", "Write", "reads_any", "solve_point", "value_at", "writes_any",
           "writes_of"]

_COMPARISONS = (E.LT, E.LE, E.GT, E.GE, E.EQ, E.NE)


class ProofContext:
    """What holds at a point of a statement: ``ranges`` (loop variable -> Range), the
    ``conditions`` known true there, the ``lets`` (variable -> value) in scope.  Immutable:
    ``with_loop`` / ``with_condition`` / ``with_let`` give a new one."""

    def __init__(self, ranges=None, conditions=(), lets=None):
        self.ranges: dict[int, tuple[E.Var, E.Range]] = dict(ranges or {})
        self.conditions: tuple = tuple(conditions)
        self.lets: dict[int, tuple[E.Var, object]] = dict(lets or {})

    def with_loop(self, var, min_, extent) -> ProofContext:
        ranges = {**self.ranges, id(var): (var, E.Range(min_, extent))}
        return ProofContext(ranges, self.conditions, self.lets)

    def with_condition(self, cond) -> ProofContext:
        return ProofContext(self.ranges, (*self.conditions, cond), self.lets)

    def with_let(self, var, value) -> ProofContext:
        return ProofContext(self.ranges, self.conditions, {**self.lets, id(var): (var, value)})

    def expand(self, e):
        """``e`` with the let-bound variables replaced by their values."""
        for _ in range(len(self.lets)):  # a let's value may use an outer let
            if not self.lets or not (var_ids(e) & self.lets.keys()):
                break
            e = substitute(e, lambda v: self.lets[id(v)][1] if id(v) in self.lets else None)
        return e

    def analyzer(self) -> Analyzer:
        """An Analyzer with the loop ranges bound, narrowed by the conditions of the form
        ``var < c``, ``var >= c``, ``var == c`` (c bounded)."""
        ana = Analyzer()
        for var, rng in self.ranges.values():
            ana.bind(var, rng)
        for cond in self.conditions:
            for part in _conjuncts(self.expand(cond)):
                _narrow(ana, part)
        return ana

    def prove(self, cond) -> bool:
        """Whether ``cond`` provably holds here."""
        cond = self.expand(E.convert(cond))
        if isinstance(cond, E.And):
            return self.prove(cond.a) and self.prove(cond.b)
        known = [self.expand(c) for c in self.conditions]
        if any(structural_equal(cond, c) for c in known):
            return True
        return self.analyzer().can_prove(cond)

    def prove_equal(self, a, b) -> bool:
        a, b = self.expand(E.convert(a)), self.expand(E.convert(b))
        if structural_equal(a, b):
            return True
        return a.dtype == b.dtype and _is_int(a) and self.prove(E.EQ(a, b))


def _is_int(e) -> bool:
    return str(e.dtype).startswith(("int", "uint"))


def _conjuncts(cond):
    if isinstance(cond, E.And):
        return [*_conjuncts(cond.a), *_conjuncts(cond.b)]
    if isinstance(cond, E.Not):
        inner = cond.a
        flipped = {E.LT: E.GE, E.LE: E.GT, E.GT: E.LE, E.GE: E.LT, E.EQ: E.NE, E.NE: E.EQ}
        if type(inner) in flipped:
            return [flipped[type(inner)](inner.a, inner.b)]
        if isinstance(inner, E.Or):  # not (a or b) = not a and not b
            return [*_conjuncts(E.Not(inner.a)), *_conjuncts(E.Not(inner.b))]
        return []
    return [cond]


def _narrow(ana: Analyzer, cond) -> None:
    """Tighten the range of ``var`` bound in ``ana`` by ``cond`` (``var OP bounded``)."""
    if not isinstance(cond, _COMPARISONS) or isinstance(cond, E.NE):
        return
    a, b, op = cond.a, cond.b, type(cond)
    if not isinstance(a, E.Var):  # c < var: var > c
        a, b = b, a
        op = {E.LT: E.GT, E.LE: E.GE, E.GT: E.LT, E.GE: E.LE, E.EQ: E.EQ}[op]
    if not isinstance(a, E.Var) or id(a) not in ana.dom or id(a) in var_ids(b):
        return
    var_bound, other = ana.const_int_bound(a), ana.const_int_bound(b)
    lo, hi = var_bound.min_value, var_bound.max_value
    if op in (E.LT, E.LE, E.EQ) and abs(other.max_value) != float("inf"):
        hi = min(hi, other.max_value - (1 if op is E.LT else 0))
    if op in (E.GT, E.GE, E.EQ) and abs(other.min_value) != float("inf"):
        lo = max(lo, other.min_value + (1 if op is E.GT else 0))
    if abs(lo) == float("inf") or abs(hi) == float("inf") or hi < lo:
        return  # unbounded, or the condition never holds: nothing to learn
    ana.bind(a, E.Range(E.IntImm(a.dtype, int(lo)), E.IntImm(a.dtype, int(hi - lo + 1))))


@dataclass
class Write:
    """One store of a statement: the loops around it inside the statement (outermost first,
    ``(var, min, extent)``), the conditions it runs under, the lets in scope."""

    store: S.BufferStore
    loops: list = field(default_factory=list)
    conditions: list = field(default_factory=list)
    lets: list = field(default_factory=list)

    def context(self, outer: ProofContext) -> ProofContext:
        """``outer`` extended with what holds where this store runs."""
        ctx = outer
        for var, min_, extent in self.loops:
            ctx = ctx.with_loop(var, min_, extent)
        for var, value in self.lets:
            ctx = ctx.with_let(var, value)
        for cond in self.conditions:
            ctx = ctx.with_condition(cond)
        return ctx

    def expanded(self, e):
        """``e`` (in the store's scope) with the store's lets replaced by their values."""
        return ProofContext(lets={id(v): (v, x) for v, x in self.lets}).expand(e)


def writes_of(stmt) -> list[Write] | None:
    """The stores of ``stmt`` if it is made only of loops (not thread bindings),
    conditionals, lets, sequences and stores (and ``T.evaluate`` of a constant); else None."""
    out: list[Write] = []

    def walk(s, loops, conds, lets) -> bool:
        if isinstance(s, S.BufferStore):
            out.append(Write(s, list(loops), list(conds), list(lets)))
            return True
        if isinstance(s, S.SeqStmt):
            return all(walk(x, loops, conds, lets) for x in s.seq)
        if isinstance(s, S.For):
            if s.kind == S.ForKind.THREAD_BINDING:
                return False
            return walk(s.body, [*loops, (s.loop_var, s.min, s.extent)], conds, lets)
        if isinstance(s, S.IfThenElse):
            if not walk(s.then_case, loops, [*conds, s.condition], lets):
                return False
            return s.else_case is None or walk(s.else_case, loops,
                                               [*conds, E.Not(s.condition)], lets)
        if isinstance(s, S.LetStmt):
            return walk(s.body, loops, conds, [*lets, (s.var, s.value)])
        return isinstance(s, S.Evaluate) and isinstance(s.value, E.IntImm)

    return out if walk(stmt, [], [], []) else None


def solve_point(write: Write, indices: list, ctx: ProofContext) -> dict | None:
    """The values of ``write``'s loop variables (id -> value) for which it provably stores
    into ``indices`` (expressions valid in ``ctx``), inside its loops' ranges and under its
    conditions; None unless that is proven.  Each index of the store must be a loop
    variable plus an offset free of the write's loop variables, or free of them."""
    loop_ids = {id(v) for v, _, _ in write.loops}
    store_indices = [write.expanded(i) for i in write.store.indices]
    if len(store_indices) != len(indices):
        return None
    values: dict[int, object] = {}
    ana = Analyzer()
    for e, point in zip(store_indices, indices):
        used = var_ids(e) & loop_ids
        if not used:
            if not ctx.prove_equal(e, point):
                return None
            continue
        if len(used) != 1:
            return None
        var = next(v for v, _, _ in write.loops if id(v) in used)
        offset = ana.simplify(e - var)
        if var_ids(offset) & loop_ids:
            return None
        value = ana.simplify(point - offset)
        if id(var) in values:
            if not ctx.prove_equal(values[id(var)], value):
                return None
        else:
            values[id(var)] = value

    def fill(x):
        return substitute(write.expanded(x), lambda v: values.get(id(v)))

    for var, min_, extent in write.loops:
        if id(var) in values:
            value, lo = values[id(var)], fill(min_)
            if not ctx.prove(E.And(lo <= value, value < lo + fill(extent))):
                return None
        elif not ctx.prove(fill(extent) > 0) or var_ids([fill(c) for c in write.conditions]) \
                & {id(var)}:
            return None  # a loop the index does not depend on: it must run, and not matter
    if not all(ctx.prove(fill(c)) for c in write.conditions):
        return None
    return values


def value_at(write: Write, values: dict):
    """The value ``write`` stores at the iteration ``values`` (from :func:`solve_point`)."""
    return substitute(write.expanded(write.store.value), lambda v: values.get(id(v)))


def reads_any(stmt, data_ids: set) -> bool:
    """Whether ``stmt`` reads the memory of any of ``data_ids`` (a load, or the pointer
    itself passed on, as to ``T.address_of`` or a call), stores into it not counted."""
    if isinstance(stmt, E.BufferLoad):
        if id(stmt.buffer.data) in data_ids:
            return True
        return any(reads_any(i, data_ids) for i in stmt.indices)
    if isinstance(stmt, S.BufferStore):
        return reads_any(stmt.value, data_ids) or any(reads_any(i, data_ids)
                                                      for i in stmt.indices)
    if isinstance(stmt, E.Var):
        return id(stmt) in data_ids
    if isinstance(stmt, (list, tuple)):
        return any(reads_any(x, data_ids) for x in stmt)
    if isinstance(stmt, Node):
        return any(reads_any(getattr(stmt, f), data_ids) for f in stmt.field_names())
    return False


def writes_any(stmt, data_ids: set) -> bool:
    """Whether ``stmt`` may change the memory of any of ``data_ids``: a store into it, or
    its pointer passed on (``T.address_of``, a call)."""
    if isinstance(stmt, S.BufferStore):
        return id(stmt.buffer.data) in data_ids or writes_any([stmt.value, stmt.indices],
                                                              data_ids)
    if isinstance(stmt, E.BufferLoad):
        return writes_any(stmt.indices, data_ids)
    if isinstance(stmt, E.Var):
        return id(stmt) in data_ids
    if isinstance(stmt, (list, tuple)):
        return any(writes_any(x, data_ids) for x in stmt)
    if isinstance(stmt, Node):
        return any(writes_any(getattr(stmt, f), data_ids) for f in stmt.field_names())
    return False
