"""Simplify: every index and value in its simplest form, with the loops' ranges known.

The arithmetic simplifier (``arith.Analyzer``) rewrites each expression of each statement,
knowing the range of every enclosing loop variable, and a conditional whose condition
becomes a constant keeps only the branch that runs::

    Y[T.Add(k * 128 + j_0 * 4, 0)] = ...     ──►   Y[k * 128 + j_0 * 4] = ...
    for i in range(4):                              for i in range(4):
        if i < 8:                          ──►          A[i] = 0
            A[i] = 0

Expressions inside buffer loads are simplified too.  ``tvm.tir.transform.Simplify`` is TVM
v0.23's name; TVM 0.27 calls it ``StmtSimplify`` (both are here).

Example::

    mod = tvm.tir.transform.Simplify()(mod)
"""

from __future__ import annotations

from mlckit.arith.analyzer import Analyzer
from mlckit.ir.transform import FunctionPass
from mlckit.tir import expr as E
from mlckit.tir import stmt as S
from mlckit.tir.function import PrimFunc

from ._pass import make_pass, post_order_rewrite

__all__ = ["Simplify", "StmtSimplify", "simplify"]


class _Simplifier:
    def __init__(self):
        self.analyzer = Analyzer()

    def expr(self, e):
        if not isinstance(e, E.PrimExpr):
            return e

        def inner(node):
            if isinstance(node, E.BufferLoad):
                indices = [self.analyzer.simplify(i) for i in node.indices]
                if any(a is not b for a, b in zip(indices, node.indices)):
                    return node.replace(indices=indices)
            return node

        e = post_order_rewrite(e, inner)
        out = self.analyzer.simplify(e)
        return e if _same(out, e) else out

    def exprs(self, xs):
        new = [self.expr(x) for x in xs]
        return xs if all(a is b for a, b in zip(new, xs)) else new

    def stmt(self, s):
        if isinstance(s, S.SeqStmt):
            seq = [self.stmt(x) for x in s.seq]
            return s if all(a is b for a, b in zip(seq, s.seq)) else S.stmt_seq(*seq)
        if isinstance(s, S.For):
            self.analyzer.bind(s.loop_var, E.Range(s.min, s.extent))
            return _changed(s, min=self.expr(s.min), extent=self.expr(s.extent),
                            body=self.stmt(s.body))
        if isinstance(s, S.BufferStore):
            return _changed(s, value=self.expr(s.value), indices=self.exprs(s.indices))
        if isinstance(s, S.IfThenElse):
            cond = self.expr(s.condition)
            if isinstance(cond, E.IntImm):
                taken = s.then_case if cond.value else s.else_case
                return self.stmt(taken) if taken is not None else S.Evaluate(0)
            return _changed(s, condition=cond, then_case=self.stmt(s.then_case),
                            else_case=None if s.else_case is None else self.stmt(s.else_case))
        if isinstance(s, S.LetStmt):
            return _changed(s, value=self.expr(s.value), body=self.stmt(s.body))
        if isinstance(s, S.Allocate):
            return _changed(s, extents=self.exprs(s.extents), body=self.stmt(s.body))
        if isinstance(s, (S.DeclBuffer, S.AttrStmt, S.While)):
            return _changed(s, body=self.stmt(s.body))
        if isinstance(s, S.AssertStmt):
            return _changed(s, condition=self.expr(s.condition), body=self.stmt(s.body))
        if isinstance(s, S.Evaluate):
            return _changed(s, value=self.expr(s.value))
        if isinstance(s, S.BlockRealize):
            block = s.block
            new_block = _changed(block, body=self.stmt(block.body),
                                 init=None if block.init is None else self.stmt(block.init))
            return _changed(s, predicate=self.expr(s.predicate), block=new_block)
        return s


def _same(a, b) -> bool:
    from mlckit.ir.structural import structural_equal

    return a is b or structural_equal(a, b)


def _changed(node, **fields):
    changes = {k: v for k, v in fields.items() if v is not getattr(node, k)}
    return node.replace(**changes) if changes else node


def simplify(func: PrimFunc) -> PrimFunc:
    """``func`` with its expressions simplified (see the module's docstring).

    Example::

        func = simplify(unroll_loop(func))
    """
    body = _Simplifier().stmt(func.body)
    return func if body is func.body else func.replace(body=body)


def Simplify() -> FunctionPass:  # noqa: N802 - TVM's name
    """The pass simplifying every expression of every PrimFunc, with loop ranges known, as
    ``tvm.tir.transform.Simplify`` (TVM 0.27: ``StmtSimplify``).

    >>> import mlckit as tvm
    >>> from mlckit.script import tir as T
    >>> @T.prim_func
    ... def f(a: T.Buffer((4,), "float32")):
    ...     for i in range(4):
    ...         if i < 8:
    ...             a[i + 0] = T.float32(0)
    >>> print(tvm.tir.transform.Simplify()(tvm.IRModule({"f": f}))["f"].script())
    # from tvm.script import tir as T
    <BLANKLINE>
    @T.prim_func
    def f(a: T.Buffer((4,), "float32")):
        for i in range(4):
            a[i] = T.float32(0.0)
    """
    return make_pass("Simplify", simplify)


def StmtSimplify() -> FunctionPass:  # noqa: N802 - TVM 0.27's name
    """TVM 0.27's name of :func:`Simplify`.

    Example::

        mod = tvm.tirx.transform.StmtSimplify()(mod)
    """
    return make_pass("StmtSimplify", simplify)
