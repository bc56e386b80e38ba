"""RemoveNoOp: statements that do nothing are dropped.

What counts as doing nothing, as in TVM: ``T.evaluate(x)`` of an expression without calls,
a store of a value into the place it was loaded from (``A[i] = A[i]``), a loop that never
runs (its extent provably ≤ 0), and a loop, conditional, ``let``, allocation or sequence whose
parts all do nothing (keeping the calls of a ``let`` value, as TVM does).  An empty ``then`` turns ``if c: pass else: s`` into ``if not c: s``.  ``Simplify`` leaves such statements behind
(``if False:`` becomes ``T.evaluate(0)``)::

    for i in range(4):                       ──►   (nothing)
        T.evaluate(0)
    A[0] = A[0]                              ──►   (nothing)

Example::

    mod = tvm.tir.transform.RemoveNoOp()(mod)
"""

from __future__ import annotations

from mlckit.arith.analyzer import Analyzer
from mlckit.ir.structural import structural_equal
from mlckit.ir.transform import FunctionPass
from mlckit.tir import expr as E
from mlckit.tir import stmt as S
from mlckit.tir.function import PrimFunc

from ._pass import make_pass, post_order_rewrite

__all__ = ["RemoveNoOp", "remove_no_op"]


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
    kept = [S.Evaluate(e) for e in exprs if _has_call(e)]
    return S.stmt_seq(*kept) if kept else S.Evaluate(0)


def _is_no_op(s) -> bool:
    if s is None:
        return True
    if isinstance(s, S.Evaluate):  # an expression without calls has no effect
        return not _has_call(s.value)
    if isinstance(s, S.SeqStmt):
        return all(_is_no_op(x) for x in s.seq)
    return False


def _remove(node, analyzer: Analyzer):
    if isinstance(node, S.For) and analyzer.can_prove(node.extent <= 0):
        return S.Evaluate(0)  # a loop that never runs
    if isinstance(node, S.SeqStmt):
        kept = [x for x in node.seq if not _is_no_op(x)]
        if len(kept) == len(node.seq):
            return node
        return S.stmt_seq(*kept) if kept else S.Evaluate(0)
    if isinstance(node, S.LetStmt) and _is_no_op(node.body):
        return _effects_of(node.value)  # a call's side effects stay (TVM's MakeEvaluate)
    if isinstance(node, S.For) and _is_no_op(node.body):
        return _effects_of(node.min, node.extent)
    if isinstance(node, S.Allocate) and _is_no_op(node.body):
        return _effects_of(*node.extents)  # an empty temporary
    if isinstance(node, (S.AttrStmt, S.DeclBuffer)) and _is_no_op(node.body):
        return S.Evaluate(0)
    if isinstance(node, S.IfThenElse):
        if _is_no_op(node.then_case) and _is_no_op(node.else_case):
            return S.Evaluate(0)
        if node.else_case is not None and _is_no_op(node.else_case):
            return node.replace(else_case=None)
        if _is_no_op(node.then_case):
            return S.IfThenElse(E.Not(node.condition), node.else_case, None)
        return node
    if isinstance(node, S.BufferStore) and isinstance(node.value, E.BufferLoad) \
            and node.value.buffer is node.buffer \
            and structural_equal(list(node.value.indices), list(node.indices)):
        return S.Evaluate(0)
    return node


def remove_no_op(func: PrimFunc) -> PrimFunc:
    """``func`` without the statements that do nothing.

    Example::

        func = remove_no_op(simplify(func))
    """
    analyzer = Analyzer()  # every loop's range: a loop variable is used only in its loop

    def bind(node):
        if isinstance(node, S.For):
            analyzer.bind(node.loop_var, E.Range(node.min, node.extent))
        return node

    post_order_rewrite(func.body, bind)
    body = post_order_rewrite(func.body, lambda node: _remove(node, analyzer))
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
    return make_pass("RemoveNoOp", remove_no_op)
