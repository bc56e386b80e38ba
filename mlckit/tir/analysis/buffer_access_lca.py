"""Where each buffer is used: the lowest common ancestor (LCA) of its accesses,
``tvm.tir.analysis.detect_buffer_access_lca``.

The LCA is the innermost ``For`` or ``Block`` that encloses every access of a buffer (loads,
stores, a ``T.match_buffer`` of it, its ``.data`` passed to an extern call); ``None`` means the
function's top level.  Two rules lift it higher, as in TVM:

- a reduction block's writes stay above every loop its reduce iterators are bound to (the
  partial sums live across those loops), and an opaque iterator's (``T.axis.opaque``) reads
  and writes stay above the loops it is bound to (a value flows from one iteration to the next);
- a ``"global"`` buffer's LCA stays above every ``blockIdx`` launch (one copy per kernel).

Example::

    lca = tvm.tir.analysis.detect_buffer_access_lca(func)
    lca[B_buffer]            # the For loop (or Block) to allocate B under
"""

from __future__ import annotations

from mlckit.ir.node import Node
from mlckit.tir import expr as E
from mlckit.tir import stmt as S
from mlckit.tir.function import PrimFunc

__all__ = ["detect_buffer_access_lca"]


class _Scope:
    """A For or Block on the path from the top level (``stmt`` None at depth 0)."""

    __slots__ = ("parent", "stmt", "depth")

    def __init__(self, parent, stmt, depth: int):
        self.parent, self.stmt, self.depth = parent, stmt, depth


def _lca(a: _Scope | None, b: _Scope | None) -> _Scope | None:
    if a is None:
        return b
    if b is None:
        return a
    while a is not b:
        if a.depth >= b.depth:
            a = a.parent
        else:
            b = b.parent
    return a


def _var_ids(e, out: set) -> set:
    if isinstance(e, E.Var):
        out.add(id(e))
    elif isinstance(e, Node):
        for name in e.field_names():
            v = getattr(e, name)
            for x in v if isinstance(v, list) else [v]:
                if isinstance(x, Node):
                    _var_ids(x, out)
    return out


class _Detector:
    def __init__(self, func: PrimFunc):
        self.by_data: dict[int, object] = {}  # id(buffer.data) -> buffer
        for buf in (func.buffer_map or {}).values():
            self.by_data[id(buf.data)] = buf
        self.root = _Scope(None, None, 0)
        self.scopes = [self.root]
        self.lca: dict[int, _Scope] = {}  # id(buffer) -> scope
        self.buffers: dict[int, object] = {}
        self.matched: set[int] = set()  # buffers a T.match_buffer declares
        self.loop_scope: dict[int, _Scope] = {}  # id(loop var) -> its For's scope
        self.blockidx: list = []

    def update(self, buf, scope: _Scope) -> None:
        self.by_data.setdefault(id(buf.data), buf)
        if id(buf) in self.matched:
            return
        self.buffers[id(buf)] = buf
        self.lca[id(buf)] = _lca(self.lca.get(id(buf)), scope)

    def push(self, stmt) -> _Scope:
        scope = _Scope(self.scopes[-1], stmt, len(self.scopes))
        self.scopes.append(scope)
        return scope

    def stmt(self, s) -> None:
        if isinstance(s, S.For):
            self.expr(s.min)
            self.expr(s.extent)
            scope = self.push(s)
            tb = s.thread_binding
            if tb is not None and tb.thread_tag.startswith("blockIdx"):
                self.blockidx.append(scope)
            self.loop_scope[id(s.loop_var)] = scope
            self.stmt(s.body)
            del self.loop_scope[id(s.loop_var)]
            self.scopes.pop()
            return
        if isinstance(s, S.BlockRealize):
            block = s.block
            for buf in block.alloc_buffers:
                self.by_data.setdefault(id(buf.data), buf)
            for v in s.iter_values:
                self.expr(v)
            self.expr(s.predicate)
            self.push(block)
            self.non_data_par(s)
            for mb in block.match_buffers:
                self.update(mb.source.buffer, self.scopes[-1])
                self.matched.add(id(mb.buffer))
                for r in mb.source.region:
                    self.expr(r.min)
                    self.expr(r.extent)
            if block.init is not None:
                self.stmt(block.init)
            self.stmt(block.body)
            self.scopes.pop()
            return
        if isinstance(s, S.BufferStore):
            self.update(s.buffer, self.scopes[-1])
        if isinstance(s, S.AttrStmt) and s.attr_key == "thread_extent" \
                and getattr(s.node, "thread_tag", "").startswith("blockIdx"):
            self.blockidx.append(self.scopes[-1])
        self.generic(s)

    def generic(self, node) -> None:
        for name in node.field_names():
            v = getattr(node, name)
            for x in v if isinstance(v, list) else [v]:
                if isinstance(x, S.Stmt):
                    self.stmt(x)
                elif isinstance(x, E.PrimExpr):
                    self.expr(x)

    def expr(self, e) -> None:
        if isinstance(e, E.Var):
            buf = self.by_data.get(id(e))  # an opaque access: the buffer's data pointer
            if buf is not None:
                self.update(buf, self.scopes[-1])
            return
        if isinstance(e, E.BufferLoad):
            self.update(e.buffer, self.scopes[-1])
            for i in e.indices:
                self.expr(i)
            return
        if isinstance(e, Node):
            self.generic(e)

    def non_data_par(self, realize: S.BlockRealize) -> None:
        """Lift the LCA of a reduction's writes, and of accesses indexed by an opaque
        iterator, above the loops those iterators are bound to."""
        block = realize.block
        opaque: dict[int, _Scope] = {}
        reduce_scope = None
        for iv, value in zip(block.iter_vars, realize.iter_values):
            if iv.iter_type == E.IterVarType.DataPar:
                continue
            scopes = [self.loop_scope[v].parent for v in _var_ids(value, set())
                      if v in self.loop_scope]
            if not scopes:
                continue
            scope = min(scopes, key=lambda sc: sc.depth)
            if iv.iter_type == E.IterVarType.CommReduce:
                if reduce_scope is None or scope.depth < reduce_scope.depth:
                    reduce_scope = scope
            else:
                opaque[id(iv.var)] = scope
                for w in block.writes:
                    self.update(w.buffer, scope)

        def lift(region, is_reduce_write=False):
            scope = self.scopes[-1]
            for r in region.region:
                for v in _var_ids(r.min, set()) | _var_ids(r.extent, set()):
                    dom = opaque.get(v)
                    if dom is not None and dom.depth < scope.depth:
                        scope = dom
            if is_reduce_write and reduce_scope is not None and scope.depth > reduce_scope.depth:
                scope = reduce_scope
            self.update(region.buffer, scope)

        if opaque:
            for r in block.reads:
                lift(r)
            for w in block.writes:
                lift(w, reduce_scope is not None)
        elif reduce_scope is not None:
            for w in block.writes:
                lift(w, True)


def detect_buffer_access_lca(func: PrimFunc) -> dict:
    """``{buffer: stmt}``: for each buffer ``func`` accesses, the innermost For or Block
    enclosing all its accesses (``None``: the function's top level).  A buffer no statement
    uses is not listed.

    >>> from mlckit import tir
    >>> from mlckit.script import tir as T
    >>> @T.prim_func
    ... def f(a: T.Buffer((4, 4), "float32"), c: T.Buffer((4, 4), "float32")):
    ...     b = T.alloc_buffer((4, 4))
    ...     for i in range(4):
    ...         for j in range(4):
    ...             with T.block("B"):
    ...                 vi, vj = T.axis.remap("SS", [i, j])
    ...                 b[vi, vj] = a[vi, vj]
    ...         for j in range(4):
    ...             with T.block("C"):
    ...                 vi, vj = T.axis.remap("SS", [i, j])
    ...                 c[vi, vj] = b[vi, vj]
    >>> lca = tir.analysis.detect_buffer_access_lca(f)
    >>> sorted((buf.name, type(s).__name__) for buf, s in lca.items())
    [('a', 'Block'), ('b', 'For'), ('c', 'Block')]
    """
    det = _Detector(func)
    det.stmt(func.body)
    for key, buf in det.buffers.items():  # a global buffer: one copy per kernel launch
        if buf.scope in ("global", ""):
            for scope in det.blockidx:
                det.lca[key] = _lca(det.lca[key], scope)
    return {det.buffers[k]: det.lca[k].stmt for k in det.buffers}
