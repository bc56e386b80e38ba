"""``remove_all_unused``: drop the bindings whose variables nothing needs (TVM's
``relax.analysis.remove_all_unused``).

A variable is needed when the function returns it (or uses it anywhere outside a binding,
such as in an ``R.match_cast``), when its value has side effects (an impure call: kept,
as TVM keeps them), or when a needed binding uses it — found by iterating to a fixpoint::

    with R.dataflow():
        lv0 = R.call_tir(cls.mul, (x, y), ...)      # only used by lv1: removed with it
        lv1 = R.call_tir(cls.add, (lv0, y), ...)    # unused: removed
        gv0 = R.call_tir(cls.fused, (x, y, y), ...)
        R.output(gv0)

    remove_all_unused(func)   # keeps only gv0's binding
"""

from __future__ import annotations

from typing import Any

from mlckit.ir.node import Node
from mlckit.ir.op import Op

from ..expr import (
    BindingBlock,
    Call,
    Expr,
    ExternFunc,
    Function,
    MatchCast,
    SeqExpr,
    Var,
    VarBinding,
)
from ..struct_info import FuncStructInfo, StructInfo


def remove_all_unused(func: Expr) -> Expr:
    """``func`` (a Function or any Relax expression) without its unused, side-effect free
    bindings; the input is unchanged.

    Example::

        updated = relax.analysis.remove_all_unused(updated_fn)
    """
    usage = _Usage()
    usage.expr(func, None)
    exposed = set(usage.outputs)
    for key, (_, value) in usage.bound.items():
        if contains_impure_call(value):
            exposed.add(key)
    unused = _unused_vars(usage.users, exposed)
    if not any(key in usage.bound for key in unused):
        return func
    from ..expr_functor import ExprMutator

    class _Remover(ExprMutator):
        def visit_var_binding_(self, binding: VarBinding) -> None:
            if id(binding.var) not in unused:
                super().visit_var_binding_(binding)

    return _Remover().visit_expr(func)


def contains_impure_call(expr: Any) -> bool:
    """True when ``expr`` calls something with side effects (an impure op such as
    ``R.print``, a packed function called with ``R.call_packed``, an impure function);
    nested functions are not entered, as TVM's ``ContainsImpureCall``.

    >>> from mlckit.relax import analysis
    >>> from mlckit.script import ir as I, relax as R
    >>> @I.ir_module
    ... class Logged:
    ...     @R.function(pure=False)
    ...     def main(x: R.Tensor((2,), "float32")):
    ...         R.print(x, format="{}")
    ...         return x
    >>> analysis.contains_impure_call(Logged["main"].body)
    True
    """
    if isinstance(expr, Function):
        return False
    if isinstance(expr, Call) and is_impure_call(expr):
        return True
    if isinstance(expr, (StructInfo, Var, Op)) or not isinstance(expr, (Node, list, tuple)):
        return False
    if isinstance(expr, (list, tuple)):
        return any(contains_impure_call(x) for x in expr)
    return any(contains_impure_call(getattr(expr, name)) for name in type(expr).field_names())


def is_impure_call(call: Call) -> bool:
    """True when ``call`` itself has side effects (TVM's ``IsImpureCall``)."""
    op = call.op
    if isinstance(op, Op):
        return op.get_attr("FPurity", True) is False
    if isinstance(op, ExternFunc):
        return True
    sinfo = getattr(op, "struct_info_", None)
    return isinstance(sinfo, FuncStructInfo) and not sinfo.purity


class _Usage:
    """Who uses each variable (TVM's ``CollectVarUsage``): ``users[id(var)]`` are the
    variables whose bound values use ``var``; ``outputs`` the variables used elsewhere."""

    def __init__(self):
        self.bound: dict[int, tuple[Var, Expr]] = {}
        self.users: dict[int, set[int]] = {}
        self.outputs: set[int] = set()
        self.keep: list = []  # keeps the variables alive, so their ids stay unique

    def define(self, var: Var) -> None:
        self.users.setdefault(id(var), set())
        self.keep.append(var)

    def expr(self, expr: Any, user: Var | None) -> None:
        if isinstance(expr, Var):
            if user is None:
                self.outputs.add(id(expr))
            else:
                self.users.setdefault(id(expr), set()).add(id(user))
            return
        if isinstance(expr, Function):
            for p in expr.params:
                self.define(p)
            self.expr(expr.body, None)  # uses inside a function count as outputs
            return
        if isinstance(expr, SeqExpr):
            for block in expr.blocks:
                self.block(block, user)
            self.expr(expr.body, user)
            return
        if isinstance(expr, (StructInfo, Op)) or not isinstance(expr, (Node, list, tuple)):
            return
        if isinstance(expr, (list, tuple)):
            for x in expr:
                self.expr(x, user)
            return
        for name in type(expr).field_names():
            self.expr(getattr(expr, name), user)

    def block(self, block: BindingBlock, user: Var | None) -> None:
        for binding in block.bindings:
            if isinstance(binding, VarBinding):
                self.bound[id(binding.var)] = (binding.var, binding.value)
                self.expr(binding.value, binding.var)
            elif isinstance(binding, MatchCast):
                self.expr(binding.value, user)
            self.define(binding.var)


def _unused_vars(users: dict[int, set[int]], exposed: set[int]) -> set[int]:
    """Variables with no users that are not exposed, removed repeatedly until none is
    left (a use by an unused variable does not count); TVM's ``GetUnusedVars``."""
    users = {k: set(v) for k, v in users.items()}
    unused: set[int] = set()
    while True:
        new = {k for k, v in users.items() if not v and k not in exposed}
        if not new:
            return unused
        unused |= new
        for k in new:
            del users[k]
        for v in users.values():
            v -= new


__all__ = ["contains_impure_call", "is_impure_call", "remove_all_unused"]
