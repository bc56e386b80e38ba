"""RemoveNoOp: statements that do nothing are dropped.

What counts as doing nothing, as in TVM: ``T.evaluate(x)`` of an expression without calls,
a store of the value already there (``A[i] = A[i]``, also where the indices are only
provably equal, using the loop ranges, the ``if`` conditions and the ``let`` values around
it: ``if i == 0: A[i] = A[0]``), a loop that never runs (its extent provably ≤ 0), and a
loop, conditional, ``let``, allocation or sequence whose parts all do nothing (keeping the
calls of a ``let`` value or a condition, as TVM does).  An empty ``then`` turns
``if c: pass else: s`` into ``if not c: s``; an unused ``let`` or ``T.decl_buffer`` goes.
``Simplify`` leaves such statements behind (``if False:`` becomes ``T.evaluate(0)``)::

    for i in range(4):                       ──►   (nothing)
        T.evaluate(0)
    A[0] = A[0]                              ──►   (nothing)

With ``PassContext(config={"tir.RemoveNoOp": {"use_dataflow_analysis": True}})``, as TVM,
stores are also compared with the statements around them in a sequence (see
:mod:`mlckit.tir.analysis.buffer_writes`): a store (or loop of stores) that a later one
overwrites before anything reads it, and a store of the value an earlier loop put there,
are dropped::

    for i in range(16): A[i] = 100           ──►   for i in range(16): A[i] = i
    for i in range(16): A[i] = i
    A[4] = 4

``max_simplification_steps`` is accepted and ignored (mlckit's simplifier has no step
counter).  Unlike TVM, every call counts as a side effect (TVM keeps only those of effect
above ``ReadState``).

Example::

    mod = tvm.tir.transform.RemoveNoOp()(mod)
"""

from __future__ import annotations

from dataclasses import dataclass

from mlckit.ir.structural import structural_equal
from mlckit.ir.transform import FunctionPass, PassContext, PassInfo
from mlckit.tir import expr as E
from mlckit.tir import stmt as S
from mlckit.tir.analysis.buffer_writes import (
    ProofContext,
    reads_any,
    solve_point,
    value_at,
    writes_any,
    writes_of,
)
from mlckit.tir.analysis.var_use import var_ids
from mlckit.tir.function import PrimFunc

from ._config import pass_config
from ._pass import post_order_rewrite

__all__ = ["RemoveNoOp", "RemoveNoOpConfig", "remove_no_op"]


@dataclass(frozen=True)
class RemoveNoOpConfig:
    """The ``tir.RemoveNoOp`` pass config (TVM's ``RemoveNoOpConfig``, same fields and
    defaults)."""

    use_dataflow_analysis: bool = False
    max_simplification_steps: int = 0

    @classmethod
    def from_context(cls, ctx: PassContext | None = None) -> RemoveNoOpConfig:
        """The config of ``ctx`` (the current PassContext by default)."""
        return pass_config(cls, "tir.RemoveNoOp", ctx)


def _has_call(e) -> bool:
    found = []

    def visit(node):
        if isinstance(node, E.Call):
            found.append(node)
        return node

    post_order_rewrite(e, visit)
    return bool(found)


def _effects_of(*exprs):
    """The statement keeping the side effects (calls) of ``exprs``: ``T.evaluate(0)`` if none."""
    kept = [S.Evaluate(e) for e in exprs if isinstance(e, E.PrimExpr) and _has_call(e)]
    return S.stmt_seq(*kept) if kept else S.Evaluate(0)


def _store_effects(store: S.BufferStore):
    return _effects_of(store.value, *store.indices)


def _is_no_op(s) -> bool:
    if s is None:
        return True
    if isinstance(s, S.Evaluate):  # an expression without calls has no effect
        return not _has_call(s.value)
    if isinstance(s, S.SeqStmt):
        return all(_is_no_op(x) for x in s.seq)
    return False


def _uses_buffer(body, buffer) -> bool:
    found = []

    def visit(node):
        if node is buffer:
            found.append(node)
        return node

    post_order_rewrite(body, visit)
    return bool(found)


def _same_memory(a, b) -> bool:
    """Whether buffers ``a`` and ``b`` lay out the same memory the same way."""
    return a is b or (a.data is b.data and a.dtype == b.dtype
                      and structural_equal([a.shape, a.strides, a.elem_offset],
                                           [b.shape, b.strides, b.elem_offset]))


class _NoOpRemover:
    """TVM's NoOpRemover: a walk keeping what is known at each statement (``ProofContext``)."""

    def __init__(self, dataflow: bool):
        self.dataflow = dataflow

    def visit(self, s, ctx: ProofContext):
        method = getattr(self, "visit_" + type(s).__name__, None)
        if method is not None:
            return method(s, ctx)
        return self.children(s, ctx)

    def children(self, s, ctx):
        changes = {}
        for name in type(s).field_names():
            value = getattr(s, name)
            if isinstance(value, S.Stmt):
                new = self.visit(value, ctx)
                if new is not value:
                    changes[name] = new
        return s.replace(**changes) if changes else s

    # -- statements ---------------------------------------------------------------------------
    def visit_For(self, s, ctx):  # noqa: N802 - named after the node
        never_runs = s.extent.value <= 0 if isinstance(s.extent, E.IntImm) \
            else ctx.prove(s.extent <= 0)
        if never_runs:
            return S.Evaluate(0)  # a loop that never runs
        body = self.visit(s.body, ctx.with_loop(s.loop_var, s.min, s.extent))
        if _is_no_op(body):
            return _effects_of(s.min, s.extent)
        return s if body is s.body else s.replace(body=body)

    def visit_SeqStmt(self, s, ctx):  # noqa: N802
        seq = [self.visit(x, ctx) for x in s.seq]
        if self.dataflow:
            seq = _drop_overwritten(seq, ctx)
            seq = _drop_known_values(seq, ctx)
        kept = [x for x in seq if not _is_no_op(x)]
        if len(kept) == len(s.seq) and all(a is b for a, b in zip(kept, s.seq)):
            return s
        return S.stmt_seq(*kept) if kept else S.Evaluate(0)

    def visit_LetStmt(self, s, ctx):  # noqa: N802
        body = self.visit(s.body, ctx.with_let(s.var, s.value))
        if _is_no_op(body):
            return _effects_of(s.value)  # a call's side effects stay (TVM's MakeEvaluate)
        if not _uses_var(body, s.var):  # an unused let goes, its value's calls stay
            effects = _effects_of(s.value)
            return body if _is_no_op(effects) else S.stmt_seq(effects, body)
        return s if body is s.body else s.replace(body=body)

    def visit_AttrStmt(self, s, ctx):  # noqa: N802
        if s.attr_key == "pragma_debug_skip_region":
            return S.Evaluate(0)
        body = self.visit(s.body, ctx)
        if _is_no_op(body):
            return _effects_of(s.value)
        return s if body is s.body else s.replace(body=body)

    def visit_IfThenElse(self, s, ctx):  # noqa: N802
        cond = s.condition
        then_case = self.visit(s.then_case, ctx.with_condition(cond))
        else_case = None if s.else_case is None else \
            self.visit(s.else_case, ctx.with_condition(E.Not(cond)))
        if isinstance(cond, E.IntImm):  # a condition known before running: its branch
            return then_case if cond.value else (else_case or S.Evaluate(0))
        if _is_no_op(then_case) and _is_no_op(else_case):
            return _effects_of(cond)
        if else_case is not None and _is_no_op(else_case):
            return S.IfThenElse(cond, then_case, None)
        if _is_no_op(then_case):
            return S.IfThenElse(E.Not(cond), else_case, None)
        if then_case is s.then_case and else_case is s.else_case:
            return s
        return S.IfThenElse(cond, then_case, else_case)

    def visit_Allocate(self, s, ctx):  # noqa: N802
        body = self.visit(s.body, ctx)
        if _is_no_op(body):
            return _effects_of(*s.extents)  # an empty temporary
        return s if body is s.body else s.replace(body=body)

    def visit_DeclBuffer(self, s, ctx):  # noqa: N802
        body = self.visit(s.body, ctx)
        if not _uses_buffer(body, s.buffer):
            return body
        return s if body is s.body else s.replace(body=body)

    def visit_Evaluate(self, s, ctx):  # noqa: N802
        return s if _has_call(s.value) else S.Evaluate(0)

    def visit_BufferStore(self, s, ctx):  # noqa: N802
        return _store_effects(s) if _stores_existing_value(s, ctx) else s


def _uses_var(body, var) -> bool:
    return id(var) in var_ids(body)


def _stores_existing_value(store: S.BufferStore, ctx: ProofContext) -> bool:
    """``A[i] = A[j]`` with ``i`` provably ``j``, or ``A[i] = A[i] + 0``: the store
    changes nothing."""
    value = store.value
    if isinstance(value, E.BufferLoad) and _same_memory(value.buffer, store.buffer) \
            and len(value.indices) == len(store.indices) \
            and all(ctx.prove_equal(a, b) for a, b in zip(value.indices, store.indices)):
        return True
    if not (str(value.dtype).startswith(("int", "uint")) and reads_any(value,
                                                                       {id(store.buffer.data)})):
        return False  # without a read of the same memory, the difference cannot be zero
    here = E.BufferLoad(store.buffer, list(store.indices))
    return ctx.prove(E.EQ(value - here, E.IntImm(value.dtype, 0)))


# -- with use_dataflow_analysis -----------------------------------------------------------------
def _pure_writes(s):
    """``s``'s stores if it only stores (see ``writes_of``) and calls nothing."""
    writes = writes_of(s)
    if not writes or _has_call(s):
        return None
    return writes


def _drop_overwritten(seq: list, ctx: ProofContext) -> list:
    """``seq`` without the statements whose every store a later statement overwrites before
    anything reads that memory (a single store's calls stay)."""
    seq = list(seq)
    for i, s in enumerate(seq):
        single = isinstance(s, S.BufferStore)
        writes = writes_of(s) if single else _pure_writes(s)
        if not writes:
            continue
        data = {id(w.store.buffer.data) for w in writes}
        pending = list(writes)
        for later in seq[i + 1:]:
            if reads_any(later, data) or (isinstance(later, S.Evaluate)
                                          and _has_call(later.value)):
                break
            for w in list(pending):
                point_ctx = w.context(ctx)
                indices = [w.expanded(x) for x in w.store.indices]
                if any(_same_memory(lw.store.buffer, w.store.buffer)
                       and solve_point(lw, indices, point_ctx) is not None
                       for lw in writes_of(later) or []):
                    pending.remove(w)
            if not pending:
                seq[i] = _store_effects(s) if single else S.Evaluate(0)
                break
    return seq


def _drop_known_values(seq: list, ctx: ProofContext) -> list:
    """``seq`` without the statements storing only what an earlier statement (kept) stored
    there, with nothing writing that memory in between."""
    seq = list(seq)
    for j, t in enumerate(seq):
        writes = _pure_writes(t)
        if not writes or len(writes) != 1:
            continue
        tw = writes[0]
        data = {id(tw.store.buffer.data)}
        t_ctx = tw.context(ctx)
        indices = [tw.expanded(x) for x in tw.store.indices]
        for s in reversed(seq[:j]):
            source = _pure_writes(s)
            mine = [w for w in source or [] if id(w.store.buffer.data) in data]
            if source is None or not mine:
                if writes_any(s, data) or (isinstance(s, S.Evaluate) and _has_call(s.value)):
                    break
                continue
            if len(mine) == 1 and _same_memory(mine[0].store.buffer, tw.store.buffer):
                values = solve_point(mine[0], indices, t_ctx)
                known = None if values is None else value_at(mine[0], values)
                loop_ids = {id(v) for v, _, _ in mine[0].loops}
                if known is not None and not reads_any(known, _all_data(known)) \
                        and not var_ids(known) & loop_ids \
                        and t_ctx.prove_equal(tw.expanded(tw.store.value), known):
                    seq[j] = S.Evaluate(0)
            break
    return seq


def _all_data(e) -> set:
    """The ids of the memory ``e`` loads from (a known value must load nothing)."""
    found = set()

    def visit(node):
        if isinstance(node, E.BufferLoad):
            found.add(id(node.buffer.data))
        return node

    post_order_rewrite(e, visit)
    return found


def remove_no_op(func: PrimFunc, config: RemoveNoOpConfig | None = None) -> PrimFunc:
    """``func`` without the statements that do nothing (``config``: by default the current
    PassContext's ``tir.RemoveNoOp``).

    Example::

        func = remove_no_op(simplify(func))
    """
    config = config or RemoveNoOpConfig.from_context()
    body = _NoOpRemover(config.use_dataflow_analysis).visit(func.body, ProofContext())
    return func if body is func.body else func.replace(body=body)


def RemoveNoOp() -> FunctionPass:  # noqa: N802 - TVM's name
    """The pass dropping statements that do nothing, as ``tvm.tir.transform.RemoveNoOp``.

    >>> import mlckit as tvm
    >>> from mlckit.script import tir as T
    >>> @T.prim_func
    ... def f(a: T.Buffer((4,), "float32")):
    ...     for i in range(4):
    ...         a[i] = a[i]
    ...     a[0] = T.float32(1)
    >>> print(tvm.tir.transform.RemoveNoOp()(tvm.IRModule({"f": f}))["f"].script())
    # from tvm.script import tir as T
    <BLANKLINE>
    @T.prim_func
    def f(a: T.Buffer((4,), "float32")):
        a[0] = T.float32(1.0)
    """
    return FunctionPass(
        lambda func, mod, ctx: remove_no_op(func, RemoveNoOpConfig.from_context(ctx)),
        PassInfo(0, "RemoveNoOp"), PrimFunc)
