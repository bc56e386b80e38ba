"""Compute location: ``compute_at`` and ``reverse_compute_at``.

``compute_at(block, loop)`` moves a producer block under a loop of its consumers, computing
in each iteration just the region those consumers need; ``reverse_compute_at(block, loop)``
moves a consumer under a loop of its producers, consuming in each iteration the region just
produced.  New loops ``ax0, ax1, …`` cover that region; iterators whose region is a single
point get no loop (unless ``preserve_unit_loops``).

Written as a check (:func:`_check_compute_at`: every condition, and the block's new realize)
and an apply (:func:`_apply_compute_at`: the new loops placed, the block removed from its
old place); the region analysis and TVM's conditions are in ``compute_at_region``.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlckit.arith import Analyzer
from mlckit.arith.analyzer import uses_var
from mlckit.arith.iter_map_inverse import invert
from mlckit.tir import expr as E
from mlckit.tir import stmt as S
from mlckit.tir.expr import IntImm, Range, Var

from .compute_at_region import (
    _add_pred,
    _ancestors,
    _check_compact_dataflow,
    _check_consumes_produced,
    _check_disjoint,
    _kept_predicate,
    _loops_inside,
    _relaxed_region,
    _thread_loops_to_relax,
    _union,
    _var_plus_const,
)
from .error import ScheduleError
from .instruction import primitive
from .ir_utils import Rewrite, replace_stmts
from .query import (
    child_block_srefs,
    consumer_srefs,
    describe_loop,
    is_ancestor,
    loop_srefs,
    producer_srefs,
    scope_sref,
)

__all__ = ["ComputeAtMixin", "child_block_srefs", "loop_srefs", "removal_target"]


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


def _runs_after(scope, sref, loop_sref) -> bool:
    """Whether ``sref``'s statement comes after ``loop_sref``'s loop where their paths from
    ``scope`` part: a later statement of the scope's body, or of the body of a loop holding
    both (in each of its iterations ``sref`` then runs after the loop)."""
    def path(s):
        out = []
        while s is not None and s is not scope:
            out.append(s)
            s = s.parent
        return out[::-1]

    a, b = path(sref), path(loop_sref)
    k = 0
    while k < min(len(a), len(b)) and a[k] is b[k]:
        k += 1
    if k == len(a) or k == len(b):
        return False  # one holds the other
    children = _children((scope if k == 0 else a[k - 1]).stmt.body)

    def position(stmt):
        return next((i for i, c in enumerate(children) if _contains(c, stmt)), -1)

    return position(a[k].stmt) > position(b[k].stmt) >= 0


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


class ComputeAtMixin:
    def _compute_at(self, prim, block, loop, preserve_unit_loops, index, reverse):
        """``compute_at`` (``reverse=False``) or ``reverse_compute_at``: every check, then
        the change."""
        plan = _check_compute_at(self, prim, block, loop, preserve_unit_loops, index, reverse)
        rw = Rewrite()
        new_body = _apply_compute_at(self.mod[plan.block_sref.func_name], plan, rw)
        self._commit(plan.block_sref.func_name, new_body, rw)

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


@dataclass
class _ComputeAtPlan:
    """What the check of ``compute_at`` found: the block's new realize (``nest``, without
    its loops), the new loops ``(ax, extent)`` around it, and where it goes among the
    ``children`` of the loop's body (``pos``)."""

    block_sref: object
    loop_sref: object
    nest: S.BlockRealize
    loops: list
    children: list
    pos: int


def _check_compute_at(sch, prim, block, loop, preserve_unit_loops, index,
                      reverse) -> _ComputeAtPlan:
    """Every condition of ``compute_at`` / ``reverse_compute_at`` (a ScheduleError naming
    the failed one), and the block's new realize; changes nothing."""
    block_sref = sch._block_sref(block, prim)
    loop_sref = sch._loop_sref(loop, prim)
    scope = _check_block_and_loop(prim, block_sref, loop_sref)
    deps_in, other = _check_dependences(prim, sch.state, block_sref, loop_sref, scope, reverse)
    children = _children(loop_sref.stmt.body)
    pos = _insert_position(prim, children, deps_in, other, block_sref, loop_sref, index, reverse)
    # the outer loops (down to and including `loop`) are known at the new position
    outer = Analyzer(unit_ranges_as_constants=True)
    p = loop_sref
    while p is not None:
        if p.is_loop:
            outer.bind(p.stmt.loop_var, Range(p.stmt.min, p.stmt.extent))
        p = p.parent
    need, repeated = _needed_regions(prim, outer, block_sref, loop_sref, scope, deps_in, reverse)
    var_range = _block_var_ranges(outer, block_sref.stmt, need, reverse)
    _check_repeated(sch.state, block_sref.stmt, var_range, repeated)
    nest, loops = _new_realize(prim, outer, block_sref, loop_sref, var_range, preserve_unit_loops)
    if reverse:
        _check_consumes_produced(prim, outer, nest, loops, need, block_sref.stmt.name_hint,
                                 describe_loop(loop_sref.stmt))
    return _ComputeAtPlan(block_sref, loop_sref, nest, loops, children, pos)


def _apply_compute_at(func, plan: _ComputeAtPlan, rw: Rewrite):
    """The change: the new loops around the block under the loop, the block gone from its
    old place.  The function's new body."""
    nest = plan.nest
    for ax, ext in reversed(plan.loops):
        nest = S.For(ax, IntImm(ax.dtype, 0), IntImm(ax.dtype, ext), S.ForKind.SERIAL, nest)
    lstmt = plan.loop_sref.stmt
    new_children = plan.children[:plan.pos] + [nest] + plan.children[plan.pos:]
    new_loop = rw.derive(lstmt, body=S.stmt_seq(*new_children))
    table = {id(removal_target(plan.block_sref)): None, id(lstmt): new_loop}
    return replace_stmts(func.body, table, rw)


def _check_block_and_loop(prim, block_sref, loop_sref):
    """The block and the loop: same function and scope, the block not already under the
    loop, only spatial and reduction iterators, compact dataflow, the only writer of its
    outputs.  The scope's sref."""
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
    return scope


def _check_dependences(prim, state, block_sref, loop_sref, scope, reverse):
    """The blocks the moved block is computed next to (its consumers for compute_at, its
    producers for reverse_compute_at) that are under the loop (all of them must be), and
    those on the other side."""
    bstmt, lstmt = block_sref.stmt, loop_sref.stmt
    bname, lname = bstmt.name_hint, describe_loop(lstmt)
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
        role = "producer"
    else:
        deps = consumer_srefs(state, block_sref)
        other = producer_srefs(state, block_sref)
        role = "consumer"
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
        early = [o for o in other if not is_ancestor(loop_sref, o)
                 and not _runs_after(scope, o, loop_sref)]
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
    return deps_in, other


def _insert_position(prim, children, deps_in, other, block_sref, loop_sref, index, reverse):
    """Where the block goes among the children of the loop's body: after its producers,
    before its consumers; ``index`` -1 is the last valid position, -2 the first (as TVM)."""
    bname, lname = block_sref.stmt.name_hint, describe_loop(loop_sref.stmt)
    role, other_role = ("producer", "consumer") if reverse else ("consumer", "producer")

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
    if index == -1:
        return hi_bound
    if index == -2:
        return lo_bound
    if not lo_bound <= index <= hi_bound:
        raise ScheduleError(prim, f"index {index} is not a valid position under loop "
                            f"{lname} (valid: {lo_bound}..{hi_bound})")
    return index


def _needed_regions(prim, outer, block_sref, loop_sref, scope, deps_in, reverse):
    """Per buffer (by id), the region needed (compute_at) or produced (reverse) under the
    loop, and the ``(loop, error)`` pairs where a producer's updates repeat (reverse)."""
    bstmt = block_sref.stmt
    my_buffers = [r.buffer for r in (bstmt.reads if reverse else bstmt.writes)]
    need: dict[int, list] = {}
    repeated: list = []
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
                _check_disjoint(prim, outer, rel, loop_sref, scope, threads, bstmt.name_hint,
                                d.stmt.name_hint, reverse, repeated if reverse else None,
                                shape=reg.buffer.shape)
            key = id(reg.buffer)
            if key in need and reverse:
                continue
            need[key] = _union(outer, need.get(key), rel)
    return need, repeated


def _block_var_ranges(outer, bstmt, need, reverse) -> dict:
    """id(block var) -> its (lo, hi) under the loop, from the block's own regions of the
    needed buffers."""
    var_range: dict[int, tuple] = {}
    for reg in (bstmt.reads if reverse else bstmt.writes):
        rel = need.get(id(reg.buffer))
        if rel is None:
            continue
        ranges = _affine_var_ranges(outer, bstmt, reg.region, rel) or \
            _dimwise_var_ranges(outer, bstmt, reg.region, rel)
        for key, (lo, hi) in ranges:
            if key in var_range and not reverse:
                plo, phi = var_range[key]
                lo = outer.simplify(E.min_expr(plo, lo))
                hi = outer.simplify(E.max_expr(phi, hi))
            var_range[key] = (lo, hi)
    return var_range


def _dimwise_var_ranges(outer, bstmt, region, rel) -> list:
    """(id(block var), (lo, hi)) for each dimension of ``region`` indexed by ``v + c``."""
    out = []
    for rng, dim in zip(region, rel):
        if dim is None or not (isinstance(rng.extent, IntImm) and rng.extent.value == 1):
            continue
        base, offset = _var_plus_const(rng.min, bstmt.iter_vars)
        if base is not None:
            out.append((id(base), (outer.simplify(dim[0] - offset),
                                   outer.simplify(dim[1] - offset))))
    return out


def _affine_var_ranges(outer, bstmt, region, rel) -> list:
    """(id(block var), (lo, hi)) for each iterator, when the block touches one element of
    ``region`` that is not indexed by ``v + c`` in every dimension but by a one-to-one affine
    map of its iterators (``C[vi * 4 + vj]`` of a flattened layout): the map's inverse
    relaxed over the region needed (TVM's ``UpdateBlockVarDomainAffine``).  Empty otherwise:
    the dimensions are matched one by one."""
    if any(dim is None for dim in rel) or not all(
            isinstance(r.extent, IntImm) and r.extent.value == 1 for r in region):
        return []
    indices = [r.min for r in region]
    if all(_var_plus_const(i, bstmt.iter_vars)[0] is not None for i in indices):
        return []
    holders = [Var(f"p{d}", i.dtype) for d, i in enumerate(indices)]
    inverse = invert(indices, {iv.var: iv.dom for iv in bstmt.iter_vars}, holders)
    if inverse is None:
        return []
    dom = {h: Range(lo, outer.simplify(hi - lo + 1)) for h, (lo, hi) in zip(holders, rel)}
    out = []
    for var, value in inverse.items():
        bound = outer.int_set(value, dom)
        if bound is None:
            return []
        out.append((id(var), (outer.simplify(bound.min_value), outer.simplify(bound.max_value))))
    return out


def _check_repeated(state, bstmt, var_range, repeated) -> None:
    """reverse_compute_at under a loop whose iterations all update the same elements."""
    for lp, err in repeated:
        # a part that follows the loop would be computed once, from partial values; a
        # reduction is redone whole in each iteration (init included, the last one from
        # the final values) only if its reduction iterators follow loops inside that loop
        if any(uses_var(x, lambda v, var=lp.loop_var: v is var)
               for rng in var_range.values() for x in rng):
            raise err
        if bstmt.init is not None:
            above = {id(q.stmt.loop_var) for q in _ancestors(state.get_sref(lp))}
            reduce_ranges = [x for iv in bstmt.iter_vars
                             if iv.iter_type == E.IterVarType.CommReduce
                             for x in var_range.get(id(iv.var), ())]
            if any(uses_var(x, lambda v, ids=above: id(v) in ids) for x in reduce_ranges):
                raise err


def _new_realize(prim, outer, block_sref, loop_sref, var_range, preserve_unit_loops):
    """The block's realize at its new place (bindings ``min + ax``, bound checks where the
    analyzer cannot prove them, its own ``T.where``) and the new loops ``(ax, extent)``."""
    bstmt = block_sref.stmt
    bindings, preds, loops = [], [], []
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
                                    f"`{iv.var.name_hint}` of block `{bstmt.name_hint}` under "
                                    f"loop {describe_loop(loop_sref.stmt)}")
            ext_val = int(bound)
            exact = False
        else:
            ext_val, exact = extent.value, True
        if ext_val == 1 and not preserve_unit_loops:
            value = outer.simplify(lo)
        else:
            ax = Var(f"ax{len(loops)}", iv.var.dtype)
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
    return S.BlockRealize(bindings, predicate, bstmt), loops
