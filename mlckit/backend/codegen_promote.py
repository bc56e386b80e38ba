"""Loop-invariant loads and register promotion in the Numba code generator.

TVM tells LLVM that buffers do not overlap (``tir.noalias``), so LLVM keeps an element that
does not move with a loop in a register: the accumulator ``C[i, j]`` of the naive matmul
across the loop over ``k``, the element ``A[vi, vk]`` of the tiled matmul across the loop
over ``j_1``.  Numba cannot tell LLVM so; mlckit writes it out instead, under the same
assumption (buffers do not overlap, as the lanes of ``codegen_lanes`` assume)::

    # held in scalars over k (buffers do not overlap, as with tir.noalias)
    C_acc = C[i, j]
    for k in range(512):
        # block "C"
        vi = i
        vj = j
        vk = k
        if vk == 0:
            C_acc = np.float32(0.0)
        C_acc = C_acc + A[vi, vk] * B[vk, vj]
    C[i, j] = C_acc

Only innermost loops (their body holds no loop) that run at least once and are not
parallel are considered.  An element of a buffer is held in a scalar when, over the loop:

- its index does not depend on the loop variable, on a variable bound inside the loop or
  on a buffer load (once the block iterators are replaced by their bindings);
- it is accessed in every iteration (at least one access outside any ``if``, ``T.where``
  or ``T.init``), so reading it before the loop reads what the loop would have read;
- every other access to the buffer in the loop provably touches another element;
- the buffer is not allocated inside the loop.

A written element is stored back after the loop; an element only read is loaded once
(``A_ik = A[i_0 * 32 + i_1, k_0 * 4 + k_1]``).  lnumpy, the reference, is left as written.

Example::

    f = numba_cpu.build(mm)       # the naive matmul
    print(f.source)               # C_acc as above
"""

from __future__ import annotations

from dataclasses import dataclass, field

from mlckit.arith.analyzer import Analyzer, substitute, uses_var
from mlckit.tir.buffer import Buffer
from mlckit.tir.expr import EQ, NE, BufferLoad, IntImm, IterVarType, Let, PrimExpr, Range, Var
from mlckit.tir.stmt import (
    AttrStmt,
    BlockRealize,
    BufferStore,
    Evaluate,
    For,
    ForKind,
    IfThenElse,
    LetStmt,
    SeqStmt,
)

from .codegen_common import np_scalar
from .codegen_expr import has_load

__all__ = ["Promotion", "RegisterPromotion", "init_before_loop", "invariant_elements"]

_PROMOTABLE_KINDS = (ForKind.SERIAL, ForKind.UNROLLED, ForKind.VECTORIZED)


@dataclass
class Promotion:
    """One element held in a scalar over a loop: ``buffer[indices]`` (indices in the
    variables bound outside the loop), the loads and stores it replaces, and whether it is
    written (then stored back after the loop)."""

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


def invariant_elements(loop: For, outer: list | tuple = ()) -> list[Promotion]:
    """The elements that can be held in scalars over ``loop`` (see the module docstring).

    ``outer``: the enclosing For loops, whose ranges help prove two indices apart.

    Example::

        [p.buffer.name for p in invariant_elements(k_loop)]     # ["C"]
    """
    if loop.kind not in _PROMOTABLE_KINDS:
        return []
    ana = Analyzer()
    ana.bind_loops(outer)
    ana.bind(loop.loop_var, Range(loop.min, loop.extent))
    if not ana.can_prove(loop.extent >= 1):
        return []
    try:
        accesses, inner, allocated = _accesses(loop.body)
    except _NotInnermost:
        return []
    loop_var = loop.loop_var

    def invariant(indices) -> bool:
        return not any(has_load(i) for i in indices) and not uses_var(
            indices, lambda v: v is loop_var or id(v) in inner)

    groups: dict = {}
    for acc in accesses:
        groups.setdefault(id(acc.buffer.data), []).append(acc)
    found = []
    for group in groups.values():
        buf = group[0].buffer
        if any(a.buffer is not buf for a in group) or id(buf.data) in allocated:
            continue
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
        if isinstance(e, BufferLoad):
            for i in e.indices:
                expr(i, cond)
            accesses.append(_Access(e.buffer, e, substitute(list(e.indices), vmap), False, cond))
            return
        if isinstance(e, Let):
            inner.add(id(e.var))
        if isinstance(e, PrimExpr):
            for name in e.field_names():
                v = getattr(e, name)
                if isinstance(v, PrimExpr):
                    expr(v, cond)
                elif isinstance(v, list):
                    for x in v:
                        expr(x, cond)

    def stmt(s, cond):
        if isinstance(s, SeqStmt):
            for x in s.seq:
                stmt(x, cond)
        elif isinstance(s, BufferStore):
            expr(s.value, cond)
            for i in s.indices:
                expr(i, cond)
            accesses.append(_Access(s.buffer, s, substitute(list(s.indices), vmap), True, cond))
        elif isinstance(s, BlockRealize):
            b = s.block
            if b.match_buffers:
                raise _NotInnermost
            for v in s.iter_values:
                expr(v, cond)
            for iv, v in zip(b.iter_vars, s.iter_values):
                vmap[id(iv.var)] = substitute(v, vmap)
            allocated.update(id(a.data) for a in b.alloc_buffers)
            pred = s.predicate
            expr(pred, cond)
            cond = cond or not (isinstance(pred, IntImm) and pred.value)
            if b.init is not None:
                # the generator runs the init when the reduction iterators start
                reduces = any(iv.iter_type == IterVarType.CommReduce for iv in b.iter_vars)
                stmt(b.init, cond or reduces)
            stmt(b.body, cond)
        elif isinstance(s, IfThenElse):
            expr(s.condition, cond)
            stmt(s.then_case, True)
            if s.else_case is not None:
                stmt(s.else_case, True)
        elif isinstance(s, LetStmt):
            expr(s.value, cond)
            inner.add(id(s.var))
            stmt(s.body, cond)
        elif isinstance(s, AttrStmt):
            stmt(s.body, cond)
        elif isinstance(s, Evaluate):
            expr(s.value, cond)
        else:  # a loop, an allocation, an assertion...: not an innermost loop
            raise _NotInnermost

    stmt(body, False)
    return accesses, inner, allocated


def _same(ana: Analyzer, a: list, b: list) -> bool:
    return len(a) == len(b) and all(ana.can_prove(EQ(x, y)) for x, y in zip(a, b))


def _apart(ana: Analyzer, a: list, b: list) -> bool:
    """Whether ``a`` and ``b`` index different elements in every iteration."""
    return len(a) == len(b) and any(ana.can_prove(NE(x, y)) for x, y in zip(a, b))


def init_before_loop(loop: For, written: list[Promotion]):
    """Whether the ``T.init()`` of the block that is ``loop``'s whole body can run once before
    the loop, on a held accumulator, instead of as ``if vk == 0:`` in every iteration (what
    ``decompose_reduction`` does in the schedule, and LLVM's loop peeling does for TVM).

    It can when the block has no ``T.where``, its init is one store of a value without
    variables or loads into an element held over the loop, exactly one reduction iterator
    moves with the loop (bound to the loop variable, its domain starting where the loop
    does) and the others are bound without it.  Returns ``(block realize, init store,
    [(binding, domain min)] of the other reduction iterators)``, which guard the init, or
    None.

    Example::

        init_before_loop(k_loop, promotions)    # naive matmul: (C's realize, C[vi, vj] = 0, [])
    """
    realize = loop.body
    if not isinstance(realize, BlockRealize) or not written:
        return None
    block = realize.block
    init = block.init
    pred = realize.predicate
    if init is None or not (isinstance(pred, IntImm) and pred.value) or not isinstance(init, BufferStore):
        return None
    if not any(n is init for p in written for n in p.nodes):
        return None
    if has_load(init.value) or uses_var(init.value, lambda v: True):
        return None
    ana = Analyzer()
    moving, guards = [], []
    for iv, binding in zip(block.iter_vars, realize.iter_values):
        if iv.iter_type != IterVarType.CommReduce:
            continue
        if has_load(binding):
            return None
        if uses_var(binding, lambda v: v is loop.loop_var):
            moving.append((iv, binding))
        else:
            guards.append((binding, iv.dom.min))
    if len(moving) != 1:
        return None
    iv, binding = moving[0]
    if binding is not loop.loop_var or not ana.can_prove(EQ(iv.dom.min, loop.min)):
        return None
    return realize, init, guards


def scalar_hint(buf: Buffer, indices: list, written: bool) -> str:
    """The scalar's name: ``C_acc`` for a written element, ``A_ik`` for ``A[vi, vk]``
    (``A_elem`` when the indices are not plain iterators or constants)."""
    if written:
        return f"{buf.name}_acc"
    parts = []
    for i in indices:
        if isinstance(i, Var):
            name = i.name_hint
            parts.append(name[1:] if len(name) > 1 and name[0] == "v" else name)
        elif isinstance(i, IntImm):
            parts.append(str(i.value))
        else:
            return f"{buf.name}_elem"
    sep = "" if all(len(p) == 1 for p in parts) else "_"
    return f"{buf.name}_{sep.join(parts)}" if parts else f"{buf.name}_elem"


class RegisterPromotion:
    """Mixin of the generator: loop-invariant elements held in scalars (module docstring)."""

    promoted: dict  # id(BufferLoad / BufferStore) -> the scalar's name

    def promote_begin(self, s: For) -> list:
        """Before the header of ``s``: load each invariant element into its scalar.  Returns
        ``[(promotion, scalar, access text)]`` for ``promote_end``."""
        if not self.flavour.promote_invariant or self.lane is not None:
            return []
        outer = [loop.stmt for loop in self.loops]
        plan = [p for p in invariant_elements(s, outer) if id(p.buffer) not in self.scalars]
        if not plan:
            return []
        held = []
        lines = []
        for p in plan:
            # the element as the block writes it (A[vi, vk]) names the scalar (A_ik)
            hint = scalar_hint(p.buffer, list(p.nodes[0].indices), p.written)
            name = self.bind(Var(hint, p.buffer.dtype), hint, p.buffer.dtype)
            access = self.buffer_access(p.buffer, p.indices)
            lines.append(f"{name} = {access}")
            held.append((p, name, access))
        self.emit(f"# held in scalars over {self.names[id(s.loop_var)]} "
                  "(buffers do not overlap, as with tir.noalias)", s)
        init = init_before_loop(s, [p for p in plan if p.written])
        if init is not None:
            realize, store, guards = init
            k = plan.index(next(p for p in plan if any(n is store for n in p.nodes)))
            first = f"{self.names[id(s.loop_var)]} = {self.expr_text(s.min)}"
            value = self.promoted_store_value(store)
            if not value.startswith("np."):  # typed as the buffer, as the load it replaces
                value = f"{np_scalar(store.buffer.dtype)}({value})"
            if guards:
                cond = " and ".join(f"{self.expr_text(b)} == {self.expr_text(m)}" for b, m in guards)
                lines[k:k + 1] = [lines[k], f"if {cond}:", f"    {held[k][1]} = {value}"]
            else:  # the loaded value would be overwritten at once: not loaded
                lines[k] = f"{held[k][1]} = {value}"
            self.emit(f'# T.init() of block "{realize.block.name_hint}" before the loop: the '
                      f"reduction starts at {first}", s)
            self.inits_before_loop.add(id(realize.block))
        for line in lines:
            self.emit(line, s)
        for p, name, _ in held:
            for node in p.nodes:
                self.promoted[id(node)] = name
        return held

    def promote_end(self, s: For, held: list):
        """After the loop: store each written element back; forget the scalars."""
        for p, name, access in held:
            if p.written:
                self.emit(f"{access} = {name}", s)
            for node in p.nodes:
                self.promoted.pop(id(node), None)

    def promoted_store_value(self, s: BufferStore) -> str:
        """The value stored into a held element, typed as the buffer: a scalar keeps the
        type of its first assignment where an array converts on store."""
        value = self.expr_text(s.value)
        if s.value.dtype != s.buffer.dtype:
            value = f"{np_scalar(s.buffer.dtype)}({value})"
        return value
