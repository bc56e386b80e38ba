"""Helpers the primitives share: rebuilding statements, substituting variables, walking.

IR nodes are immutable, so a primitive builds a new function body.  It does so through a
``Rewrite``: every For or Block it derives from an old one (``rw.derive(old, body=...)``) is
remembered, so that the schedule's loop and block references (srefs) follow the new nodes.
"""

from __future__ import annotations

from mlckit.arith.analyzer import substitute
from mlckit.tir import stmt as S
from mlckit.tir.buffer import Buffer, BufferRegion, MatchBufferRegion
from mlckit.tir.expr import IterVar, PrimExpr, Range
from mlckit.tir.expr_functor import load_with, map_loads
from mlckit.tir.stmt_functor import child_nodes


class Rewrite:
    """Records which new For/Block nodes continue which old ones (``reuse``)."""

    def __init__(self):
        self.reuse: dict[int, object] = {}
        self._keep: list = []

    def derive(self, old, **changes):
        new = old.replace(**changes)
        self.link(old, new)
        return new

    def link(self, old, new) -> None:
        """Declare that ``new`` continues ``old`` (its sref is kept)."""
        if isinstance(new, (S.For, S.Block)) and new is not old:
            self.reuse[id(new)] = old
            self._keep += [old, new]


class Mutator:
    """A post-order statement rewriter; override ``visit_expr`` or ``visit_<Type>``."""

    def __init__(self, rw: Rewrite):
        self.rw = rw

    def visit_stmt(self, s):
        method = getattr(self, "visit_" + type(s).__name__, None)
        if method is not None:
            return method(s)
        return self.generic(s)

    def visit_expr(self, e):
        return e

    def visit_buffer(self, b):
        return b

    def generic(self, s):
        changes = {}
        for name in s.field_names():
            value = getattr(s, name)
            new = self.field(value)
            if new is not value:
                changes[name] = new
        if not changes:
            return s
        if isinstance(s, S.SeqStmt):
            return S.stmt_seq(*changes["seq"])
        if isinstance(s, (S.For, S.Block)):
            return self.rw.derive(s, **changes)
        return s.replace(**changes)

    def field(self, value):
        if isinstance(value, S.Stmt):
            return self.visit_stmt(value)
        if isinstance(value, PrimExpr):
            return self.visit_expr(value)
        if isinstance(value, Buffer):
            return self.visit_buffer(value)
        if isinstance(value, list):
            new = [self.field(v) for v in value]
            if all(a is b for a, b in zip(new, value)):
                return value
            return [v for v in new if v is not None] if any(isinstance(v, S.Stmt) for v in value) \
                else new
        if isinstance(value, BufferRegion):
            buf = self.visit_buffer(value.buffer)
            region = self.field(value.region)
            if buf is value.buffer and region is value.region:
                return value
            return BufferRegion(buf, region)
        if isinstance(value, MatchBufferRegion):
            src = self.field(value.source)
            return value if src is value.source else MatchBufferRegion(value.buffer, src)
        if isinstance(value, Range):
            mn, ext = self.visit_expr(value.min), self.visit_expr(value.extent)
            return value if (mn is value.min and ext is value.extent) else Range(mn, ext)
        if isinstance(value, IterVar):
            if value.dom is None:
                return value
            dom = self.field(value.dom)
            return value if dom is value.dom else value.replace(dom=dom)
        return value


class _Subst(Mutator):
    def __init__(self, rw, vmap, simplify=None):
        super().__init__(rw)
        self.vmap = vmap
        self.simplify = simplify

    def visit_expr(self, e):
        new = substitute(e, self.vmap)
        if new is not e and self.simplify is not None:
            new = self.simplify(new)
        return new


def substitute_stmt(stmt, vmap: dict, rw: Rewrite, simplify=None):
    """``stmt`` with the Vars of ``vmap`` replaced in every expression (simplified by
    ``simplify`` where something changed)."""
    if not vmap:
        return stmt
    return _Subst(rw, vmap, simplify).visit_stmt(stmt)


class _BufferSubst(Mutator):
    def __init__(self, rw, bmap):
        super().__init__(rw)
        self.bmap = bmap

    def visit_buffer(self, b):
        return self.bmap.get(id(b), b)

    def visit_expr(self, e):
        return replace_buffer_in_expr(e, self.bmap)

    def visit_BufferStore(self, s):
        new = self.generic(s)
        buf = self.bmap.get(id(new.buffer))
        return new.replace(buffer=buf) if buf is not None else new

    def visit_Block(self, b):
        new = self.generic(b)
        allocs = [self.bmap.get(id(x), x) for x in new.alloc_buffers]
        if any(a is not x for a, x in zip(allocs, new.alloc_buffers)):
            new = new.replace(alloc_buffers=allocs)
            self.rw.link(b, new)
        return new


def replace_buffer_in_expr(e, bmap: dict):
    """``e`` with loads of the buffers in ``bmap`` (id -> Buffer) redirected."""
    return map_loads(e, lambda ld, idx: load_with(ld, idx, bmap.get(id(ld.buffer))))


def replace_buffers(stmt, bmap: dict, rw: Rewrite):
    """``stmt`` with every use of the buffers in ``bmap`` (id(old) -> new) replaced."""
    return _BufferSubst(rw, bmap).visit_stmt(stmt)


class _Replace(Mutator):
    def __init__(self, rw, table):
        super().__init__(rw)
        self.table = table  # id(old stmt) -> new stmt or None (remove)

    def visit_stmt(self, s):
        if id(s) in self.table:
            return self.table[id(s)]
        return super().visit_stmt(s)

    def visit_expr(self, e):
        return e


def replace_stmts(root, table: dict, rw: Rewrite):
    """``root`` with the statements of ``table`` (id(old) -> new, None removes) swapped;
    ancestors are rebuilt and linked to their old selves."""
    return _Replace(rw, table).visit_stmt(root)


# -- walking ----------------------------------------------------------------------------------
def child_stmts(s) -> list:
    return [c for c in child_nodes(s) if isinstance(c, S.Stmt)]


def walk(s, fn) -> None:
    """Call ``fn`` on ``s`` and every statement under it (pre-order)."""
    if s is None:
        return
    if fn(s) is False:
        return
    for c in child_stmts(s):
        walk(c, fn)


def realizes_under(stmt, stop_at_blocks: bool = True) -> list:
    """The BlockRealizes under ``stmt`` in program order, not entering their blocks."""
    out: list = []

    def visit(s):
        if isinstance(s, S.BlockRealize):
            out.append(s)
            return not stop_at_blocks
        return True

    if isinstance(stmt, S.Block):
        for c in child_stmts(stmt):
            walk(c, visit)
    else:
        walk(stmt, visit)
    return out


