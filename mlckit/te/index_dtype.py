"""``create_prim_func(..., index_dtype_override=...)``: every index in one integer dtype
(TVM's IndexDataTypeNormalizer).

Buffer shapes, loop variables and bounds, block iterators and their bindings, and buffer
indices move to the target dtype (usually ``int64``); integer variables get a same-named
variable of that dtype.  Where an index meets a value of another dtype (``B[i] = i`` into an
``int32`` buffer) the value is cast back, so the stored values do not change.
"""

from __future__ import annotations

from mlckit.error import InternalError
from mlckit.tir import dtype as dt
from mlckit.tir import expr as E
from mlckit.tir import stmt as S
from mlckit.tir.buffer import Buffer, BufferRegion
from mlckit.tir.expr import IntImm, IterVar, PrimExpr, Range, Var, cast
from mlckit.tir.function import PrimFunc

_INDEX_TYPES = ("int32", "int64")


def normalize_index_dtype(func: PrimFunc, dtype: str) -> PrimFunc:
    """``func`` with all of its indices in ``dtype``."""
    n = _Normalizer(dtype)
    params = [n.var(p) if isinstance(p, Var) else p for p in func.params]
    buffer_map = {n.var(p): n.buffer(b) for p, b in func.buffer_map.items()}
    return func.replace(params=params, buffer_map=buffer_map, body=n.stmt(func.body))


class _Normalizer:
    def __init__(self, dtype: str):
        self.dtype = dtype
        self.vars: dict[int, Var] = {}
        self.buffers: dict[int, Buffer] = {}

    # -- leaves ---------------------------------------------------------------------------
    def var(self, v: Var) -> Var:
        if v.dtype not in _INDEX_TYPES or v.dtype == self.dtype:
            return v
        if id(v) not in self.vars:
            self.vars[id(v)] = v.replace(dtype=self.dtype)
        return self.vars[id(v)]

    def buffer(self, b: Buffer) -> Buffer:
        if id(b) not in self.buffers:
            # elem_offset stays: mlckit's decl_buffer (and so the parser) always makes it int32
            self.buffers[id(b)] = b.replace(
                shape=[self.index(s) for s in b.shape],
                strides=[self.index(s) for s in b.strides],
            )
        return self.buffers[id(b)]

    # -- expressions ----------------------------------------------------------------------
    def index(self, e):
        """An index expression, in the target dtype."""
        if isinstance(e, IntImm) and e.dtype in _INDEX_TYPES:
            return IntImm(self.dtype, e.value)
        e = self.expr(e)
        if isinstance(e, PrimExpr) and e.dtype in _INDEX_TYPES and e.dtype != self.dtype:
            return cast(e, self.dtype)
        return e

    def value(self, e, dtype: str):
        """A value expression, cast back to ``dtype`` if its variables changed it."""
        e = self.expr(e)
        return cast(e, dtype) if e.dtype != dtype else e

    def expr(self, e):
        if not isinstance(e, PrimExpr):
            return e
        if isinstance(e, Var):
            return self.var(e)
        if isinstance(e, E.Let):
            self.vars[id(e.var)] = e.var  # a value, not an index: keeps its dtype
            return e.replace(value=self.value(e.value, e.var.dtype), body=self.expr(e.body))
        if isinstance(e, E.BufferLoad):
            return E.BufferLoad(self.buffer(e.buffer), [self.index(i) for i in e.indices])
        if isinstance(e, E.BinaryOpExpr):
            a, b = self.expr(e.a), self.expr(e.b)
            if a.dtype != b.dtype and dt.is_int(a.dtype) and dt.is_int(b.dtype):
                wide = a.dtype if dt.bits(a.dtype) >= dt.bits(b.dtype) else b.dtype
                a, b = cast(a, wide), cast(b, wide)
            return e.replace(a=a, b=b) if (a is not e.a or b is not e.b) else e
        changes = {}
        for name in e.field_names():
            if name in ("op", "buffer"):
                continue
            old = getattr(e, name)
            if isinstance(old, PrimExpr):
                new = self.expr(old)
            elif isinstance(old, list):
                new = [self.expr(x) for x in old]
            else:
                continue
            if new is not old:
                changes[name] = new
        return e.replace(**changes) if changes else e

    # -- statements -----------------------------------------------------------------------
    def stmt(self, s):
        if s is None:
            return None
        if isinstance(s, S.For):
            return s.replace(loop_var=self.var(s.loop_var), min=self.index(s.min),
                             extent=self.index(s.extent), body=self.stmt(s.body))
        if isinstance(s, S.BlockRealize):
            return s.replace(iter_values=[self.index(v) for v in s.iter_values],
                             predicate=self.expr(s.predicate), block=self.stmt(s.block))
        if isinstance(s, S.Block):
            return s.replace(
                iter_vars=[self.iter_var(iv) for iv in s.iter_vars],
                reads=[self.region(r) for r in s.reads],
                writes=[self.region(r) for r in s.writes],
                alloc_buffers=[self.buffer(b) for b in s.alloc_buffers],
                annotations={k: self.annotation(v) for k, v in s.annotations.items()},
                init=self.stmt(s.init), body=self.stmt(s.body),
            )
        if isinstance(s, S.BufferStore):
            buf = self.buffer(s.buffer)
            return S.BufferStore(buf, self.value(s.value, buf.dtype),
                                 [self.index(i) for i in s.indices])
        if isinstance(s, S.SeqStmt):
            return S.SeqStmt([self.stmt(x) for x in s.seq])
        if isinstance(s, S.LetStmt):
            self.vars[id(s.var)] = s.var  # a value, not an index: keeps its dtype
            return s.replace(value=self.value(s.value, s.var.dtype), body=self.stmt(s.body))
        if isinstance(s, S.IfThenElse):
            return s.replace(condition=self.expr(s.condition), then_case=self.stmt(s.then_case),
                             else_case=self.stmt(s.else_case))
        raise InternalError(f"index_dtype_override: unexpected statement {type(s).__name__}")

    def iter_var(self, iv: IterVar) -> IterVar:
        dom = Range(self.index(iv.dom.min), self.index(iv.dom.extent))
        return iv.replace(dom=dom, var=self.var(iv.var))

    def region(self, r: BufferRegion) -> BufferRegion:
        return BufferRegion(self.buffer(r.buffer),
                            [Range(self.index(x.min), self.index(x.extent)) for x in r.region])

    def annotation(self, value):
        if isinstance(value, Buffer):
            return self.buffer(value)
        if isinstance(value, list):
            return [self.annotation(v) for v in value]
        return value
