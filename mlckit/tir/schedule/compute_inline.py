"""Inlining: ``compute_inline`` and ``reverse_compute_inline``.

``compute_inline(block)`` removes a block ``B[v…] = f(…)`` and substitutes ``f`` for every
load of ``B`` in its consumers; ``reverse_compute_inline(block)`` removes a consumer
``C[…] = g(B[v…])`` and makes the producer of ``B`` store ``g`` of its value into ``C``
directly.  Both need a simple block: no ``T.init()``, spatial iterators only, a body that is
one store.  As TVM, the store (compute_inline) or the loads (reverse_compute_inline) may be
indexed by an affine map of the block's iterators (``B[vi // 4, vj, vi % 4]`` of a packed
layout, ``B[0, vj, vi]``): it is inverted (``arith.iter_map_inverse``) to write the
iterators in the indices of the other side.
"""

from __future__ import annotations

from mlckit.arith.analyzer import Analyzer, substitute
from mlckit.arith.iter_map_inverse import invert
from mlckit.ir import structural_equal
from mlckit.tir import expr as E
from mlckit.tir import stmt as S
from mlckit.tir.expr import BufferLoad, PrimExpr, Var
from mlckit.tir.expr_functor import load_with, map_loads

from .compute_at import removal_target
from .error import ScheduleError
from .instruction import primitive
from .ir_utils import Mutator, Rewrite, realizes_under, replace_stmts, walk
from .query import child_block_srefs, consumer_srefs, producer_srefs, scope_sref


def _check_simple(prim, block, role="block"):
    name = block.name_hint
    if block.init is not None:
        raise ScheduleError(prim, f"{role} `{name}` is a reduction (it has T.init()); only "
                            "blocks without reduction can be inlined", [block])
    for iv in block.iter_vars:
        if iv.iter_type != E.IterVarType.DataPar:
            raise ScheduleError(prim, f"{role} `{name}` has a non-spatial iterator "
                                f"`{iv.var.name_hint}`; only complete blocks (spatial iterators "
                                "only) can be inlined", [block])
    if not isinstance(block.body, S.BufferStore):
        raise ScheduleError(prim, f"the body of {role} `{name}` is not a single "
                            "`buffer[...] = value` store", [block])
    return block.body


def _distinct_vars(indices, block):
    ids = [id(iv.var) for iv in block.iter_vars]
    if not all(isinstance(i, Var) and id(i) in ids for i in indices):
        return False
    return len({id(i) for i in indices}) == len(indices) == len(ids)


def _is_int(e, value: int | None = None) -> bool:
    return isinstance(e, E.IntImm) and (value is None or e.value == value)


def _is_unit(iv) -> bool:
    """An iterator of one value, a constant."""
    return _is_int(iv.dom.extent, 1) and _is_int(iv.dom.min)


def _iterators_in_order(indices, block) -> bool:
    """The store indices are ``block``'s iterators in their order, a unit iterator from 0
    possibly written ``0`` (TVM's compute_inline substitutes these directly; any other map,
    a permutation included, goes through its inverse)."""
    return len(indices) == len(block.iter_vars) and all(
        index is iv.var or (_is_unit(iv) and _is_int(iv.dom.min, 0) and _is_int(index, 0))
        for index, iv in zip(indices, block.iter_vars))


def _iterators_from(indices, block, outputs, units_first: bool = False):
    """``block``'s iterators (Var -> PrimExpr) written in ``outputs``, the values that
    ``indices`` (a one-to-one affine map of them) take; a unit iterator the map leaves out
    is its minimum (``units_first``: every unit iterator is, as TVM's compute_inline has
    it).  None when the indices are not such a map, or leave an iterator unknown."""
    inverse = invert(indices, {iv.var: iv.dom for iv in block.iter_vars}, outputs)
    if inverse is None:
        return None
    for iv in block.iter_vars:
        if _is_unit(iv) and (units_first or iv.var not in inverse):
            inverse[iv.var] = iv.dom.min
    return inverse if all(iv.var in inverse for iv in block.iter_vars) else None


def _stored_value_at(prim, block, store):
    """The value ``block`` stores, as a function of the indices a consumer loads it at: its
    iterators replaced by those indices (TVM: directly when the store indices are the
    iterators in order, else through the inverse of their map, over placeholders ``ph_*``,
    a unit iterator its minimum)."""
    if _iterators_in_order(store.indices, block):
        return lambda idx: substitute(store.value, {
            iv.var: i for iv, i in zip(block.iter_vars, idx)})
    holders = [Var(f"ph_{d}", i.dtype) for d, i in enumerate(store.indices)]
    inverse = _iterators_from(store.indices, block, holders, units_first=True)
    if inverse is None:
        raise ScheduleError(prim, f"block `{block.name_hint}` stores to `{store.buffer.name}` at "
                            "indices that are not a one-to-one affine map of its iterators "
                            f"({', '.join(map(str, store.indices))}); it cannot be inlined",
                            [block])
    value = substitute(store.value, inverse)
    return lambda idx: substitute(value, dict(zip(holders, idx)))


def _param_buffers(func):
    return list(func.buffer_map.values())


class _InlineLoads(Mutator):
    """Replace loads of ``buffer`` by ``make(indices)``."""

    def __init__(self, rw, buffer, make):
        super().__init__(rw)
        self.buffer = buffer
        self.make = make

    def visit_expr(self, e):
        return _inline_expr(e, self.buffer, self.make)


def _inline_expr(e, buffer, make):
    return map_loads(e, lambda ld, idx: make(idx) if ld.buffer is buffer else load_with(ld, idx))


def _uses_buffer(stmt, buffer) -> bool:
    found = [False]

    def expr_uses(e):
        if isinstance(e, BufferLoad) and e.buffer is buffer:
            return True
        if isinstance(e, PrimExpr) and not isinstance(e, Var):
            for name in e.field_names():
                v = getattr(e, name)
                for x in v if isinstance(v, list) else [v]:
                    if isinstance(x, PrimExpr) and expr_uses(x):
                        return True
        return False

    def visit(s):
        if found[0]:
            return False
        if isinstance(s, S.BufferStore) and s.buffer is buffer:
            found[0] = True
        if isinstance(s, S.Block) and any(r.buffer is buffer for r in s.reads + s.writes):
            found[0] = True
        for name in s.field_names():
            v = getattr(s, name)
            for x in v if isinstance(v, list) else [v]:
                if isinstance(x, PrimExpr) and expr_uses(x):
                    found[0] = True
        return not found[0]

    walk(stmt, visit)
    return found[0]


def _visible_buffers(func, block):
    bufs = list(func.buffer_map.values())

    def visit(s):
        if s is block:
            return False
        if isinstance(s, S.Block):
            bufs.extend(s.alloc_buffers)
        return True

    walk(func.body, visit)
    return bufs


def _recompute(func, block, reads=True, writes=False):
    from mlckit.tir.analysis import get_block_access_region

    r, w = get_block_access_region(block, _visible_buffers(func, block))
    changes = {}
    if reads:
        changes["reads"] = r
    if writes:
        changes["writes"] = w
    return changes


def _check_not_output(prim, block, buf, scope_block, role):
    """As TVM: a block writing a buffer its scope block does not allocate is an output of the
    scope (e.g. the inner block of a blockize writing the outer block's output)."""
    if not any(b is buf for b in scope_block.alloc_buffers):
        raise ScheduleError(
            prim, f"{role} `{block.name_hint}` writes `{buf.name}`, which its scope (block "
            f"`{scope_block.name_hint}`) does not allocate: an output block of that scope cannot "
            "be inlined", [block])


class ComputeInlineMixin:
    @primitive("ComputeInline", inputs=("block",))
    def compute_inline(self, block) -> None:
        """Inline a block into its consumers.

        Before / after ``sch.compute_inline(block_B)``::

            for i in range(128):                   for i in range(128):
                with T.block("B"):                     with T.block("C"):
                    B[vi] = A[vi] * 2                      vi = T.axis.spatial(128, i)
            for i in range(128):                           T.reads(A[vi])
                with T.block("C"):                         C[vi] = A[vi] * 2 + 1
                    C[vi] = B[vi] + 1
        """
        prim = "compute_inline"
        sref = self._block_sref(block, prim)
        bstmt = sref.stmt
        name = bstmt.name_hint
        if sref.parent is None:
            raise ScheduleError(prim, "the root block cannot be inlined")
        store = _check_simple(prim, bstmt)
        buf = store.buffer
        func = self.mod[sref.func_name]
        if any(b is buf for b in _param_buffers(func)):
            raise ScheduleError(prim, f"block `{name}` writes `{buf.name}`, a parameter of the "
                                "function (an output); an output block cannot be inlined", [bstmt])
        _check_not_output(prim, bstmt, buf, scope_sref(sref).stmt, "block")
        make = _stored_value_at(prim, bstmt, store)
        if any(r.buffer is buf for r in bstmt.reads):
            raise ScheduleError(prim, f"block `{name}` reads the buffer `{buf.name}` it writes")
        scope = scope_sref(sref)
        others = [b for b in child_block_srefs(self.state, scope)
                  if b is not sref and any(w.buffer is buf for w in b.stmt.writes)]
        if others:
            raise ScheduleError(prim, f"buffer `{buf.name}` is also written by block "
                                f"`{others[0].stmt.name_hint}`; block `{name}` must be its only "
                                "producer to be inlined", [bstmt])
        consumers = consumer_srefs(self.state, sref)
        rw = Rewrite()
        table = {}
        for c in consumers:
            inlined = _InlineLoads(rw, buf, make).visit_stmt(c.stmt)
            table[id(c.stmt)] = inlined
        table[id(removal_target(sref))] = None
        scope_body = replace_stmts(scope.stmt.body, table, rw)
        new_scope = rw.derive(scope.stmt, body=scope_body)
        new_body = replace_stmts(func.body, {id(scope.stmt): new_scope}, rw)
        # consumers' reads change: recompute them, and those of the blocks inside a consumer
        # that read the buffer (the inner block of a blockize), innermost first
        for c in consumers:
            inner = [r.block for r in realizes_under(c.stmt, stop_at_blocks=False)
                     if any(rg.buffer is buf for rg in r.block.reads)]
            for old in inner[::-1] + [c.stmt]:
                new_func = func.replace(body=new_body)
                current = _find_derived(new_func, rw, old)
                if current is None:
                    continue
                fixed = rw.derive(current, **_recompute(new_func, current))
                rw.link(old, fixed)
                new_body = replace_stmts(new_body, {id(current): fixed}, rw)
        new_body = _drop_if_unused(new_body, buf, rw)
        self._commit(sref.func_name, new_body, rw)

    @primitive("ReverseComputeInline", inputs=("block",))
    def reverse_compute_inline(self, block) -> None:
        """Inline a consumer block into its single producer.

        Before / after ``sch.reverse_compute_inline(block_C)``::

            for i in range(128):                   for i in range(128):
                with T.block("B"):                     with T.block("B"):
                    B[vi] = A[vi] * 2                      vi = T.axis.spatial(128, i)
            for i in range(128):                           T.reads(A[vi])
                with T.block("C"):                         T.writes(C[vi])
                    C[vi] = B[vi] + 1                      C[vi] = A[vi] * 2 + 1

        As TVM, a ``blockize``d producer (``B_o``) is inlined into through the one innermost
        block writing the buffer, and the inlined store gets a ``T.where`` wherever the
        consumer's iterators are not provably in their domain (``T.where(i < 12)`` for a
        producer over 16 elements feeding a consumer over 12).
        """
        prim = "reverse_compute_inline"
        sref = self._block_sref(block, prim)
        cstmt = sref.stmt
        name = cstmt.name_hint
        if sref.parent is None:
            raise ScheduleError(prim, "the root block cannot be inlined")
        cstore = _check_simple(prim, cstmt)
        producers = producer_srefs(self.state, sref)
        if len(producers) != 1:
            raise ScheduleError(prim, f"block `{name}` has {len(producers)} producer blocks; it "
                                "needs exactly one to be inlined into", [cstmt])
        psref = producers[0]
        pstmt = psref.stmt
        scope = scope_sref(sref)
        # as TVM: the store to inline into is that of the leaf block writing the buffer, the
        # producer itself or, for a blockized producer (`C_o`), the block inside it
        leaf_realize = _leaf_writer(prim, psref, cstmt)
        leaf = leaf_realize.block
        pstore = _check_simple(prim, leaf, "producer")
        buf = pstore.buffer
        func = self.mod[sref.func_name]
        if any(b is buf for b in _param_buffers(func)):
            raise ScheduleError(prim, f"producer `{leaf.name_hint}` writes `{buf.name}`, a "
                                "parameter of the function; it must stay written", [leaf])
        _check_not_output(prim, leaf, buf, scope.stmt, "producer")
        loads = []

        def collect(e):
            if isinstance(e, BufferLoad) and e.buffer is buf:
                loads.append(e)
            if isinstance(e, PrimExpr) and not isinstance(e, Var):
                for n in e.field_names():
                    v = getattr(e, n)
                    for x in v if isinstance(v, list) else [v]:
                        if isinstance(x, PrimExpr):
                            collect(x)

        collect(cstore.value)
        for i in cstore.indices:
            collect(i)
        if not loads:
            raise ScheduleError(prim, f"block `{name}` does not load `{buf.name}`")
        first = loads[0].indices
        if any(not all(structural_equal(a, b) for a, b in zip(ld.indices, first))
               for ld in loads):
            raise ScheduleError(prim, f"block `{name}` loads `{buf.name}` at different indices; "
                                "it cannot be inlined", [cstmt])
        others = [b for b in consumer_srefs(self.state, psref) if b is not sref]
        if others:
            raise ScheduleError(prim, f"buffer `{buf.name}` is also read by block "
                                f"`{others[0].stmt.name_hint}`; it must have one consumer", [cstmt])
        if _distinct_vars(first, cstmt):
            vmap = {v: pstore.indices[d] for d, v in enumerate(first)}
        else:  # as TVM: the loads are an affine map of the consumer's iterators, inverted;
            # one-to-one, where TVM takes any map: two points of the consumer reading one
            # element (B[vi // 2]) cannot both be written where that element is stored
            vmap = _iterators_from(first, cstmt, pstore.indices)
            if vmap is None:
                raise ScheduleError(
                    prim, f"block `{name}` loads `{buf.name}` at indices that are not a "
                    f"one-to-one affine map of its iterators ({', '.join(map(str, first))}): "
                    "the producer stores each element once, so it could not write every "
                    "element of the consumer; it cannot be inlined", [cstmt])
        predicate = _in_bounds_predicate(prim, cstmt, leaf_realize, vmap)
        new_value = _inline_expr(cstore.value, buf, lambda idx: pstore.value)
        new_value = substitute(new_value, vmap)
        new_indices = [substitute(i, vmap) for i in cstore.indices]
        new_store = S.BufferStore(cstore.buffer, new_value, new_indices)
        rw = Rewrite()
        new_leaf = rw.derive(leaf, body=new_store)
        new_realize = leaf_realize.replace(block=new_leaf, predicate=predicate)
        table = {id(leaf_realize): new_realize, id(removal_target(sref)): None}
        scope_body = replace_stmts(scope.stmt.body, table, rw)
        new_scope = rw.derive(scope.stmt, body=scope_body)
        new_body = replace_stmts(func.body, {id(scope.stmt): new_scope}, rw)
        # the regions of the leaf and of the blocks between it and the scope change: as TVM,
        # recompute them, innermost first (an outer block's regions cover its inner blocks')
        for old in _blocks_down_to(pstmt, leaf)[::-1]:
            new_func = func.replace(body=new_body)
            current = _find_derived(new_func, rw, old)
            fixed = rw.derive(current, **_recompute(new_func, current, reads=True, writes=True))
            rw.link(old, fixed)
            new_body = replace_stmts(new_body, {id(current): fixed}, rw)
        new_body = _drop_if_unused(new_body, buf, rw)
        self._commit(sref.func_name, new_body, rw)


def _leaf_writer(prim, psref, consumer):
    """The realize of the block that holds the producer's store: the producer itself, or the
    single innermost block inside it that writes what ``consumer`` reads (TVM inlines into
    the inner block of a ``blockize``d producer)."""
    pstmt = psref.stmt
    if not realizes_under(pstmt):
        return psref.realize
    wanted = [r.buffer for r in consumer.reads]
    leaves = []

    def visit(s):
        if not isinstance(s, S.BlockRealize):
            return True
        if realizes_under(s.block):  # T.init() included
            return True
        if any(w.buffer is b for w in s.block.writes for b in wanted):
            leaves.append(s)
        return False

    for c in [pstmt.init, pstmt.body]:
        walk(c, visit)
    if len(leaves) != 1:
        names = ", ".join(f"`{r.block.name_hint}`" for r in leaves) or "none"
        raise ScheduleError(prim, f"producer `{pstmt.name_hint}` holds {len(leaves)} innermost "
                            f"blocks writing what block `{consumer.name_hint}` reads ({names}); "
                            "it needs exactly one to inline into", [pstmt])
    return leaves[0]


def _blocks_down_to(outer, leaf):
    """The blocks from ``outer`` down to ``leaf`` (both included), outermost first."""
    if outer is leaf:
        return [leaf]
    for realize in realizes_under(outer):
        found = _blocks_down_to(realize.block, leaf)
        if found:
            return [outer] + found
    return []


def _in_bounds_predicate(prim, consumer, leaf_realize, vmap):
    """TVM's predicate for the inlined store: the consumer's iterators, written as the
    producer's store indices, lie in the consumer's domain.  Simplified knowing only the
    producer's own iterator ranges (as TVM), then written over the producer's loop variables;
    ``True`` when provable.  A producer domain that provably misses part of the consumer's is
    refused (the consumer would lose elements)."""
    leaf = leaf_realize.block
    ana = Analyzer()
    for iv in leaf.iter_vars:
        ana.bind(iv.var, iv.dom)
    conds = []
    for iv in consumer.iter_vars:
        value = vmap[iv.var]
        lo, end = iv.dom.min, iv.dom.min + iv.dom.extent
        bound = ana.const_int_bound(value)
        lo_c, end_c = ana.const_int_bound(lo), ana.const_int_bound(end)
        if (lo_c.is_const and bound.min_value > lo_c.min_value) or \
                (end_c.is_const and bound.max_value < end_c.min_value - 1):
            raise ScheduleError(prim, f"producer `{leaf.name_hint}` does not cover the domain of "
                                f"block `{consumer.name_hint}`'s iterator `{iv.var.name_hint}`; "
                                "inlining would lose elements", [consumer])
        conds += [E.LE(lo, value), E.LT(value, end)]
    predicate = E.convert(True)
    for c in conds:
        predicate = E.logical_and(predicate, c)
    predicate = ana.simplify(predicate)
    if _is_true(predicate):
        return leaf_realize.predicate
    bindings = {iv.var: v for iv, v in zip(leaf.iter_vars, leaf_realize.iter_values)}
    predicate = Analyzer().simplify(substitute(predicate, bindings))
    old = leaf_realize.predicate
    if _is_true(old) or structural_equal(old, predicate):
        return predicate
    # TVM replaces the producer's own predicate here; keeping both is never wrong
    return E.logical_and(old, predicate)


def _is_true(e) -> bool:
    return isinstance(e, E.IntImm) and bool(e.value)


def _drop_if_unused(body, buf, rw):
    """Remove ``buf`` from the block allocating it when nothing uses it any more."""
    owner = [None]

    def visit(s):
        if isinstance(s, S.Block) and any(b is buf for b in s.alloc_buffers):
            owner[0] = s
            return False
        return True

    walk(body, visit)
    block = owner[0]
    if block is None:
        return body
    probe = block.replace(alloc_buffers=[b for b in block.alloc_buffers if b is not buf])
    if _uses_buffer(probe.body, buf) or (probe.init is not None and _uses_buffer(probe.init, buf)):
        return body
    rw.link(block, probe)
    return replace_stmts(body, {id(block): probe}, rw)


def _find_derived(func, rw, old):
    """The block in ``func`` that continues ``old``."""
    found = [None]

    def visit(s):
        if isinstance(s, S.Block):
            node = s
            for _ in range(100):
                if node is old:
                    found[0] = s
                    return False
                node = rw.reuse.get(id(node))
                if node is None:
                    break
        return found[0] is None

    walk(func.body, visit)
    return found[0]
