"""How ``FuseTIR`` maps the buffers of the fused kernels onto one PrimFunc: symbolic shapes
matched between a kernel's parameters and its arguments (``SymbolicMatcher``), parameters
and intermediates replaced by the fused function's buffers (``BufferSubstitutor``), regions
united, block names made unique; and ``FuseTIRError``, what FuseTIR raises.
"""

from __future__ import annotations

from mlckit.arith.analyzer import Analyzer
from mlckit.error import TVMValueError
from mlckit.ir.node import Node
from mlckit.tir import expr as tx
from mlckit.tir import stmt as S
from mlckit.tir.buffer import Buffer, BufferRegion, MatchBufferRegion


class FuseTIRError(TVMValueError):
    """A primitive function FuseTIR cannot turn into one PrimFunc (what it contains is named).

    Example::

        try:
            FuseTIR()(mod)
        except FuseTIRError as err:
            print(err)      # FuseTIR: a relax.Constant inside the primitive function ...
    """


# -- symbolic shapes ----------------------------------------------------------------------------------
class SymbolicMatcher:
    """Match a kernel's parameter shapes against the shapes it is called with, collecting
    ``kernel variable -> caller expression`` (TVM's SymbolicMatcher)."""

    def __init__(self, remap: dict[int, tuple]):
        self.remap = remap  # id(var) -> (var, value)
        self.must_prove: list = []

    def match_all(self, params: list, args: list, what: str) -> None:
        if len(params) != len(args):
            raise FuseTIRError(f"FuseTIR: {what} has {len(params)} dimensions, the value passed "
                               f"to it {len(args)}")
        for p, a in zip(params, args):
            self.match(p, a, what)

    def match(self, param, arg, what: str) -> None:
        if param is arg:
            return
        if isinstance(param, tx.Var):
            hit = self.remap.get(id(param))
            if hit is not None:
                self.match(hit[1], arg, what)
            else:
                self.remap[id(param)] = (param, arg)
            return
        if isinstance(param, tx.IntImm):
            if not (isinstance(arg, tx.IntImm) and int(arg.value) == int(param.value)):
                raise FuseTIRError(f"FuseTIR: {what} expects the extent {param.value}, but is "
                                   f"given a value of extent {arg!r}")
            return
        if type(param) is type(arg) and isinstance(param, tx.BinaryOpExpr):
            self.match(param.a, arg.a, what)
            self.match(param.b, arg.b, what)
            return
        self.must_prove.append((param, arg, what))

    def check(self) -> None:
        vmap = {k: v for k, (_, v) in self.remap.items()}
        ana = Analyzer()
        for param, arg, what in self.must_prove:
            from mlckit.arith.analyzer import substitute

            diff = ana.simplify(substitute(param, vmap) - arg)
            if isinstance(diff, tx.IntImm) and int(diff.value) != 0:
                raise FuseTIRError(f"FuseTIR: {what}: the extent {param!r} cannot match {arg!r}")


# -- buffer substitution ---------------------------------------------------------------------------
class BufferSubstitutor:
    """Replace buffers (and the variables of ``var_map``) throughout statements (TVM's
    FuseTIRBufferSubstitutor)."""

    def __init__(self, buffer_map: dict[int, Buffer], var_map: dict[int, object]):
        self.buffer_map = dict(buffer_map)
        self.var_map = dict(var_map)
        self.keep: list = []

    def add_data_vars(self, pairs: list) -> None:
        for old, new in pairs:
            if old.data is not new.data:
                self.var_map[id(old.data)] = new.data

    def expr(self, e):
        if isinstance(e, tx.Var):
            return self.var_map.get(id(e), e)
        if isinstance(e, tx.BufferLoad):
            indices = [self.expr(i) for i in e.indices]
            buf = self.buffer_map.get(id(e.buffer), e.buffer)
            if buf is e.buffer and all(a is b for a, b in zip(indices, e.indices)):
                return e
            return tx.BufferLoad(buf, indices)
        if not isinstance(e, tx.PrimExpr):
            return e
        return self._rebuild(e)

    def _rebuild(self, node):
        changes = {}
        for name in type(node).field_names():
            if name == "op":
                continue
            old = getattr(node, name)
            new = self._field(old)
            if new is not old:
                changes[name] = new
        return node.replace(**changes) if changes else node

    def _field(self, value):
        if isinstance(value, tx.PrimExpr):
            return self.expr(value)
        if isinstance(value, S.Stmt):
            return self.stmt(value)
        if isinstance(value, Buffer):
            return self.buffer_map.get(id(value), value)
        if isinstance(value, BufferRegion):
            return self.region(value)
        if isinstance(value, (tx.Range, tx.IterVar)):
            return self._rebuild(value)
        if isinstance(value, list):
            new = [self._field(v) for v in value]
            return value if all(a is b for a, b in zip(new, value)) else new
        return value

    def region(self, region: BufferRegion) -> BufferRegion:
        buf = self.buffer_map.get(id(region.buffer), region.buffer)
        ranges = [self._rebuild(r) for r in region.region]
        if buf is region.buffer and all(a is b for a, b in zip(ranges, region.region)):
            return region
        return BufferRegion(buf, ranges)

    def allocated(self, buffer: Buffer) -> Buffer:
        """An allocated buffer with its shape substituted (registered as its replacement)."""
        shape = [self.expr(s) for s in buffer.shape]
        strides = [self.expr(s) for s in buffer.strides]
        offset = self.expr(buffer.elem_offset)
        if all(a is b for a, b in zip(shape, buffer.shape)) and offset is buffer.elem_offset \
                and all(a is b for a, b in zip(strides, buffer.strides)):
            return buffer
        new = buffer.replace(shape=shape, strides=strides, elem_offset=offset)
        self.buffer_map[id(buffer)] = new
        self.keep.append(buffer)
        return new

    def stmt(self, s):
        if isinstance(s, S.Block):
            return self.block(s)
        return self._rebuild(s)

    def block(self, b: S.Block) -> S.Block:
        match = []
        for m in b.match_buffers:
            src = self.region(m.source)
            tgt = self.allocated(m.buffer)
            match.append(m if src is m.source and tgt is m.buffer else MatchBufferRegion(tgt, src))
        allocs = [self.allocated(a) for a in b.alloc_buffers]
        iter_vars = [self._rebuild(iv) for iv in b.iter_vars]
        reads = union_regions([self.region(r) for r in b.reads])
        writes = union_regions([self.region(r) for r in b.writes])
        init = self.stmt(b.init) if b.init is not None else None
        body = self.stmt(b.body)
        return b.replace(iter_vars=iter_vars, reads=reads, writes=writes, init=init, body=body,
                         alloc_buffers=allocs, match_buffers=match)


def union_regions(regions: list) -> list:
    """One region per buffer (the first), as TVM's UnionAccessRegion."""
    seen: set[int] = set()
    out = []
    for r in regions:
        if id(r.buffer) not in seen:
            seen.add(id(r.buffer))
            out.append(r)
    return out


def deduplicate_block_names(stmt):
    """Blocks renamed so that each name occurs once: ``T_add``, ``T_add_1``… as TVM's
    BlockNameDeduplicator (trailing digits count up: ``add2`` becomes ``add3``)."""
    used: set[str] = set()

    def unique(name: str) -> str:
        if name not in used:
            used.add(name)
            return name
        base = name.rstrip("0123456789")
        counter = int(name[len(base):]) + 1 if len(base) < len(name) else 1
        while f"{base}{counter}" in used:
            counter += 1
        used.add(f"{base}{counter}")
        return f"{base}{counter}"

    def go(s):
        if isinstance(s, Node) and not isinstance(s, (tx.PrimExpr, Buffer)):
            changes = {}
            for name in type(s).field_names():
                old = getattr(s, name)
                if isinstance(old, S.Stmt):
                    new = go(old)
                elif isinstance(old, list) and any(isinstance(x, S.Stmt) for x in old):
                    new = [go(x) if isinstance(x, S.Stmt) else x for x in old]
                else:
                    continue
                if new is not old:
                    changes[name] = new
            s = s.replace(**changes) if changes else s
            if isinstance(s, S.Block):
                name = unique(s.name_hint)
                if name != s.name_hint:
                    s = s.replace(name_hint=name)
        return s

    return go(stmt)


