"""The fusion pattern of a PrimFunc, read from its blocks (TVM's ``AnalyzeOpPatternKind``).

``FuseOps`` decides what may be fused from one number per kernel, its ``OpPatternKind``:

===================  =====  ===================================================================
kind                 value  a block like
===================  =====  ===================================================================
``kElemWise``        0      ``C[i, j] = A[i, j] + B[i, j]`` (also with a broadcast bias
                            ``B[j]`` beside an element-wise load)
``kBroadcast``       1      ``C[i, j, k] = A[i, k]`` (loads use store indices, in order)
``kInjective``       2      ``C[i, j] = A[j, i]``, ``A[i // 4, i % 4]`` (only store vars)
``kCommReduce``      3      ``B[i] = B[i] + A[i, k]`` over a reduction iterator
``kOutEWiseFusable`` 4      a multiply-add reduction (matmul, dense, conv), pooling, softmax
``kTuple``           7      (tuples; never produced by this analysis)
``kOpaque``          8      anything else: several stores at different indices, no store …
===================  =====  ===================================================================

Each block (but the root) is classified from its single ``BufferStore`` and the loads in its
body; the function's kind is the largest kind of its blocks, except that an element-wise
block writing an output after a reduction makes the function ``kOutEWiseFusable`` (softmax).
Index comparisons are by identity (``same_as``), as in TVM.

Example::

    analyze_op_pattern_kind(mod["dense"])     # OpPatternKind.kOutEWiseFusable
"""

from __future__ import annotations

from enum import IntEnum

from mlckit.ir.node import Node
from mlckit.tir import expr as E
from mlckit.tir import stmt as S
from mlckit.tir.buffer import Buffer
from mlckit.tir.function import PrimFunc


class OpPatternKind(IntEnum):
    """How an operator can be fused, with TVM's numbering (``relay.op.OpPattern``).

    Example::

        OpPatternKind.kElemWise < OpPatternKind.kOutEWiseFusable     # True
    """

    kElemWise = 0  # noqa: N815 - TVM's names
    kBroadcast = 1  # noqa: N815
    kInjective = 2  # noqa: N815
    kCommReduce = 3  # noqa: N815
    kOutEWiseFusable = 4  # noqa: N815
    kTuple = 7  # noqa: N815
    kOpaque = 8  # noqa: N815


K = OpPatternKind


def analyze_op_pattern_kind(func: PrimFunc) -> OpPatternKind:
    """The ``OpPatternKind`` of ``func`` (see the module doc).

    Example::

        analyze_op_pattern_kind(relu_func)   # OpPatternKind.kElemWise
    """
    analyzer = _PatternKindAnalyzer(func)
    analyzer.stmt(func.body)
    return analyzer.kind


class _PatternKindAnalyzer:
    """Walks statements and expressions in TVM's ``StmtExprVisitor`` order."""

    def __init__(self, func: PrimFunc):
        self.param_buffers = {id(b) for b in func.buffer_map.values()}
        self.keep = list(func.buffer_map.values())
        self.store: S.BufferStore | None = None
        self.loads: list[E.BufferLoad] = []
        self.kind = K.kElemWise

    # -- walking ----------------------------------------------------------------------------
    def stmt(self, s) -> None:
        if isinstance(s, S.Block):
            self.block(s)
        elif isinstance(s, S.BufferStore):
            self.buffer_store(s)
        else:
            self.children(s)

    def children(self, node) -> None:
        for name in type(node).field_names():
            self.field(getattr(node, name))

    def field(self, value) -> None:
        if isinstance(value, S.Stmt):
            self.stmt(value)
        elif isinstance(value, E.PrimExpr):
            self.expr(value)
        elif isinstance(value, list):
            for v in value:
                self.field(v)

    def expr(self, e) -> None:
        if isinstance(e, E.BufferLoad):
            self.loads.append(e)
            for i in e.indices:
                self.expr(i)
            return
        if isinstance(e, E.Var) or not isinstance(e, Node):
            return
        for name in type(e).field_names():
            if name == "op":
                continue
            value = getattr(e, name)
            if isinstance(value, E.PrimExpr):
                self.expr(value)
            elif isinstance(value, list):
                for v in value:
                    if isinstance(v, E.PrimExpr):
                        self.expr(v)

    def buffer_store(self, store: S.BufferStore) -> None:
        # one store per block (as te.compute makes them); a second one at other indices
        # makes the function opaque
        if self.store is not None and not _same_array(store.indices, self.store.indices):
            self.kind = K.kOpaque
            return
        self.store = store
        self.expr(store.value)
        for i in store.indices:
            self.expr(i)

    # -- one block ------------------------------------------------------------------------
    def block(self, block: S.Block) -> None:
        if block.name_hint == "root":
            self.stmt(block.body)
            return
        self.loads = []
        self.store = None
        self.stmt(block.body)
        if self.store is None:
            self.kind = K.kOpaque
            return
        store = self.store
        index_pattern = self._index_pattern(store)
        if index_pattern != K.kOpaque:
            if self._is_output_block(block) and self.kind == K.kCommReduce:
                self.kind = K.kOutEWiseFusable  # reduce, then an element-wise output: softmax
            else:
                self.kind = max(self.kind, index_pattern)
            return
        reduce_vars = [iv.var for iv in block.iter_vars if iv.iter_type == E.IterVarType.CommReduce]
        if not reduce_vars:
            self.kind = K.kOpaque
            return
        if _is_fma(block.body):
            self.kind = max(self.kind, K.kOutEWiseFusable)  # matmul, conv
            return
        for load in self.loads:
            if not _is_pure_reduce(reduce_vars, load.indices):
                self.kind = max(self.kind, K.kOutEWiseFusable)  # pooling
                return
        self.kind = max(self.kind, K.kCommReduce)

    def _index_pattern(self, store: S.BufferStore) -> OpPatternKind:
        pattern = K.kElemWise
        has_elem_wise = False
        for load in self.loads:
            if _same_array(store.indices, load.indices):
                has_elem_wise = True
            elif _is_broadcast(store, load):
                pattern = max(pattern, K.kBroadcast)
            elif _is_injective(store, load):
                pattern = max(pattern, K.kInjective)
            else:
                return K.kOpaque
        # C[i, j] = A[i, j] + B[j]: one element-wise load makes the block element-wise
        if pattern == K.kBroadcast and has_elem_wise:
            pattern = K.kElemWise
        return pattern

    def _is_output_block(self, block: S.Block) -> bool:
        return any(id(region.buffer) in self.param_buffers for region in block.writes)


# -- index rules ------------------------------------------------------------------------------
def _same_array(a: list, b: list) -> bool:
    return len(a) == len(b) and all(x is y for x, y in zip(a, b))


def _is_const_int(e, value: int) -> bool:
    return isinstance(e, E.IntImm) and int(e.value) == value


def _is_broadcast(store: S.BufferStore, load: E.BufferLoad) -> bool:
    """Every load index is a store index, in order (unit dims read at 0 are skipped)."""
    j = 0
    n_store = len(store.buffer.shape)
    for i, index in enumerate(load.indices):
        if _is_const_int(load.buffer.shape[i], 1) and _is_const_int(index, 0):
            continue
        while j < n_store and store.indices[j] is not index:
            j += 1
        if j == n_store:
            return False
    return True


def _store_vars(store: S.BufferStore) -> set[int] | None:
    """The ids of the store's index variables, or None when an index is not a variable."""
    out = set()
    for index in store.indices:
        if not isinstance(index, E.Var):
            return None
        out.add(id(index))
    return out


def _vars_in(e, out: list) -> list:
    if isinstance(e, E.Var):
        out.append(e)
    elif isinstance(e, Node) and not isinstance(e, Buffer):
        for name in type(e).field_names():
            if name == "op":
                continue
            value = getattr(e, name)
            for v in value if isinstance(value, list) else [value]:
                if isinstance(v, E.PrimExpr):
                    _vars_in(v, out)
    return out


def _is_injective(store: S.BufferStore, load: E.BufferLoad) -> bool:
    """The load indices use no variable but the store's (which must be plain variables)."""
    allowed = _store_vars(store)
    if allowed is None:
        return False
    return all(id(v) in allowed for index in load.indices for v in _vars_in(index, []))


def _allows_reuse(store: S.BufferStore, load: E.BufferLoad) -> bool:
    """Some store variable is missing from the load indices (the load is reused across it)."""
    remaining = _store_vars(store)
    if remaining is None:
        return False
    for index in load.indices:
        for v in _vars_in(index, []):
            remaining.discard(id(v))
    return bool(remaining)


def _remove_cast(e):
    while isinstance(e, E.Cast):
        e = e.value
    return e


def _is_fma(body) -> bool:
    """``C[i, j] = C[i, j] + A[i, k] * B[k, j]`` (casts allowed), with A and B reused."""
    if not isinstance(body, S.BufferStore):
        return False
    add = _remove_cast(body.value)
    if not isinstance(add, E.Add):
        return False
    mul = _remove_cast(add.b)
    if not isinstance(mul, E.Mul):
        return False
    acc = _remove_cast(add.a)
    if not (isinstance(acc, E.BufferLoad) and acc.buffer is body.buffer
            and _same_array(body.indices, acc.indices)):
        return False
    lhs, rhs = _remove_cast(mul.a), _remove_cast(mul.b)
    if not (isinstance(lhs, E.BufferLoad) and isinstance(rhs, E.BufferLoad)):
        return False
    return _allows_reuse(body, lhs) and _allows_reuse(body, rhs)


def _is_pure_reduce(reduce_vars: list, indices: list) -> bool:
    """Every index that uses a reduction variable is that variable itself."""
    for index in indices:
        used = [v for v in _vars_in(index, []) if any(v is r for r in reduce_vars)]
        if used and not any(index is r for r in reduce_vars):
            return False
    return True


__all__ = ["OpPatternKind", "analyze_op_pattern_kind"]
