"""CompactBufferAllocation: shrink an allocated buffer to the region one iteration uses.

After ``cache_write(block, 0, "local")`` + ``reverse_compute_at(C_local, i_0)`` the cache
``C_local`` still has the shape of ``C`` (1024 x 1024), although each iteration of ``i_0``
only touches a small tile of it.  As TVM's ``tir.transform.CompactBufferAllocation`` does,
this pass finds, for every buffer allocated in a block, the innermost loop enclosing all its
accesses (their *lowest common ancestor*, LCA), the region the accesses cover while the loops
inside the LCA run, and then

- gives the buffer the region's shape (``C_local: (2, 8)``),
- rebases every index on the region's start (``C_local[vi, vj]`` with ``vi = i_0 * 2 + i_1``
  becomes ``C_local[i_1, j_1]``: the index written with the loop variables, minus the start,
  simplified),
- moves the allocation to the LCA: a block ``"<buffer>_alloc"`` without iterators, wrapped
  around the LCA loop's body, allocates it (so a ``T.parallel`` LCA gives each iteration its
  own buffer).  The pass ``CompactBufferAllocation()`` does not move, as TVM's: in the
  pipeline ``PlanAndUpdateBufferAllocationLocation`` has put the buffer there already, and
  the buffer shrinks where it is; ``compact_buffer_allocation(func)`` (the backends' call)
  does both.

Before (abridged)::

    C_local = T.alloc_buffer((64, 64), scope="local")
    for j_0, i_0 in T.grid(8, 32):
        for k, i_1, j_1 in T.grid(64, 2, 8):
            with T.block("C_update"):
                vi = T.axis.spatial(64, i_0 * 2 + i_1) ...
                C_local[vi, vj] = C_local[vi, vj] + A[vi, vk] * B[vk, vj]
        ...

After::

    for j_0, i_0 in T.grid(8, 32):
        with T.block("C_local_alloc"):
            C_local = T.alloc_buffer((2, 8), scope="local")
            for k, i_1, j_1 in T.grid(64, 2, 8):
                with T.block("C_update"):
                    ...
                    C_local[i_1, j_1] = C_local[i_1, j_1] + A[vi, vk] * B[vk, vj]

A buffer is left as it is when an index cannot be bounded (not affine in the loop
variables), when the region's extent is not a constant, or when the region is the whole
buffer.  As TVM's pass, the region also follows these rules: a call taking ``B.data``
accesses all of ``B`` (or the block's ``T.reads`` / ``T.writes`` region of ``B`` when it names
one); a ``T.match_buffer`` of a region of ``B`` accesses that region (rebased with the
rest); the conditions of an ``if``, a ``T.if_then_else`` and a ``T.where`` bound the loop
variables of the accesses under them (``2 <= i and i < 18``, ``if i:`` meaning ``i != 0``);
a shared buffer spans the ``threadIdx`` / ``vthread`` loops around it (a warp buffer the
``threadIdx.x`` one); an index named by a ``LetStmt`` is its value; and lowered TIR's
``T.allocate`` is compacted too, unless two buffers view it.  As in TVM, the pass assumes a buffer's values do not flow from one iteration of the
LCA to the next (true of what ``cache_read`` / ``cache_write`` create).

With ``gpu=True`` (the CUDA backend), as TVM does for thread-bound code, a ``"shared"``
buffer's region is also taken over the ``threadIdx`` loops around its LCA (one copy per thread
block, not per thread) and a ``T.where`` predicate of the form ``e < c`` bounds an index
``base + e`` (the cooperative fetch of a non-dividing split: 130 elements, not 256).

Example::

    from mlckit.tir.transform import compact_buffer_allocation
    func = compact_buffer_allocation(sch.mod["main"])
"""

from __future__ import annotations

from mlckit.arith.analyzer import Analyzer, substitute
from mlckit.error import TVMTypeError
from mlckit.tir import dtype as dt
from mlckit.tir import expr as E
from mlckit.tir import stmt as S
from mlckit.tir.analysis.block_access_region import (
    Linear,
    eval_set,
    get_block_access_region,
    union,
)
from mlckit.tir.analysis.var_use import var_ids
from mlckit.tir.buffer import BufferRegion, decl_buffer
from mlckit.tir.expr import BufferLoad, PrimExpr, Range
from mlckit.tir.expr_functor import load_with, map_loads
from mlckit.tir.expr_vector import Ramp
from mlckit.tir.function import PrimFunc
from mlckit.tir.stmt_functor import post_order_visit

from ._pass import make_pass

__all__ = ["CompactBufferAllocation", "compact_buffer_allocation"]


def compact_buffer_allocation(func: PrimFunc, gpu: bool = False, move: bool = True,
                              is_strict: bool = True) -> PrimFunc:
    """``func`` with every allocated buffer shrunk to the region one LCA iteration uses
    (``gpu``: thread-aware, see the module's docstring).  ``move=False`` (the pass
    ``CompactBufferAllocation()``, as TVM's) leaves each allocation where it is and shrinks
    it to what one iteration of the loops around its block uses: placing it is
    ``PlanAndUpdateBufferAllocationLocation``'s job.

    >>> from mlckit import tir
    >>> from mlckit.script import tir as T
    >>> @T.prim_func
    ... def f(a: T.Buffer((4,), "float32"), c: T.Buffer((4,), "float32")):
    ...     b = T.alloc_buffer((16,), "float32")
    ...     for i in range(4):
    ...         with T.block("B"):
    ...             vi = T.axis.spatial(4, i)
    ...             b[vi] = a[vi] * 2.0
    ...     for i in range(4):
    ...         with T.block("C"):
    ...             vi = T.axis.spatial(4, i)
    ...             c[vi] = b[vi]
    >>> compact = tir.transform.CompactBufferAllocation(f)
    >>> compact.body.block.alloc_buffers[0].shape
    [4]
    """
    if not isinstance(func, PrimFunc):
        raise TVMTypeError(f"compact_buffer_allocation expects a tir.PrimFunc, got "
                        f"{type(func).__name__}")
    collector = _Collector()
    collector.stmt(func.body)
    plans = {}
    for key, buf in collector.allocated.items():
        if key in collector.matched:  # viewed by a T.match_buffer: offsets are absolute
            continue
        if key in collector.opaque:  # a call takes all of it
            continue
        depth = None if move else collector.depth[key]
        plan = _plan(buf, collector.accesses.get(key, []), gpu, depth, is_strict)
        if plan is not None:
            plans[key] = plan
    if not plans:
        return func
    params = [b for b in func.buffer_map.values()] if func.buffer_map else []
    body = _Rewriter(plans, params).stmt(func.body)
    return func.replace(body=body)


def CompactBufferAllocation(is_strict: bool | PrimFunc = True):  # noqa: N802 - TVM's name
    """The pass shrinking each allocated buffer to the region one iteration of its LCA uses,
    as ``tvm.tir.transform.CompactBufferAllocation(is_strict=True)``.

    As TVM's, the pass only shrinks: each buffer stays allocated where it is (run
    ``PlanAndUpdateBufferAllocationLocation`` first to move it to where it is used, as the
    default pipeline does).  ``is_strict=False`` lets a region larger than the buffer's shape
    (a padded tile read past the end) become the new shape; strict, a buffer never grows.
    Given a PrimFunc instead of ``is_strict`` (mlckit's earlier
    spelling), it returns the PrimFunc compacted and moved in one step
    (``compact_buffer_allocation(func)``).

    >>> import mlckit as tvm
    >>> p = tvm.tir.transform.CompactBufferAllocation()
    >>> p.info.name
    'CompactBufferAllocation'
    """
    if isinstance(is_strict, PrimFunc):
        return compact_buffer_allocation(is_strict)
    return make_pass("CompactBufferAllocation",
                     lambda func: compact_buffer_allocation(func, move=False,
                                                            is_strict=is_strict))


# -- analysis ---------------------------------------------------------------------------------
class _Access:
    def __init__(self, loops: tuple, indices: list, predicates: tuple = (), carried=()):
        self.loops = loops  # the For nodes enclosing the access, outermost first
        self.indices = indices  # written with loop variables (block iterators substituted)
        self.predicates = predicates  # the T.where conditions around it, likewise
        # the loops a reduction's write carries values across: the LCA stays above them
        self.carried = carried


class _Collector:
    """Every access of every allocated buffer, with its loops and loop-variable indices."""

    def __init__(self):
        self.data_vars: dict[int, object] = {}  # id(buffer.data) -> the allocated buffer
        self.opaque: set[int] = set()  # ids of buffers whose data a call takes as a whole
        self.annotated: list[dict] = []  # per enclosing block: id(buffer) -> its regions
        self.allocated: dict[int, object] = {}
        self.depth: dict[int, int] = {}  # id(buffer) -> how many loops enclose its block
        self.accesses: dict[int, list] = {}
        self.matched: set[int] = set()  # ids of buffers a T.match_buffer views
        self.loops: list = []
        self.bindings: dict[int, PrimExpr] = {}
        self.predicates: list = []
        self.carried: tuple = ()  # see _Access.carried, for the stores of the current block

    def record(self, buf, indices, carried=()):
        if id(buf) in self.allocated:
            idx = [substitute(i, self.bindings) for i in indices]
            for lanes in _lane_ends(idx):  # a vector access: its first and last lanes
                self.accesses.setdefault(id(buf), []).append(
                    _Access(tuple(self.loops), lanes, tuple(self.predicates), carried))

    def under(self, cond, visit, x):
        """``visit(x)`` with ``cond`` holding (a branch of an ``if``): as TVM's
        ConditionalBoundsContext, it bounds the loop variables of the accesses there."""
        self.predicates.append(substitute(cond, self.bindings))
        visit(x)
        self.predicates.pop()

    def allocate(self, buf):
        self.allocated[id(buf)] = buf
        self.depth[id(buf)] = len(self.loops)
        self.data_vars[id(buf.data)] = buf

    def opaque_use(self, buf):
        """``buf.data`` used as a whole (``T.call_extern(..., B.data)``): as TVM, the access is
        the block's read/write annotation of ``buf`` when it has one, else all of ``buf``."""
        regions = self.annotated[-1].get(id(buf)) if self.annotated else None
        if not regions:
            self.opaque.add(id(buf))
            return
        for region in regions:  # its first and last element bound the region
            self.record(buf, [r.min for r in region.region])
            self.record(buf, [E.sub(E.add(r.min, r.extent), 1) for r in region.region])

    def expr(self, e):
        if isinstance(e, BufferLoad):
            self.record(e.buffer, e.indices)
        if isinstance(e, E.Var) and id(e) in self.data_vars:
            self.opaque_use(self.data_vars[id(e)])
        if isinstance(e, E.Let) and dt.is_int(e.value.dtype):
            self.expr(e.value)
            saved = self.bindings.get(id(e.var))
            self.bindings[id(e.var)] = substitute(e.value, self.bindings)
            self.expr(e.body)
            self.bindings.pop(id(e.var))
            if saved is not None:
                self.bindings[id(e.var)] = saved
            return
        if isinstance(e, E.Call) and getattr(e.op, "name", "") == "tir.if_then_else":
            cond = e.args[0]
            self.expr(cond)
            self.under(cond, self.expr, e.args[1])
            self.under(E.Not(cond), self.expr, e.args[2])
            return
        if isinstance(e, PrimExpr) and not isinstance(e, E.Var):
            for name in e.field_names():
                v = getattr(e, name)
                if isinstance(v, PrimExpr):
                    self.expr(v)
                elif isinstance(v, list):
                    for x in v:
                        if isinstance(x, PrimExpr):
                            self.expr(x)

    def stmt(self, s):
        if isinstance(s, S.For):
            self.expr(s.min)
            self.expr(s.extent)
            self.loops.append(s)
            self.stmt(s.body)
            self.loops.pop()
            return
        if isinstance(s, S.BlockRealize):
            for v in s.iter_values:
                self.expr(v)
            self.expr(s.predicate)
            block = s.block
            for buf in block.alloc_buffers:
                self.allocate(buf)
            notes: dict = {}
            for r in list(block.reads) + list(block.writes):
                notes.setdefault(id(r.buffer), []).append(r)
            self.annotated.append(notes)
            saved = dict(self.bindings)
            n_pred = len(self.predicates)
            if not (isinstance(s.predicate, E.IntImm) and s.predicate.value):
                self.predicates.append(substitute(s.predicate, saved))
            for iv, value in zip(block.iter_vars, s.iter_values):
                self.bindings[id(iv.var)] = substitute(value, saved)
            for m in block.match_buffers:  # a view of a region accesses all of the region
                src = m.source
                self.record(src.buffer, [r.min for r in src.region])
                self.record(src.buffer, [E.sub(E.add(r.min, r.extent), 1) for r in src.region])
            # as TVM's LCA detector: a block's writes carry values across the loops its
            # reduction (or opaque) iterators are bound to (B_rf[vj] += ... over loop i)
            used = set()
            for iv in block.iter_vars:
                if iv.iter_type != E.IterVarType.DataPar:
                    used |= var_ids(self.bindings[id(iv.var)])
            saved_carried = self.carried
            self.carried = tuple(lp for lp in self.loops if id(lp.loop_var) in used)
            if block.init is not None:
                self.stmt(block.init)
            self.stmt(block.body)
            self.carried = saved_carried
            self.bindings = saved
            del self.predicates[n_pred:]
            self.annotated.pop()
            return
        if isinstance(s, S.IfThenElse):
            self.expr(s.condition)
            self.under(s.condition, self.stmt, s.then_case)
            if s.else_case is not None:
                self.under(E.Not(s.condition), self.stmt, s.else_case)
            return
        if isinstance(s, S.LetStmt) and dt.is_int(s.value.dtype):
            self.expr(s.value)  # an index bound by a let is its value, as TVM binds it
            self.bindings[id(s.var)] = substitute(s.value, self.bindings)
            self.stmt(s.body)
            self.bindings.pop(id(s.var))
            return
        if isinstance(s, S.Allocate):  # lowered TIR: Allocate + DeclBuffer of one buffer
            self.expr(s.condition)
            for x in s.extents:
                self.expr(x)
            views: dict = {}  # as TVM: a buffer viewed through two declarations stays

            def view(x):
                buf = getattr(x, "buffer", None)
                if isinstance(x, (S.DeclBuffer, S.BufferStore, BufferLoad)) \
                        and buf.data is s.buffer_var:
                    views[id(buf)] = buf

            post_order_visit(s.body, view)
            if len(views) == 1 and next(iter(views.values())).dtype == s.dtype:
                self.allocate(next(iter(views.values())))
            self.stmt(s.body)
            return
        if isinstance(s, S.AttrStmt) and s.attr_key in ("thread_extent", "virtual_thread") \
                and isinstance(s.node, E.IterVar):
            self.expr(s.value)  # T.launch_thread: a loop over the thread index
            self.loops.append(_ThreadLoop(s.node, s.value))
            self.stmt(s.body)
            self.loops.pop()
            return
        if isinstance(s, S.BufferStore):
            self.record(s.buffer, s.indices, self.carried)
            self.expr(s.value)
            for i in s.indices:
                self.expr(i)
            return
        for name in s.field_names():
            v = getattr(s, name)
            if isinstance(v, S.Stmt):
                self.stmt(v)
            elif isinstance(v, PrimExpr):
                self.expr(v)
            elif isinstance(v, list):
                for x in v:
                    if isinstance(x, S.Stmt):
                        self.stmt(x)
                    elif isinstance(x, PrimExpr):
                        self.expr(x)


def _lane_ends(indices: list) -> list:
    """``indices`` as scalar indices: a ``T.Ramp(base, stride, n)`` (lowered TIR's vector
    access) is its first and its last lane, which bound the lanes between them."""
    ramps = [d for d, i in enumerate(indices) if isinstance(i, Ramp)]
    if not ramps:
        return [indices]
    ends = []
    for last in (False, True):
        idx = list(indices)
        for d in ramps:
            r = idx[d]
            n = r.lanes  # an int, or T.vscale() * k (then unbounded: the buffer stays)
            count = E.IntImm(r.base.dtype, n - 1) if isinstance(n, int) else E.sub(n, 1)
            idx[d] = E.add(r.base, E.mul(r.stride, count)) if last else r.base
        ends.append(idx)
    return ends


class _ThreadLoop:
    """A ``T.launch_thread`` (``AttrStmt("thread_extent")``) seen as the loop it stands for."""

    def __init__(self, iv, extent):
        self.loop_var, self.thread_binding = iv.var, iv
        self.min, self.extent = E.IntImm(extent.dtype, 0), extent
        self.kind = S.ForKind.THREAD_BINDING


class _Plan:
    def __init__(self, old, new, starts: list, lca, move: bool = True):
        self.old, self.new, self.starts, self.lca = old, new, starts, lca
        self.move = move  # False: the buffer stays in its block, only its shape changes


def _relaxed_thread(loop, scope: str) -> bool:
    """Whether a thread-bound loop above the LCA still varies within one copy of a buffer of
    ``scope`` (TVM: shared memory is one per thread block, local one per thread)."""
    tb = loop.thread_binding
    if loop.kind != S.ForKind.THREAD_BINDING or tb is None:
        return False
    if scope.startswith("shared"):
        return tb.thread_tag.startswith(("threadIdx", "vthread"))
    if scope == "warp":  # a warp buffer is indexed by the lane: threadIdx.x
        return tb.thread_tag == "threadIdx.x"
    return scope == "global"


def _tighten(s, index, predicates, dom):
    """``s`` (the set of ``index``) bounded above by a predicate ``e < c`` when ``index``
    is ``e`` plus something the relaxed loops leave fixed."""
    if s is None or not hasattr(s, "hi"):
        return s
    for cond in _conjuncts(predicates):
        if not isinstance(cond, (E.LT, E.LE)) or not isinstance(cond.b, E.IntImm):
            continue
        rest = Linear.of(index).sub(Linear.of(cond.a))
        if any(key in dom for key in rest.terms):
            continue
        bound = rest.add(Linear({}, int(cond.b.value) - isinstance(cond, E.LT), rest.dtype))
        over = s.hi.sub(bound)
        if over.is_const() and over.const > 0:
            s = type(s)(s.lo, bound)
    return s


def _intern(e, table: dict):
    """``e`` rebuilt so that structurally equal sub-expressions are one object (the linear
    forms of the analysis compare non-variable terms by identity)."""
    if isinstance(e, E.Var) or not isinstance(e, PrimExpr):
        return e
    changes = {}
    key = [type(e).__name__]
    for name in e.field_names():
        v = getattr(e, name)
        if isinstance(v, PrimExpr):
            nv = _intern(v, table)
            if nv is not v:
                changes[name] = nv
            key.append(id(nv))
        else:
            key.append(repr(v))
    key = tuple(key)
    if key not in table:
        table[key] = e.replace(**changes) if changes else e
    return table[key]


_FLIP = {E.LT: E.GT, E.LE: E.GE, E.GT: E.LT, E.GE: E.LE, E.EQ: E.EQ, E.NE: E.NE}
_NEGATE = {E.LT: E.GE, E.LE: E.GT, E.GT: E.LE, E.GE: E.LT, E.EQ: E.NE, E.NE: E.EQ}


def _facts(cond, negate=False):
    """The conjuncts ``cond`` (negated: ``not cond``) implies, each a comparison or a
    variable; a disjunction implies none of its parts."""
    if isinstance(cond, E.Not):
        yield from _facts(cond.a, not negate)
    elif isinstance(cond, E.And) and not negate or isinstance(cond, E.Or) and negate:
        yield from _facts(cond.a, negate)
        yield from _facts(cond.b, negate)
    elif type(cond) in _NEGATE:
        yield type(cond)(cond.a, cond.b) if not negate else _NEGATE[type(cond)](cond.a, cond.b)
    elif isinstance(cond, E.Var) and dt.is_int(cond.dtype):  # `if i:` is i != 0
        yield E.EQ(cond, E.IntImm(cond.dtype, 0)) if negate else E.NE(
            cond, E.IntImm(cond.dtype, 0))


def _narrow(dom: dict, loop_vars: dict, predicates) -> None:
    """Tighten the constant ranges in ``dom`` (id(var) -> Range) by the comparisons of a
    loop variable with a constant that ``predicates`` imply."""
    for pred in predicates:
        for fact in _facts(pred):
            cls, a, b = type(fact), fact.a, fact.b
            if isinstance(a, E.IntImm) and isinstance(b, E.Var):
                cls, a, b = _FLIP[cls], b, a
            if not (isinstance(a, E.Var) and id(a) in dom and isinstance(b, E.IntImm)):
                continue
            rng = dom[id(a)]
            if not (isinstance(rng.min, E.IntImm) and isinstance(rng.extent, E.IntImm)):
                continue
            lo, hi, c = rng.min.value, rng.min.value + rng.extent.value - 1, b.value
            if cls is E.LT:
                hi = min(hi, c - 1)
            elif cls is E.LE:
                hi = min(hi, c)
            elif cls is E.GT:
                lo = max(lo, c + 1)
            elif cls is E.GE:
                lo = max(lo, c)
            elif cls is E.EQ:
                lo, hi = max(lo, c), min(hi, c)
            elif cls is E.NE and c == lo:
                lo += 1
            elif cls is E.NE and c == hi:
                hi -= 1
            if lo <= hi:
                dom[id(a)] = Range(E.IntImm(rng.min.dtype, lo), E.IntImm(rng.extent.dtype,
                                                                        hi - lo + 1))


def _conjuncts(predicates):
    for p in predicates:
        stack = [p]
        while stack:
            c = stack.pop()
            if isinstance(c, E.And):
                stack += [c.a, c.b]
            else:
                yield c


def _plan(buf, accesses: list, gpu: bool = False, alloc_depth: int | None = None,
          is_strict: bool = True):
    """The compacted buffer, the region start per dimension, the LCA loop (or None);
    ``alloc_depth`` given, the LCA is the allocation's place (that many loops deep)."""
    if not accesses:
        return None
    first = accesses[0].loops
    if alloc_depth is not None:
        lca_depth = alloc_depth
    else:
        depth = min(len(a.loops) for a in accesses)
        lca_depth = 0
        while lca_depth < depth and all(a.loops[lca_depth] is first[lca_depth]
                                        for a in accesses):
            lca_depth += 1
        for acc in accesses if not gpu else ():  # above the loops a reduction carries the
            for lp in acc.carried:                # buffer's values across (CPU kernels)
                lca_depth = min(lca_depth, next(k for k, x in enumerate(acc.loops) if x is lp))
    lca = first[lca_depth - 1] if lca_depth else None
    sets = [None] * buf.ndim
    # ``fused // 16`` in each access made one object per distinct sub-expression: the linear
    # forms compare non-variable atoms by identity
    table: dict = {}
    for acc in accesses:
        acc.indices = [_intern(i, table) for i in acc.indices]
        acc.predicates = tuple(_intern(p, table) for p in acc.predicates)
    for n, acc in enumerate(accesses):
        relaxed = list(acc.loops[lca_depth:])
        if gpu or alloc_depth is not None:  # TVM's pass is always thread-aware
            relaxed += [lp for lp in acc.loops[:lca_depth] if _relaxed_thread(lp, buf.scope)]
        dom = {id(loop.loop_var): Range(loop.min, loop.extent) for loop in relaxed}
        if acc.predicates:
            _narrow(dom, {id(lp.loop_var): lp.loop_var for lp in relaxed}, acc.predicates)
        # a loop of extent 1 is its minimum (as TVM's analyzer binds it): the accesses of a
        # block under ``for i_0 in T.thread_binding(1, ...)`` and of one whose binding has no
        # ``i_0`` (compute_at wrote it as 0) then cover the same region
        units = {id(lp.loop_var): lp.min for lp in acc.loops
                 if isinstance(lp.extent, E.IntImm) and lp.extent.value == 1}
        for d, index in enumerate(acc.indices):
            index = substitute(index, units)
            s = eval_set(index, dom)
            if (gpu or alloc_depth is not None) and acc.predicates:
                s = _tighten(s, index, acc.predicates, dom)
            if s is None:
                return None
            sets[d] = s if n == 0 else union(sets[d], s)
            if sets[d] is None:
                return None
    shape, starts, changed = [], [], False
    for d, s in enumerate(sets):
        lo, hi = (Linear.of(s.expr),) * 2 if not hasattr(s, "lo") else (s.lo, s.hi)
        extent = hi.sub(lo)
        old = buf.shape[d]
        grows = not is_strict and isinstance(old, E.IntImm) and extent.is_const() \
            and extent.const + 1 > old.value  # not strict: the region may exceed the shape
        if not grows and (not extent.is_const()
                          or isinstance(old, E.IntImm) and extent.const + 1 >= old.value):
            shape.append(old)
            starts.append(E.IntImm(_dtype(old), 0))
            continue
        changed = True
        shape.append(E.IntImm(_dtype(old), extent.const + 1))
        starts.append(lo.to_expr())
    if not changed and not (gpu and lca is not None and buf.scope in ("shared", "local")
                            and alloc_depth is None):
        return None  # (on a GPU a shared/local buffer still moves into its kernel)
    new = decl_buffer(shape, buf.dtype, buf.name, scope=buf.scope)
    return _Plan(buf, new, starts, lca, alloc_depth is None)


def _dtype(e) -> str:
    return e.dtype if isinstance(e, PrimExpr) else "int32"


# -- rewriting --------------------------------------------------------------------------------
class _Rewriter:
    def __init__(self, plans: dict, params: list):
        self.plans = plans
        self.by_lca: dict[int, list] = {}
        for plan in plans.values():
            if plan.lca is not None and plan.move:
                self.by_lca.setdefault(id(plan.lca), []).append(plan)
        self.params = params
        # B.data in an opaque call (annotated with a region of B) is the new buffer's data
        self.data = {id(p.old.data): p.new.data for p in plans.values()}
        self.allocated = {id(p.old.data): p for p in plans.values()}  # Allocate's var -> plan
        self.visible: list = list(params)  # buffers allocated in enclosing blocks
        self.bindings: dict[int, PrimExpr] = {}
        self.ana = Analyzer()

    def index(self, plan: _Plan, indices: list) -> list:
        out = []
        for i, start in zip(indices, plan.starts):
            if isinstance(start, E.IntImm) and start.value == 0:
                out.append(i)
            else:
                full = substitute(i, self.bindings)
                out.append(self.ana.simplify(E.sub(full, start)))
        return out

    def expr(self, e):
        def on_load(load, indices):
            plan = self.plans.get(id(load.buffer))
            if plan is None:
                return load_with(load, indices)
            return BufferLoad(plan.new, self.index(plan, indices))

        e = map_loads(e, on_load)
        return substitute(e, self.data) if self.data and isinstance(e, PrimExpr) else e

    def region(self, r: BufferRegion) -> BufferRegion:
        plan = self.plans.get(id(r.buffer))
        if plan is None:
            return r
        mins = self.index(plan, [rng.min for rng in r.region])
        return BufferRegion(plan.new, [Range(m, rng.extent) for m, rng in zip(mins, r.region)])

    def stmt(self, s):  # noqa: C901 - one dispatch
        if isinstance(s, S.For):
            body = self.stmt(s.body)
            plans = self.by_lca.get(id(s))
            if plans:
                body = self.alloc_block(plans, body)
            return s if body is s.body else s.replace(body=body)
        if isinstance(s, S.BlockRealize):
            block = s.block
            saved = dict(self.bindings)
            for iv, value in zip(block.iter_vars, s.iter_values):
                self.bindings[id(iv.var)] = substitute(value, saved)
            n_visible = len(self.visible)
            self.visible.extend(block.alloc_buffers)
            init = self.stmt(block.init) if block.init is not None else None
            body = self.stmt(block.body)
            del self.visible[n_visible:]
            reads = [self.region(r) for r in block.reads]
            writes = [self.region(r) for r in block.writes]
            matches = [m.replace(source=self.region(m.source)) for m in block.match_buffers]
            self.bindings = saved
            allocs = []
            for buf in block.alloc_buffers:
                plan = self.plans.get(id(buf))
                if plan is None:
                    allocs.append(buf)
                elif plan.lca is None or not plan.move:
                    allocs.append(plan.new)
            new_block = block.replace(body=body, init=init, reads=reads, writes=writes,
                                      alloc_buffers=allocs, match_buffers=matches)
            values = [self.expr(v) for v in s.iter_values]
            return s.replace(block=new_block, iter_values=values,
                             predicate=self.expr(s.predicate))
        if isinstance(s, S.BufferStore):
            value = self.expr(s.value)
            indices = [self.expr(i) for i in s.indices]
            plan = self.plans.get(id(s.buffer))
            if plan is not None:
                return S.BufferStore(plan.new, value, self.index(plan, indices))
            return s.replace(value=value, indices=indices)
        if isinstance(s, S.SeqStmt):
            return S.stmt_seq(*[self.stmt(x) for x in s.seq])
        if isinstance(s, S.Allocate) and id(s.buffer_var) in self.allocated:
            plan = self.allocated[id(s.buffer_var)]
            body = self.stmt(s.body)
            return s.replace(buffer_var=plan.new.data, extents=list(plan.new.shape), body=body)
        if isinstance(s, S.DeclBuffer) and id(s.buffer) in self.plans:
            return S.DeclBuffer(self.plans[id(s.buffer)].new, self.stmt(s.body))
        changes = {}
        for name in s.field_names():
            v = getattr(s, name)
            if isinstance(v, S.Stmt):
                nv = self.stmt(v)
            elif isinstance(v, PrimExpr):
                nv = self.expr(v)
            else:
                continue
            if nv is not v:
                changes[name] = nv
        return s.replace(**changes) if changes else s

    def alloc_block(self, plans: list, body):
        """``body`` inside a block without iterators that allocates the compacted buffers."""
        name = "_".join(p.new.name for p in plans) + "_alloc"
        block = S.Block([], [], [], name, body, None, [p.new for p in plans], [])
        visible = self.visible + [p.new for p in self.plans.values()
                                  if p.lca is None or not p.move]
        reads, writes = get_block_access_region(block, visible)
        block = block.replace(reads=reads, writes=writes)
        return S.BlockRealize([], E.IntImm("bool", 1), block)
