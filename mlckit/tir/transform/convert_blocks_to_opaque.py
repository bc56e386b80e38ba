"""ConvertBlocksToOpaque: blocks lose their iterators; their bodies use the loop variables.

Each ``vi = T.axis.spatial(128, i)`` is substituted by its binding (``i``) in the block's
body, reads, writes and init, and the block keeps no iterators (an *opaque* block)::

    with T.block("C"):                           with T.block("C"):
        vi = T.axis.spatial(128, i)      ──►         T.reads(Y[i, j_0 * 4 + ax0])
        vj = T.axis.spatial(128, j_0 * 4 + ax0)      T.writes(C[i, j_0 * 4 + ax0])
        C[vi, vj] = T.max(Y[vi, vj], 0)              C[i, j_0 * 4 + ax0] = T.max(...)

As in TVM, a block that still has a ``T.init()`` is rejected (run ``LowerInitBlock``
first), and so is a ``T.where`` predicate written with the block's own iterators (it is
evaluated outside the block, where only the loop variables exist).

Example::

    mod = tvm.tir.transform.ConvertBlocksToOpaque()(mod)
"""

from __future__ import annotations

from mlckit.error import TVMError
from mlckit.ir.transform import FunctionPass
from mlckit.tir import stmt as S
from mlckit.tir.analysis.var_use import var_ids
from mlckit.tir.function import PrimFunc
from mlckit.tir.stmt_functor import node_rewriter

from ._pass import make_pass, post_order_rewrite

__all__ = ["ConvertBlocksToOpaque", "convert_blocks_to_opaque"]


def _convert(node):
    if not isinstance(node, S.BlockRealize) or not node.block.iter_vars:
        return node
    block = node.block
    if block.init is not None:
        raise TVMError(f"ConvertBlocksToOpaque: block {block.name_hint!r} still has a "
                       "T.init(); run tir.transform.LowerInitBlock() first")
    table = {id(iv.var): value for iv, value in zip(block.iter_vars, node.iter_values)}
    used = var_ids(node.predicate) & set(table)
    if used:
        names = [iv.var.name_hint for iv in block.iter_vars if id(iv.var) in used]
        raise TVMError(f"ConvertBlocksToOpaque: the T.where predicate of block "
                       f"{block.name_hint!r} uses the block iterator(s) {names}; a predicate "
                       "may use only the loop variables around the block")
    subst = node_rewriter(lambda x: table.get(id(x)) if getattr(x, "_is_var", False) else None)
    # the regions a match_buffer views are written with the iterators too (TVM substitutes
    # them with the rest of the block): LowerMatchBuffer then binds the view's offset to
    # an expression of the loop variables
    new_block = block.replace(iter_vars=[], reads=subst(block.reads),
                              writes=subst(block.writes),
                              match_buffers=subst(block.match_buffers),
                              body=subst(block.body))
    return node.replace(iter_values=[], predicate=subst(node.predicate), block=new_block)


def convert_blocks_to_opaque(func: PrimFunc) -> PrimFunc:
    """``func`` with every block's iterators replaced by their bindings.

    Example::

        func = convert_blocks_to_opaque(lower_init_block(mod["mm_relu"]))
    """
    body = post_order_rewrite(func.body, _convert)
    return func if body is func.body else func.replace(body=body)


def ConvertBlocksToOpaque() -> FunctionPass:  # noqa: N802 - TVM's name
    """The pass substituting every block iterator by its binding and dropping the iterators,
    as ``tvm.tir.transform.ConvertBlocksToOpaque``.

    >>> import mlckit as tvm
    >>> from mlckit.script import tir as T
    >>> @T.prim_func
    ... def copy(a: T.Buffer((4,), "float32"), b: T.Buffer((4,), "float32")):
    ...     for i in range(4):
    ...         with T.block("B"):
    ...             vi = T.axis.spatial(4, i)
    ...             b[vi] = a[vi]
    >>> mod = tvm.tir.transform.ConvertBlocksToOpaque()(tvm.IRModule({"copy": copy}))
    >>> "b[i] = a[i]" in mod.script()
    True
    """
    return make_pass("ConvertBlocksToOpaque", convert_blocks_to_opaque)
