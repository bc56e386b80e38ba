"""LowerInitBlock: a reduction block's ``T.init()`` becomes an ``if`` at the first iteration.

A block ``Y`` with ``vk = T.axis.reduce(128, k)`` and ``with T.init(): Y[vi, vj] = 0`` runs
its init when every reduction iterator is at the start of its domain::

    with T.block("Y"):                              with T.block("Y"):
        vi, vj, vk = T.axis.remap("SSR", ...)           vi, vj, vk = T.axis.remap("SSR", ...)
        with T.init():                      ──►         if vk == 0:
            Y[vi, vj] = T.float32(0)                        Y[vi, vj] = T.float32(0)
        Y[vi, vj] = Y[vi, vj] + ...                     Y[vi, vj] = Y[vi, vj] + ...

Reads and writes are kept as they are (as in TVM).  Blocks without ``T.init()`` are left
alone; a module without any is returned unchanged.

Example::

    mod = tvm.tir.transform.LowerInitBlock()(mod)
"""

from __future__ import annotations

from mlckit.ir.transform import FunctionPass
from mlckit.tir import expr as E
from mlckit.tir import stmt as S
from mlckit.tir.function import PrimFunc

from ._pass import make_pass, post_order_rewrite

__all__ = ["LowerInitBlock", "lower_init_block"]


def _lower(node):
    if not isinstance(node, S.Block) or node.init is None:
        return node
    conds = [E.EQ(iv.var, iv.dom.min) for iv in node.iter_vars
             if iv.iter_type == E.IterVarType.CommReduce]
    if not conds:  # a block with init but no reduction iterator: the init always runs
        body = S.stmt_seq(node.init, node.body)
    else:
        cond = conds[0]
        for c in conds[1:]:
            cond = E.And(cond, c)
        body = S.stmt_seq(S.IfThenElse(cond, node.init, None), node.body)
    return node.replace(init=None, body=body)


def lower_init_block(func: PrimFunc) -> PrimFunc:
    """``func`` with every ``T.init()`` turned into ``if <reduction vars at start>:``.

    Example::

        func = lower_init_block(mod["mm_relu"])
    """
    body = post_order_rewrite(func.body, _lower)
    return func if body is func.body else func.replace(body=body)


def LowerInitBlock() -> FunctionPass:  # noqa: N802 - TVM's name
    """The pass lowering each block's ``T.init()`` to a conditional at the first reduction
    iteration, as ``tvm.tir.transform.LowerInitBlock``.

    >>> import mlckit as tvm
    >>> from mlckit.script import tir as T
    >>> @T.prim_func
    ... def total(a: T.Buffer((4,), "float32"), s: T.Buffer((1,), "float32")):
    ...     for k in range(4):
    ...         with T.block("S"):
    ...             vk = T.axis.reduce(4, k)
    ...             with T.init():
    ...                 s[0] = T.float32(0)
    ...             s[0] = s[0] + a[vk]
    >>> mod = tvm.tir.transform.LowerInitBlock()(tvm.IRModule({"total": total}))
    >>> "if vk == 0:" in mod.script()
    True
    """
    return make_pass("LowerInitBlock", lower_init_block)
