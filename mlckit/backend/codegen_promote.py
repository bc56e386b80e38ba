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

__all__ = ["Promotion", "RegisterPromotion", "invariant_elements"]

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
