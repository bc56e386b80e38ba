"""Loop transformations: ``split``, ``fuse``, ``reorder``, ``add_unit_loop``.

They change the loop nest around blocks; the blocks themselves (iterators, ``T.reads`` /
``T.writes``, body) stay the same and only their bindings (``T.axis.*(…, expr)``) are
rewritten in terms of the new loops.
"""

from __future__ import annotations

from mlckit.arith import Analyzer
from mlckit.arith.analyzer import substitute, uses_var
from mlckit.arith.iter_affine_map import iter_map_simplify
from mlckit.tir import expr as E
from mlckit.tir import stmt as S
from mlckit.tir.expr import IntImm, Range, Var

from .error import ScheduleError
from .instruction import primitive
from .ir_utils import Mutator, Rewrite, replace_stmts
from .query import describe_loop, is_ancestor, loop_srefs
from .rv import LoopRV


class _SubstLoopVars(Mutator):
    """Substitute loop variables in loop ranges, block bindings and predicates (the bindings
    are simplified afterwards, by ``_SimplifyBindings``)."""

    def __init__(self, rw, vmap):
        super().__init__(rw)
        self.vmap = vmap

    def visit_expr(self, e):
        return substitute(e, self.vmap)

    def visit_BlockRealize(self, s):
        values = [substitute(v, self.vmap) for v in s.iter_values]
        pred = substitute(s.predicate, self.vmap)
        if all(a is b for a, b in zip(values, s.iter_values)) and pred is s.predicate:
            return s
        return s.replace(iter_values=values, predicate=pred)


class _SimplifyBindings(Mutator):
    """Rewrite the bindings of the blocks under new loops as TVM does: the iterator map they
    form over the loops around them, printed back (``arith.iter_map_simplify``; a predicate
    such as ``T.where(i_0 * 4 + i_1 < 10)`` keeps ``i_0 * 4 + i_1`` together), or left as
    they are when they form none."""

    def __init__(self, rw, loop_sref, preserve_unit_iters: bool, new_loops=()):
        super().__init__(rw)
        self.new_loops = {id(lp) for lp in new_loops}     # built here: no sref to keep
        self.loops = {}
        p = loop_sref.parent
        while p is not None and p.is_loop:       # the loops up to the enclosing block
            self.loops[p.stmt.loop_var] = Range(p.stmt.min, p.stmt.extent)
            p = p.parent
        self.ana = outer_analyzer(loop_sref.parent) if loop_sref.parent is not None \
            else Analyzer()
        self.preserve_unit_iters = preserve_unit_iters

    def visit_For(self, s):
        self.loops[s.loop_var] = Range(s.min, s.extent)
        self.ana.bind(s.loop_var, Range(s.min, s.extent))
        body = self.visit_stmt(s.body)
        del self.loops[s.loop_var]
        if body is s.body:
            return s
        return s.replace(body=body) if id(s) in self.new_loops else self.rw.derive(s, body=body)

    def visit_BlockRealize(self, s):
        if not s.iter_values:
            return self.generic(s)
        values = iter_map_simplify(s.iter_values, self.loops, s.predicate,
                                   self.preserve_unit_iters)
        if values is None:        # outside the iterator-map port (symbolic extents)
            values = [self.ana.simplify(v) for v in s.iter_values]
        if all(a is b for a, b in zip(values, s.iter_values)):
            return s
        return s.replace(iter_values=values)


class _AppendPredicate(Mutator):
    """``predicate`` added (with ``and``) to the BlockRealizes directly under a statement."""

    def __init__(self, rw, predicate):
        super().__init__(rw)
        self.predicate = predicate

    def visit_BlockRealize(self, s):
        return s.replace(predicate=E.logical_and(s.predicate, self.predicate))


def outer_analyzer(loop_sref) -> Analyzer:
    """An Analyzer knowing the ranges of the loops above ``loop_sref`` (and itself)."""
    ana = Analyzer()
    p = loop_sref
    while p is not None:
        if p.is_loop:
            ana.bind(p.stmt.loop_var, Range(p.stmt.min, p.stmt.extent))
        p = p.parent
    return ana


def check_plain_loop(prim: str, loop) -> None:
    # as TVM, a parallel/vectorized/unrolled loop may be split or fused: the new loops are
    # serial (mark them again); annotations and thread bindings are refused
    if loop.annotations or loop.thread_binding is not None:
        what = "a thread binding" if loop.thread_binding is not None else "annotations"
        raise ScheduleError(
            prim, f"loop {describe_loop(loop)} has {what}; {prim} applies to loops without "
            "annotations or thread bindings only", [loop])
    if not (isinstance(loop.min, IntImm) and loop.min.value == 0):
        raise ScheduleError(prim, f"loop {describe_loop(loop)} does not start at 0 "
                            f"(its min is {loop.min}); {prim} needs loops starting at 0", [loop])


class LoopTransformationMixin:
    @primitive("Split", inputs=("loop", "factors"),
               attrs=("preserve_unit_iters", "disable_predication"))
    def split(self, loop: LoopRV, factors, preserve_unit_iters: bool = True,
              disable_predication: bool = False) -> list[LoopRV]:
        """Split a loop into ``len(factors)`` nested loops.

        One factor may be ``None`` (or -1): it is inferred as ``ceil(extent / others)``.  When
        the factors' product exceeds the extent, the blocks get a predicate ``T.where``.

        Before / after ``sch.split(i, factors=[None, 4])`` on ``for i in range(10)``::

            for i in range(10):                    for i_0, i_1 in T.grid(3, 4):
                with T.block("B"):                     with T.block("B"):
                    vi = T.axis.spatial(10, i)             T.where(i_0 * 4 + i_1 < 10)
                                                           vi = T.axis.spatial(10, i_0 * 4 + i_1)
        """
        prim = "split"
        sref = self._loop_sref(loop, prim)
        old = sref.stmt
        check_plain_loop(prim, old)
        if not isinstance(factors, (list, tuple)) or len(factors) < 2:
            raise ScheduleError(prim, f"factors must be a list of at least two values, got {factors!r}")
        ints = []
        for f in factors:
            v = self._int(f, prim)
            ints.append(None if v is None or v == -1 else v)
        if sum(1 for v in ints if v is None) > 1:
            raise ScheduleError(prim, f"only one factor can be None (or -1), got {list(factors)!r}")
        for v in ints:
            if v is not None and v <= 0:
                raise ScheduleError(prim, f"factors must be positive, got {list(factors)!r}")
        extent = old.extent
        known = 1
        for v in ints:
            if v is not None:
                known *= v
        dtype = old.loop_var.dtype
        ana = outer_analyzer(sref.parent) if sref.parent is not None else Analyzer()
        if None in ints:
            if isinstance(extent, IntImm):
                ints[ints.index(None)] = -(-extent.value // known)
            else:  # as TVM: ceildiv written (n + 31) // 32, the tail cut by T.where
                ints[ints.index(None)] = ana.simplify(
                    E.floordiv(extent + IntImm(dtype, known - 1), IntImm(dtype, known)))
        elif isinstance(extent, IntImm) and known < extent.value:
            shown = " * ".join(str(v) for v in ints)
            raise ScheduleError(
                prim, f"the product of the factors ({shown} = {known}) is smaller than the "
                f"extent {extent.value} of loop {describe_loop(old)}", [old])
        name = old.loop_var.name_hint
        new_vars = [Var(f"{name}_{i}", dtype) for i in range(len(ints))]
        ints = [f if isinstance(f, E.PrimExpr) else IntImm(dtype, f) for f in ints]
        value = IntImm(dtype, 0)
        for v, f in zip(new_vars, ints):
            value = value * f + v
        rw = Rewrite()
        for v, f in zip(new_vars, ints):
            ana.bind(v, Range(IntImm(dtype, 0), f))
        body = _SubstLoopVars(rw, {old.loop_var: value}).visit_stmt(old.body)
        predicate = E.LT(value, extent) if not isinstance(value, IntImm) else E.convert(True)
        if not disable_predication and not ana.can_prove(predicate):
            body = _AppendPredicate(rw, predicate).visit_stmt(body)
        new_loops = []
        for v, f in zip(reversed(new_vars), reversed(ints)):
            body = S.For(v, IntImm(dtype, 0), f, S.ForKind.SERIAL, body)
            new_loops.append(body)
        body = _SimplifyBindings(rw, sref, preserve_unit_iters, new_loops).visit_stmt(body)
        new_loops = _loop_chain(body, len(ints))
        func = self.mod[sref.func_name]
        new_body = replace_stmts(func.body, {id(old): body}, rw)
        self._commit(sref.func_name, new_body, rw)
        return [self._rv_for(self.state.get_sref(lp), LoopRV) for lp in new_loops]

    @primitive("Fuse", inputs=("loops",), attrs=("preserve_unit_iters",), py_name="fuse",
               varargs=True)
    def _fuse(self, loops, preserve_unit_iters: bool = True) -> LoopRV:
        prim = "fuse"
        if len(loops) == 0:
            raise ScheduleError(prim, "needs at least one loop")
        srefs = [self._loop_sref(lp, prim) for lp in loops]
        # a single loop is fused too, as in TVM: it becomes a new serial loop `<name>_fused`
        for s in srefs:
            check_plain_loop(prim, s.stmt)
        for outer, inner in zip(srefs, srefs[1:]):
            if inner.parent is not outer:
                raise ScheduleError(
                    prim, f"loop {describe_loop(outer.stmt)} is not the parent of loop "
                    f"{describe_loop(inner.stmt)}; fuse needs consecutive nested loops, outermost "
                    "first", [outer.stmt, inner.stmt])
            if outer.stmt.body is not inner.stmt:
                raise ScheduleError(
                    prim, f"loop {describe_loop(inner.stmt)} is not the only child of loop "
                    f"{describe_loop(outer.stmt)}", [outer.stmt, inner.stmt])
        fused_vars = {id(s.stmt.loop_var) for s in srefs}
        for s in srefs:
            if uses_var(s.stmt.extent, lambda v: id(v) in fused_vars):
                raise ScheduleError(prim, f"the extent of loop {describe_loop(s.stmt)} depends on "
                                    "another of the fused loops", [s.stmt])
        dtype = srefs[0].stmt.loop_var.dtype
        name = "_".join(s.stmt.loop_var.name_hint for s in srefs) + "_fused"
        fused = Var(name, dtype)
        extents = [s.stmt.extent for s in srefs]
        total = extents[0]
        for e in extents[1:]:
            total = total * e
        ana = outer_analyzer(srefs[0].parent) if srefs[0].parent is not None else Analyzer()
        total = ana.simplify(total)
        ana.bind(fused, Range(IntImm(dtype, 0), total))
        # as TVM: loop k is fused // (extents below) % extent_k, a unit loop is 0
        vmap = {}
        inner = IntImm(dtype, 1)
        for k in range(len(srefs) - 1, -1, -1):
            v = srefs[k].stmt.loop_var
            if _is_one(extents[k]):
                vmap[v] = IntImm(dtype, 0)
            elif k == 0:
                vmap[v] = E.floordiv(fused, inner)
            else:
                vmap[v] = E.floordiv(E.floormod(fused, ana.simplify(extents[k] * inner)), inner)
            inner = ana.simplify(inner * extents[k])
        rw = Rewrite()
        body = _SubstLoopVars(rw, vmap).visit_stmt(srefs[-1].stmt.body)
        new_loop = S.For(fused, IntImm(dtype, 0), total, S.ForKind.SERIAL, body)
        new_loop = _SimplifyBindings(rw, srefs[0], preserve_unit_iters,
                                     [new_loop]).visit_stmt(new_loop)
        func = self.mod[srefs[0].func_name]
        new_body = replace_stmts(func.body, {id(srefs[0].stmt): new_loop}, rw)
        self._commit(srefs[0].func_name, new_body, rw)
        return self._rv_for(self.state.get_sref(new_loop), LoopRV)

    def fuse(self, *loops, preserve_unit_iters: bool = True) -> LoopRV:
        """Fuse consecutive nested loops (outermost first) into one loop.

        Before / after ``sch.fuse(i, j)``::

            for i, j in T.grid(4, 8):              for i_j_fused in range(32):
                with T.block("B"):                     with T.block("B"):
                    vi, vj = T.axis.remap(                 vi = T.axis.spatial(4, i_j_fused // 8)
                        "SS", [i, j])                      vj = T.axis.spatial(8, i_j_fused % 8)
        """
        if len(loops) == 1 and isinstance(loops[0], (list, tuple)):
            loops = tuple(loops[0])
        return self._fuse(list(loops), preserve_unit_iters=preserve_unit_iters)

    @primitive("Reorder", inputs=("ordered_loops",), py_name="reorder", varargs=True)
    def _reorder(self, ordered_loops) -> None:
        prim = "reorder"
        srefs = [self._loop_sref(lp, prim) for lp in ordered_loops]
        for i, s in enumerate(srefs):
            if any(s is t for t in srefs[:i]):
                raise ScheduleError(prim, f"loop {describe_loop(s.stmt)} appears more than once",
                                    [s.stmt])
        if len(srefs) <= 1:
            return None
        func_names = {s.func_name for s in srefs}
        # the outermost loop is an ancestor of all the others
        chain_set = {id(s) for s in srefs}
        outer = [s for s in srefs if not any(is_ancestor(t, s) for t in srefs if t is not s)]
        if len(outer) != 1 or len(func_names) != 1:
            raise ScheduleError(
                prim, "the loops are not in a single chain: "
                + ", ".join(describe_loop(s.stmt) for s in outer) + " are not nested in one another")
        top = outer[0]
        inner = [s for s in srefs if not any(is_ancestor(s, t) for t in srefs if t is not s)]
        if len(inner) != 1:
            raise ScheduleError(
                prim, "the loops are not in a single chain: "
                + " and ".join(describe_loop(s.stmt) for s in inner)
                + " are in different branches of the loop nest")
        bottom = inner[0]
        path = []
        p = bottom
        while p is not top:
            path.append(p)
            p = p.parent
            if p is None or not p.is_loop:
                raise ScheduleError(prim, "the loops are not under the same block scope")
        path.append(top)
        path.reverse()
        for a, b in zip(path, path[1:]):
            if a.stmt.body is not b.stmt:
                raise ScheduleError(
                    prim, f"the loops are not in a single chain: loop {describe_loop(a.stmt)} has "
                    f"other statements besides loop {describe_loop(b.stmt)} in its body",
                    [a.stmt])
        # new order of the loops in the chain
        it = iter(srefs)
        new_order = [next(it) if id(p) in chain_set else p for p in path]
        for i, s in enumerate(new_order):
            inner_vars = {id(t.stmt.loop_var) for t in new_order[i + 1:]}
            for field in (s.stmt.min, s.stmt.extent):
                if uses_var(field, lambda v, iv=inner_vars: id(v) in iv):
                    raise ScheduleError(
                        prim, f"the range of loop {describe_loop(s.stmt)} depends on a loop that "
                        "would be inside it after reordering", [s.stmt])
        _check_block_iters(prim, bottom.stmt.body, [p.stmt for p in path],
                           [p.stmt for p in new_order])
        rw = Rewrite()
        body = bottom.stmt.body
        for s in reversed(new_order):
            body = rw.derive(s.stmt, body=body)
        func = self.mod[top.func_name]
        new_body = replace_stmts(func.body, {id(top.stmt): body}, rw)
        self._commit(top.func_name, new_body, rw)
        return None

    def reorder(self, *ordered_loops) -> None:
        """Reorder loops of one chain (each loop the only child of the one above).

        Before / after ``sch.reorder(k, j)`` on ``for i, j, k in T.grid(…)``::

            for i, j, k in T.grid(4, 8, 16):       for i, k, j in T.grid(4, 16, 8):
                with T.block("C"): ...                 with T.block("C"): ...
        """
        if len(ordered_loops) == 1 and isinstance(ordered_loops[0], (list, tuple)):
            ordered_loops = tuple(ordered_loops[0])
        return self._reorder(list(ordered_loops))

    @primitive("AddUnitLoop", inputs=("block_or_loop",))
    def add_unit_loop(self, block_or_loop) -> LoopRV:
        """Wrap a block or loop in a new loop of extent 1 (named ``u``).

        Before / after ``sch.add_unit_loop(block)``::

            with T.block("B"): ...                 for u in range(1):
                                                       with T.block("B"): ...
        """
        prim = "add_unit_loop"
        sref = self._sref(block_or_loop, prim)
        func = self.mod[sref.func_name]
        target = sref.realize if sref.is_block else sref.stmt
        if sref.is_block and sref.parent is None:
            raise ScheduleError(prim, "cannot add a loop above the root block")
        dtype = "int32"
        new_loop = S.For(Var("u", dtype), IntImm(dtype, 0), IntImm(dtype, 1), S.ForKind.SERIAL,
                         target)
        rw = Rewrite()
        new_body = replace_stmts(func.body, {id(target): new_loop}, rw)
        self._commit(sref.func_name, new_body, rw)
        return self._rv_for(self.state.get_sref(new_loop), LoopRV)


def _is_one(e) -> bool:
    return isinstance(e, IntImm) and e.value == 1


def _loop_chain(loop, n: int) -> list:
    """The ``n`` nested loops starting at ``loop``, outermost first."""
    out = [loop]
    while len(out) < n:
        out.append(out[-1].body)
    return out


def _check_block_iters(prim: str, stmt, loops=(), new_loops=()) -> None:
    """Each block under the reordered loops has spatial and reduction iterators only, and
    a reduction still starts (T.init()) at the first update of each output element: the
    loops that drive its reduction iterators keep their relative order when one of them also
    drives a spatial iterator (a fused ``j_k_fused`` split and reordered could reach
    ``vk == 0`` after other values of ``vk``)."""
    from .ir_utils import realizes_under

    ana = Analyzer()  # bindings simplified over the loops' ranges: (f0 * 8 + f1) // 8 is f0
    ana.bind_loops(loops)
    for realize in realizes_under(stmt):
        if realize.block.init is not None:
            values = [ana.simplify(v) for v in realize.iter_values]

            def kinds_of(lp, realize=realize, values=values):
                return {iv.iter_type for iv, v in zip(realize.block.iter_vars, values)
                        if uses_var(v, lambda x, lv=lp.loop_var: x is lv)}

            driving = [lp for lp in loops if E.IterVarType.CommReduce in kinds_of(lp)]
            ids = {id(lp) for lp in driving}
            same = [id(lp) for lp in new_loops if id(lp) in ids] == [id(lp) for lp in driving]
            for lp in driving:
                if not same and E.IterVarType.DataPar in kinds_of(lp):
                    raise ScheduleError(
                        prim, f"loop {describe_loop(lp)} drives both spatial and reduction "
                        f"iterators of block `{realize.block.name_hint}`; reordering it would "
                        "run T.init() in the middle of the reduction", [lp, realize.block])
        for iv in realize.block.iter_vars:
            if iv.iter_type not in (E.IterVarType.DataPar, E.IterVarType.CommReduce):
                raise ScheduleError(
                    prim, f"block `{realize.block.name_hint}` under the loops has an iterator "
                    f"`{iv.var.name_hint}` that is neither spatial nor reduction", [realize.block])


__all__ = ["LoopTransformationMixin", "loop_srefs"]
