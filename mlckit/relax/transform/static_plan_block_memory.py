"""``StaticPlanBlockMemory``: share storage between intermediate tensors whose lifetimes do
not overlap (as TVM's ``relax.transform.StaticPlanBlockMemory``).

It plans the ``R.builtin.alloc_tensor`` calls that ``CallTIRRewrite`` made, block by block:

1. *Tokens.* Each allocation gets a storage token; a token is "used" by every call to a
   PrimFunc or packed function that receives the tensor (or a variable / tuple aliasing it),
   and counted once per use.  Tokens that escape planning are discarded: the function's
   return value, tensors passed to other functions or ops (they might keep a reference),
   tensors used across blocks or in an ``if``.
2. *Allocation.* Walking the bindings in order, an allocation reuses a released token of
   the same dtype and storage scope: first the smallest one at least as large, else the
   largest smaller one (enlarged), within a factor of 16 in size; otherwise it gets a new
   storage.  After each call, tokens whose use count drops to zero are released.
3. *Rewrite.* A planned allocation becomes
   ``R.memory.alloc_tensor(storage, R.prim_value(0), shape, dtype)``, with the
   ``storage = R.memory.alloc_storage(R.shape([bytes]), R.prim_value(0), R.str("global"),
   R.dtype(dtype))`` emitted just before its first user.  Unplanned allocations stay
   ``R.builtin.alloc_tensor``.

Symbolic shapes: a function attribute ``tir_var_upper_bound`` (``{"n": 64}``) sizes tensors
by the upper bound; without one, a symbolic-size tensor reuses only storage of exactly the
same symbolic size.

Example::

    mod = StaticPlanBlockMemory()(CallTIRRewrite()(ToNonDataflow()(mod)))
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from mlckit.ir.module import GlobalVar, IRModule
from mlckit.ir.op import Op
from mlckit.ir.structural import structural_equal
from mlckit.ir.transform import ModulePass, PassInfo
from mlckit.tir import dtype as dt
from mlckit.tir import expr as tx
from mlckit.tir.function import PrimFunc

from ..expr import (
    Call,
    DataTypeImm,
    ExternFunc,
    Function,
    If,
    MatchCast,
    PrimValue,
    SeqExpr,
    ShapeExpr,
    StringImm,
    Tuple,
    TupleGetItem,
    Var,
)
from ..expr_functor import ExprMutator

MATCH_RANGE = 16
INPLACE_MEMORY_OPS = ("relax.reshape", "relax.memory.view", "relax.memory.ensure_zero_offset")


@dataclass(eq=False)
class StorageToken:
    """One planned storage: its size in bytes (an int, or a PrimExpr when symbolic)."""

    shape: list
    dtype: str
    scope: str
    device: int
    ref_counter: int = 0
    storage_id: int = -1
    discarded: bool = False
    block: Any = None
    bytes: Any = None
    users: list = field(default_factory=list)

    def const_bytes(self) -> int:
        return self.bytes if isinstance(self.bytes, int) else -1


def _leaves(tokens) -> list:
    if tokens is None:
        return []
    if isinstance(tokens, StorageToken):
        return [tokens]
    return [t for sub in tokens for t in _leaves(sub)]


def _upper_bound(expr, bounds: dict) -> Any:
    """The largest value of ``expr`` when each var ranges over [lo, hi] (None: unknown)."""
    lo_hi = _interval(expr, bounds)
    if lo_hi is None or math.isinf(lo_hi[1]):
        return None
    return int(lo_hi[1])


def _interval(e, bounds):
    if isinstance(e, tx.IntImm):
        return (e.value, e.value)
    if isinstance(e, tx.Var):
        return bounds.get(e.name_hint)
    name = type(e).__name__
    if name in ("Add", "Sub", "Mul", "Max", "Min", "FloorDiv", "Div"):
        a, b = _interval(e.a, bounds), _interval(e.b, bounds)
        if a is None or b is None:
            return None
        if name == "Add":
            return (a[0] + b[0], a[1] + b[1])
        if name == "Sub":
            return (a[0] - b[1], a[1] - b[0])
        if name == "Max":
            return (max(a[0], b[0]), max(a[1], b[1]))
        if name == "Min":
            return (min(a[0], b[0]), min(a[1], b[1]))
        if name == "Mul":
            c = [x * y for x in a for y in b]
            return (min(c), max(c))
        if b[0] > 0:  # division by a positive interval
            c = [x // y for x in a for y in b]
            return (min(c), max(c))
    return None


def _bytes(shape: list, dtype: str) -> Any:
    size = (dt.bits(dtype) + 7) // 8
    if all(isinstance(d, tx.IntImm) for d in shape):
        for d in shape:
            size *= int(d.value)
        return int(size)
    expr = tx.IntImm("int64", size)
    for d in shape:
        expr = expr * d
    return _fold(expr)


def _fold(expr):
    try:
        from mlckit.arith import Analyzer

        return Analyzer().simplify(expr)
    except Exception:  # noqa: BLE001 - the analyzer is an optimisation here
        return expr


class _Planner:
    """Phases 1 and 2 for one function."""

    def __init__(self, mod: IRModule, func: Function):
        self.mod = mod
        self.func = func
        self.tokens: dict[int, Any] = {}       # id(expr) -> token structure
        self.alloc_token: dict[int, StorageToken] = {}  # id(alloc call) -> prototype
        ub = func.attrs.get("tir_var_upper_bound") or {}
        lb = func.attrs.get("tir_var_lower_bound") or {}
        self.bounds = {name: (int(getattr(lb.get(name, 0), "value", lb.get(name, 0))),
                              int(getattr(v, "value", v))) for name, v in ub.items()}

    # -- phase 1 -----------------------------------------------------------------------
    def init(self) -> None:
        body = self.func.body
        if not isinstance(body, SeqExpr):
            return
        for block in body.blocks:
            for b in block.bindings:
                self._init_binding(b, block)
        self.discard(self.get(body.body))

    def get(self, expr) -> Any:
        if isinstance(expr, Tuple):
            return [self.get(f) for f in expr.fields]
        if isinstance(expr, TupleGetItem):
            tup = self.get(expr.tuple_value)
            return tup[expr.index] if isinstance(tup, list) else None
        return self.tokens.get(id(expr))

    def discard(self, tokens) -> None:
        for t in _leaves(tokens):
            t.discarded = True

    def _is_prim_func(self, op) -> bool:
        return isinstance(op, GlobalVar) and op in self.mod and isinstance(self.mod[op], PrimFunc)

    def _init_binding(self, b, block) -> None:
        value = b.value
        if isinstance(b, MatchCast):
            self.discard(self.get(value))
            return
        if isinstance(value, Call):
            op = value.op
            if isinstance(op, Op) and op.name == "relax.builtin.alloc_tensor":
                token = self._create_token(value, block)
                if token is not None:
                    self.tokens[id(b.var)] = token
                return
            if isinstance(op, Op) and op.name in INPLACE_MEMORY_OPS:
                self.tokens[id(b.var)] = self.get(value.args[0])
                return
            dyn = isinstance(op, Op) and op.name == "relax.vm.call_tir_dyn"
            if self._is_prim_func(op) or isinstance(op, ExternFunc) or dyn:
                args = value.args[1].fields if dyn else value.args
                for arg in args:
                    for t in _leaves(self.get(arg)):
                        if t.block is not block:
                            t.discarded = True
                        t.ref_counter += 1
            else:
                for arg in value.args:
                    self.discard(self.get(arg))
            return
        if isinstance(value, If):
            self.discard(self.get(value.cond))
            return
        if isinstance(value, (Var, Tuple, TupleGetItem)):
            self.tokens[id(b.var)] = self.get(value)

    def _create_token(self, call: Call, block) -> StorageToken | None:
        shape, dtype, device, scope = call.args
        if not (isinstance(shape, ShapeExpr) and isinstance(dtype, DataTypeImm) and dtype.value):
            return None
        dims = []
        for d in shape.values:
            if isinstance(d, tx.IntImm):
                dims.append(d)
                continue
            ub = _upper_bound(d, self.bounds)
            dims.append(tx.IntImm("int64", ub) if ub is not None else d)
        dev = int(device.value.value) if isinstance(device, PrimValue) else 0
        token = StorageToken(dims, dtype.value, scope.value if isinstance(scope, StringImm)
                             else "global", dev, block=block, bytes=_bytes(dims, dtype.value))
        self.alloc_token[id(call)] = token
        return token

    # -- phase 2 -----------------------------------------------------------------------
    def allocate(self) -> dict[int, StorageToken]:
        """id(alloc call) -> the storage token it uses (a planned allocation)."""
        self.pool: dict[tuple, list[StorageToken]] = {}
        self.n_storage = 0
        cur: dict[int, Any] = {}
        planned: dict[int, StorageToken] = {}

        def get(expr):
            if isinstance(expr, Tuple):
                return [get(f) for f in expr.fields]
            if isinstance(expr, TupleGetItem):
                tup = get(expr.tuple_value)
                return tup[expr.index] if isinstance(tup, list) else None
            return cur.get(id(expr))

        body = self.func.body
        if not isinstance(body, SeqExpr):
            return planned
        for block in body.blocks:
            for b in block.bindings:
                value = b.value
                if isinstance(b, MatchCast):
                    continue
                if isinstance(value, Call):
                    op = value.op
                    if isinstance(op, Op) and op.name == "relax.builtin.alloc_tensor":
                        proto = self.alloc_token.get(id(value))
                        if proto is None or proto.discarded:
                            continue
                        token = self._request(proto)
                        planned[id(value)] = token
                        cur[id(b.var)] = token
                        continue
                    if isinstance(op, Op) and op.name in INPLACE_MEMORY_OPS:
                        cur[id(b.var)] = get(value.args[0])
                        continue
                    dyn = isinstance(op, Op) and op.name == "relax.vm.call_tir_dyn"
                    args = value.args[1].fields if dyn else value.args
                    for arg in args:
                        for t in _leaves(get(arg)):
                            t.ref_counter -= 1
                            if t.ref_counter == 0:
                                self._release(t)
                elif isinstance(value, (Var, Tuple, TupleGetItem)):
                    cur[id(b.var)] = get(value)
        return planned

    def _request(self, proto: StorageToken) -> StorageToken:
        if proto.ref_counter > 0:
            pool = self.pool.setdefault((proto.scope, proto.dtype), [])
            size = proto.const_bytes()
            found = None
            if size == -1:
                for t in pool:
                    if t.const_bytes() == -1 and structural_equal(t.bytes, proto.bytes):
                        found = t
                        break
            else:
                sized = sorted((t for t in pool if t.const_bytes() != -1),
                               key=lambda t: t.const_bytes())
                in_range = [t for t in sized
                            if size // MATCH_RANGE <= t.const_bytes() <= size * MATCH_RANGE]
                larger = [t for t in in_range if t.const_bytes() >= size]
                smaller = [t for t in in_range if t.const_bytes() < size]
                if larger:
                    found = larger[0]
                elif smaller:
                    found = smaller[-1]
                    found.bytes = size
            if found is not None:
                pool.remove(found)
                found.ref_counter = proto.ref_counter
                return found
        proto.storage_id = self.n_storage
        self.n_storage += 1
        return proto

    def _release(self, token: StorageToken) -> None:
        self.pool.setdefault((token.scope, token.dtype), []).append(token)


class _Rewriter(ExprMutator):
    def __init__(self, planned: dict[int, StorageToken]):
        super().__init__()
        self.planned = planned
        self.storage_var: dict[int, Var] = {}

    def visit_call_(self, call: Call):
        token = self.planned.get(id(call))
        if token is None:
            return super().visit_call_(call)
        storage = self.storage_var.get(id(token))
        if storage is None:
            size = token.bytes if isinstance(token.bytes, tx.PrimExpr) else tx.IntImm("int64", token.bytes)
            storage = self.emit(Call(Op.get("relax.memory.alloc_storage"),
                                     [ShapeExpr([size]), PrimValue(token.device),
                                      StringImm(token.scope), DataTypeImm(token.dtype)]),
                                "storage")
            self.storage_var[id(token)] = storage
        shape, dtype = call.args[0], call.args[1]
        return Call(Op.get("relax.memory.alloc_tensor"), [storage, PrimValue(0), shape, dtype],
                    span=call.span)

def plan_function(mod: IRModule, func: Function) -> tuple[Function, int]:
    """Plan one function; returns the new function and the number of storages it uses."""
    planner = _Planner(mod, func)
    planner.init()
    planned = planner.allocate()
    if not planned:
        return func, 0
    new = _Rewriter(planned).visit_expr(func)
    return new, planner.n_storage


def _run(mod: IRModule, ctx) -> IRModule:
    out = mod.copy()
    for gv, func in list(mod.functions.items()):
        if isinstance(func, Function):
            out.functions[gv], _ = plan_function(mod, func)
    return out


def StaticPlanBlockMemory() -> ModulePass:  # noqa: N802 - TVM's name
    """The pass planning the storage of intermediate tensors (see the module doc).

    Example::

        mod = StaticPlanBlockMemory()(mod)
    """
    return ModulePass(_run, PassInfo(0, "StaticPlanBlockMemory"))


__all__ = ["StaticPlanBlockMemory", "StorageToken", "plan_function"]
