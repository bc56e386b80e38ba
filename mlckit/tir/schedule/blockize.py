"""Blocks: ``blockize`` (turn the loop nest under a loop into a block of its own).

``blockize(loop)`` wraps the subtree rooted at ``loop`` (loops and the single block under
them) into a new outer block ``<block>_o``.  Each iterator ``v`` of the block is divided into
an outer part (driven by the loops above ``loop``: the outer block's iterator ``v_o``) and an
inner part (driven by ``loop`` and the loops below it: the inner block's iterator ``v_i``),
so that ``v = v_o * inner_extent + v_i``.  The outer block's ``T.reads`` / ``T.writes`` are
the inner block's regions relaxed over the inner iterators.  A reduction block's ``T.init()``
moves to the outer block (as a block ``<block>_init`` inside loops over the spatial inner
iterators it needs).  This is the first step of tensorization: the outer block is a
"tensor operation" on sub-tiles.
"""

from __future__ import annotations

from mlckit.arith import Analyzer
from mlckit.arith.analyzer import substitute, uses_var
from mlckit.tir import expr as E
from mlckit.tir import stmt as S
from mlckit.tir.buffer import BufferRegion
from mlckit.tir.expr import IntImm, IterVar, Range, Var

from .error import ScheduleError
from .instruction import primitive
from .ir_utils import Rewrite, replace_stmts, substitute_stmt, walk
from .query import describe_loop
from .reduction import _conjuncts, single_child_realize
from .rv import BlockRV


def _is_one(e) -> bool:
    return isinstance(e, IntImm) and e.value == 1


def _linear(expr, atoms: bool = False):
    """``(terms, const)`` with ``terms`` a list of ``[var, coef]`` when ``expr`` is an affine
    combination of variables with constant coefficients, else None.  With ``atoms``, any
    other part (``j_fused // 24``) counts as a variable of its own."""
    if isinstance(expr, IntImm):
        return [], expr.value
    if isinstance(expr, Var):
        return [[expr, 1]], 0
    if atoms and not isinstance(expr, (E.Add, E.Sub, E.Mul)):
        return [[expr, 1]], 0
    if isinstance(expr, (E.Add, E.Sub)):
        a, b = _linear(expr.a, atoms), _linear(expr.b, atoms)
        if a is None or b is None:
            return None
        sign = 1 if isinstance(expr, E.Add) else -1
        terms = [list(t) for t in a[0]]
        for v, c in b[0]:
            for t in terms:
                if t[0] is v:
                    t[1] += sign * c
                    break
            else:
                terms.append([v, sign * c])
        return [t for t in terms if t[1] != 0], a[1] + sign * b[1]
    if isinstance(expr, E.Mul):
        a, b = _linear(expr.a, atoms), _linear(expr.b, atoms)
        if a is None or b is None:
            return None
        if not b[0]:
            return [[v, c * b[1]] for v, c in a[0] if c * b[1]], a[1] * b[1]
        if not a[0]:
            return [[v, c * a[1]] for v, c in b[0] if c * a[1]], a[1] * b[1]
    return None


def _dense(terms, extents):
    """The extent of ``sum(coef * var)`` when the terms form a dense mixed-radix number
    (coefficients 1, e0, e0*e1, …), else None.  A loop of extent 1 is always 0: it adds
    nothing, whatever its coefficient (``i_1 + i_2`` of a split by ``[2, None, 1]``)."""
    total = 1
    for v, c in sorted(terms, key=lambda t: t[1]):
        ext = extents.get(id(v))
        if ext == 1:
            continue
        if ext is None or c != total:
            return None
        total *= ext
    return total


def _sum(terms, const, dtype):
    out = None
    for v, c in sorted(terms, key=lambda t: -t[1]):
        term = v if c == 1 else E.Mul(v, IntImm(dtype, c))
        out = term if out is None else E.Add(out, term)
    if out is None:
        return IntImm(dtype, const)
    return E.Add(out, IntImm(dtype, const)) if const else out


def subspace_divide(realize, inner_loops, outer_loops, preserve_unit_iters):
    """Divide each binding of ``realize`` into (outer expr, outer extent, inner expr, inner
    extent) with ``binding = outer * inner_extent + inner``; also the (outer, inner)
    predicates.  None when a binding or the predicate mixes the two loop groups in a way that
    cannot be divided."""
    inner_ids = {id(lp.loop_var) for lp in inner_loops}
    outer_ids = {id(lp.loop_var) for lp in outer_loops}
    extents, unit = {}, {}
    for lp in list(inner_loops) + list(outer_loops):
        if isinstance(lp.extent, IntImm) and isinstance(lp.min, IntImm) and lp.min.value == 0:
            extents[id(lp.loop_var)] = lp.extent.value
        if _is_one(lp.extent) and not preserve_unit_iters:
            unit[lp.loop_var] = lp.min
    uses_inner = lambda e: uses_var(e, lambda v: id(v) in inner_ids)  # noqa: E731
    uses_outer = lambda e: uses_var(e, lambda v: id(v) in outer_ids)  # noqa: E731
    out = []
    for iv, binding in zip(realize.block.iter_vars, realize.iter_values):
        b = Analyzer().simplify(substitute(binding, unit)) if unit else binding
        dom = iv.dom.extent
        dtype = b.dtype
        one = IntImm(dom.dtype, 1)
        zero = IntImm(dtype, 0)
        lin = _linear(b)
        has_in, has_out = uses_inner(b), uses_outer(b)
        if lin is not None and has_in and has_out:
            terms, const = lin
            ins = [t for t in terms if id(t[0]) in inner_ids]
            outs = [t for t in terms if id(t[0]) not in inner_ids]
            inner_ext = _dense(ins, extents)
            if inner_ext is None or const % inner_ext or any(c % inner_ext for _, c in outs):
                return None
            outs = [[v, c // inner_ext] for v, c in outs]
            outer_ext = _dense(outs, extents) if const == 0 else None
            if outer_ext is None:
                return None
            if isinstance(dom, IntImm):  # outer loops of a padded split: the domain bounds them
                outer_ext = min(outer_ext, -(-dom.value // inner_ext))
            out.append((_sum(outs, const // inner_ext, dtype), IntImm(dom.dtype, outer_ext),
                        _sum(ins, 0, dtype), IntImm(dom.dtype, inner_ext)))
            continue
        if has_in and has_out:
            return None
        ext = dom
        if lin is not None and lin[1] == 0:
            d = _dense(lin[0], extents)
            # a padded split's loops cover more than the block's domain (the predicate
            # cuts the rest): TVM keeps the domain's extent then
            if d is not None and not (isinstance(dom, IntImm) and dom.value < d):
                ext = IntImm(dom.dtype, d)
        if has_out:
            out.append((b, ext, zero, one))
        elif has_in:
            out.append((zero, one, b, ext))
        else:
            out.append((b, one, zero, one))
    outer_pred, inner_pred = E.convert(True), E.convert(True)
    for c in map(_flat_bound, _conjuncts(realize.predicate)):
        if uses_inner(c) and uses_outer(c):
            return None
        if uses_inner(c):
            inner_pred = c if _is_true(inner_pred) else E.logical_and(inner_pred, c)
        else:
            outer_pred = c if _is_true(outer_pred) else E.logical_and(outer_pred, c)
    return out, outer_pred, inner_pred


def _flat_bound(c):
    """``(i_0 * 2 + i_1) * 2 + i_2 < 6`` as ``i_0 * 4 + i_1 * 2 + i_2 < 6``: TVM re-derives
    the predicates of the blocks it divides from their flattened iterator sums (a part such
    as ``j_fused // 24`` is one term of them)."""
    if isinstance(c, E.LT) and isinstance(c.b, IntImm):
        lin = _linear(c.a, atoms=True)
        if lin is not None and lin[0]:
            return E.LT(_sum(lin[0], lin[1], c.a.dtype), c.b)
    return c


def _is_true(e) -> bool:
    return isinstance(e, IntImm) and bool(e.value)


def relax_regions(regions, dom: dict, ana: Analyzer):
    """Each region relaxed over the variables of ``dom`` (id(var) -> Range), clamped to the
    buffer shape where it cannot be bounded."""
    out = []
    for r in regions:
        new = []
        for rng, dim in zip(r.region, r.buffer.shape):
            lo = ana.int_set(rng.min, dom)
            hi = ana.int_set(ana.simplify(rng.min + rng.extent - 1), dom)
            if lo is None or hi is None:
                new.append(Range(IntImm(dim.dtype, 0), dim))
                continue
            mn = ana.simplify(lo.min_value)
            new.append(Range(mn, ana.simplify(hi.max_value - mn + 1)))
        out.append(BufferRegion(r.buffer, new))
    return out


class BlockizeMixin:
    @primitive("Blockize", inputs=("target",), attrs=("preserve_unit_iters",))
    def blockize(self, target, preserve_unit_iters: bool = True) -> BlockRV:
        """Make the subtree under loop ``target`` a block ``<block>_o`` of its own (returned).

        Before / after ``sch.blockize(i_1)``::

            for i_0, i_1 in T.grid(8, 16):          for i_0 in range(8):
                with T.block("B"):                       with T.block("B_o"):
                    vi = T.axis.spatial(                     vi_o = T.axis.spatial(8, i_0)
                        128, i_0 * 16 + i_1)                 T.reads(A[vi_o * 16:vi_o * 16 + 16])
                    B[vi] = A[vi] * 2                        T.writes(B[vi_o * 16:vi_o * 16 + 16])
                                                             for i_1 in range(16):
                                                                 with T.block("B"):
                                                                     vi_i = T.axis.spatial(16, i_1)
                                                                     B[vi_o * 16 + vi_i] = …
        """
        block_sref, loop, inner_loops, division = _check_blockize(self, target,
                                                                  preserve_unit_iters)
        rw = Rewrite()
        new_body, outer_block = _apply_blockize(self.mod[block_sref.func_name], block_sref, loop,
                                                inner_loops, division, preserve_unit_iters, rw)
        self._commit(block_sref.func_name, new_body, rw)
        return self._rv_for(self.state.get_sref(outer_block), BlockRV)


def _check_blockize(sch, target, preserve_unit_iters):
    """Every condition of ``blockize``; changes nothing.  Returns the block's sref, the loop,
    the loops from the block up to it (innermost first) and the division of the bindings."""
    prim = "blockize"
    if isinstance(target, (list, tuple)):
        raise ScheduleError(prim, "blockizing a list of blocks is not supported yet; pass "
                            "the loop whose subtree becomes the new block")
    loop_sref = sch._loop_sref(target, prim)
    loop = loop_sref.stmt
    realize = single_child_realize(prim, loop_sref)
    block = realize.block
    block_sref = sch.state.get_sref(block)
    # loops from the block up to `loop` (inner, innermost first) and above it (outer)
    inner_loops, outer_loops = [], []
    p, inner = block_sref.parent, True
    while p is not None and p.is_loop:
        (inner_loops if inner else outer_loops).append(p.stmt)
        if p is loop_sref:
            inner = False
        p = p.parent
    division = subspace_divide(realize, inner_loops, outer_loops, preserve_unit_iters)
    if division is None:
        raise ScheduleError(
            prim, f"the bindings of block `{block.name_hint}` cannot be divided by the loops "
            f"starting at {describe_loop(loop)}: each iterator must be `outer * inner_extent + "
            f"inner` with `inner` driven only by {describe_loop(loop)} and the loops under it",
            [block, loop])
    return block_sref, loop, inner_loops, division


def _divide_iters(block, parts, preserve_unit_iters):
    """The outer and inner iterators with their bindings, and the map from each original
    iterator to its ``outer * inner_extent + inner`` form."""
    outer_ivs, outer_values, inner_ivs, inner_values, subst = [], [], [], [], {}
    for iv, (ob, oe, ib, ie) in zip(block.iter_vars, parts):
        o_iv = IterVar(Range(IntImm(oe.dtype, 0), oe), Var(iv.var.name_hint + "_o",
                                                              iv.var.dtype), iv.iter_type)
        outer_ivs.append(o_iv)
        outer_values.append(ob)
        if _is_one(ie):
            if _is_one(oe) and not preserve_unit_iters:
                subst[iv.var] = IntImm(iv.var.dtype, 0)
            else:
                subst[iv.var] = o_iv.var
        else:
            i_iv = IterVar(Range(IntImm(ie.dtype, 0), ie),
                           Var(iv.var.name_hint + "_i", iv.var.dtype), iv.iter_type)
            inner_ivs.append(i_iv)
            inner_values.append(ib)
            subst[iv.var] = i_iv.var if _is_one(oe) else E.add(E.mul(o_iv.var, ie), i_iv.var)
    return outer_ivs, outer_values, inner_ivs, inner_values, subst


def _apply_blockize(func, block_sref, loop, inner_loops, division, preserve_unit_iters,
                    rw: Rewrite):
    """The rewrite of ``blockize``: (the function's new body, the outer block)."""
    block = block_sref.stmt
    bname = block.name_hint
    parts, outer_pred, inner_pred = division
    outer_ivs, outer_values, inner_ivs, inner_values, subst = _divide_iters(
        block, parts, preserve_unit_iters)
    ana = Analyzer()
    inner_dom = {}
    for i_iv in inner_ivs:
        ana.bind(i_iv.var, i_iv.dom)
        inner_dom[id(i_iv.var)] = i_iv.dom

    def sub(e):
        new = substitute(e, subst)
        return ana.simplify(new) if new is not e else e

    def sub_regions(regions):
        return [BufferRegion(r.buffer, [Range(sub(x.min), sub(x.extent)) for x in r.region])
                for r in regions]

    body = substitute_stmt(block.body, subst, rw, ana.simplify)
    init = substitute_stmt(block.init, subst, rw, ana.simplify) if block.init is not None \
        else None
    reads, writes = sub_regions(block.reads), sub_regions(block.writes)
    has_outer_reduction = init is not None and any(
        iv.iter_type == E.IterVarType.CommReduce for iv in outer_ivs)
    inner_block = rw.derive(
        block, iter_vars=inner_ivs, body=body, init=None, writes=writes,
        reads=(writes + reads) if has_outer_reduction else reads)
    inner_realize = S.BlockRealize(inner_values, inner_pred, inner_block)
    nest = inner_realize
    for lp in inner_loops:
        nest = rw.derive(lp, body=nest)
    outer_init = None
    if init is not None:
        outer_init = _outer_init(init, inner_realize, inner_loops, bname + "_init")
    outer_block = S.Block(outer_ivs, relax_regions(reads, inner_dom, ana),
                          relax_regions(writes, inner_dom, ana), bname + "_o", nest,
                          outer_init)
    outer_realize = S.BlockRealize(outer_values, outer_pred, outer_block)
    return replace_stmts(func.body, {id(loop): outer_realize}, rw), outer_block


def _stmt_uses(stmt, var) -> bool:
    found = []

    def visit(s):
        for name in s.field_names():
            v = getattr(s, name)
            for x in v if isinstance(v, list) else [v]:
                if isinstance(x, (E.PrimExpr, Range)) and uses_var(x, lambda y: y is var):
                    found.append(x)
                elif isinstance(x, BufferRegion) and uses_var(x.region, lambda y: y is var):
                    found.append(x)
        return not found

    walk(stmt, visit)
    return bool(found)


def _outer_init(init, inner_realize, inner_loops, name):
    """The init of the blockized reduction: a block ``name`` over the spatial inner iterators
    the init uses, inside copies of the inner loops that drive them."""
    inner_block = inner_realize.block
    vmap, ivs, values = {}, [], []
    for iv, value in zip(inner_block.iter_vars, inner_realize.iter_values):
        if iv.iter_type == E.IterVarType.DataPar and _stmt_uses(init, iv.var):
            nv = Var(iv.var.name_hint + "_init", iv.var.dtype)
            vmap[iv.var] = nv
            ivs.append(IterVar(iv.dom, nv, iv.iter_type, iv.thread_tag))
            values.append(value)
    copied = [lp for lp in inner_loops
              if any(uses_var(v, lambda x, lp=lp: x is lp.loop_var) for v in values)]
    stmt = S.BlockRealize(values, _init_predicate(inner_realize.predicate, inner_loops, copied),
                          S.Block(ivs, [], list(inner_block.writes), name, init))
    for lp in copied:
        nv = Var(lp.loop_var.name_hint, lp.loop_var.dtype)
        vmap[lp.loop_var] = nv
        stmt = lp.replace(loop_var=nv, body=stmt)
    return substitute_stmt(stmt, vmap, Rewrite())


def _init_predicate(predicate, inner_loops, copied):
    """The inner block's predicate without the conditions over inner loops the init does not
    copy (the reduction's loops): the init runs once for each spatial point, so a bound on the
    reduction's padded loops does not concern it.  TVM 0.27 keeps them, and its init then
    uses loop variables defined nowhere (its own parser refuses the script it prints, and its
    build fails)."""
    dropped = [lp.loop_var for lp in inner_loops if not any(lp is c for c in copied)]
    kept = E.IntImm("bool", True)
    for c in _conjuncts(predicate):
        if not uses_var(c, lambda x: any(x is v for v in dropped)):
            kept = E.logical_and(kept, c)
    return kept
