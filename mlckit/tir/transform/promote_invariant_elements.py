"""PromoteInvariantElements: a loop-invariant buffer element held in a one-element "local"
buffer across the loop (register promotion, ``tir.noalias``-style).

TVM tells LLVM that buffers do not overlap (``tir.noalias``), so LLVM keeps an element that
does not move with a loop in a register: the accumulator ``C[i, j]`` of the naive matmul
across the loop over ``k``, the element ``A[vi, vk]`` of the tiled matmul across ``j_1``.
Numba cannot tell LLVM so; this pass writes it out in TIR instead, under the same assumption
(buffers do not overlap).  The Numba backend prints a one-element "local" buffer as a Python
scalar, so the loop works on a register (the naive matmul: 0.3 -> 1.2 GFLOP/s)::

    for i, j, k in T.grid(512, 512, 512):            for i, j in T.grid(512, 512):
        with T.block("C"):                                C_acc = T.decl_buffer((1,), scope="local")
            vi, vj, vk = T.axis.remap(...)                C_acc[0] = T.float32(0)
            with T.init():                      ──►       for k in range(512):
                C[vi, vj] = T.float32(0)                      with T.block("C"):
            C[vi, vj] = C[vi, vj] + A[..] * B[..]                 vi, vj, vk = T.axis.remap(...)
                                                                  C_acc[0] = C_acc[0] + A[..] * B[..]
                                                          C[i, j] = C_acc[0]

Only innermost loops (their body holds no loop) that run at least once and are serial,
unrolled or vectorized are considered.  An element of a buffer is held when, over the loop:

- its index does not depend on the loop variable, on a variable bound inside the loop or
  on a buffer load (once the block iterators are replaced by their bindings);
- it is accessed in every iteration (at least one access outside any ``if``, ``T.where``
  or ``T.init``), so reading it before the loop reads what the loop would have read;
- every other access to the buffer in the loop provably touches another element;
- the buffer is not allocated inside the loop, nor already a one-element "local" buffer.

A written element is stored back after the loop; an element only read is loaded once
(``A_ik[0] = A[i_0 * 32 + i_1, k_0 * 4 + k_1]``).  When the loop's body is one reduction
block whose ``T.init()`` stores a constant into the held element, and the loop starts the
reduction, the init runs once before the loop (what ``decompose_reduction`` does, and LLVM's
loop peeling does for TVM) and leaves the block.  Reads/writes of a block drop a promoted
buffer it no longer touches.

Example::

    mod = tvm.tir.transform.PromoteInvariantElements()(mod)
"""

from __future__ import annotations

from dataclasses import dataclass, field

from mlckit.arith.analyzer import Analyzer
from mlckit.ir.transform import FunctionPass
from mlckit.tir import expr as E
from mlckit.tir import stmt as S
from mlckit.tir.buffer import Buffer, decl_buffer
from mlckit.tir.expr_vector import lanes_of
from mlckit.tir.function import PrimFunc
from mlckit.tir.functor import PyStmtExprMutator
from mlckit.tir.stmt_functor import ir_transform, post_order_visit, substitute, uses_var

from ._pass import make_pass

__all__ = ["PromoteInvariantElements", "Promotion", "invariant_elements",
           "promote_invariant_elements"]

_PROMOTABLE_KINDS = (S.ForKind.SERIAL, S.ForKind.UNROLLED, S.ForKind.VECTORIZED)


@dataclass
class Promotion:
    """One element held over a loop: ``buffer[indices]`` (indices in the variables bound
    outside the loop), the loads and stores it replaces, and whether it is written."""

    buffer: Buffer
    indices: list
    nodes: list = field(default_factory=list)
    written: bool = False


@dataclass
class _Access:
    buffer: Buffer
    node: object  # the BufferLoad / BufferStore
    indices: list  # with the block iterators replaced by their bindings
    store: bool
    conditional: bool


class _NotInnermost(Exception):
    """The loop body holds a construct the promotion does not reason about."""


def is_register(buf: Buffer) -> bool:
    """A one-element "local" buffer: what a backend may keep in a register (a scalar).

    >>> from mlckit import tir
    >>> is_register(tir.decl_buffer((1,), "float32", scope="local"))
    True
    """
    return (buf.scope.startswith("local") and bool(buf.shape)
            and all(isinstance(d, E.IntImm) and d.value == 1 for d in buf.shape))


def _has_load(x) -> bool:
    found = []
    post_order_visit(x, lambda n: isinstance(n, E.BufferLoad) and found.append(n))
    return bool(found)


def invariant_elements(loop: S.For, outer=()) -> list[Promotion]:
    """The elements that can be held over ``loop`` (see the module docstring); ``outer``:
    the enclosing For loops, whose ranges help prove two indices apart.

    Example::

        [p.buffer.name for p in invariant_elements(k_loop)]     # ["C"]
    """
    if loop.kind not in _PROMOTABLE_KINDS:
        return []
    ana = Analyzer()
    ana.bind_loops(list(outer))
    ana.bind(loop.loop_var, E.Range(loop.min, loop.extent))
    if not ana.can_prove(loop.extent >= 1):
        return []
    try:
        accesses, inner, allocated = _accesses(loop.body)
    except _NotInnermost:
        return []
    loop_var = loop.loop_var

    def invariant(indices) -> bool:
        return not any(_has_load(i) for i in indices) and not uses_var(
            indices, lambda v: v is loop_var or id(v) in inner)

    groups: dict = {}
    for acc in accesses:
        groups.setdefault(id(acc.buffer.data), []).append(acc)
    found = []
    for group in groups.values():
        buf = group[0].buffer
        if (any(a.buffer is not buf for a in group) or id(buf.data) in allocated
                or is_register(buf)
                or any(lanes_of(i) > 1 for a in group for i in a.indices)):
            continue  # (a vector access, T.Ramp: a row of elements, not one)
        classes: list = []  # [indices, [accesses]] of each invariant element
        for acc in group:
            if not invariant(acc.indices):
                continue
            for cls in classes:
                if _same(ana, cls[0], acc.indices):
                    cls[1].append(acc)
                    break
            else:
                classes.append([acc.indices, [acc]])
        for indices, members in classes:
            if all(a.conditional for a in members):
                continue  # maybe never accessed: reading it early could read out of bounds
            others = [a for a in group if all(a is not m for m in members)]
            if not all(_apart(ana, indices, a.indices) for a in others):
                continue
            found.append(Promotion(buf, indices, [a.node for a in members],
                                   any(a.store for a in members)))
    return found


def _accesses(body):
    """Every buffer access in the straight-line ``body`` (``_NotInnermost`` otherwise), the
    ids of the variables bound inside it and of the buffers allocated inside it."""
    accesses: list = []
    inner: set = set()
    allocated: set = set()
    vmap: dict = {}

    def expr(e, cond):
        def visit(n):
            if isinstance(n, E.BufferLoad):
                accesses.append(_Access(n.buffer, n, substitute(list(n.indices), vmap), False,
                                        cond))
            elif isinstance(n, E.Let):
                inner.add(id(n.var))

        post_order_visit(e, visit)

    def stmt(s, cond):
        if isinstance(s, S.SeqStmt):
            for x in s.seq:
                stmt(x, cond)
        elif isinstance(s, S.BufferStore):
            expr(s.value, cond)
            expr(s.indices, cond)
            accesses.append(_Access(s.buffer, s, substitute(list(s.indices), vmap), True, cond))
        elif isinstance(s, S.BlockRealize):
            b = s.block
            if b.match_buffers:
                raise _NotInnermost
            expr(s.iter_values, cond)
            for iv, v in zip(b.iter_vars, s.iter_values):
                vmap[id(iv.var)] = substitute(v, vmap)
            allocated.update(id(a.data) for a in b.alloc_buffers)
            pred = s.predicate
            expr(pred, cond)
            cond = cond or not (isinstance(pred, E.IntImm) and pred.value)
            if b.init is not None:
                # the init runs when the reduction iterators start: not in every iteration
                reduces = any(iv.iter_type == E.IterVarType.CommReduce for iv in b.iter_vars)
                stmt(b.init, cond or reduces)
            stmt(b.body, cond)
        elif isinstance(s, S.IfThenElse):
            expr(s.condition, cond)
            stmt(s.then_case, True)
            if s.else_case is not None:
                stmt(s.else_case, True)
        elif isinstance(s, S.LetStmt):
            expr(s.value, cond)
            inner.add(id(s.var))
            stmt(s.body, cond)
        elif isinstance(s, S.AttrStmt):
            stmt(s.body, cond)
        elif isinstance(s, S.Evaluate):
            expr(s.value, cond)
        else:  # a loop, an allocation, an assertion...: not an innermost loop
            raise _NotInnermost

    stmt(body, False)
    return accesses, inner, allocated


def _same(ana: Analyzer, a: list, b: list) -> bool:
    return len(a) == len(b) and all(ana.can_prove(E.EQ(x, y)) for x, y in zip(a, b))


def _apart(ana: Analyzer, a: list, b: list) -> bool:
    """Whether ``a`` and ``b`` index different elements in every iteration."""
    return len(a) == len(b) and any(ana.can_prove(E.NE(x, y)) for x, y in zip(a, b))


def init_before_loop(loop: S.For, written: list[Promotion]):
    """Whether the ``T.init()`` of the block that is ``loop``'s whole body can run once
    before the loop, on a held accumulator: the block has no ``T.where``, its init is one
    store of a value without variables or loads into an element held over the loop, exactly
    one reduction iterator moves with the loop (bound to the loop variable, its domain
    starting where the loop does) and the others are bound without it.  Returns ``(init
    store, [(binding, domain min)] of the other reduction iterators)``, which guard the
    init, or None."""
    realize = loop.body
    if not isinstance(realize, S.BlockRealize) or not written:
        return None
    block = realize.block
    init = block.init
    pred = realize.predicate
    if (init is None or not (isinstance(pred, E.IntImm) and pred.value)
            or not isinstance(init, S.BufferStore)):
        return None
    if not any(n is init for p in written for n in p.nodes):
        return None
    if _has_load(init.value) or uses_var(init.value, lambda v: True):
        return None
    ana = Analyzer()
    moving, guards = [], []
    for iv, binding in zip(block.iter_vars, realize.iter_values):
        if iv.iter_type != E.IterVarType.CommReduce:
            continue
        if _has_load(binding):
            return None
        if uses_var(binding, loop.loop_var):
            moving.append((iv, binding))
        else:
            guards.append((binding, iv.dom.min))
    if len(moving) != 1:
        return None
    iv, binding = moving[0]
    if binding is not loop.loop_var or not ana.can_prove(E.EQ(iv.dom.min, loop.min)):
        return None
    return init, guards


def register_name(buf: Buffer, indices: list, written: bool) -> str:
    """The held element's name: ``C_acc`` for a written element, ``A_ik`` for ``A[vi, vk]``
    (``A_elem`` when the indices are not plain iterators or constants)."""
    if written:
        return f"{buf.name}_acc"
    parts = []
    for i in indices:
        if isinstance(i, E.Var):
            name = i.name_hint
            parts.append(name[1:] if len(name) > 1 and name[0] == "v" else name)
        elif isinstance(i, E.IntImm):
            parts.append(str(i.value))
        else:
            return f"{buf.name}_elem"
    sep = "" if all(len(p) == 1 for p in parts) else "_"
    return f"{buf.name}_{sep.join(parts)}" if parts else f"{buf.name}_elem"


def _promote(loop: S.For, plan: list[Promotion]) -> S.Stmt:
    """``loop`` working on one-element buffers, wrapped in their loads, stores and
    declarations."""
    held = {}  # id(replaced load/store) -> its one-element buffer
    regs = []
    for p in plan:
        # the element as the block writes it (A[vi, vk]) names the register (A_ik)
        name = register_name(p.buffer, list(p.nodes[0].indices), p.written)
        reg = decl_buffer((1,), p.buffer.dtype, name=name, scope="local")
        regs.append(reg)
        for node in p.nodes:
            held[id(node)] = reg
    zero = E.IntImm("int32", 0)
    promoted_ids = {id(p.buffer) for p in plan}

    def pre(n):
        reg = held.get(id(n))
        if reg is None:
            return None
        if isinstance(n, E.BufferLoad):
            return E.BufferLoad(reg, [zero])
        return S.BufferStore(reg, ir_transform(n.value, pre, None), [zero])

    def post(n):
        if isinstance(n, S.Block):
            return _drop_regions(n, promoted_ids)
        return None

    body = ir_transform(loop.body, pre, post)
    before = [S.BufferStore(reg, E.BufferLoad(p.buffer, list(p.indices)), [zero])
              for p, reg in zip(plan, regs)]
    init = init_before_loop(loop, [p for p in plan if p.written])
    if init is not None:
        store, guards = init
        k = next(i for i, p in enumerate(plan) if any(n is store for n in p.nodes))
        first = S.BufferStore(regs[k], store.value, [zero])
        if guards:  # other reduction iterators: the init runs only where they start
            cond = None
            for binding, start in guards:
                c = E.EQ(binding, start)
                cond = c if cond is None else E.And(cond, c)
            before[k:k + 1] = [before[k], S.IfThenElse(cond, first, None)]
        else:  # the element's old value would be overwritten at once: not loaded
            before[k] = first
        body = body.replace(block=body.block.replace(init=None))
    after = [S.BufferStore(p.buffer, E.BufferLoad(reg, [zero]), list(p.indices))
             for p, reg in zip(plan, regs) if p.written]
    out = S.stmt_seq(*before, loop.replace(body=body), *after)
    for reg in reversed(regs):
        out = S.Allocate(reg.data, reg.dtype, [E.IntImm("int32", 1)], E.IntImm("bool", True),
                         S.DeclBuffer(reg, out), scope=reg.scope)
    return out


def _drop_regions(block: S.Block, buffer_ids: set) -> S.Block:
    """``block`` without the reads/writes of promoted buffers it no longer accesses."""
    touched: set = set()

    def visit(n):
        if isinstance(n, (E.BufferLoad, S.BufferStore)):
            touched.add(id(n.buffer))

    post_order_visit([block.body, block.init], visit)
    reads = [r for r in block.reads if id(r.buffer) not in buffer_ids or id(r.buffer) in touched]
    writes = [w for w in block.writes
              if id(w.buffer) not in buffer_ids or id(w.buffer) in touched]
    if len(reads) == len(block.reads) and len(writes) == len(block.writes):
        return block
    return block.replace(reads=reads, writes=writes)


class _Promoter(PyStmtExprMutator):
    def __init__(self, skip=None):
        self.loops: list[S.For] = []
        self.skip = skip

    def visit_expr(self, expr):
        return expr  # nothing to do inside expressions

    def visit_for_(self, op):
        self.loops.append(op)
        new = super().visit_for_(op)
        self.loops.pop()
        if new is not op:  # an inner loop changed: this one is not innermost
            return new
        if self.skip is not None and self.skip(op, list(self.loops)):
            return op
        plan = invariant_elements(op, self.loops)
        return _promote(op, plan) if plan else op


def promote_invariant_elements(func: PrimFunc, skip=None) -> PrimFunc:
    """``func`` with loop-invariant elements held in one-element "local" buffers (module
    docstring); ``func`` itself when there is none.  ``skip(loop, enclosing loops)``: loops
    to leave alone (the Numba backend writes some ``T.vectorized`` loops lane by lane and
    holds their invariant loads itself).

    Example::

        fast = promote_invariant_elements(mm)
    """
    body = _Promoter(skip).visit_stmt(func.body)
    return func if body is func.body else func.replace(body=body)


def PromoteInvariantElements(skip=None) -> FunctionPass:  # noqa: N802 - TVM's pass naming
    """The pass holding loop-invariant elements in registers (module docstring).

    Example::

        mod = tvm.tir.transform.PromoteInvariantElements()(mod)
    """
    return make_pass("PromoteInvariantElements", lambda f: promote_invariant_elements(f, skip))
