"""Caches: ``cache_read``, ``cache_write`` and ``set_scope``.

``cache_read(block, i, scope)`` copies the ``i``-th buffer the block reads into a new buffer
``<name>_<scope>`` (a new block of that name does the copy) and makes the readers use it;
``cache_write(block, i, scope)`` makes the block write a new buffer ``<name>_<scope>`` and
adds a block of that name copying it back.  Place the copy blocks with ``compute_at`` /
``reverse_compute_at``.  ``set_scope`` changes the storage scope of an allocated buffer.
"""

from __future__ import annotations

from mlckit.arith import Analyzer
from mlckit.arith.analyzer import substitute
from mlckit.ir import structural_equal
from mlckit.tir import expr as E
from mlckit.tir import stmt as S
from mlckit.tir.buffer import Buffer, BufferRegion, decl_buffer
from mlckit.tir.expr import IntImm, IterVar, Range, Var
from mlckit.tir.expr_functor import load_with, map_loads

from .error import ScheduleError
from .instruction import primitive
from .ir_utils import Mutator, Rewrite, child_stmts, replace_buffers, replace_stmts
from .query import child_block_srefs, consumer_srefs, scope_sref
from .rv import BlockRV, ExprRV

STORAGE_SCOPES = ("global", "shared", "shared.dyn", "local", "warp", "wmma.matrix_a",
                  "wmma.matrix_b", "wmma.accumulator")


def _check_scope(prim, scope):
    # as TVM's StorageScope, a scope may carry a tag after its rank: "global.A_reg"
    rank, _, tag = scope.partition(".") if isinstance(scope, str) else (scope, "", "")
    if scope not in STORAGE_SCOPES and not (rank in ("global", "shared", "local") and tag):
        raise ScheduleError(prim, f"unknown storage scope {scope!r} (one of "
                            f"{', '.join(STORAGE_SCOPES)}, or one of global/shared/local "
                            "with a tag, e.g. 'global.A_reg')")


def _loops_to_scope(block_sref, scope):
    out = []
    p = block_sref.parent
    while p is not None and p is not scope:
        if p.is_loop:
            out.append(p.stmt)
        p = p.parent
    return out


def _loops_from(state, loc, scope) -> list:
    """The loops from ``loc`` (the statement the copy goes into) up to ``scope``."""
    if loc is scope.stmt:
        return []
    sref = state.get_sref(loc)
    return ([sref.stmt] if sref.is_loop else []) + _loops_to_scope(sref, scope)


def _relaxed(block_sref, scope, region):
    """Per dimension of ``region``, over the loops up to ``scope``: ``(base, lo, hi)`` for
    the elements ``base + lo .. base + hi``.  ``base`` is None at the root; inside a block
    (after blockize) it is the part of the index fixed by the outer block's iterators, so the
    copy covers only what this instance of the scope touches."""
    ana = Analyzer()
    loops = _loops_to_scope(block_sref, scope)
    for lp in loops:
        ana.bind(lp.loop_var, Range(lp.min, lp.extent))
    realize = block_sref.realize
    vmap = {iv.var: v for iv, v in zip(realize.block.iter_vars, realize.iter_values)}
    zero = {lp.loop_var: IntImm(lp.loop_var.dtype, 0) for lp in loops}
    out = []
    for rng in region:
        first = substitute(rng.min, vmap)
        last = substitute(rng.min + rng.extent - 1, vmap)
        base = ana.simplify(substitute(first, zero))
        if isinstance(base, IntImm):
            lo = ana.const_int_bound(first).min_value
            hi = ana.const_int_bound(last).max_value
            out.append((None, lo, hi))
            continue
        lo = ana.const_int_bound(first - base).min_value
        hi = ana.const_int_bound(last - base).max_value
        if lo == float("-inf") or hi == float("inf"):
            out.append((None, float("-inf"), float("inf")))
        else:
            out.append((base, lo, hi))
    return out


def _union_regions(a, b):
    if a is None:
        return b
    out = []
    for (ba, la, ha), (bb, lb, hb) in zip(a, b):
        if ba is None and bb is None or ba is not None and bb is not None and \
                structural_equal(ba, bb):
            out.append((ba, min(la, lb), max(ha, hb)))
        else:
            out.append((None, float("-inf"), float("inf")))
    return out


def _copy_block(name, src, dst, bounds, buffer, loops_above=()):
    """Loops ``ax*`` and a block copying ``src`` to ``dst`` over ``bounds`` of ``buffer``,
    inside ``loops_above``.  Where the copy follows those loops (``i_0 * 4 + ax0`` under the
    loops of a split that does not divide the extent), a ``T.where`` keeps it inside the
    buffer: the block it serves is guarded by its own, and the copy would otherwise read or
    write past the end (TVM 0.27 writes no guard, and goes out of bounds)."""
    ana = Analyzer()
    for lp in loops_above:
        ana.bind(lp.loop_var, Range(lp.min, lp.extent))
    guards = []
    loops, ivs, values = [], [], []
    for d, ((base, lo, hi), dim) in enumerate(zip(bounds, buffer.shape)):
        dtype = dim.dtype
        ax = Var(f"ax{d}", dtype)
        v = Var(f"v{d}", dtype)
        ivs.append(IterVar(Range(IntImm(dtype, 0), dim), v, E.IterVarType.DataPar))
        loops.append((ax, hi - lo + 1))
        start = base + lo if base is not None and lo else base
        if start is None:
            start = IntImm(dtype, lo) if lo else None
        values.append(E.add(start, ax) if start is not None else ax)
        if base is not None:
            ana.bind(ax, Range(IntImm(dtype, 0), IntImm(dtype, hi - lo + 1)))
            if not ana.can_prove(E.GE(values[-1], IntImm(dtype, 0))):
                guards.append(E.LE(IntImm(dtype, 0), values[-1]))
            if not ana.can_prove(E.LT(values[-1], dim)):
                guards.append(E.LT(values[-1], dim))
    idx = [iv.var for iv in ivs]
    point = [Range(i, IntImm(i.dtype, 1)) for i in idx]
    block = S.Block(ivs, [BufferRegion(src, point)], [BufferRegion(dst, point)], name,
                    S.BufferStore(dst, E.BufferLoad(src, idx), idx))
    predicate = E.convert(True)
    for guard in guards:
        predicate = E.logical_and(predicate, guard)
    nest = S.BlockRealize(values, predicate, block)
    for ax, ext in reversed(loops):
        nest = S.For(ax, IntImm(ax.dtype, 0), IntImm(ax.dtype, ext), S.ForKind.SERIAL, nest)
    return nest, block


def _full(bounds, buffer):
    out = []
    for (base, lo, hi), dim in zip(bounds, buffer.shape):
        if not isinstance(dim, IntImm):
            raise ScheduleError("cache", "buffers with symbolic shapes cannot be cached yet")
        if base is not None:
            out.append((base, int(lo), int(hi)))
            continue
        lo = 0 if lo == float("-inf") else max(0, int(lo))
        hi = dim.value - 1 if hi == float("inf") else min(dim.value - 1, int(hi))
        out.append((None, lo, hi))
    return out


def _compact(bounds, buffer):
    """Inside a block (after blockize) TVM sizes the cache to the region one instance of the
    scope touches: per dimension the start (None for 0) and the extent of ``bounds``."""
    starts, shape = [], []
    for (base, lo, hi), dim in zip(bounds, buffer.shape):
        dtype = dim.dtype
        start = base + lo if base is not None and lo else base
        if start is None and lo:
            start = IntImm(dtype, lo)
        starts.append(start)
        shape.append(IntImm(dtype, hi - lo + 1))
    return starts, shape


def _compact_copy_block(name, src, dst, starts, shape, offset_src: bool):
    """Loops ``ax*`` and a block copying between ``src`` and ``dst`` over a compact cache of
    ``shape``; the side that is not the cache (``src`` when ``offset_src``) is indexed from
    ``starts``."""
    loops, ivs, values, shifted = [], [], [], []
    for d, (start, ext) in enumerate(zip(starts, shape)):
        ax, v = Var(f"ax{d}", ext.dtype), Var(f"v{d}", ext.dtype)
        ivs.append(IterVar(Range(IntImm(ext.dtype, 0), ext), v, E.IterVarType.DataPar))
        loops.append((ax, ext))
        values.append(ax)
        shifted.append(v if start is None else E.add(start, v))
    plain = [iv.var for iv in ivs]
    src_idx, dst_idx = (shifted, plain) if offset_src else (plain, shifted)
    region = lambda idx: [Range(i, IntImm(i.dtype, 1)) for i in idx]  # noqa: E731
    block = S.Block(ivs, [BufferRegion(src, region(src_idx))],
                    [BufferRegion(dst, region(dst_idx))], name,
                    S.BufferStore(dst, E.BufferLoad(src, src_idx), dst_idx))
    nest = S.BlockRealize(values, E.convert(True), block)
    for ax, ext in reversed(loops):
        nest = S.For(ax, IntImm(ax.dtype, 0), ext, S.ForKind.SERIAL, nest)
    return nest, block


class _Shift(Mutator):
    """Every access to ``old`` as one to the compact cache ``new``: indices and region
    starts less ``starts``."""

    def __init__(self, rw, old, new, starts):
        super().__init__(rw)
        self.old, self.new, self.starts, self.ana = old, new, starts, Analyzer()

    def _idx(self, indices):
        return [i if s is None else self.ana.simplify(i - s)
                for i, s in zip(indices, self.starts)]

    def visit_expr(self, e):
        return map_loads(e, lambda ld, idx: load_with(ld, self._idx(idx), self.new)
                         if ld.buffer is self.old else load_with(ld, idx))

    def visit_BufferStore(self, st):
        new = self.generic(st)
        if new.buffer is self.old:
            new = new.replace(buffer=self.new, indices=self._idx(new.indices))
        return new

    def field(self, value):
        if isinstance(value, BufferRegion) and value.buffer is self.old:
            return BufferRegion(self.new, [Range(m, r.extent) for m, r in zip(
                self._idx([r.min for r in value.region]), value.region)])
        return super().field(value)


def _cache_location(scope_block, writer, related):
    """Where TVM puts a cache stage: ``(stmt, pos)``, the loop (or the scope block) whose body
    gets the stage and its position there, just before the first child holding a block of
    ``related`` that follows ``writer``; ``None`` when a related block comes first."""
    state = {"writer": False, "related": False, "pos": -1, "loc": None}

    def visit(s):
        if isinstance(s, S.SeqStmt):
            before, state["writer"] = state["writer"], False
            for i, c in enumerate(s.seq):
                visit(c)
                if state["writer"] and state["related"] and state["pos"] == -1:
                    state["pos"] = i
                    break
                if state["related"] or state["pos"] != -1:
                    break
            state["writer"] = state["writer"] or before
        elif isinstance(s, S.Block):
            if s is writer:
                state["writer"] = True
            elif any(s is r for r in related):
                state["related"] = True
        elif isinstance(s, S.For):
            visit(s.body)
            if state["writer"] and state["related"] and state["loc"] is None \
                    and state["pos"] != -1:
                state["loc"] = s
        else:
            for c in child_stmts(s):
                visit(c)

    if not related:
        return scope_block, len(_children_of(scope_block.body))
    visit(scope_block.body)
    if state["pos"] == -1:
        return None
    if state["loc"] is None:  # a SeqStmt not under a loop: the scope's own body
        return scope_block, state["pos"]
    return state["loc"], state["pos"]


def _children_of(stmt) -> list:
    return list(stmt.seq) if isinstance(stmt, S.SeqStmt) else [stmt]


class _Insert(Mutator):
    """Swaps the statements of ``table`` and puts ``nest`` at ``pos`` in the body of the loop
    ``loc``."""

    def __init__(self, rw, table, loc, pos, nest):
        super().__init__(rw)
        self.table, self.loc, self.pos, self.nest = table, loc, pos, nest

    def visit_stmt(self, s):
        if id(s) in self.table:
            return self.table[id(s)]
        new = super().visit_stmt(s)
        if s is self.loc:
            kids = _children_of(new.body)
            new = self.rw.derive(s, body=S.stmt_seq(*kids[:self.pos], self.nest,
                                                    *kids[self.pos:]))
        return new

    def visit_expr(self, e):
        return e


def _unique_name(func, base):
    names = set()

    def visit(s):
        if isinstance(s, S.Block):
            names.add(s.name_hint)
            names.update(b.name for b in s.alloc_buffers)
        return True

    from .ir_utils import walk

    walk(func.body, visit)
    names.update(b.name for b in func.buffer_map.values())
    if base not in names:
        return base
    i = 1
    while f"{base}_{i}" in names:
        i += 1
    return f"{base}_{i}"


def _accessed_buffer(prim: str, block, kind: str, index: int):
    """The ``index``-th buffer the block reads (``kind="read"``) or writes."""
    regions = block.reads if kind == "read" else block.writes
    if not 0 <= index < len(regions):
        raise ScheduleError(prim, f"block `{block.name_hint}` {kind}s {len(regions)} buffer(s); "
                            f"{kind}_buffer_index {index} is out of range", [block])
    return regions[index].buffer


def _read_cache_place(sch, prim, sref, buf, consumer_blocks):
    """Where ``cache_read`` puts its stage: the scope's sref, the blocks that will read the
    cache, the writers of ``buf`` (at most one), and the statement and child position the
    copy goes at.  Changes nothing."""
    scope = scope_sref(sref)
    blocks = child_block_srefs(sch.state, scope)
    if consumer_blocks is None:
        consumers = [b for b in blocks if any(r.buffer is buf for r in b.stmt.reads)]
    else:
        consumers = [sch._block_sref(c, prim) for c in consumer_blocks]
        if not any(c is sref for c in consumers):
            consumers.append(sref)
    writes = lambda b: any(w.buffer is buf for w in b.stmt.writes)  # noqa: E731
    writers = [b for b in blocks if writes(b)]
    # as TVM: a block that writes the buffer keeps reading the buffer itself
    consumers = [c for c in consumers if not writes(c)]
    if len(writers) > 1:
        raise ScheduleError(
            prim, f"buffer `{buf.name}` is written by block `{writers[0].stmt.name_hint}` "
            f"and by block `{writers[1].stmt.name_hint}`; a read cache needs a single writer "
            "(apply cache_read before decompose_reduction)",
            [writers[0].stmt, writers[1].stmt])
    loc, pos = scope.stmt, 0  # a parameter (no writer in the scope): copied first thing
    if writers:
        # as TVM: the stage goes just before the first reader that follows the writer, in
        # the innermost loop holding both (or in the scope)
        after = blocks[blocks.index(writers[0]) + 1:]
        related = [c for c in consumers if any(c is b for b in after)] \
            if consumer_blocks is None else consumers
        found = _cache_location(scope.stmt, writers[0].stmt, [c.stmt for c in related])
        if found is None:
            raise ScheduleError(prim, f"a writer of buffer `{buf.name}` comes after one of "
                                "its readers; cannot place a single cache stage")
        loc, pos = found
    return scope, consumers, writers, loc, pos


class CacheReadWriteMixin:
    def _buffer_index(self, prim, block, buffer, kind: str) -> int:
        """The index among the block's ``kind`` ("read"/"write") regions of ``buffer``: an
        index, a buffer name or a Buffer, as TVM takes them."""
        if buffer is None or isinstance(buffer, (int, ExprRV, IntImm)):
            return self._int(buffer, prim)
        if not isinstance(buffer, (str, Buffer)):
            raise ScheduleError(prim, f"the buffer must be an index, a buffer name or a Buffer, "
                                f"got {buffer!r}")
        found_kind, index = self._buffer_arg(prim, block, buffer)
        if found_kind != kind:
            name = buffer if isinstance(buffer, str) else buffer.name
            stmt = self.get(block)
            regions = stmt.reads if kind == "read" else stmt.writes
            also = [i for i, r in enumerate(regions) if r.buffer.name == name]
            if also:  # as TVM: a buffer the block reads and writes, named, is the write
                raise ScheduleError(prim, f"block `{stmt.name_hint}` reads and writes buffer "
                                    f"`{name}`, and a buffer name stands for the write (as in "
                                    f"TVM): pass the {kind} index, {also[0]}", [stmt])
            raise ScheduleError(prim, f"block `{stmt.name_hint}` {found_kind}s buffer "
                                f"`{name}` but does not {kind} it", [stmt])
        return index

    def _insert_in_scope(self, scope, pos, nest, new_buffer, rw, extra=None):
        from .compute_at import _children

        children = _children(scope.stmt.body)
        new_scope = rw.derive(scope.stmt, body=S.stmt_seq(*children[:pos], nest, *children[pos:]),
                              alloc_buffers=list(scope.stmt.alloc_buffers) + [new_buffer])
        return new_scope

    @primitive("CacheRead", inputs=("block", "read_buffer_index", "consumer_blocks"),
               attrs=("storage_scope",), py_name="cache_read")
    def _cache_read(self, block, read_buffer_index: int, storage_scope: str,
                    consumer_blocks=None) -> BlockRV:
        """``cache_read`` with the buffer given by its index (recorded in the trace)."""
        prim = "cache_read"
        _check_scope(prim, storage_scope)
        sref = self._block_sref(block, prim)
        bstmt = sref.stmt
        buf = _accessed_buffer(prim, bstmt, "read", self._int(read_buffer_index, prim))
        scope, consumers, writers, loc, pos = _read_cache_place(self, prim, sref, buf,
                                                                consumer_blocks)
        func = self.mod[sref.func_name]
        # as TVM: the buffer gets a fresh name, the copy block is `<buffer>_<scope>` even
        # when a block of that name exists (get_block then refuses the ambiguous name)
        name = _unique_name(func, f"{buf.name}_{storage_scope}")
        block_name = f"{buf.name}_{storage_scope}"
        in_loop = loc is not scope.stmt
        compact = scope.parent is not None and not in_loop  # a scope block inside the function
        if in_loop or not consumers:
            # as TVM: the copy covers what the writer writes in one iteration of the loop
            # holding the stage (a full-size cache there)
            region = next(w.region for w in writers[0].stmt.writes if w.buffer is buf)
            bounds = _full(_relaxed(writers[0], self.state.get_sref(loc), region), buf)
        else:
            bounds = None
            for c in consumers:
                for r in c.stmt.reads:
                    if r.buffer is buf:
                        bounds = _union_regions(bounds, _relaxed(c, scope, r.region))
            bounds = _full(bounds, buf)
        if compact:
            starts, shape = _compact(bounds, buf)
            new_buf = decl_buffer(shape, buf.dtype, name, scope=storage_scope)
            nest, cache_block = _compact_copy_block(block_name, buf, new_buf, starts, shape, True)
        else:
            new_buf = decl_buffer(buf.shape, buf.dtype, name, scope=storage_scope)
            nest, cache_block = _copy_block(block_name, buf, new_buf, bounds, buf,
                                            _loops_from(self.state, loc, scope))
        rw = Rewrite()
        bmap = {id(buf): new_buf}
        table = {}
        for c in consumers:
            new_block = _Shift(rw, buf, new_buf, starts).visit_stmt(c.stmt) if compact \
                else replace_buffers(c.stmt, bmap, rw)
            table[id(c.stmt)] = new_block
        new_scope_body = _Insert(rw, table, loc if in_loop else None, pos, nest).visit_stmt(
            scope.stmt.body)
        if in_loop:
            new_scope = rw.derive(scope.stmt, body=new_scope_body,
                                  alloc_buffers=list(scope.stmt.alloc_buffers) + [new_buf])
        else:
            new_scope = self._insert_in_scope(
                _Fake(rw.derive(scope.stmt, body=new_scope_body)), pos, nest, new_buf, rw)
        rw.link(scope.stmt, new_scope)
        new_body = replace_stmts(func.body, {id(scope.stmt): new_scope}, rw)
        self._commit(sref.func_name, new_body, rw)
        return self._rv_for(self.state.get_sref(cache_block), BlockRV)

    @primitive("CacheWrite", inputs=("block", "write_buffer_index", "consumer_blocks"),
               attrs=("storage_scope",), py_name="cache_write")
    def _cache_write(self, block, write_buffer_index: int, storage_scope: str,
                     consumer_blocks=None) -> BlockRV:
        """``cache_write`` with the buffer given by its index (recorded in the trace)."""
        prim = "cache_write"
        _check_scope(prim, storage_scope)
        sref = self._block_sref(block, prim)
        bstmt = sref.stmt
        index = self._int(write_buffer_index, prim)
        buf = _accessed_buffer(prim, bstmt, "write", index)
        scope = scope_sref(sref)
        # as TVM: the cached buffer must have a single writer in the scope (after
        # decompose_reduction, cache_write the buffer before the split, or cache the init)
        others = [b for b in child_block_srefs(self.state, scope) if b is not sref
                  and any(w.buffer is buf for w in b.stmt.writes)]
        if others:
            raise ScheduleError(
                prim, f"buffer `{buf.name}` is written by block `{bstmt.name_hint}` and by block "
                f"`{others[0].stmt.name_hint}`; a write cache needs a single writer (apply "
                "cache_write before decompose_reduction)", [bstmt, others[0].stmt])
        if bstmt.init is None and any(r.buffer is buf for r in bstmt.reads):
            # it accumulates onto values written before it (by an init outside its scope,
            # after blockize): the cache would start uninitialised (TVM 0.27 accepts this and
            # computes wrong numbers)
            raise ScheduleError(
                prim, f"block `{bstmt.name_hint}` reads the `{buf.name}` it updates but has no "
                "T.init(): a write cache would not hold the values it starts from (apply "
                "cache_write before blockize or decompose_reduction)", [bstmt])
        func = self.mod[sref.func_name]
        # as TVM: the buffer gets a fresh name, the copy block is `<buffer>_<scope>` even
        # when a block of that name exists (get_block then refuses the ambiguous name)
        name = _unique_name(func, f"{buf.name}_{storage_scope}")
        block_name = f"{buf.name}_{storage_scope}"
        # as TVM: the copy-back goes just before the first reader, in the innermost loop
        # holding the block and that reader (or at the end of the scope when none reads it)
        related = [c for c in consumer_srefs(self.state, sref)
                   if any(r.buffer is buf for r in c.stmt.reads)]
        found = _cache_location(scope.stmt, bstmt, [c.stmt for c in related])
        if found is None:
            raise ScheduleError(
                prim, f"block `{related[0].stmt.name_hint}` reads `{buf.name}` before block "
                f"`{bstmt.name_hint}` writes it; the copy-back block could not come between them")
        loc, pos = found
        in_loop = loc is not scope.stmt
        compact = scope.parent is not None and not in_loop  # a scope block inside the function
        bounds = _full(_relaxed(sref, self.state.get_sref(loc), bstmt.writes[index].region), buf)
        if compact:
            starts, shape = _compact(bounds, buf)
            new_buf = decl_buffer(shape, buf.dtype, name, scope=storage_scope)
            nest, cache_block = _compact_copy_block(block_name, new_buf, buf, starts, shape, False)
        else:
            new_buf = decl_buffer(buf.shape, buf.dtype, name, scope=storage_scope)
            nest, cache_block = _copy_block(block_name, new_buf, buf, bounds, buf,
                                            _loops_from(self.state, loc, scope))
        rw = Rewrite()
        new_block = _Shift(rw, buf, new_buf, starts).visit_stmt(bstmt) if compact \
            else replace_buffers(bstmt, {id(buf): new_buf}, rw)
        rw.link(bstmt, new_block)
        new_scope_body = _Insert(rw, {id(bstmt): new_block}, loc if in_loop else None, pos,
                                 nest).visit_stmt(scope.stmt.body)
        if in_loop:
            new_scope = rw.derive(scope.stmt, body=new_scope_body,
                                  alloc_buffers=list(scope.stmt.alloc_buffers) + [new_buf])
        else:
            new_scope = self._insert_in_scope(
                _Fake(rw.derive(scope.stmt, body=new_scope_body)), pos, nest, new_buf, rw)
        rw.link(scope.stmt, new_scope)
        new_body = replace_stmts(func.body, {id(scope.stmt): new_scope}, rw)
        self._commit(sref.func_name, new_body, rw)
        return self._rv_for(self.state.get_sref(cache_block), BlockRV)

    @primitive("SetScope", inputs=("block", "buffer_index"), attrs=("storage_scope",), py_name="set_scope")
    def _set_scope(self, block, buffer_index: int, storage_scope: str) -> None:
        """``set_scope`` with the buffer given by its index (recorded in the trace)."""
        prim = "set_scope"
        sref = self._block_sref(block, prim)
        bstmt = sref.stmt
        index = self._int(buffer_index, prim)
        if not 0 <= index < len(bstmt.writes):
            raise ScheduleError(prim, f"block `{bstmt.name_hint}` writes {len(bstmt.writes)} "
                                f"buffer(s); buffer_index {index} is out of range", [bstmt])
        buf = bstmt.writes[index].buffer
        if buf.scope == storage_scope:  # as TVM: nothing to do, whatever the buffer is
            return None
        _check_scope(prim, storage_scope)
        func = self.mod[sref.func_name]
        if any(b is buf for b in func.buffer_map.values()):
            raise ScheduleError(prim, f"buffer `{buf.name}` is a parameter of the function; only "
                                "buffers allocated inside it can change scope")
        # TVM names the new buffer after its scope, as cache_read/cache_write do
        name = f"{buf.name}_{storage_scope}"
        new_buf = buf.replace(name=name, scope=storage_scope, data=Var(name, buf.data.dtype))
        rw = Rewrite()
        new_body = replace_buffers(func.body, {id(buf): new_buf}, rw)
        self._commit(sref.func_name, new_body, rw)
        return None

    def cache_read(self, block, read_buffer_index, storage_scope: str,
                   consumer_blocks=None) -> BlockRV:
        """Read the ``read_buffer_index``-th input of ``block`` (or the input given by name or
        as a Buffer) through a cache in ``storage_scope``; returns the new copy block
        ``<buffer>_<scope>``.

        Before / after ``sch.cache_read(block_B, 0, "shared")``::

            for i in range(128):                   for ax0 in range(128):
                with T.block("B"):                     with T.block("A_shared"):
                    B[vi] = A[vi] * 2                      A_shared[v0] = A[v0]
                                                   for i in range(128):
                                                       with T.block("B"):
                                                           B[vi] = A_shared[vi] * 2
        """
        block = self._block_arg(block)
        index = self._buffer_index("cache_read", block, read_buffer_index, "read")
        return self._cache_read(block, index, storage_scope, consumer_blocks)

    def cache_write(self, block, write_buffer_index, storage_scope: str,
                    consumer_blocks=None) -> BlockRV:
        """Make ``block`` write its ``write_buffer_index``-th output into a cache in
        ``storage_scope``, copied back by a new block ``<buffer>_<scope>`` (returned).

        Before / after ``sch.cache_write(block_C, 0, "local")``::

            for i in range(128):                   for i in range(128):
                with T.block("C"):                     with T.block("C"):
                    C[vi] = A[vi] + 1                      C_local[vi] = A[vi] + 1
                                                   for ax0 in range(128):
                                                       with T.block("C_local"):
                                                           C[v0] = C_local[v0]
        """
        block = self._block_arg(block)
        index = self._buffer_index("cache_write", block, write_buffer_index, "write")
        return self._cache_write(block, index, storage_scope, consumer_blocks)

    def set_scope(self, block, buffer_index, storage_scope: str) -> None:
        """Set the storage scope of the ``buffer_index``-th buffer ``block`` writes.

        Before / after ``sch.set_scope(block_B, 0, "shared")``::

            B = T.alloc_buffer((128,))             B_shared = T.alloc_buffer((128,), scope="shared")

        The buffer is renamed ``<name>_<scope>``, as in TVM; setting the scope it already
        has changes nothing (a parameter included).
        """
        block = self._block_arg(block)
        index = self._buffer_index("set_scope", block, buffer_index, "write")
        return self._set_scope(block, index, storage_scope)


class _Fake:
    """Wraps a block as if it were an sref (for ``_insert_in_scope``)."""

    def __init__(self, stmt):
        self.stmt = stmt
