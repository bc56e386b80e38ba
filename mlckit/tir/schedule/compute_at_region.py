"""The regions and conditions of ``compute_at`` / ``reverse_compute_at``
(:mod:`~mlckit.tir.schedule.compute_at`): the region of a buffer a block touches under a
loop, the thread loops a shared buffer is relaxed over, and the checks TVM makes (compact
dataflow, disjoint iterations, a consumer reading only what was produced, the block's own
``T.where``).
"""

from __future__ import annotations

from mlckit.arith import Analyzer
from mlckit.arith.analyzer import substitute, uses_var
from mlckit.arith.iter_affine_map import detect_iter_map
from mlckit.arith.iter_map_nodes import Unsupported
from mlckit.tir import expr as E
from mlckit.tir import stmt as S
from mlckit.tir.analysis.var_use import var_ids
from mlckit.tir.expr import IntImm, Range, Var

from .error import ScheduleError
from .ir_utils import realizes_under


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
                    collect=None, shape=None):
    """Each iteration of the loops down to ``loop_sref`` must touch its own part of a buffer
    (of ``shape``) that ``dname`` updates; otherwise moving the block there would redo
    (compute_at) or consume partial (reverse_compute_at) results."""
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
            if not ok and shape is not None:
                ok = _disjoint_as_one_row(ana, rel, shape, lp.loop_var)
            if not ok:
                ok = _disjoint_by_iter_map(ana, rel, lp)
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


def _disjoint_as_one_row(ana, rel, shape, var) -> bool:
    """Whether the iterations of ``var`` touch disjoint parts of the buffer seen as one row:
    the region's first element moves by at least the span of the region there.  So a fused
    loop ``i`` writing ``C[i // 12, i % 12]`` (row offset ``i``, span 1) touches one element
    each, where no single dimension follows ``i`` linearly."""
    if any(d is None for d in rel) or not all(isinstance(e, IntImm) for e in shape):
        return False
    first, span, stride = None, 0, 1
    for (lo, hi), extent in reversed(list(zip(rel, shape))):
        width = ana.simplify(hi - lo)
        lo_bound, hi_bound = ana.const_int_bound(lo), ana.const_int_bound(hi)
        if not isinstance(width, IntImm) or lo_bound.min_value < 0 or \
                hi_bound.max_value >= extent.value:  # outside the buffer rows could alias
            return False
        term = E.mul(lo, IntImm(lo.dtype, stride)) if stride > 1 else lo
        first = term if first is None else E.add(term, first)
        span += width.value * stride
        stride *= extent.value
    if first is None:
        return False
    coef = _coef(ana, ana.simplify(first), var)
    return abs(coef) >= span + 1


def _disjoint_by_iter_map(ana, rel, loop) -> bool:
    """Whether the single indices of the region (``Y[i // 2, 0:12, i % 2]`` of a packed
    layout) are a one-to-one map of ``loop``'s variable: each iteration has its own."""
    points = [lo for lo, hi in filter(None, rel)
              if _is_zero(ana.simplify(hi - lo)) and uses_var(lo, lambda v: v is loop.loop_var)]
    if not points:
        return False
    try:
        sums = detect_iter_map(points, {loop.loop_var: Range(loop.min, loop.extent)},
                               bijective=True)
    except Unsupported:
        return False
    return sums is not None


def _is_zero(e) -> bool:
    return isinstance(e, IntImm) and e.value == 0


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
