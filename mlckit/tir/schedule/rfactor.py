"""``rfactor(loop, factor_axis)``: factorize a reduction over one of its loops.

The reduction splits into a block ``<name>_rf`` computing one partial result per iteration of
``loop`` (into a new buffer ``<buffer>_rf``) and the original block, which now reduces those
partial results.  Written as a check (:func:`_check_rfactor`, every condition, nothing
changed) and an apply (:func:`_apply_rfactor`, the rewrite, which cannot fail).
"""

from __future__ import annotations

from dataclasses import dataclass

from mlckit.arith.analyzer import Analyzer, substitute, uses_var
from mlckit.tir import expr as E
from mlckit.tir import stmt as S
from mlckit.tir.buffer import BufferRegion
from mlckit.tir.expr import IterVar, Range, Var

from .error import ScheduleError
from .instruction import primitive
from .ir_utils import Rewrite, realizes_under, replace_stmts, substitute_stmt, walk
from .query import child_block_srefs, describe_loop, loop_srefs, scope_sref
from .reduction import _conjuncts, single_child_realize
from .rv import BlockRV


# The commutative reducers rfactor recognises, as in TVM's ReducerRegistry (single buffer):
# (name, node class of the combiner ``x op y``, identity element for a dtype).
def _reducers():
    from mlckit.tir import op

    return (
        ("sum", E.Add, lambda dtype: op.const(0, dtype)),
        ("product", E.Mul, lambda dtype: op.const(1, dtype)),
        ("min", E.Min, lambda dtype: op.max_value(dtype)),
        ("max", E.Max, lambda dtype: op.min_value(dtype)),
    )


def _same_const(a, b) -> bool:
    return (isinstance(a, (E.IntImm, E.FloatImm)) and type(a) is type(b)
            and a.dtype == b.dtype and a.value == b.value)


def vars_in_order(expr) -> list:
    """The Vars of ``expr``, each once, in left-to-right order (TVM's ``UndefinedVars``)."""
    out: list = []

    def visit(e):
        if isinstance(e, Var):
            if not any(v is e for v in out):
                out.append(e)
            return
        if isinstance(e, list):
            for x in e:
                visit(x)
            return
        if isinstance(e, E.PrimExpr):
            for name in e.field_names():
                if name in ("buffer", "op"):
                    continue
                visit(getattr(e, name))

    visit(expr)
    return out


def check_reduction_block(prim, state, block_sref) -> None:
    """TVM's reduction-block conditions (init; only spatial/reduction iterators; the only
    writer of its outputs in its scope; reduction iterators do not index the outputs)."""
    block = block_sref.stmt
    name = block.name_hint
    if block.init is None:
        raise ScheduleError(prim, f"block `{name}` is not a reduction block: it has no T.init()",
                            [block])
    for iv in block.iter_vars:
        if iv.iter_type not in (E.IterVarType.DataPar, E.IterVarType.CommReduce):
            raise ScheduleError(prim, f"block `{name}` is not a reduction block: iterator "
                                f"`{iv.var.name_hint}` is neither spatial nor reduction", [block])
    scope = scope_sref(block_sref)
    outs = [w.buffer for w in block.writes]
    for other in child_block_srefs(state, scope):
        if other is block_sref:
            continue
        for w in other.stmt.writes:
            if any(w.buffer is b for b in outs):
                raise ScheduleError(
                    prim, f"block `{name}` is not a reduction block: block "
                    f"`{other.stmt.name_hint}` writes its output `{w.buffer.name}` too (a "
                    "reduction block must be the only writer of its outputs)", [block])
    reduce_ids = {id(iv.var) for iv in block.iter_vars if iv.iter_type == E.IterVarType.CommReduce}
    bad = []

    def visit(s):
        if isinstance(s, S.BufferStore) and uses_var(s.indices, lambda v: id(v) in reduce_ids):
            bad.append(s)
        return True

    walk(block.body, visit)
    if bad:
        raise ScheduleError(prim, f"block `{name}` is not a reduction block: a reduction iterator "
                            f"indexes its output buffer `{bad[0].buffer.name}`", [block])


def _match_reducer(prim, block):
    """(combiner class, identity, lhs load, rhs, update store) of a single-buffer reduction."""
    name = block.name_hint
    init, body = block.init, block.body
    if not isinstance(init, S.BufferStore) or not isinstance(body, S.BufferStore):
        raise ScheduleError(
            prim, f"rfactor cannot be applied to block `{name}`: its init and its body must each "
            "be a single BufferStore (one reduction buffer)", [block])
    if init.buffer is not body.buffer:
        raise ScheduleError(prim, f"rfactor cannot be applied to block `{name}`: its init writes "
                            f"`{init.buffer.name}` but its body writes `{body.buffer.name}`",
                            [block])
    from mlckit.ir import structural_equal

    if len(init.indices) != len(body.indices) or not all(
            structural_equal(a, b) for a, b in zip(init.indices, body.indices)):
        raise ScheduleError(prim, f"rfactor cannot be applied to block `{name}`: its init and "
                            "its body store to different indices", [block])
    lhs = E.BufferLoad(body.buffer, list(body.indices))
    value = body.value
    for _name, cls, identity in _reducers():
        if not isinstance(value, cls):
            continue
        if not _same_const(init.value, identity(init.value.dtype)):
            continue
        if not structural_equal(value.a, lhs):
            continue
        return cls, init.value, value.a, value.b, body
    raise ScheduleError(
        prim, f"no commutative reducer matches block `{name}`: rfactor recognises "
        f"`{body.buffer.name}[...] = {body.buffer.name}[...] + x` with init 0, `* x` with init 1, "
        "T.min(…, x) with init max_value and T.max(…, x) with init min_value (the buffer's "
        f"own value first); got init {init.value} and update {value}", [block])


class RFactorMixin:
    @primitive("RFactor", inputs=("loop",), attrs=("factor_axis",))
    def rfactor(self, loop, factor_axis: int) -> BlockRV:
        """Factorize a reduction over ``loop``: a new block ``<block>_rf`` computes one partial
        result per iteration of ``loop`` into a new buffer ``<buffer>_rf`` (with an extra
        dimension of ``loop``'s extent at ``factor_axis``); the original block then only sums
        those partial results.  Returns the ``_rf`` block.  The partial results are
        independent, so ``loop`` can afterwards be parallelised.

        Before / after ``sch.rfactor(k1, 0)`` (``k`` split into ``k0, k1``)::

            for i, k0, k1 in T.grid(16, 4, 4):      B_rf = T.alloc_buffer((4, 16))
                with T.block("B"):                  for i, k0, k1 in T.grid(16, 4, 4):
                    vi = T.axis.spatial(16, i)          with T.block("B_rf"):
                    vk = T.axis.reduce(16, k0*4+k1)         vk1, vi, vk0 = T.axis.remap("SSR", [k1, i, k0])
                    with T.init():                          with T.init():
                        B[vi] = T.float32(0)                    B_rf[vk1, vi] = T.float32(0)
                    B[vi] = B[vi] + A[vi, vk]               B_rf[vk1, vi] = B_rf[vk1, vi] + A[vi, vk0*4+vk1]
                                                    for i, k1 in T.grid(16, 4):
                                                        with T.block("B"):
                                                            vk1, vi = T.axis.remap("RS", [k1, i])
                                                            with T.init():
                                                                B[vi] = T.float32(0)
                                                            B[vi] = B[vi] + B_rf[vk1, vi]
        """
        plan = _check_rfactor(self, loop, factor_axis)
        rw = Rewrite()
        new_body, rf_block = _apply_rfactor(self.mod[plan.block_sref.func_name], plan, rw)
        self._commit(plan.block_sref.func_name, new_body, rw)
        return self._rv_for(self.state.get_sref(rf_block), BlockRV)


@dataclass
class _RFactorPlan:
    """What the check of ``rfactor`` found: all the rewrite needs, nothing left to verify."""

    block_sref: object
    realize: S.BlockRealize
    loops: list            # the loops around the block, outermost first
    rf_loop: S.For
    red_vars: set          # ids of the loop vars the reduction iterators use
    combiner: type         # E.Add, E.Mul, E.Min or E.Max
    identity: E.PrimExpr
    lhs: E.PrimExpr        # the buffer's own value in the update
    rhs: E.PrimExpr        # the value reduced into it
    update: S.BufferStore
    axis: int              # factor_axis, normalised to [0, ndim]
    wb_predicate: E.PrimExpr  # the write-back block's (_writeback_predicate)


def _check_rfactor(sch, loop, factor_axis) -> _RFactorPlan:
    """Every condition of ``rfactor`` (a ScheduleError naming the failed one); changes nothing."""
    prim = "rfactor"
    rf_sref = sch._loop_sref(loop, prim)
    rf_loop = rf_sref.stmt
    realize = single_child_realize(prim, rf_sref)
    block = realize.block
    block_sref = sch.state.get_sref(block)
    if sch.enable_check:
        check_reduction_block(prim, sch.state, block_sref)
    if rf_loop.kind != S.ForKind.SERIAL:
        raise ScheduleError(prim, f"loop {describe_loop(rf_loop)} must be serial to be factorized, "
                            f"but it is {rf_loop.kind.name.lower()}", [rf_loop])
    # loop vars touched by spatial / reduction iterators
    dp_vars, red_vars = set(), set()
    for iv, value in zip(block.iter_vars, realize.iter_values):
        target = dp_vars if iv.iter_type == E.IterVarType.DataPar else red_vars
        for v in vars_in_order(value):
            target.add(id(v))
    loops = [s.stmt for s in loop_srefs(block_sref)]
    if sch.enable_check:
        _check_rfactor_loops(prim, block, loops, rf_loop, dp_vars, red_vars)
    combiner, identity, lhs, rhs, update = _match_reducer(prim, block)
    buf = update.buffer
    ndim = len(buf.shape)
    axis = sch._int(factor_axis, prim)
    if axis < -(ndim + 1) or axis > ndim:
        raise ScheduleError(
            prim, f"factor_axis {axis} is out of range: the write buffer `{buf.name}` has "
            f"{ndim} dimension(s), so factor_axis must be in [{-(ndim + 1)}, {ndim}]")
    if axis < 0:
        axis += ndim + 1
    wb_predicate = _writeback_predicate(prim, realize, loops, rf_loop, red_vars, dp_vars)
    return _RFactorPlan(block_sref, realize, loops, rf_loop, red_vars, combiner, identity, lhs,
                        rhs, update, axis, wb_predicate)


def _writeback_predicate(prim, realize, loops, rf_loop, red_vars, dp_vars) -> E.PrimExpr:
    """The predicate of the write-back block: the conjuncts of the block's predicate over
    the loops kept around it (its spatial loops and ``rf_loop``).  They bound what it writes
    (``T.where(n_0 * 2 + n_1 < 3)`` of an uneven split) and which partial results exist.  A
    conjunct over loops no iterator of it uses (a split of ``add_unit_loop``'s loop) only
    repeats the whole write-back, which gives the same result: dropped, as TVM drops it.

    A conjunct that also uses a loop only the reduction uses (``k_0 * 4 + k_1 < 10``) is
    dropped, as TVM drops it, when it holds at that loop's first iteration: every partial
    result is then initialized and holds the sum of what the block computed for it.  Where
    it may not hold there (``k_0 * 4 + k_1 < 2``, ``k`` of extent 2 split by 4, rfactor of
    ``k_1``), some partial results would never be computed and the write-back would add up
    uninitialized memory: refused.  (TVM 0.27 keeps no predicate on the write-back block at
    all, and writes out of bounds or sums garbage in both cases.)"""
    removed = {id(lp.loop_var): lp for lp in loops
               if lp is not rf_loop and id(lp.loop_var) in red_vars}
    ana = Analyzer()
    for lp in loops:
        if id(lp.loop_var) not in removed:
            ana.bind(lp.loop_var, Range(lp.min, lp.extent))
    kept = []
    bounding = dp_vars | {id(rf_loop.loop_var)}
    for cond in _conjuncts(realize.predicate):
        if not uses_var(cond, lambda v: id(v) in removed):
            if uses_var(cond, lambda v: id(v) in bounding):
                kept.append(cond)
            continue
        at_first = substitute(cond, {lp.loop_var: lp.min for lp in removed.values()})
        if not ana.can_prove(at_first):
            block = realize.block
            raise ScheduleError(
                prim, f"block `{block.name_hint}`'s predicate `{cond}` does not hold at the "
                "first iteration of the reduction loops the write-back drops, so some partial "
                f"results of loop {describe_loop(rf_loop)} would never be computed and their sum "
                "would read uninitialized memory (rfactor a loop whose every iteration does "
                "work, e.g. of a split whose factors divide the extent)", [rf_loop, block])
    predicate = E.convert(True)
    for cond in kept:
        predicate = E.logical_and(predicate, cond)
    return predicate


def _check_rfactor_loops(prim, block, loops, rf_loop, dp_vars, red_vars) -> None:
    """TVM's conditions on the loops around the block, and that ``rf_loop`` reduces."""
    bname, lname = block.name_hint, describe_loop(rf_loop)
    first = realizes_under(loops[0])
    if not first or first[0].block is not block:
        raise ScheduleError(
            prim, f"block `{bname}` must be the first child block of the outermost loop "
            f"{describe_loop(loops[0])} around it", [loops[0], block])
    met_reduction = False
    for lp in loops:
        v = id(lp.loop_var)
        if v in dp_vars and v in red_vars:
            raise ScheduleError(
                prim, f"loop {describe_loop(lp)} drives both spatial and reduction "
                f"iterators of block `{bname}`", [lp, block])
        if v in dp_vars:
            if lp is rf_loop:
                raise ScheduleError(
                    prim, f"loop {lname} drives a spatial iterator of block `{bname}`; "
                    "rfactor needs a loop that only reduction iterators use", [lp, block])
            continue
        if v in red_vars:
            if not met_reduction:
                n = len(realizes_under(lp))
                if n != 1:
                    raise ScheduleError(
                        prim, f"the outermost reduction loop {describe_loop(lp)} must "
                        f"have exactly one child block, but it has {n}", [lp])
                met_reduction = True
            continue
        if met_reduction and not (isinstance(lp.extent, E.IntImm) and lp.extent.value == 1):
            raise ScheduleError(
                prim, f"loop {describe_loop(lp)} is bound to no iterator of block "
                f"`{bname}`, has an extent other than 1 and sits under a reduction loop",
                [lp])
    # a loop no iterator uses repeats the whole reduction: of extent 1 it is rfactored as TVM
    # does (a unit rfactor dimension, e.g. after add_unit_loop); of a larger extent the
    # partial sums would each hold the whole reduction, and their sum count it that many
    # times (TVM takes such a loop and computes that)
    if id(rf_loop.loop_var) not in red_vars and not (
            isinstance(rf_loop.extent, E.IntImm) and rf_loop.extent.value == 1):
        raise ScheduleError(
            prim, f"loop {lname} drives no reduction iterator of block `{bname}`; "
            "rfactor needs a reduction loop (or a loop of extent 1): over a loop no iterator "
            "uses, every partial result would hold the whole reduction", [rf_loop, block])


def _iter_from_loop(lp, name, kind) -> IterVar:
    return IterVar(Range(lp.min, lp.extent), Var(name, lp.loop_var.dtype), kind)


def _apply_rfactor(func, plan: _RFactorPlan, rw: Rewrite):
    """The rewrite of ``rfactor``: (the function's new body, the ``_rf`` block)."""
    buf = plan.update.buffer
    rf_shape = list(buf.shape)
    rf_shape.insert(plan.axis, plan.rf_loop.extent)
    rf_buf = buf.replace(shape=rf_shape, name=buf.name + ".rf",
                         data=Var(buf.name + ".rf", buf.data.dtype), strides=[])
    rf_realize, add_iter, rf_load = _rf_block(plan, rf_buf, rw)
    wb_realize = _writeback_block(plan, add_iter, rf_load, rw)
    loops, block_sref = plan.loops, plan.block_sref
    # loops around the rfactor block: copies of all the loops
    new_vars = {lp.loop_var: Var(lp.loop_var.name_hint, lp.loop_var.dtype) for lp in loops}
    rf_nest = rf_realize.replace(
        iter_values=[substitute(v, new_vars) for v in rf_realize.iter_values],
        predicate=substitute(rf_realize.predicate, new_vars))
    for lp in reversed(loops):
        rf_nest = lp.replace(loop_var=new_vars[lp.loop_var], body=rf_nest)
    wb_nest = _writeback_nest(plan, wb_realize, rw)
    scope = scope_sref(block_sref)
    new_scope_body = replace_stmts(scope.stmt.body,
                                   {id(loops[0]): S.stmt_seq(rf_nest, wb_nest)}, rw)
    new_scope = rw.derive(scope.stmt, body=new_scope_body,
                          alloc_buffers=list(scope.stmt.alloc_buffers) + [rf_buf])
    return replace_stmts(func.body, {id(scope.stmt): new_scope}, rw), rf_realize.block


def _rf_block(plan: _RFactorPlan, rf_buf, rw: Rewrite):
    """The ``<name>_rf`` block's realize, its new spatial iterator and its load of ``rf_buf``."""
    block, realize, rf_loop, axis = plan.realize.block, plan.realize, plan.rf_loop, plan.axis
    loop_by_var = {id(lp.loop_var): lp for lp in plan.loops}
    add_iter = _iter_from_loop(rf_loop, "v" + rf_loop.loop_var.name_hint, E.IterVarType.DataPar)
    loop2iter = {rf_loop.loop_var: add_iter.var}
    rf_ivs, rf_values, rf_map = [add_iter], [rf_loop.loop_var], {}
    for iv, value in zip(block.iter_vars, realize.iter_values):
        if iv.iter_type == E.IterVarType.DataPar or not uses_var(
                value, lambda x: x is rf_loop.loop_var):
            rf_ivs.append(iv)
            rf_values.append(value)
            continue
        for v in vars_in_order(value):
            lp = loop_by_var.get(id(v))
            if lp is None or v in loop2iter:
                continue
            niv = _iter_from_loop(lp, "v" + v.name_hint, E.IterVarType.CommReduce)
            loop2iter[v] = niv.var
            rf_ivs.append(niv)
            rf_values.append(v)
        rf_map[iv.var] = substitute(value, loop2iter)
    rf_idx = list(plan.update.indices)
    rf_idx.insert(axis, add_iter.var)
    rf_load = E.BufferLoad(rf_buf, rf_idx)
    if any(iv.iter_type == E.IterVarType.CommReduce for iv in rf_ivs):
        rf_body = substitute_stmt(S.BufferStore(rf_buf, plan.combiner(rf_load, plan.rhs), rf_idx),
                                  rf_map, rw)
        rf_init = substitute_stmt(S.BufferStore(rf_buf, plan.identity, rf_idx), rf_map, rw)
    else:  # nothing left to reduce: as TVM, a plain store without T.init()
        rf_body = substitute_stmt(S.BufferStore(rf_buf, plan.rhs, rf_idx), rf_map, rw)
        rf_init = None
    rf_reads = [BufferRegion(r.buffer, [Range(substitute(x.min, rf_map),
                                              substitute(x.extent, rf_map)) for x in r.region])
                for r in block.reads]
    rf_writes = []
    for w in block.writes:
        region = list(w.region)
        region.insert(axis, Range(add_iter.var, E.IntImm(add_iter.var.dtype, 1)))
        region = [Range(substitute(x.min, rf_map), substitute(x.extent, rf_map))
                  for x in region]
        rf_writes.append(BufferRegion(rf_buf if w.buffer is plan.update.buffer else w.buffer,
                                      region))
    rf_block = S.Block(rf_ivs, rf_reads, rf_writes, block.name_hint + "_rf", rf_body, rf_init,
                       annotations=dict(block.annotations))
    return S.BlockRealize(rf_values, realize.predicate, rf_block), add_iter, rf_load


def _writeback_block(plan: _RFactorPlan, add_iter, rf_load, rw: Rewrite):
    """The original block, now reducing the partial results of ``rf_load``."""
    block, realize, rf_loop = plan.realize.block, plan.realize, plan.rf_loop
    wb_iter = _iter_from_loop(rf_loop, "v" + rf_loop.loop_var.name_hint, E.IterVarType.CommReduce)
    wb_map = {add_iter.var: wb_iter.var}
    wb_ivs, wb_values = [wb_iter], [rf_loop.loop_var]
    for iv, value in zip(block.iter_vars, realize.iter_values):
        if iv.iter_type == E.IterVarType.DataPar:
            niv = IterVar(iv.dom, Var(iv.var.name_hint, iv.var.dtype), E.IterVarType.DataPar)
            wb_ivs.append(niv)
            wb_values.append(value)
            wb_map[iv.var] = niv.var
    wb_lhs = substitute(plan.lhs, wb_map)
    wb_rhs = substitute(rf_load, wb_map)
    wb_idx = [substitute(i, wb_map) for i in plan.update.indices]
    wb_body = S.BufferStore(plan.update.buffer, plan.combiner(wb_lhs, wb_rhs), wb_idx)
    wb_init = S.BufferStore(plan.update.buffer, plan.identity, wb_idx)

    def point(load):
        return BufferRegion(load.buffer, [Range(i, E.IntImm(i.dtype, 1)) for i in load.indices])

    wb_block = S.Block(wb_ivs, [point(wb_rhs)], [point(wb_lhs)], block.name_hint, wb_body,
                       wb_init, annotations=dict(block.annotations))
    rw.link(block, wb_block)
    return S.BlockRealize(wb_values, plan.wb_predicate, wb_block)


def _writeback_nest(plan: _RFactorPlan, wb_realize, rw: Rewrite):
    """The original loop nest around the write-back block, without the loops only reduction
    iterators use (``rf_loop`` excepted)."""
    loops, rf_loop, realize = plan.loops, plan.rf_loop, plan.realize
    keep = {id(lp) for lp in loops if lp is rf_loop or id(lp.loop_var) not in plan.red_vars}

    def rebuild(s):
        if isinstance(s, S.BlockRealize):
            return wb_realize if s is realize else s
        if isinstance(s, S.For):
            if not any(s is lp for lp in loops):
                return s
            body = rebuild(s.body)
            return rw.derive(s, body=body) if id(s) in keep else body
        if isinstance(s, S.SeqStmt):
            return S.stmt_seq(*[rebuild(x) for x in s.seq])
        return _rebuild_children(s, rebuild)

    return rebuild(loops[0])


def _rebuild_children(s, fn):
    """``s`` with each child statement replaced by ``fn(child)``."""
    changes = {}
    for name in s.field_names():
        v = getattr(s, name)
        if isinstance(v, S.Stmt):
            nv = fn(v)
            if nv is not v:
                changes[name] = nv
    return s.replace(**changes) if changes else s
