"""TIR well-formedness: the checks run on every PrimFunc a script defines.

``verify_well_formed(func)`` raises ``mlckit.DiagnosticError`` located at the offending
statement (the span the parser gave it) when:

- a variable is used where it is not defined (a symbolic size that appears in no parameter
  buffer's shape, a loop variable used after its loop, a block iterator used outside its block);
- a loop variable is used inside a block that has iterators (TVM's ``BlockVarAccessVerifier``:
  a block sees the loops around it only through its iterator bindings);
- a Var is defined twice (a nested loop may reuse an enclosing loop's name, as in TVM: it is
  another variable, printed ``i_1``);
- a buffer is used outside the scope that defines it (a block's ``T.alloc_buffer``), or is not
  defined at all, or is indexed with the wrong number of indices;
- a block has no name;
- a block iterator's binding can leave its domain (checked when the loop bounds and the domain
  are constants and the block has no ``T.where`` predicate).

Example::

    verify_well_formed(func)          # returns True, or raises DiagnosticError
"""

from __future__ import annotations

from mlckit.ir.diagnostics import DiagnosticError
from mlckit.ir.node import Node
from mlckit.tir import expr as E
from mlckit.tir import stmt as S
from mlckit.tir.buffer import Buffer
from mlckit.tir.function import PrimFunc

from .block_access_region import Interval, Point, eval_set


def verify_well_formed(func: PrimFunc, source: str | None = None) -> bool:
    """Check ``func``; raise ``DiagnosticError`` (rendered with ``source`` if given).

    >>> from mlckit import tir
    >>> from mlckit.script import tir as T
    >>> @T.prim_func
    ... def copy(a: T.Buffer((4,), "float32"), b: T.Buffer((4,), "float32")):
    ...     for i in range(4):
    ...         with T.block("B"):
    ...             vi = T.axis.spatial(4, i)
    ...             b[vi] = a[vi]
    >>> loop = copy.body.block.body
    >>> tir.analysis.verify_well_formed(copy)
    True
    """
    _Verifier(func, source).run()
    return True


def _vars_in(obj, out: list) -> list:
    if isinstance(obj, E.Var):
        out.append(obj)
    elif isinstance(obj, list):
        for x in obj:
            _vars_in(x, out)
    elif isinstance(obj, Node) and not getattr(obj, "_is_var", False):
        for name in obj.field_names():
            if name not in ("buffer", "op"):
                _vars_in(getattr(obj, name), out)
    return out


def _buffer_vars(buffer: Buffer) -> list:
    return _vars_in(list(buffer.shape) + list(buffer.strides) + [buffer.elem_offset], [])


class _Verifier:
    def __init__(self, func: PrimFunc, source: str | None):
        self.func = func
        self.source = source
        self.defined: dict[int, E.Var] = {}
        self.buffers: dict[int, Buffer] = {}
        self.loop_vars: dict[int, int] = {}  # id(loop var) -> number of enclosing non-opaque blocks
        self.loop_names: list[str] = []
        self.blocks: list[S.Block] = []  # enclosing non-opaque blocks
        self.spans: list = [func.span]
        self.ever_defined: set[int] = set()
        self.alloc_owner: dict[int, str] = {}
        self.dom_map: dict = {}

    # -- reporting ----------------------------------------------------------------------------
    def fail(self, message: str, span=None):
        span = span or next((s for s in reversed(self.spans) if s is not None), None)
        raise DiagnosticError(message, span, self.source)

    def define(self, var: E.Var, what: str):
        if id(var) in self.defined or id(var) in self.ever_defined:
            self.fail(f"the variable {var.name_hint!r} is defined twice (as {what}); every "
                      "loop, let and block iterator needs a variable of its own")
        self.defined[id(var)] = var
        self.ever_defined.add(id(var))

    # -- entry -----------------------------------------------------------------------------
    def run(self):
        self._collect_allocs(self.func.body)
        for p in self.func.params:
            self.defined[id(p)] = p
        for buf in self.func.buffer_map.values():
            for v in _buffer_vars(buf) + [buf.data]:
                self.defined.setdefault(id(v), v)
            self.buffers[id(buf)] = buf
        self.stmt(self.func.body)

    def _collect_allocs(self, s):
        if isinstance(s, S.Block):
            for b in s.alloc_buffers:
                self.alloc_owner[id(b)] = s.name_hint
        if isinstance(s, Node):
            for name in s.field_names():
                value = getattr(s, name)
                for v in value if isinstance(value, list) else [value]:
                    if isinstance(v, S.Stmt):
                        self._collect_allocs(v)

    # -- statements ------------------------------------------------------------------------
    def stmt(self, s):
        if s is None:
            return
        self.spans.append(s.span)
        try:
            method = getattr(self, f"visit_{type(s).__name__}", None)
            if method is not None:
                method(s)
            else:
                self.generic(s)
        finally:
            self.spans.pop()

    def generic(self, node):
        for name in node.field_names():
            value = getattr(node, name)
            for v in value if isinstance(value, list) else [value]:
                if isinstance(v, S.Stmt):
                    self.stmt(v)
                elif isinstance(v, E.PrimExpr):
                    self.expr(v)

    def visit_For(self, s: S.For):
        self.expr(s.min)
        self.expr(s.extent)
        name = s.loop_var.name_hint
        self.define(s.loop_var, "a loop variable")
        self.loop_vars[id(s.loop_var)] = len(self.blocks)
        self.loop_names.append(name)
        self.dom_map[id(s.loop_var)] = E.Range(s.min, s.extent)
        try:
            self.stmt(s.body)
        finally:
            self.loop_names.pop()
            del self.loop_vars[id(s.loop_var)]
            del self.defined[id(s.loop_var)]
            del self.dom_map[id(s.loop_var)]

    def visit_LetStmt(self, s: S.LetStmt):
        self.expr(s.value)
        self.define(s.var, "a let variable")
        self.stmt(s.body)
        del self.defined[id(s.var)]

    def visit_AttrStmt(self, s: S.AttrStmt):
        if isinstance(s.node, E.IterVar):
            self.expr(s.value)
            self.defined.setdefault(id(s.node.var), s.node.var)
            self.stmt(s.body)
            return
        self.generic(s)

    def visit_Allocate(self, s: S.Allocate):
        for e in s.extents:
            self.expr(e)
        self.defined[id(s.buffer_var)] = s.buffer_var
        self.stmt(s.body)

    def visit_DeclBuffer(self, s: S.DeclBuffer):
        self.check_buffer_shape(s.buffer)
        self.buffers[id(s.buffer)] = s.buffer
        self.stmt(s.body)
        self.buffers.pop(id(s.buffer), None)

    def visit_BufferStore(self, s: S.BufferStore):
        self.use_buffer(s.buffer, len(s.indices))
        self.expr(s.value)
        for i in s.indices:
            self.expr(i)

    def visit_BlockRealize(self, s: S.BlockRealize):
        block = s.block
        for v in s.iter_values:
            self.expr(v)
        self.expr(s.predicate)
        if len(s.iter_values) != len(block.iter_vars):
            self.fail(f"block {block.name_hint!r} has {len(block.iter_vars)} iterator(s) but "
                      f"{len(s.iter_values)} binding(s)")
        no_predicate = isinstance(s.predicate, E.IntImm) and bool(s.predicate.value)
        for iv, value in zip(block.iter_vars, s.iter_values):
            self.check_binding(block, iv, value, no_predicate)
        self.visit_Block(block, realized=True)

    def check_binding(self, block, iv: E.IterVar, value, no_predicate: bool):
        if not isinstance(value, E.PrimExpr) or not (value.dtype.startswith(("int", "uint"))):
            self.fail(f"block {block.name_hint!r}: iterator {iv.var.name_hint!r} must be bound "
                      f"to an integer expression", iv.span)
        if not no_predicate:
            return
        dom = iv.dom
        if not (isinstance(dom.min, E.IntImm) and isinstance(dom.extent, E.IntImm)):
            return
        s = eval_set(value, self.dom_map)
        if isinstance(s, Point):
            if not isinstance(s.expr, E.IntImm):
                return
            lo = hi = int(s.expr.value)
        elif isinstance(s, Interval) and s.lo.is_const() and s.hi.is_const():
            lo, hi = s.lo.const, s.hi.const
        else:
            return
        dlo, dhi = int(dom.min.value), int(dom.min.value) + int(dom.extent.value) - 1
        if lo < dlo or hi > dhi:
            values = f"{lo}" if lo == hi else f"{lo}..{hi}"
            self.fail(
                f"block {block.name_hint!r}: iterator {iv.var.name_hint!r} is bound to "
                f"{value.script() if hasattr(value, 'script') else value}, which takes the values "
                f"{values}, outside its domain [{dlo}, {dhi + 1}); make the domain match the "
                "loop, or add a T.where predicate",
                iv.span,
            )

    def visit_Block(self, block: S.Block, realized: bool = False):
        self.spans.append(block.span)
        try:
            self._block(block)
        finally:
            self.spans.pop()

    def _block(self, block: S.Block):
        non_opaque = bool(block.iter_vars)
        for iv in block.iter_vars:
            self.expr(iv.dom.min)
            self.expr(iv.dom.extent)
        if non_opaque:
            self.blocks.append(block)
        new_vars, new_bufs = [], []
        try:
            for iv in block.iter_vars:
                self.define(iv.var, "a block iterator")
                new_vars.append(iv.var)
            for buf in block.alloc_buffers:
                self.check_buffer_shape(buf)
                self.buffers[id(buf)] = buf
                new_bufs.append(buf)
            for mb in block.match_buffers:
                self.region(mb.source)
                for v in _buffer_vars(mb.buffer):
                    if id(v) not in self.defined:
                        self.defined[id(v)] = v
                        new_vars.append(v)
                self.buffers[id(mb.buffer)] = mb.buffer
                new_bufs.append(mb.buffer)
            # the body first: regions detected from it would point at the block, not the line
            if block.init is not None:
                self.stmt(block.init)
            self.stmt(block.body)
            for r in list(block.reads) + list(block.writes):
                self.region(r)
        finally:
            if non_opaque:
                self.blocks.pop()
            for v in new_vars:
                self.defined.pop(id(v), None)
            for b in new_bufs:
                self.buffers.pop(id(b), None)

    def region(self, region):
        self.use_buffer(region.buffer, len(region.region))
        for r in region.region:
            self.expr(r.min)
            self.expr(r.extent)

    def check_buffer_shape(self, buf: Buffer):
        for v in _buffer_vars(buf):
            self.use_var(v)

    # -- expressions -------------------------------------------------------------------------
    def use_buffer(self, buf: Buffer, n_indices: int):
        if id(buf) not in self.buffers and id(buf.data) in self.defined \
                and id(buf) not in self.alloc_owner:
            # a view of a pointer in scope (T.Buffer(shape, dtype, data) after T.allocate),
            # which TVM accepts without a DeclBuffer
            self.check_buffer_shape(buf)
        elif id(buf) not in self.buffers:
            owner = self.alloc_owner.get(id(buf))
            if owner is not None:
                self.fail(f"the buffer {buf.name!r} is used outside the block {owner!r} that "
                          "allocates it; allocate it in a block that encloses every use")
            self.fail(f"the buffer {buf.name!r} is not defined in this function: it is neither "
                      "a parameter nor allocated with T.alloc_buffer")
        if n_indices != len(buf.shape):
            self.fail(f"buffer {buf.name!r} has {len(buf.shape)} dimension(s) but is indexed "
                      f"with {n_indices} index(es)")

    def use_var(self, v: E.Var):
        if id(v) not in self.defined:
            if v.dtype == "handle":
                return
            if id(v) in self.ever_defined:
                self.fail(f"the variable {v.name_hint!r} is used outside the loop, let or block "
                          "that defines it")
            self.fail(f"the variable {v.name_hint!r} is used but never defined: a symbolic size "
                      "must appear in the shape of a parameter buffer (or be a scalar parameter)")
        depth = self.loop_vars.get(id(v))
        if depth is not None and depth < len(self.blocks):
            block = self.blocks[-1]
            where = ("outside any block" if depth == 0
                     else f"in block {self.blocks[depth - 1].name_hint!r}")
            self.fail(
                f"the loop variable {v.name_hint!r} (defined {where}) is used inside block "
                f"{block.name_hint!r}, which has iterators: a block sees outer loops only "
                f"through its iterators; bind one (e.g. v = T.axis.spatial(..., "
                f"{v.name_hint})) and use it instead"
            )

    def expr(self, e):
        if isinstance(e, E.Var):
            self.use_var(e)
            return
        if isinstance(e, E.BufferLoad):
            self.use_buffer(e.buffer, len(e.indices))
            for i in e.indices:
                self.expr(i)
            return
        if isinstance(e, E.Let):
            self.expr(e.value)
            self.define(e.var, "a let variable")
            self.expr(e.body)
            del self.defined[id(e.var)]
            return
        if not isinstance(e, Node):
            return
        for name in e.field_names():
            if name in ("op",):
                continue
            value = getattr(e, name)
            for v in value if isinstance(value, list) else [value]:
                if isinstance(v, E.PrimExpr):
                    self.expr(v)
