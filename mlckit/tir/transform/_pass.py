"""The shape every TIR pass has: ``tvm.tir.transform.prim_func_pass`` and a post-order rewrite.

A TIR pass is a :class:`~mlckit.ir.transform.FunctionPass` over the module's PrimFuncs, as in
TVM: ``LowerInitBlock()`` returns the pass, ``pass(mod)`` returns a new module.

Example::

    @prim_func_pass(opt_level=0, name="Nothing")
    def nothing(func, mod, ctx):
        return func
    mod = nothing(mod)
"""

from __future__ import annotations

from collections.abc import Callable

from mlckit.ir.transform import FunctionPass, PassInfo
from mlckit.tir.function import PrimFunc
from mlckit.tir.stmt_functor import node_rewriter

__all__ = ["make_pass", "post_order_rewrite", "prim_func_pass"]


def prim_func_pass(pass_func=None, opt_level: int = 0, name: str | None = None,
                   required=None, traceable: bool = False):
    """Decorate ``(func, mod, ctx) -> func`` into a pass over every PrimFunc of a module,
    as ``tvm.tir.transform.prim_func_pass``.

    >>> from mlckit.tir.transform import prim_func_pass
    >>> @prim_func_pass(opt_level=0)
    ... def mark(func, mod, ctx):
    ...     return func.with_attr("marked", True)
    >>> mark.info.name
    'mark'
    """

    def create(fn):
        info = PassInfo(opt_level, name or fn.__name__, list(required or []), traceable)
        return FunctionPass(fn, info, PrimFunc)

    if pass_func is not None:
        return create(pass_func)
    return create


def make_pass(name: str, rewrite: Callable[[PrimFunc], PrimFunc]) -> FunctionPass:
    """The pass ``name`` applying ``rewrite`` to each PrimFunc of a module."""
    return FunctionPass(lambda func, mod, ctx: rewrite(func), PassInfo(0, name), PrimFunc)


def post_order_rewrite(x, fn: Callable):
    """``x`` rebuilt bottom-up: ``fn(node)`` sees each node with its fields already rewritten
    and returns its replacement (the node itself to keep it).  Unchanged subtrees stay the
    same objects, so a pass that changes nothing returns its input."""
    visit: Callable

    def rewrite(node):
        changes = {}
        for field in type(node).field_names():
            old = getattr(node, field)
            new = visit(old)
            if new is not old:
                changes[field] = new
        return fn(node.replace(**changes) if changes else node)

    visit = node_rewriter(rewrite)
    return visit(x)
