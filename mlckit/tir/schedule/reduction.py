"""``decompose_reduction``: separate the ``T.init()`` of a reduction block.

A reduction block initialises its output in ``T.init()`` the first time the reduction
iterators are all at their start.  ``decompose_reduction(block, loop)`` moves that
initialisation into its own block ``<name>_init`` placed just before ``loop``, inside copies
of the spatial loops between ``loop`` and the block; the block becomes ``<name>_update``.
(``rfactor``, the other reduction primitive, is in ``rfactor.py``.)
"""

from __future__ import annotations

from mlckit.arith.analyzer import substitute, uses_var
from mlckit.tir import expr as E
from mlckit.tir import stmt as S
from mlckit.tir.buffer import BufferRegion
from mlckit.tir.expr import IterVar, Range, Var

from .error import ScheduleError
from .instruction import primitive
from .ir_utils import Rewrite, realizes_under, replace_stmts, substitute_stmt
from .query import describe_loop, loop_srefs
from .rv import BlockRV


def _conjuncts(pred) -> list:
    if isinstance(pred, E.And):
        return _conjuncts(pred.a) + _conjuncts(pred.b)
    if isinstance(pred, E.IntImm) and pred.value:
        return []
    return [pred]


def _check_no_repeating_loop(prim, loops, realize, lname, bname) -> None:
    """No loop from ``loop`` down to the block may leave every iterator of the block alone
    (with an extent other than 1).

    Such a loop repeats the whole reduction: ``T.init()`` runs again in each of its
    iterations (e.g. ``expsum`` after ``compute_at`` under the ``j`` loop of softmax's
    ``norm``, recomputed for every ``j``).  The init block goes before ``loop``, outside that
    loop, so it would run once and the updates would accumulate across the repetitions.

    Deviation from TVM v0.23: ``DecomposeReduction`` (src/tir/schedule/primitive/reduction.cc,
    Step 3) discards every loop the init bindings do not use, this one included, and
    produces that wrong program; here it is refused instead."""
    values = list(realize.iter_values)
    for lp in loops:
        loop = lp.stmt
        v = loop.loop_var
        if uses_var(values, lambda x, v=v: x is v):
            continue
        if isinstance(loop.extent, E.IntImm) and loop.extent.value == 1:
            continue
        raise ScheduleError(
            prim, f"loop {describe_loop(loop)} drives no iterator of block `{bname}`, so the "
            "block's reduction is redone in each of its iterations; the init block placed "
            f"before loop {lname} would not run again for them. Decompose at a loop inside "
            f"{describe_loop(loop)}", [loop, realize.block])


class ReductionMixin:
    @primitive("DecomposeReduction", inputs=("block", "loop"))
    def decompose_reduction(self, block, loop) -> BlockRV:
        """Split a reduction block into an init block and an update block, the init placed
        before ``loop``; returns the init block.

        Before / after ``sch.decompose_reduction(block_Y, k)`` (mm_relu)::

            for i, j, k in T.grid(128, 128, 128):     for i, j in T.grid(128, 128):
                with T.block("Y"):                        with T.block("Y_init"):
                    vi, vj, vk = T.axis.remap(…)              vi, vj = T.axis.remap("SS", [i, j])
                    with T.init():                            Y[vi, vj] = T.float32(0)
                        Y[vi, vj] = T.float32(0)          for k in range(128):
                    Y[vi, vj] = Y[vi, vj] + …                 with T.block("Y_update"):
                                                                  Y[vi, vj] = Y[vi, vj] + …

        Refused when a loop from ``loop`` down to the block drives none of the block's
        iterators (e.g. after ``compute_at`` recomputes the reduction in each iteration of a
        consumer loop): the init block before ``loop`` would not run again for each repetition.
        """
        block_sref, loop_sref, idx = _check_decompose_reduction(self, block, loop)
        rw = Rewrite()
        new_body, init_block = _apply_decompose_reduction(
            self.mod[block_sref.func_name], block_sref, loop_sref, idx, rw)
        self._commit(block_sref.func_name, new_body, rw)
        return self._rv_for(self.state.get_sref(init_block), BlockRV)


def _check_decompose_reduction(sch, block, loop):
    """Every condition of ``decompose_reduction``; changes nothing.  Returns the block's and
    the loop's srefs and the loop's index among the loops around the block."""
    prim = "decompose_reduction"
    block_sref = sch._block_sref(block, prim)
    loop_sref = sch._loop_sref(loop, prim)
    bstmt, lstmt = block_sref.stmt, loop_sref.stmt
    bname, lname = bstmt.name_hint, describe_loop(lstmt)
    loops = loop_srefs(block_sref)
    if not any(lp is loop_sref for lp in loops):
        raise ScheduleError(prim, f"loop {lname} is not one of the loops around block "
                            f"`{bname}`", [bstmt, lstmt])
    if bstmt.init is None:
        raise ScheduleError(prim, f"block `{bname}` is not a reduction block: it has no "
                            "T.init()", [bstmt])
    realize = block_sref.realize
    for iv in bstmt.iter_vars:
        if iv.iter_type not in (E.IterVarType.DataPar, E.IterVarType.CommReduce):
            raise ScheduleError(prim, f"block `{bname}` is not a reduction block: iterator "
                                f"`{iv.var.name_hint}` is neither spatial nor reduction")
    higher = []
    for lp in loops:
        if lp is loop_sref:
            break
        higher.append(lp.stmt.loop_var)
    for iv, value in zip(bstmt.iter_vars, realize.iter_values):
        if iv.iter_type != E.IterVarType.CommReduce:
            continue
        used = [v for v in higher if uses_var(value, lambda x, v=v: x is v)]
        if used:
            raise ScheduleError(
                prim, f"loop {lname} must be above every loop of the reduction iterator "
                f"`{iv.var.name_hint}` of block `{bname}`, but loop `{used[0].name_hint}` "
                f"(outside {lname}) drives it", [lstmt, bstmt])
    idx = [i for i, lp in enumerate(loops) if lp is loop_sref][0]
    _check_no_repeating_loop(prim, loops[idx:], realize, lname, bname)
    return block_sref, loop_sref, idx


def _apply_decompose_reduction(func, block_sref, loop_sref, idx, rw: Rewrite):
    """The rewrite of ``decompose_reduction``: (the function's new body, the init block)."""
    bstmt, lstmt, realize = block_sref.stmt, loop_sref.stmt, block_sref.realize
    loops = loop_srefs(block_sref)
    init_realize = _init_block(bstmt, realize, rw)
    init_block, init_values = init_realize.block, init_realize.iter_values
    # loops between `loop` and the block that drive the init bindings
    chosen, discarded = [], set()
    for lp in reversed(loops[idx:]):
        v = lp.stmt.loop_var
        if any(uses_var(x, lambda y, v=v: y is v) for x in init_values):
            chosen.append(lp.stmt)
        else:
            discarded.add(id(v))
    kept = [c for c in _conjuncts(realize.predicate)
            if not uses_var(c, lambda y: id(y) in discarded)]
    predicate = E.convert(True)
    for c in kept:
        predicate = E.logical_and(predicate, c)
    body = S.BlockRealize(init_values, predicate, init_block)
    loop_var_map = {}
    for lp in chosen:  # innermost first
        nv = Var(lp.loop_var.name_hint + "_init", lp.loop_var.dtype)
        loop_var_map[lp.loop_var] = nv
        tb = lp.thread_binding
        if tb is not None:
            tb = IterVar(tb.dom, Var(tb.var.name_hint, tb.var.dtype), tb.iter_type,
                         tb.thread_tag)
        body = S.For(nv, lp.min, lp.extent, lp.kind, body, tb, dict(lp.annotations))
    body = substitute_stmt(body, loop_var_map, rw)
    # the update block
    read_bufs = [r.buffer for r in bstmt.reads]
    new_reads = [w for w in bstmt.writes if not any(w.buffer is b for b in read_bufs)]
    new_reads += list(bstmt.reads)
    update = rw.derive(bstmt, name_hint=bstmt.name_hint + "_update", init=None, reads=new_reads)
    inner = replace_stmts(lstmt, {id(bstmt): update}, rw)
    return replace_stmts(func.body, {id(lstmt): S.stmt_seq(body, inner)}, rw), init_block


def _init_block(bstmt, realize, rw: Rewrite) -> S.BlockRealize:
    """The ``<name>_init`` block (the block's ``T.init()`` over its spatial iterators), with
    the original bindings of those iterators and no predicate yet."""
    var_map, init_ivs, init_values = {}, [], []
    for iv, value in zip(bstmt.iter_vars, realize.iter_values):
        if iv.iter_type != E.IterVarType.DataPar:
            continue
        nv = Var(iv.var.name_hint, iv.var.dtype)
        var_map[iv.var] = nv
        init_ivs.append(IterVar(iv.dom, nv, iv.iter_type, iv.thread_tag))
        init_values.append(value)
    init_body = substitute_stmt(bstmt.init, var_map, rw)
    init_writes = [BufferRegion(w.buffer, [Range(substitute(r.min, var_map),
                                                 substitute(r.extent, var_map))
                                           for r in w.region]) for w in bstmt.writes]
    init_block = S.Block(init_ivs, [], init_writes, bstmt.name_hint + "_init", init_body,
                         annotations=dict(bstmt.annotations))
    return S.BlockRealize(init_values, E.convert(True), init_block)


def single_child_realize(prim, loop_sref):
    """The one BlockRealize under a loop (ScheduleError when there are none or several)."""
    realizes = realizes_under(loop_sref.stmt)
    if len(realizes) != 1:
        names = ", ".join(f"`{r.block.name_hint}`" for r in realizes) or "none"
        raise ScheduleError(prim, f"loop {describe_loop(loop_sref.stmt)} is required to have "
                            f"exactly one child block, but it has {len(realizes)} ({names})",
                            [loop_sref.stmt])
    return realizes[0]
