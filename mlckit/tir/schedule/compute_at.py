"""Compute location: ``compute_at`` and ``reverse_compute_at``.

``compute_at(block, loop)`` moves a producer block under a loop of its consumers, computing
in each iteration just the region those consumers need; ``reverse_compute_at(block, loop)``
moves a consumer under a loop of its producers, consuming in each iteration the region just
produced.  New loops ``ax0, ax1, …`` cover that region; iterators whose region is a single
point get no loop (unless ``preserve_unit_loops``).
"""

from __future__ import annotations

from mlckit.arith import Analyzer
from mlckit.arith.analyzer import substitute, uses_var
from mlckit.tir import expr as E
from mlckit.tir import stmt as S
from mlckit.tir.analysis.var_use import var_ids
from mlckit.tir.expr import IntImm, Range, Var

from .error import ScheduleError
from .instruction import primitive
from .ir_utils import Rewrite, realizes_under, replace_stmts
from .query import (
    child_block_srefs,
    consumer_srefs,
    describe_loop,
    is_ancestor,
    loop_srefs,
    producer_srefs,
    scope_sref,
)


def removal_target(block_sref):
    """The statement to delete to remove a block: its realize, and the loops around it that
    hold nothing else."""
    target = block_sref.realize
    p = block_sref.parent
    while p is not None and p.is_loop and p.stmt.body is target:
        target = p.stmt
        p = p.parent
    return target


def _children(stmt) -> list:
    return list(stmt.seq) if isinstance(stmt, S.SeqStmt) else [stmt]


def _contains(stmt, block) -> bool:
    from .ir_utils import walk

    found = [False]

    def visit(s):
        if s is block:
            found[0] = True
            return False
        return not found[0]

    walk(stmt, visit)
    return found[0]


def _loops_inside(loop_sref, block_sref) -> list:
    """Loops strictly between ``loop_sref`` and ``block_sref``."""
    out = []
    p = block_sref.parent
    while p is not None and p is not loop_sref:
        if p.is_loop:
            out.append(p.stmt)
        p = p.parent
    return out


def _relaxed_region(ana: Analyzer, region, realize, inner_loops):
    """The [lo, hi] (symbolic) of each dimension of ``region`` (block-var terms) over the
    loops ``inner_loops``."""
    vmap = {iv.var: v for iv, v in zip(realize.block.iter_vars, realize.iter_values)}
    relax = {lp.loop_var: Range(lp.min, lp.extent) for lp in inner_loops}
    out = []
    for rng in region:
        mn = substitute(rng.min, vmap)
        last = substitute(E.sub(E.add(rng.min, rng.extent), 1), vmap)
        s_lo, s_hi = ana.int_set(mn, relax), ana.int_set(last, relax)
        if s_lo is None or s_hi is None:
            out.append(None)
        else:
            out.append((s_lo.min_value, s_hi.max_value))
    return out


def _union(ana, a, b):
    if a is None:
        return b
    out = []
    for x, y in zip(a, b):
        if x is None or y is None:
            out.append(None)
            continue
        lo = ana.simplify(E.min_expr(x[0], y[0]))
        hi = ana.simplify(E.max_expr(x[1], y[1]))
        out.append((lo, hi))
    return out


class ComputeAtMixin:
    def _compute_at(self, prim, block, loop, preserve_unit_loops, index, reverse):
        block_sref = self._block_sref(block, prim)
        loop_sref = self._loop_sref(loop, prim)
        bstmt, lstmt = block_sref.stmt, loop_sref.stmt
        bname, lname = bstmt.name_hint, describe_loop(lstmt)
        if block_sref.func_name != loop_sref.func_name:
            raise ScheduleError(prim, f"block `{bname}` and loop {lname} are in different functions")
        if is_ancestor(loop_sref, block_sref):
            raise ScheduleError(prim, f"block `{bname}` is already under loop {lname}", [bstmt, lstmt])
        scope = scope_sref(block_sref)
        if scope is None or scope_sref(loop_sref) is not scope:
            raise ScheduleError(prim, f"loop {lname} is not in the same block scope as block "
                                f"`{bname}`", [bstmt, lstmt])
        for iv in bstmt.iter_vars:
            if iv.iter_type not in (E.IterVarType.DataPar, E.IterVarType.CommReduce):
                raise ScheduleError(prim, f"block `{bname}` has an iterator `{iv.var.name_hint}` "
                                    "that is neither spatial nor reduction")
        _check_compact_dataflow(prim, block_sref, scope)
        state = self.state
        # TVM: the moved block must be the only writer of its outputs in the scope (a
        # "dominant" block); moving an init block that a separate update block accumulates
        # onto would reset the accumulation in every iteration
        for other in child_block_srefs(state, scope):
            shared = [w.buffer.name for w in other.stmt.writes
                      if other is not block_sref and any(w.buffer is m.buffer
                                                         for m in bstmt.writes)]
            if shared:
                raise ScheduleError(
                    prim, f"block `{bname}` is not the only writer of `{shared[0]}`: block "
                    f"`{other.stmt.name_hint}` writes it too, so moving `{bname}` alone could "
                    "change what the other one sees", [bstmt, other.stmt])
        if reverse:
            deps = producer_srefs(state, block_sref)
            other = consumer_srefs(state, block_sref)
            role, other_role = "producer", "consumer"
        else:
            deps = consumer_srefs(state, block_sref)
            other = producer_srefs(state, block_sref)
            role, other_role = "consumer", "producer"
        deps_in = [d for d in deps if is_ancestor(loop_sref, d)]
        missing = [d for d in deps if not is_ancestor(loop_sref, d)]
        # a block that reads no other block's output (only parameters) may be moved under
        # any loop by reverse_compute_at, as in TVM: it computes its whole domain there, first
        if not deps_in and (deps or not reverse):
            raise ScheduleError(prim, f"no {role} of block `{bname}` is under loop {lname}, so "
                                "there is nothing to compute it next to", [bstmt, lstmt])
        if reverse and not deps:
            # it moves down to the loop: a consumer between here and there would read it
            # before it is computed (TVM 0.27 does not check this and computes wrong numbers)
            tops = _children(scope.stmt.body)

            def top(stmt):
                return next(i for i, c in enumerate(tops) if _contains(c, stmt))

            early = [o for o in other if not is_ancestor(loop_sref, o)
                     and top(o.stmt) <= top(lstmt)]
            if early:
                raise ScheduleError(
                    prim, f"block `{bname}` cannot move under loop {lname}: its consumer "
                    f"`{early[0].stmt.name_hint}` comes before that loop and would read it before "
                    "it is computed", [bstmt, lstmt, early[0].stmt])
        if missing:
            raise ScheduleError(
                prim, f"not all {role}s of block `{bname}` are under loop {lname}: "
                + ", ".join(f"`{d.stmt.name_hint}`" for d in missing) + " "
                + ("is" if len(missing) == 1 else "are") + " not", [bstmt, lstmt])
        # insertion position among the children of the loop body
        children = _children(lstmt.body)

        def pos_of(sref):
            for i, c in enumerate(children):
                if _contains(c, sref.stmt):
                    return i
            return None

        dep_pos = [pos_of(d) for d in deps_in]
        other_pos = [p for p in (pos_of(o) for o in other) if p is not None]
        if reverse:
            lo_bound = max(dep_pos) + 1 if dep_pos else 0
            hi_bound = min(other_pos) if other_pos else len(children)
        else:
            hi_bound = min(dep_pos)
            lo_bound = max(other_pos) + 1 if other_pos else 0
        if lo_bound > hi_bound:
            raise ScheduleError(
                prim, f"block `{bname}` cannot be placed under loop {lname}: it would have to come "
                f"after its {other_role if not reverse else role}s and before its "
                f"{role if not reverse else other_role}s, which are interleaved there")
        # as TVM for both primitives: -1 is the last valid position (before the first
        # consumer), -2 the first (after the last producer)
        if index == -1:
            pos = hi_bound
        elif index == -2:
            pos = lo_bound
        else:
            pos = index
            if not lo_bound <= pos <= hi_bound:
                raise ScheduleError(prim, f"index {index} is not a valid position under loop "
                                    f"{lname} (valid: {lo_bound}..{hi_bound})")
        # the outer loops (down to and including `loop`) are known at the new position
        outer = Analyzer(unit_ranges_as_constants=True)
        p = loop_sref
        while p is not None:
            if p.is_loop:
                outer.bind(p.stmt.loop_var, Range(p.stmt.min, p.stmt.extent))
            p = p.parent
        # region needed (compute_at) or produced (reverse) under the loop, per buffer
        my_regions = bstmt.reads if reverse else bstmt.writes
        my_buffers = [r.buffer for r in my_regions]
        need: dict[int, list] = {}
        repeated: list = []  # (loop, error) where the producer's updates repeat (reverse)
        for d in deps_in:
            regions = d.stmt.writes if reverse else d.stmt.reads
            inner = _loops_inside(loop_sref, d)
            for reg in regions:
                if not any(reg.buffer is b for b in my_buffers):
                    continue
                threads = _thread_loops_to_relax(loop_sref, reg.buffer.scope)
                rel = _relaxed_region(outer, reg.region, d.realize, inner + threads)
                writes_it = any(w.buffer is reg.buffer for w in d.stmt.writes)
                # reverse_compute_at may read partial results in early iterations if the
                # moved block is recomputed whole in each (its region does not follow the
                # loop): the last iteration then sees the final values (TVM accepts it)
                if writes_it:
                    _check_disjoint(prim, outer, rel, loop_sref, scope, threads, bname,
                                    d.stmt.name_hint, reverse,
                                    repeated if reverse else None)
                key = id(reg.buffer)
                if key in need and reverse:
                    continue
                need[key] = _union(outer, need.get(key), rel)
        # block-var ranges from the block's own regions of those buffers
        var_range: dict[int, tuple] = {}
        for reg in my_regions:
            rel = need.get(id(reg.buffer))
            if rel is None:
                continue
            for rng, dim in zip(reg.region, rel):
                if dim is None:
                    continue
                base, offset = _var_plus_const(rng.min, bstmt.iter_vars)
                if base is None:
                    continue
                if not (isinstance(rng.extent, IntImm) and rng.extent.value == 1):
                    continue
                lo = outer.simplify(dim[0] - offset)
                hi = outer.simplify(dim[1] - offset)
                if id(base) in var_range and not reverse:
                    plo, phi = var_range[id(base)]
                    lo = outer.simplify(E.min_expr(plo, lo))
                    hi = outer.simplify(E.max_expr(phi, hi))
                var_range[id(base)] = (lo, hi)
        for lp, err in repeated:
            # a part that follows the loop would be computed once, from partial values; a
            # reduction is redone whole in each iteration (init included, the last one from
            # the final values) only if its reduction iterators follow loops inside that loop
            if any(uses_var(x, lambda v, var=lp.loop_var: v is var)
                   for rng in var_range.values() for x in rng):
                raise err
            if bstmt.init is not None:
                above = {id(q.stmt.loop_var) for q in _ancestors(self.state.get_sref(lp))}
                reduce_ranges = [x for iv in bstmt.iter_vars
                                 if iv.iter_type == E.IterVarType.CommReduce
                                 for x in var_range.get(id(iv.var), ())]
                if any(uses_var(x, lambda v, ids=above: id(v) in ids) for x in reduce_ranges):
                    raise err
        # build the new loop nest
        bindings, preds, loops = [], [], []
        n_ax = 0
        for iv in bstmt.iter_vars:
            dom = iv.dom
            dom_lo = dom.min
            dom_hi = outer.simplify(dom.min + dom.extent - 1)
            lo, hi = var_range.get(id(iv.var), (dom_lo, dom_hi))
            extent = outer.simplify(hi - lo + 1)
            if not isinstance(extent, IntImm):
                bound = outer.const_int_bound(extent).max_value
                if bound == float("inf"):
                    raise ScheduleError(prim, f"cannot bound the region of iterator "
                                        f"`{iv.var.name_hint}` of block `{bname}` under loop {lname}")
                ext_val = int(bound)
                exact = False
            else:
                ext_val, exact = extent.value, True
            if ext_val == 1 and not preserve_unit_loops:
                value = outer.simplify(lo)
            else:
                ax = Var(f"ax{n_ax}", iv.var.dtype)
                n_ax += 1
                loops.append((ax, ext_val))
                outer.bind(ax, Range(IntImm(iv.var.dtype, 0), IntImm(iv.var.dtype, ext_val)))
                value = E.add(outer.simplify(lo), ax)   # as TVM: min + ax, not simplified
                if not exact:
                    _add_pred(outer, preds, E.LE(value, hi))
            lo_b = outer.const_int_bound(value)
            dom_lo_b = outer.const_int_bound(dom_lo)
            dom_hi_b = outer.const_int_bound(dom_hi)
            if lo_b.min_value < dom_lo_b.max_value:
                _add_pred(outer, preds, E.LE(dom_lo, value))
            if lo_b.max_value > dom_hi_b.min_value:
                _add_pred(outer, preds, E.LT(value, outer.simplify(dom.min + dom.extent)))
            bindings.append(value)
        kept = _kept_predicate(prim, block_sref.realize, bstmt, bindings, block_sref)
        if kept is not None:
            preds.append(kept)
        predicate = E.convert(True)
        for pr in preds:
            predicate = E.logical_and(predicate, pr)
        nest = S.BlockRealize(bindings, predicate, bstmt)
        if reverse:
            _check_consumes_produced(prim, outer, nest, loops, need, bname, lname)
        rw = Rewrite()
        for ax, ext in reversed(loops):
            nest = S.For(ax, IntImm(ax.dtype, 0), IntImm(ax.dtype, ext), S.ForKind.SERIAL, nest)
        new_children = children[:pos] + [nest] + children[pos:]
        new_loop = rw.derive(lstmt, body=S.stmt_seq(*new_children))
        func = self.mod[block_sref.func_name]
        table = {id(removal_target(block_sref)): None, id(lstmt): new_loop}
        new_body = replace_stmts(func.body, table, rw)
        self._commit(block_sref.func_name, new_body, rw)

    @primitive("ComputeAt", inputs=("block", "loop"), attrs=("preserve_unit_loops", "index"))
    def compute_at(self, block, loop, preserve_unit_loops: bool = False, index: int = -1) -> None:
        """Move a producer block under a loop of its consumers.

        Before / after ``sch.compute_at(sch.get_block("B"), i)``::

            for i, j in T.grid(128, 128):          for i in range(128):
                with T.block("B"):                     for ax0 in range(128):
                    B[vi, vj] = A[vi, vj] * 2              with T.block("B"):
            for i, j in T.grid(128, 128):                      vi = T.axis.spatial(128, i)
                with T.block("C"):                             vj = T.axis.spatial(128, ax0)
                    C[vi, vj] = B[vi, vj] + 1                  B[vi, vj] = A[vi, vj] * 2
                                                       for j in range(128):
                                                           with T.block("C"):
                                                               C[vi, vj] = B[vi, vj] + 1
        """
        mark = self._location_mark(loop)  # a sampled location: the root or inlining
        if mark == "compute-root":
            self._block_sref(block, "compute_at")
            return
        if mark == "compute-inline":
            self.compute_inline(block)
            return
        self._compute_at("compute_at", block, loop, preserve_unit_loops, index, reverse=False)

    @primitive("ReverseComputeAt", inputs=("block", "loop"),
               attrs=("preserve_unit_loops", "index"))
    def reverse_compute_at(self, block, loop, preserve_unit_loops: bool = False,
                           index: int = -1) -> None:
        """Move a consumer block under a loop of its producers.

        Before / after ``sch.reverse_compute_at(sch.get_block("C"), j0)`` (mm_relu)::

            for i, j_0, k, j_1 in T.grid(…):       for i, j_0 in T.grid(128, 32):
                with T.block("Y"): ...                 for k, j_1 in T.grid(128, 4):
            for i, j in T.grid(128, 128):                  with T.block("Y"): ...
                with T.block("C"):                     for ax0 in range(4):
                    vi, vj = T.axis.remap(…)               with T.block("C"):
                                                               vi = T.axis.spatial(128, i)
                                                               vj = T.axis.spatial(128, j_0 * 4 + ax0)
        """
        self._compute_at("reverse_compute_at", block, loop, preserve_unit_loops, index,
                         reverse=True)


_STORAGE_RANK = {"global": 0, "shared": 1, "shared.dyn": 1, "warp": 2, "local": 3}


def _thread_rank(tag: str) -> int:
    if tag.startswith("blockIdx"):
        return 0
    if tag.startswith("threadIdx"):
        return 1
    return 2  # vthread


def _thread_loops_to_relax(loop_sref, scope: str) -> list:
    """Thread-bound loops above (and at) ``loop_sref`` that share the buffer: a shared buffer
    is filled by all threads of a block together, a global one by all blocks (as TVM)."""
    rank = _STORAGE_RANK.get(scope, 3)
    out = []
    p = loop_sref
    while p is not None:
        lp = p.stmt
        if p.is_loop and lp.kind == S.ForKind.THREAD_BINDING and lp.thread_binding is not None \
                and rank <= _thread_rank(lp.thread_binding.thread_tag) and rank < 3:
            out.append(lp)
        p = p.parent
    return out


def _ancestors(sref) -> list:
    """``sref`` and the loops above it."""
    out = []
    while sref is not None:
        if sref.is_loop:
            out.append(sref)
        sref = sref.parent
    return out


def _check_disjoint(prim, ana, rel, loop_sref, scope, relaxed, bname, dname, reverse,
                    collect=None):
    """Each iteration of the loops down to ``loop_sref`` must touch its own part of a buffer
    that ``dname`` updates; otherwise moving the block there would redo (compute_at) or
    consume partial (reverse_compute_at) results."""
    relaxed_ids = {id(lp) for lp in relaxed}
    p = loop_sref
    while p is not None and p is not scope:
        lp = p.stmt
        if p.is_loop and id(lp) not in relaxed_ids and not (
                isinstance(lp.extent, IntImm) and lp.extent.value == 1):
            ok = False
            for dim in rel:
                if dim is None:
                    continue
                lo, hi = dim
                coef = _coef(ana, lo, lp.loop_var)
                ext = ana.simplify(hi - lo + 1)
                if coef and isinstance(ext, IntImm) and abs(coef) >= ext.value:
                    ok = True
                    break
            if not ok:
                what = ("would be computed again, overwriting the partial results of"
                        if not reverse else "would be consumed before it is complete, as it is "
                        "still being updated by")
                err = ScheduleError(
                    prim, f"block `{bname}` cannot be placed under loop `{lp.loop_var.name_hint}`"
                    f": every iteration of loop `{lp.loop_var.name_hint}` touches the same "
                    f"elements, which {what} block `{dname}`")
                if collect is None:
                    raise err
                collect.append((lp, err))
        p = p.parent


def _is_complete_or_reduction(block) -> bool:
    """TVM's complete block (spatial iterators only, reads none of what it writes) or
    reduction block (a ``T.init()``, spatial and reduction iterators)."""
    kinds = {iv.iter_type for iv in block.iter_vars}
    if block.init is not None:
        return kinds <= {E.IterVarType.DataPar, E.IterVarType.CommReduce}
    written = [w.buffer for w in block.writes]
    return kinds <= {E.IterVarType.DataPar} and not any(
        any(r.buffer is b for b in written) for r in block.reads)


def _check_compact_dataflow(prim, block_sref, scope):
    """The blocks of the loop subtree that moves must each be complete or a reduction with
    its ``T.init()`` (TVM's "compact dataflow" condition): an update block without its init
    (``*_update`` after decompose_reduction) would redo its accumulation whenever the new
    loop nest recomputes it."""
    top = block_sref
    while top.parent is not None and top.parent is not scope:
        top = top.parent
    subtree = top.realize if top.is_block else top.stmt
    for realize in realizes_under(subtree):
        blk = realize.block
        if not _is_complete_or_reduction(blk):
            which = "block" if blk is block_sref.stmt else f"block `{blk.name_hint}` next to block"
            raise ScheduleError(
                prim, f"{which} `{block_sref.stmt.name_hint}` is neither a complete block nor a "
                "reduction block with T.init() (it reads what it writes, e.g. an `_update` "
                "block after decompose_reduction); moving it could repeat its updates. Apply "
                f"{prim} before decompose_reduction", [blk])


def _check_consumes_produced(prim, ana, realize, ax_loops, produced, bname, lname):
    """reverse_compute_at: in each iteration of the target loop the moved consumer may read
    only what its producers wrote in that iteration (TVM covers the consumer's iteration
    domain by the produced region; where it cannot, e.g. a read index ``vy + vry`` of a
    convolution against one produced row ``h``, it refuses)."""
    loops = [S.For(ax, IntImm(ax.dtype, 0), IntImm(ax.dtype, ext), S.ForKind.SERIAL,
                   S.Evaluate(IntImm("int32", 0))) for ax, ext in ax_loops]
    block = realize.block
    for reg in block.reads:
        prod = produced.get(id(reg.buffer))
        if prod is None:
            continue
        req = _relaxed_region(ana, reg.region, realize, loops)
        for d, (r, p, dim) in enumerate(zip(req, prod, reg.buffer.shape)):
            if p is None:
                continue
            ok = r is not None \
                and (ana.can_prove(E.GE(r[0], p[0])) or ana.can_prove(E.LE(p[0], 0))) \
                and (ana.can_prove(E.LE(r[1], p[1])) or ana.can_prove(E.GE(p[1], dim - 1)))
            if not ok:
                shown = "?" if r is None else f"[{r[0]}, {r[1]}]"
                raise ScheduleError(
                    prim, f"block `{bname}` cannot be placed under loop {lname}: in one "
                    f"iteration it would read `{reg.buffer.name}` at {shown} along dimension "
                    f"{d}, but only [{p[0]}, {p[1]}] is produced there (its read index cannot "
                    "be matched to the produced region)", [block])


def _add_pred(ana, preds, cond) -> None:
    """Keep the bound check ``cond`` unless the analyzer, which knows the ranges of the
    loops around the new position, proves it (TVM's ``MakeNewLoop`` drops the checks that
    ``CanProve(..., kSymbolicBound)`` proves, e.g. ``i < n`` under ``for i in range(n)``)."""
    if not ana.can_prove(cond):
        preds.append(ana.simplify(cond))   # as TVM's Simplify(predicate): 0 <= h - 1 -> 1 <= h


def _coef(ana, expr, var) -> int:
    lin = ana._lin(expr)
    for atom, coef in lin.terms.values():
        if atom is var:
            return coef
    return 0


def _var_plus_const(expr, iter_vars):
    """(iter var, offset) when ``expr`` is ``v`` or ``v + c``; (None, 0) otherwise."""
    ids = {id(iv.var): iv.var for iv in iter_vars}
    if isinstance(expr, Var) and id(expr) in ids:
        return expr, 0
    if isinstance(expr, (E.Add, E.Sub)) and isinstance(expr.a, Var) and id(expr.a) in ids \
            and isinstance(expr.b, IntImm):
        return expr.a, expr.b.value if isinstance(expr, E.Add) else -expr.b.value
    return None, 0


__all__ = ["ComputeAtMixin", "child_block_srefs", "loop_srefs", "removal_target"]


def _kept_predicate(prim: str, realize, block, bindings, block_sref=None):
    """The block's own ``T.where`` in its new place, or None when it has none.

    A non-dividing split guards its block with ``T.where(k_0 * 128 + k_1 < 300)``; the
    regenerated loops cover whole iterator domains, so dropping the guard would read past
    the buffer (TVM 0.27 drops it: its result reads out of bounds).  The guard is written in
    the old loop variables: each must be bound to one iterator as it is (``vk_0 = k_0``)
    for the guard to be rewritten in the new bindings.  Otherwise it is dropped, as TVM
    does, only when it says no more than "every iterator is inside its domain" (the new
    loops add those bound checks where needed); else compute_at is refused."""
    predicate = realize.predicate if realize is not None else None
    if predicate is None or (isinstance(predicate, IntImm) and predicate.value == 1):
        return None
    loop_to_new = {id(old): new for old, new in zip(realize.iter_values, bindings)
                   if isinstance(old, Var)}
    if not var_ids(predicate) <= set(loop_to_new):
        if block_sref is not None and _only_domain_guard(predicate, realize, block_sref):
            return None
        raise ScheduleError(
            prim, f"block `{block.name_hint}` is guarded by T.where({predicate}) over loops "
                  "that its iterators are not bound to one to one, and the guard is not just "
                  "its iterators' bounds; moving the block would drop it (TVM drops it)",
            [block])
    return substitute(predicate, loop_to_new)


_GUARD_POINTS = 1 << 16  # the most loop points the check below enumerates


def _only_domain_guard(predicate, realize, block_sref) -> bool:
    """Whether ``predicate`` holds at exactly the points of the block's loops where every
    iterator binding lies in its domain (checked on every point, for small loop nests)."""
    import numpy as np

    loops = []
    p = block_sref.parent
    while p is not None and p.is_loop:
        loops.append(p.stmt)
        p = p.parent
    used = var_ids(predicate)
    for v in realize.iter_values:
        used |= var_ids(v)
    loops = [lp for lp in loops if id(lp.loop_var) in used]
    if not all(isinstance(lp.min, IntImm) and isinstance(lp.extent, IntImm) for lp in loops):
        return False
    if int(np.prod([lp.extent.value for lp in loops] or [1])) > _GUARD_POINTS:
        return False
    grids = np.meshgrid(*[np.arange(lp.min.value, lp.min.value + lp.extent.value)
                          for lp in loops], indexing="ij") if loops else []
    env = {id(lp.loop_var): g.ravel() for lp, g in zip(loops, grids)}
    try:
        guard = _eval(predicate, env)
        inside = True
        for iv, value in zip(realize.block.iter_vars, realize.iter_values):
            x = _eval(value, env)
            lo, ext = _eval(iv.dom.min, env), _eval(iv.dom.extent, env)
            inside = inside & (lo <= x) & (x < lo + ext)
    except _Unknown:
        return False
    return bool(np.all(np.broadcast_to(guard, np.shape(inside)) == inside))


class _Unknown(Exception):
    pass


_EVAL = {
    E.Add: lambda a, b: a + b, E.Sub: lambda a, b: a - b, E.Mul: lambda a, b: a * b,
    E.FloorDiv: lambda a, b: a // b, E.FloorMod: lambda a, b: a % b,
    E.LT: lambda a, b: a < b, E.LE: lambda a, b: a <= b, E.GT: lambda a, b: a > b,
    E.GE: lambda a, b: a >= b, E.EQ: lambda a, b: a == b, E.NE: lambda a, b: a != b,
    E.And: lambda a, b: a & b, E.Or: lambda a, b: a | b,
}


def _eval(e, env):
    """``e`` over the integer arrays of ``env`` (id(loop var) -> values)."""
    import numpy as np

    if isinstance(e, IntImm):
        return e.value
    if isinstance(e, Var):
        if id(e) not in env:
            raise _Unknown(e)
        return env[id(e)]
    if isinstance(e, (E.Min, E.Max)):
        f = np.minimum if isinstance(e, E.Min) else np.maximum
        return f(_eval(e.a, env), _eval(e.b, env))
    if isinstance(e, E.Not):
        return ~np.asarray(_eval(e.a, env), dtype=bool)
    fn = _EVAL.get(type(e))
    if fn is None:
        raise _Unknown(e)
    return fn(_eval(e.a, env), _eval(e.b, env))
